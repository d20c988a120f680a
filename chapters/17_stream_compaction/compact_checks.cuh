// Chapter 17's checks, included by 17_stream_compaction.cu: the input and the
// buffers a compaction writes (CompactData), the reference from the generator on
// all cores and the check of an output against it, and CUB's DeviceSelect::If.
#pragma once

#include <algorithm>
#include <cstdint>
#include <cub/device/device_select.cuh>
#include <string>
#include <vector>

#include "common/scan_harness.h"
#include "compact_tile.cuh"

namespace {

namespace sc = sw::scan;
using ch16::Count;

// --- the data, the reference, the vendor --------------------------------------------------------

struct CompactData {
  int64_t n;
  mutable uint64_t seed, digest = 0;   // of the input's contents (reseed changes them)
  sw::DeviceBuffer<uint32_t> in, out;  // out: n + 1 elements; out[n] is never written
  sw::DeviceBuffer<Count> count, scratch, state;

  CompactData(int64_t size, uint64_t s) : n(size), seed(s) {
    in.allocate(n);
    out.allocate(n + 1);
    count.allocate(1);
    scratch.allocate(sw::ceil_div(n, 64) + 64);
    state.allocate(sw::ceil_div(n, 128) + 1);
    reseed(s);
  }
  // New contents from another seed (--graded-timing); the check follows the seed.
  void reseed(uint64_t s) const {
    seed = s;
    sc::fill(in.get(), n, seed);
    digest = sw::device_digest(in.get(), in.bytes());
  }
  CompactCall call(KeepBelow keep, sc::Tile t, cudaStream_t stream = nullptr) const {
    return {in.get(), out.get(), count.get(), n, keep, t, scratch.get(), state.get(), stream};
  }
  void poison() const {
    for (const auto* b : {&count, &scratch, &state}) sw::poison(b->get(), b->bytes());
    sw::poison(out.get(), out.bytes());
  }
  // The output and its count against the reference, the tickets, the input.
  sc::Verdict check(KeepBelow keep, int64_t tickets) const;
};

// The reference from the generator, on all cores: each chunk's kept count, their
// prefix (where each chunk's kept elements start), then every kept element in place.
sc::Verdict CompactData::check(KeepBelow keep, int64_t tickets) const {
  const int64_t chunks = sw::ceil_div(n, sc::kChunk);
  std::vector<int64_t> start(chunks + 1, 0);
  sw::parallel_for(
      chunks,
      [&](int64_t b, int64_t e) {
        for (int64_t c = b; c < e; ++c)
          for (int64_t i = c * sc::kChunk; i < std::min(n, (c + 1) * sc::kChunk); ++i)
            start[c + 1] += keep(sc::element<uint32_t>(seed, i));
      },
      1);
  for (int64_t c = 0; c < chunks; ++c) start[c + 1] += start[c];
  const int64_t total = start[chunks];
  const Count got = sw::read(count.get());
  if (got != static_cast<Count>(total))
    return {false, "count: got " + std::to_string(got) + ", want " + std::to_string(total)};
  sc::Mismatches bad;
  sc::for_each_piece(out.get(), total, [&](const uint32_t* host, int64_t first, int64_t size) {
    const int64_t c0 = std::upper_bound(start.begin(), start.end(), first) - start.begin() - 1;
    const int64_t c1 = std::min<int64_t>(
        chunks, std::lower_bound(start.begin(), start.end(), first + size) - start.begin());
    sw::parallel_for(
        c1 - c0,
        [&](int64_t b, int64_t e) {
          for (int64_t c = c0 + b; c < c0 + e; ++c) {
            int64_t at = start[c];
            for (int64_t i = c * sc::kChunk; i < std::min(n, (c + 1) * sc::kChunk); ++i) {
              const uint32_t x = sc::element<uint32_t>(seed, i);
              if (!keep(x)) continue;
              if (at >= first && at < first + size && host[at - first] != x)
                bad.add(at, sc::got_want("out", at, host[at - first], x));
              ++at;
            }
          }
        },
        1);
  });
  if (total < n && sw::read(out.get() + total) != sw::read(out.get() + n))
    bad.add(total, "out[" + std::to_string(total) + "] was written: past the count");
  sc::Verdict v = bad.verdict();
  if (v.ok) v = sc::tickets_drawn(state.get(), tickets);
  if (v.ok && sw::device_digest(in.get(), in.bytes()) != digest)
    v = {false, "input changed: the step wrote into x"};
  return v;
}

// cub::DeviceSelect::If with the same predicate, temporary storage allocated here.
class CubSelect {
 public:
  CubSelect(const CompactData& d, KeepBelow keep) : d_(d), keep_(keep) {
    CUDA_CHECK(
        cub::DeviceSelect::If(nullptr, bytes_, d.in.get(), d.out.get(), d.count.get(), d.n, keep));
    temp_.allocate(static_cast<int64_t>(std::max<size_t>(bytes_, 1)));
  }
  void operator()(cudaStream_t stream = nullptr) const {
    size_t bytes = bytes_;
    CUDA_CHECK(cub::DeviceSelect::If(temp_.get(), bytes, d_.in.get(), d_.out.get(), d_.count.get(),
                                     d_.n, keep_, stream));
  }

 private:
  const CompactData& d_;
  KeepBelow keep_;
  size_t bytes_ = 0;
  sw::DeviceBuffer<unsigned char> temp_;
};

}  // namespace
