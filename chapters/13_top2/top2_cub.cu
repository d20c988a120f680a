// Chapter 13's vendor row: cub::DeviceReduce::Reduce over (value, index) pairs, with the
// steps' merge (top2_merge.cuh) as its operator. Part of the program 13_top2; its step
// table (13_top2.cu) names launch_cub, declared in top2_problem.h.
#include <thrust/iterator/counting_iterator.h>
#include <thrust/iterator/transform_iterator.h>

#include <cstdint>
#include <cub/device/device_reduce.cuh>

#include "common/check.h"
#include "top2_merge.cuh"
#include "top2_problem.h"

namespace {

using ch13::Top2;

struct MergeOp {
  __host__ __device__ Top2 operator()(const Top2& a, const Top2& b) const {
    return ch13::merge(a, b);
  }
};
struct LoadPair {  // element i as a top-2 with one full slot
  const int32_t* x;
  __host__ __device__ Top2 operator()(int64_t i) const { return {x[i], 0, i, ch13::kNoIndex}; }
};

}  // namespace

int64_t ch13::launch_cub(const int32_t* x, int64_t n, Buffers& b) {
  const auto pairs =
      thrust::make_transform_iterator(thrust::counting_iterator<int64_t>(0), LoadPair{x});
  size_t bytes = 0;
  CUDA_CHECK(cub::DeviceReduce::Reduce(nullptr, bytes, pairs, b.out.get(), n, MergeOp{},
                                       ch13::empty_top2()));
  if (bytes > b.cub_temp.bytes())
    b.cub_temp.allocate(static_cast<int64_t>(bytes));  // the first call of a size
  CUDA_CHECK(cub::DeviceReduce::Reduce(b.cub_temp.get(), bytes, pairs, b.out.get(), n, MergeOp{},
                                       ch13::empty_top2()));
  CHECK_LAUNCH();
  return 0;  // CUB chooses its own grid
}
