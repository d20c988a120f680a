// Chapter 15: packed 16-bit counters, two to a 32-bit word of shared memory, and the
// proof that no count is lost when a 16-bit field wraps. packed16, packed16-batch,
// packed16-hot, cluster-packed16 and partition's second pass all count this way.
#pragma once

#include <cstdint>

#include "counting.cuh"

namespace ch15 {

constexpr int kBatchValues =
    16;  // packed_add_batch: atomics issued before their words are looked at
constexpr uint32_t kFlushAt =
    0x8000;  // a hot bin's register count this large goes to shared memory

// Bin b lives in the low (b even) or high (b odd) half of word b / 2. An add of k
// (1 to 0xFFFF) is one 32-bit atomicAdd of k << 0 or k << 16, and the word it returns
// tells this thread alone whether ITS add wrapped the field past 0xFFFF:
//   low field wrapped:  the field lost 2^16 and the carry put 1 into the high field.
//                       We hand 2^16 to hist[b], and -1 to hist[b + 1]; if that carry
//                       itself wrapped the high field (it was 0xFFFF), +2^16 too.
//   high field wrapped: the carry left the word; we hand 2^16 to hist[b].
// Nothing is ever subtracted in shared memory and no thread waits for another: every
// wrap, whoever causes it, is seen by exactly one atomic's return value. At the end,
// hist[b] plus the field equals the count. (hist is 64-bit and adds mod 2^64, so a
// -1 arriving before its +2^16 is harmless.) `local` indexes `words`; `bin` is the
// same bin in the whole histogram of `bins` bins (they differ in a cluster or slice,
// which always start at an even bin).
__device__ __noinline__ inline void hand_over_wrap(uint32_t bin, uint32_t old, uint32_t bins,
                                                   HistCount* hist) {
  atomicAdd(&hist[bin], HistCount{0x10000});
  if ((bin & 1) == 0 && bin + 1 < bins)
    atomicAdd(&hist[bin + 1], (old >> 16) == 0xFFFFu ? HistCount{0xFFFF} : ~HistCount{0});
}

// packed_add in two halves: the atomic, and the look at the word it returned.
__device__ __forceinline__ uint32_t packed_issue(uint32_t* words, uint32_t local, uint32_t k) {
  return atomicAdd(&words[local >> 1], k << ((local & 1) * 16));
}
__device__ __forceinline__ bool packed_wrapped(uint32_t old, uint32_t local, uint32_t k) {
  return ((old >> ((local & 1) * 16)) & 0xFFFFu) + k > 0xFFFFu;
}

__device__ __forceinline__ void packed_add(uint32_t* words, uint32_t local, uint32_t bin,
                                           uint32_t k, uint32_t bins, HistCount* hist) {
  const uint32_t old = packed_issue(words, local, k);
  if (packed_wrapped(old, local, k)) hand_over_wrap(bin, old, bins, hist);
}

// +1 for every value of v[] (with kSkipHot, all but those of bin `hot`, which it
// only counts), kBatchValues atomics at a time. A +1 wraps a field only if the field
// was 0xFFFF, so the batch first ORs the words its atomics returned: only when some
// field in them is 2^15 or more (rare unless one bin is hot) does it look at each
// word exactly. packed_add's look costs about as many instructions as the atomic.
template <class T, bool kSkipHot>
__device__ __forceinline__ uint32_t packed_add_batch(uint32_t* words, uint32_t bins,
                                                     HistCount* hist, const uint4 (&v)[kUnroll],
                                                     uint32_t hot = kNoBin) {
  constexpr int kValues = kUnroll * kVec<T>;
  static_assert(kValues % kBatchValues == 0, "whole batches per step");
  const auto bin_at = [&](int i) {
    return bin_of_key(key_at<T>(v[i / kVec<T>], i % kVec<T>), bins);
  };
  uint32_t hits = 0;
#pragma unroll
  for (int first = 0; first < kValues; first += kBatchValues) {
    uint32_t old[kBatchValues];
    uint32_t seen = 0;
#pragma unroll
    for (int i = 0; i < kBatchValues; ++i) {
      const uint32_t bin = bin_at(first + i);
      const bool counted = !kSkipHot || bin != hot;
      hits += !counted;
      old[i] = counted ? packed_issue(words, bin, 1) : 0u;
      seen |= old[i];
    }
    if (seen & 0x80008000u) {
#pragma unroll
      for (int i = 0; i < kBatchValues; ++i) {
        const uint32_t bin = bin_at(first + i);
        if (packed_wrapped(old[i], bin, 1)) hand_over_wrap(bin, old[i], bins, hist);
      }
    }
  }
  return hits;
}

}  // namespace ch15
