// Chapter 14, Part 2: the all-reduce. Every GPU holds a float vector and must end
// with the element-wise sum of all K vectors: naive-gather, ring, nccl-allreduce.
#pragma once

#include <cstdint>
#include <vector>

#include "common/cli.h"
#include "common/device.h"
#include "common/report.h"
#include "machine.h"

namespace ch14 {

const std::vector<int> kSliceSweep = {1, 2, 4,
                                      8};  // ring: slices per chunk measured, one stream each

// Every GPU's input and output vector (n floats of the capacity), GPU 0's gathered
// copies of the others' vectors (naive-gather), and staging per GPU where the ring
// copies before it adds.
struct Vectors {
  int count = 0;
  int64_t n = 0;
  int slices = 1;        // ring: slices per chunk
  bool peer_ok = false;  // every GPU can read every other GPU's memory
  bool peer_reads =
      false;  // ring: read the neighbour's memory directly (else copy it to staging first)
  std::vector<int64_t> add_grid;  // one full wave of the all-reduce kernels, per GPU
  std::vector<sw::DeviceBuffer<float>> send, recv, staging;
  sw::DeviceBuffer<float> gathered;
};

// The GPU before g in the ring 0 -> 1 -> ... -> count-1 -> 0.
inline int ring_prev(int g, int count) { return (g + count - 1) % count; }

// Buffers for an all-reduce of up to `capacity` floats on GPUs 0 .. k-1.
Vectors make_vectors(const Machine& m, int k, int64_t capacity);

// naive-gather, ring (the steps) and nccl-allreduce (the vendor row).
extern const std::vector<Step<const Vectors>> kAllReduceSteps;
bool is_ring(const Step<const Vectors>& step);

// Every GPU's input vector: its own stream of d's values (vector_seed).
void fill_vectors(const Vectors& v, Data d, uint64_t seed);
// NaN in every GPU's output vector, so that an element left unwritten fails.
void poison_outputs(const Vectors& v);

// Part 2's benchmark: the peer copies (problem "p2p"), then every all-reduce at every
// size on 1, 2, 4, ..., K GPUs; the ring at `slices` (0: the best of its sweep),
// reading its neighbour's memory directly unless `force_copy`.
void bench_all_reduce(Machine& m, sw::Report& report, const sw::CommonOptions& opt, bool force_copy,
                      int slices);

}  // namespace ch14
