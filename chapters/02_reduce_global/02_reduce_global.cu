// Chapter 02: the first GPU sum, in global memory only.
//
// What changed:  from chapter 01's CPU loop to thousands of threads. Each block
//                sums its own blockDim.x elements as a tree, in place in global
//                memory: at every level the lower half of the block adds the
//                upper half, then __syncthreads(). The block sums are copied to
//                the host and finished there (in double), as in the classic code.
// It overwrites its input: the tree writes its partial sums over x. The
//                benchmark restores x before every run, outside the timed region.
// Why faster:    the CPU reads with one core; here every SM streams the array.
// Bottleneck:    every tree level reads and writes global memory (L1/L2 traffic
//                and a __syncthreads per level), and the host finish adds a copy
//                of the block sums and a loop on one core.
// Steps:         global-in-place
// Run:           build/chapters/02_reduce_global [--n 2^28] [--block 256]
//                [--verify-only [--large]] [--json]
#include <cstdint>
#include <vector>

#include "common/check.h"
#include "common/cuda_utils.cuh"
#include "common/problems/reduce.h"
#include "common/verify.h"

namespace {

namespace rd = sw::reduce;

// --- the kernel --------------------------------------------------------------------

// Block b sums x[b * blockDim.x ...] in place (blockDim.x a power of two) and
// writes the sum to partial[b]. The last block may be short: `count` elements.
__global__ void reduce_global_in_place(float* x, float* partial, int64_t n) {
  // lab global-tree: begin
  const int tid = threadIdx.x;
  const int64_t base = static_cast<int64_t>(blockIdx.x) * blockDim.x;
  float* block = x + base;
  const int64_t left = n - base;
  const int64_t count = left < blockDim.x ? left : blockDim.x;
  for (int offset = blockDim.x / 2; offset > 0; offset /= 2) {
    if (tid < offset && tid + offset < count) block[tid] += block[tid + offset];
    __syncthreads();  // also makes this level's global writes visible to the block
  }
  if (tid == 0) partial[blockIdx.x] = block[0];
  // lab global-tree: end
}

// --- the whole sum: the kernel, the block sums copied back, the finish on the host -----

void launch_global_in_place(const rd::Sum& s) {
  const int64_t blocks = sw::ceil_div(s.n, s.block);  // one element per thread
  reduce_global_in_place<<<rd::grid_size(blocks), s.block>>>(s.x, s.partials, s.n);
  CHECK_LAUNCH();
  CUDA_CHECK(
      cudaMemcpy(s.host_partials, s.partials, blocks * sizeof(float), cudaMemcpyDeviceToHost));
  double sum = 0;  // in double: the host part adds no float error
  for (int64_t b = 0; b < blocks; ++b) sum += s.host_partials[b];
  *s.host_out = sum;
}

// The block tree has log2(block) levels; the double finish adds less error than
// one more float level would (block sums number at most 2^27 << 2^29).
int64_t depth_global_in_place(const rd::Sum& s) { return sw::ceil_log2(s.block) + 1; }

// The step table: one step. Its tree writes over x (the harness restores x
// before every run, outside the timing) and its sum ends on the host.
const std::vector<rd::Step> kSteps = {
    {"global-in-place", launch_global_in_place, depth_global_in_place, "step",
     rd::kOverwritesInput | rd::kFinishOnHost},
};

}  // namespace

int main(int argc, char** argv) {
  const sw::bench::Program<rd::Step> program{
      "02_reduce_global", "Sum of floats: an in-place tree per block in global memory.", "02",
      kSteps};
  rd::SumProblem sum;
  sum.offers_large = true;  // --verify-only --large: past 2^31 and 2^32 elements
  return sw::bench::run(argc, argv, program, sum);
}
