// Chapter 14's machine: GPUs 0 .. k-1 of this run with their streams, events, peer
// access and NCCL communicators, and the data every part sums (element i of a
// stream, the same on the host and the GPU).
#pragma once

#include <cuda_runtime.h>
#include <nccl.h>

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "common/bench/step.h"
#include "common/data.h"

namespace ch14 {

constexpr int kMaxGpus = 16;  // --gpus range

// --- the data ----------------------------------------------------------------------------

enum class Data {
  kRandom,  // chapter 01's mixed signs and magnitudes (sw::float_value): any sum is exact in double
  kExact,   // multiples of 1/16 in [-64, 64): any sum of up to 2^14 of them is exact in float too
};
inline const char* data_name(Data d) { return d == Data::kExact ? "exact" : "random"; }

__host__ __device__ inline float value(Data d, uint64_t seed, int64_t i) {
  if (d == Data::kExact)
    return static_cast<float>(static_cast<int>(sw::random_bits(seed, i) >> 53) - 1024) / 16;
  return sw::float_value(seed, static_cast<uint64_t>(i));
}

// The all-reduce's input on GPU g: its own stream of values.
inline uint64_t vector_seed(uint64_t seed, int g) { return seed + 1 + static_cast<uint64_t>(g); }

// On GPU `gpu`: x[i] = value(d, seed, first + i), a shard of one long array or a
// GPU's whole vector.
void launch_fill(int gpu, float* x, int64_t first, int64_t n, uint64_t seed, Data d);

// --- the GPUs ----------------------------------------------------------------------------

// Streams (one per ring slice; slice 0's stream serves everything else), the ring's
// events, which pairs can read each other's memory, and NCCL communicators, one set
// per number of GPUs (created when first needed).
struct Machine {
  int k = 0;
  int slices = 0;                                 // streams per GPU: the most slices any ring uses
  std::vector<std::vector<cudaStream_t>> stream;  // [gpu][slice]
  std::vector<std::vector<cudaEvent_t>> done;     // [gpu][slice]: the ring's latest finished step
  std::vector<std::vector<bool>> peer;            // peer[g][h]: GPU g reads GPU h's memory directly
  std::map<int, std::vector<ncclComm_t>> comms;   // by number of GPUs: one communicator per GPU

  const std::vector<ncclComm_t>& comm(int count);  // GPUs 0 .. count-1
  ~Machine();
};

// A row of a step table: a name, its launch on the machine and the buffers it works
// on (Part 1's Shards, Part 2's Vectors), its role, and kSameBits in its traits where
// it adds in a fixed order: every run must give the same bits (checked).
template <class Buffers>
using Step = sw::bench::Step<void (*)(Machine&, Buffers&)>;
constexpr unsigned kSameBits = 1;  // Step::traits
template <class S>
bool same_bits(const S& step) {
  return (step.traits & kSameBits) != 0;
}

// Streams (`slices` per GPU), events and peer access on GPUs 0 .. k-1.
void start_machine(Machine& m, int k, int slices);

// "3 of 4 visible GPU(s); NCCL 2.27.7; NCCL_NVLS_ENABLE=0; peer access 0-1:yes ..."
std::string describe(const Machine& m, int visible);

// 1, 2, 4, ... up to k, and k itself: the GPU counts every part runs on.
std::vector<int> gpu_counts(int k);

inline std::string gpus_text(int count) { return "gpus=" + std::to_string(count); }

}  // namespace ch14
