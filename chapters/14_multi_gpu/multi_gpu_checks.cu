// Chapter 14's checks (see multi_gpu_checks.h). Part of the program 14_multi_gpu;
// the steps are in sharded_sum.cu and all_reduce.cu.
#include <algorithm>
#include <atomic>
#include <climits>
#include <cmath>
#include <cstdio>
#include <cstring>

#include "common/check.h"
#include "common/cuda_utils.cuh"
#include "common/data.h"
#include "common/multi_gpu_timer.h"
#include "common/parallel.h"
#include "common/problems/reduce.h"  // the reference sum
#include "common/verify.h"
#include "multi_gpu_checks.h"

namespace ch14 {
namespace {

// Floats read back per GPU at a time by the checks.
constexpr int64_t kCheckChunk = int64_t{1} << 22;

}  // namespace

// Part 1's reference, in double: the reduction track's (common/problems/reduce.h), on
// elements [first, first + n) of the stream.
Ref reference(uint64_t seed, int64_t first, int64_t n) {
  Ref r;
  sw::reduce::reference_sum(n, seed, &r.sum, &r.abs_sum, first);
  return r;
}

std::string check_shard_results(const std::vector<double>& got, const Ref& ref, int64_t depth,
                                int64_t n) {
  for (size_t i = 0; i < got.size(); ++i) {
    const sw::SumCheck c = sw::check_sum(got[i], ref.sum, ref.abs_sum, depth, n);
    if (!c.ok) {
      char buf[160];
      std::snprintf(buf, sizeof buf, "result %zu: got %.9g, want %.9g: error %.3g > bound %.3g", i,
                    got[i], ref.sum, c.abs_error, c.bound);
      return buf;
    }
  }
  return "";
}

// The exact sum of the K inputs (in double): exact data must match it exactly;
// random data within gamma_{K-1} * sum_g |x_g[i]|, the bound of any order of K - 1
// float additions.
VectorCheck check_outputs(const Vectors& v, Data d, uint64_t seed) {
  std::vector<Output> outs;
  for (int g = 0; g < v.count; ++g) outs.push_back({g, g, v.recv[g].get()});
  return check_vectors(outs, v.count, v.n, d, seed);
}

VectorCheck check_vectors(const std::vector<Output>& outs, int k, int64_t n, Data d,
                          uint64_t seed) {
  const int m = static_cast<int>(outs.size());
  int current = 0;
  CUDA_CHECK(cudaGetDevice(&current));
  const double gamma = sw::float_gamma(k - 1);
  const int64_t chunk = std::min(n, kCheckChunk);
  sw::PinnedBuffer<float> got(m * chunk);  // output o's piece at o * chunk
  std::atomic<int64_t> wrong{0}, first_wrong{INT64_MAX};
  std::atomic<uint64_t> hash{0};
  for (int64_t begin = 0; begin < n; begin += kCheckChunk) {
    const int64_t count = std::min(kCheckChunk, n - begin);
    for (int o = 0; o < m; ++o) {
      CUDA_CHECK(cudaSetDevice(outs[o].gpu));
      CUDA_CHECK(cudaMemcpy(got.get() + o * chunk, outs[o].recv + begin, count * sizeof(float),
                            cudaMemcpyDeviceToHost));
    }
    sw::parallel_for(count, [&](int64_t lo, int64_t hi) {
      int64_t bad = 0, first_bad = INT64_MAX;
      uint64_t h = 0;
      for (int64_t i = lo; i < hi; ++i) {
        double sum = 0, abs_sum = 0;
        for (int g = 0; g < k; ++g) {
          const double x = value(d, vector_seed(seed, g), begin + i);
          sum += x;
          abs_sum += std::fabs(x);
        }
        const double bound = d == Data::kExact ? 0.0 : gamma * abs_sum;
        for (int o = 0; o < m; ++o) {
          const float y = got[o * chunk + i];
          if (!(std::fabs(y - sum) <= bound)) {  // NaN (a poisoned element) never passes
            ++bad;
            first_bad = std::min(first_bad, (begin + i) * m + o);
          }
          uint32_t bits;
          std::memcpy(&bits, &y, sizeof bits);
          h += sw::mix64((static_cast<uint64_t>(begin + i) * kMaxGpus + outs[o].rank) << 32 ^ bits);
        }
      }
      wrong += bad;
      hash += h;
      for (int64_t f = first_wrong.load();
           first_bad < f && !first_wrong.compare_exchange_weak(f, first_bad);) {
      }
    });
  }
  VectorCheck c{wrong.load(), hash.load(), ""};
  if (c.wrong > 0) {
    const int64_t i = first_wrong / m;
    const Output& o = outs[first_wrong % m];
    double sum = 0;
    for (int h = 0; h < k; ++h) sum += value(d, vector_seed(seed, h), i);
    CUDA_CHECK(cudaSetDevice(o.gpu));
    const float y = sw::read(o.recv + i);
    const std::string who = (o.rank == o.gpu ? "" : "rank " + std::to_string(o.rank) + ", ") +
                            "GPU " + std::to_string(o.gpu);
    char buf[200];
    std::snprintf(buf, sizeof buf, "%lld wrong elements; first: %s [%lld] = %.9g, want %.9g",
                  static_cast<long long>(c.wrong), who.c_str(), static_cast<long long>(i), y, sum);
    c.first = buf;
  }
  CUDA_CHECK(cudaSetDevice(current));
  return c;
}

VectorCheck run_checked(Machine& m, const Vectors& v, const Step<const Vectors>& a, Data d,
                        uint64_t seed) {
  poison_outputs(v);
  a.launch(m, v);
  sw::sync_gpus(v.count);
  return check_outputs(v, d, seed);
}

// Part 1 on 1 .. K GPUs at awkward sizes (shards of 0 floats included), both combines.
void verify_sharded_sum(Machine& m, sw::Report& report, uint64_t seed) {
  const std::vector<int64_t> sizes = {1, 7, 1000, 1000003, (int64_t{1} << 24) + 1};
  Shards s(std::vector<int64_t>(m.k, sizes.back()));
  for (int count = 1; count <= m.k; ++count)
    for (int64_t n : sizes) {
      s.split(count, n);
      s.fill(seed);
      const Ref ref = reference(seed, 0, n);
      for (const Step<Shards>& c : kSumSteps) {
        s.poison();
        c.launch(m, s);
        sw::sync_gpus(count);
        const std::string wrong = check_shard_results(shard_results(c, s), ref, sum_depth(s), n);
        report.check(wrong.empty(),
                     std::string(c.name) + " n=" + std::to_string(n) + " " + gpus_text(count),
                     wrong);
      }
    }
}

// Part 2 on 1 .. K GPUs: sizes not divisible by K nor by a slice, exact and random data, the ring
// with 1, 3 and 8 slices per chunk, with peer loads (where every pair has peer access) and with
// copies; then naive-gather and ring bit for bit over repeated runs.
void verify_all_reduce(Machine& m, sw::Report& report, uint64_t seed) {
  const std::vector<int64_t> sizes = {1, 7, 1000, 1000003, (int64_t{1} << 22) + 5};
  Vectors v = make_vectors(m, m.k, sizes.back());
  std::vector<bool> read_modes = {false};
  if (v.peer_ok) read_modes.push_back(true);
  for (int count = 1; count <= m.k; ++count) {
    v.count = count;
    for (int64_t n : sizes)
      for (Data d : {Data::kExact, Data::kRandom}) {
        v.n = n;
        fill_vectors(v, d, seed);
        for (const Step<const Vectors>& a : kAllReduceSteps) {
          const bool ring = is_ring(a);
          for (bool peer : ring ? read_modes : std::vector<bool>{v.peer_ok})
            for (int slices : ring ? std::vector<int>{1, 3, m.slices} : std::vector<int>{1}) {
              v.peer_reads = peer;
              v.slices = slices;
              const VectorCheck c = run_checked(m, v, a, d, seed);
              std::string what = std::string(a.name) + " n=" + std::to_string(n) + " " +
                                 gpus_text(count) + " " + data_name(d);
              if (ring)
                what += std::string(peer ? " peer-loads" : " copies") +
                        " slices=" + std::to_string(slices);
              report.check(c.wrong == 0, what, c.first);
            }
        }
      }
    v.n = 1000003;
    v.slices = m.slices;
    v.peer_reads = v.peer_ok;
    fill_vectors(v, Data::kRandom, seed);
    for (const Step<const Vectors>& a : kAllReduceSteps) {
      if (!same_bits(a)) continue;
      const VectorCheck first = run_checked(m, v, a, Data::kRandom, seed);
      int differing = 0;
      for (int r = 1; r < kRepeatRuns; ++r)
        differing += run_checked(m, v, a, Data::kRandom, seed).hash != first.hash;
      report.check(first.wrong == 0 && differing == 0,
                   std::string(a.name) + " bitwise identical over " + std::to_string(kRepeatRuns) +
                       " runs n=1000003 " + gpus_text(count),
                   first.wrong ? first.first
                   : differing ? std::to_string(differing) + " runs gave other bits"
                               : "");
    }
  }
}

}  // namespace ch14
