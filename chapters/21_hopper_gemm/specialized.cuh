// Chapter 21, steps 3 to 9: the warp-specialized block they all run (specialized.cu has each
// step's kernel, an instance of it, and its launcher): warp specialization, wgmma kept in
// flight, a persistent grid, clusters with multicast, consumers taking tiles in turn
// (ping-pong), the epilogue through shared memory and the copy engine (tma-store), the
// last wave cut along k (split-tail).
//
// Three warpgroups per block. Warpgroup 0 is the producer: it gives registers back
// (setmaxnreg.dec) and one of its threads only issues copies. Warpgroups 1 and 2 are the
// consumers (setmaxnreg.inc): each multiplies 64 rows of a 128 x 256 tile. Between them a
// ring of 4 stages (48 KiB each: A 128 x 64, B 256 x 64), each with two mbarriers:
//   full[s]   the producer arrives with the stage's byte count (expect_tx); the copies
//             complete it. Consumers wait on it.
//   empty[s]  each consumer warpgroup arrives when its wgmmas have read the stage (in a
//             cluster: on the stage's empty barrier of every block, one thread per block,
//             since each block's copies write into both). The producer waits on it before
//             refilling.
// Use u of the ring (u counts k-tiles over all of a block's tiles) is stage u % 4 in phase
// (u / 4) % 2: consumers wait for full's phase of that parity; the producer waits for
// empty's phase of the other parity, which a fresh barrier counts as complete (the first
// round of the ring needs no release).
// Step 3 waits for each k-tile's wgmmas (wait_group 0) before releasing its stage: the
// warpgroup issues nothing while its last wgmma drains. From step 4 on, a consumer issues
// k-tile t's wgmmas, then waits until only they are in flight (wait_group 1) and releases
// k-tile t - 1's stage: the tensor cores always have the next group queued.
// Step 7 (ping-pong): a unit is 64 rows a block, and the consumers take the block's units in
// turn, each a whole 64 x 256 tile: consumer 0 the block's units 0, 2, 4, ..., consumer 1
// units 1, 3, 5, .... The ring still holds the units' k-tiles in order, and a consumer's
// ring count u skips the other's units. Two more mbarriers, turn[0] and turn[1], pass the
// tensor cores from one consumer to the other: a consumer waits on its turn before its
// first wgmma of a unit, and arrives on the other's once its last is issued. So the one
// multiplies while the other writes its tile to C: the epilogue leaves the tensor cores'
// path. (The turns also keep each consumer's full-barrier waits within one phase of the
// producer, which a parity wait needs.)
// Step 8 (tma-store) is step 6 with the epilogue of kernels.cuh's store_through_smem: each
// consumer writes its tile into two 8 KiB buffers of its own (after the ring) in turn, and
// the copy engine stores them to C while the consumer goes on; the barriers move past them.
// Step 9 (split-tail) is step 8 with the last wave's units cut along k (hp::tail_plan): the
// block takes its whole units, then its pieces of the cut ones (hp::tail_pieces), the
// producer loading and the consumers multiplying only the piece's k-tiles. A unit's piece 0
// stores its part of C; piece i > 0 waits on the unit's flag (one per block of the cluster
// and consumer, in `flags`) until it reads i, adds its part to C with the copy engine, and
// sets the flag to i + 1 once its additions are done (the last piece sets it back to 0).
#pragma once

#include <cstdint>

#include "kernels.cuh"

namespace ch21 {
namespace specialized {

constexpr int kTileN = 256, kStages = 4, kHalfN = kTileN / 2;
constexpr int kThreads = 3 * kWarpgroup;
constexpr int kProducerRegs = 40, kConsumerRegs = 232;  // 128 x 40 + 256 x 232 <= 65536
constexpr uint32_t kBBytes = kTileN * kRowBytes, kStage = kABytes + kBBytes;  // 48 KiB
constexpr int kSharedBytes = kStages * kStage + kAlignSlack + kBarrierBytes;
constexpr uint32_t kEpilogueBytes = 2 * 2 * kBoxBytes;  // step 8: two buffers per consumer
// Tile rows per band of the persistent order (hp::tile_of): the 132 tiles a wave of an H100
// holds then span about 16 tile rows (2048 rows of A) and 8 tile columns (2048 rows of B),
// the fewest bytes of A and B for 132 tiles of 128 x 256.
constexpr int kGroup = 16;
static_assert((2 * kStages + 2) * 8 <= kBarrierBytes, "the mbarriers fit");
static_assert(kWarpgroup * (kProducerRegs + 2 * kConsumerRegs) <= 65536, "the SM's registers");
static_assert(kHalfN == 128, "each consumer: one m64n256k16 accumulator");
constexpr int kMaxSharedBytes = 227 * 1024;  // sm_90: a block's dynamic shared memory, opted in
static_assert(kSharedBytes + kEpilogueBytes <= kMaxSharedBytes, "step 8's buffers fit");

// One block's work (see the top of this file). kPersistent: the block takes units
// blockIdx.x / kCluster, + gridDim.x / kCluster, ... in the order of hp::tile_of with bands of
// `group` unit rows; else unit blockIdx.x / kCluster alone. A unit is kCluster tiles stacked
// down (the cluster's blocks, rank r taking the r-th), sharing their tile of B. kInFlight:
// the consumers keep one group of wgmmas in flight (steps 4 to 8). kPingPong: units of 64
// rows a block, taken by the consumers in turn (step 7). kTmaStore: C through shared memory
// and map_c where n allows it (step 8). kSplitTail: the last wave cut along k (step 9; with
// kTmaStore, where n allows the store).
template <bool kPersistent, int kCluster, bool kInFlight, bool kPingPong = false,
          bool kTmaStore = false, bool kSplitTail = false>
__device__ __forceinline__ void specialized(const CUtensorMap* map_a, const CUtensorMap* map_b,
                                            float* C, int m, int n, int k, int group,
                                            const CUtensorMap* map_c = nullptr,
                                            int* flags = nullptr) {
  static_assert(!kSplitTail || (kPersistent && kTmaStore && !kPingPong), "step 9 is step 8's");
#if SW_SM90A
  constexpr int kUnitM = kPingPong ? kWgmmaM : kTileM;            // rows of C a block's unit has
  constexpr uint32_t kStageBytes = kUnitM * kRowBytes + kBBytes;  // what a stage's copies bring
  constexpr int kUsers = kPingPong ? 1 : 2;  // consumer warpgroups reading a stage, per block
  extern __shared__ uint8_t raw[];
  uint8_t* base = align_1024(raw);
  uint8_t* epilogue = base + kStages * kStage;  // step 8's buffers
  uint64_t* full = reinterpret_cast<uint64_t*>(epilogue + (kTmaStore ? kEpilogueBytes : 0));
  uint64_t* empty = full + kStages;
  uint64_t* turn = empty + kStages;  // step 7: turn[c], consumer c may issue its wgmmas
  if (threadIdx.x == 0) {
    for (int s = 0; s < kStages; ++s) {
      hp::mbar_init(&full[s], 1);
      hp::mbar_init(&empty[s], kUsers * kCluster);
    }
    hp::mbar_init(&turn[0], 1);
    hp::mbar_init(&turn[1], 1);
    hp::fence_barrier_init();
  }
  if constexpr (kCluster > 1)
    hp::cluster_sync();  // every block's barriers exist before any copy or arrival
  else
    __syncthreads();
  const int rank = kCluster > 1 ? static_cast<int>(hp::cluster_rank()) : 0;
  const int tiles_m = static_cast<int>(sw::ceil_div(m, kUnitM));
  const int tiles_n = static_cast<int>(sw::ceil_div(n, kTileN));
  const int tiles_k = static_cast<int>(sw::ceil_div(k, kTileK));
  const int units_m = static_cast<int>(sw::ceil_div(tiles_m, kCluster));
  const int64_t units = static_cast<int64_t>(units_m) * tiles_n;
  const int64_t first = blockIdx.x / kCluster;
  const int64_t stride = kPersistent ? gridDim.x / kCluster : units;
  // Step 9: the units of the full waves whole, then this block's pieces of the cut ones.
  const bool split = kSplitTail && n % kStoreAlign == 0;
  const hp::TailPlan plan =
      split ? hp::tail_plan(units, static_cast<int>(stride), tiles_k) : hp::TailPlan{units, 0, 0};
  hp::Piece pieces[2];
  const int piece_count =
      split ? hp::tail_pieces(plan, tiles_k, static_cast<int>(first), pieces) : 0;
  if (threadIdx.x < kWarpgroup) {  // the producer
    hp::setmaxnreg_dec<kProducerRegs>();
    uint32_t use = 0;
    // k-tiles [k0, k1) of unit u into the ring
    auto load = [&](int64_t u, int k0, int k1) {
      const hp::TileIndex tile = hp::tile_of(u, units_m, tiles_n, group);
      const int a_row = hp::box_start((tile.m * kCluster + rank) * kUnitM, m);
      for (int t = k0; t < k1; ++t, ++use) {
        const int s = use % kStages;
        hp::mbar_wait(&empty[s], ((use / kStages) & 1) ^ 1);
        uint8_t* a_tile = base + s * kStage;
        hp::mbar_arrive_expect_tx(&full[s], kStageBytes);
        hp::tma_load_2d(a_tile, map_a, &full[s], t * kTileK, a_row);
        if constexpr (kCluster == 1) {
          hp::tma_load_2d(a_tile + kABytes, map_b, &full[s], t * kTileK, tile.n * kTileN);
        } else {  // this block's part of B, to every block of the cluster
          constexpr int kPart = kTileN / kCluster;
          hp::tma_load_2d_multicast(a_tile + kABytes + rank * kPart * kRowBytes, map_b, &full[s],
                                    t * kTileK, hp::box_start(tile.n * kTileN + rank * kPart, n),
                                    static_cast<uint16_t>((1 << kCluster) - 1));
        }
      }
    };
    if (threadIdx.x == 0) {
      for (int64_t u = first; u < plan.whole; u += stride) load(u, 0, tiles_k);
#pragma unroll
      for (int i = 0; i < 2; ++i)  // unrolled: the pieces stay in registers
        if (i < piece_count) load(pieces[i].unit, pieces[i].k_begin, pieces[i].k_end);
    }
  } else {  // a consumer, wg 0 or 1: rows 64 wg .. of each tile (step 7: whole units)
    hp::setmaxnreg_inc<kConsumerRegs>();
    const int wg = threadIdx.x / kWarpgroup - 1, lane = threadIdx.x % kWarpgroup;
    const int rows = kPingPong ? 0 : wg * kWgmmaM;  // the first row of C this consumer computes
    // This warpgroup is done with stage s: one arrival on its empty barrier in every block
    // of the cluster, thread c arriving at block c (the arrivals side by side).
    auto release = [&](uint32_t s) {
      if constexpr (kCluster == 1) {
        if (lane == 0) hp::mbar_arrive(&empty[s]);
      } else if (lane < kCluster) {
        hp::mbar_arrive_cluster(&empty[s], static_cast<uint32_t>(lane));
      }
    };
    // Step 7: this consumer's units are every other one of the block's, and its ring count
    // starts at its first unit's k-tiles.
    uint32_t use = kPingPong ? wg * tiles_k : 0, turns = 0;
    float d[kHalfN];
    // k-tiles [k0, k1) of unit u, then its epilogue: step 9's pieces with `piece`
    auto work = [&](int64_t u, int k0, int k1, const hp::Piece* piece) {
      const hp::TileIndex tile = hp::tile_of(u, units_m, tiles_n, group);
#pragma unroll
      for (int i = 0; i < kHalfN; ++i) d[i] = 0.0f;
      hp::fence_registers(d);
      // The fresh turn[0] counts its phase of parity 1 as complete: consumer 0 goes first.
      if constexpr (kPingPong) hp::mbar_wait(&turn[wg], (turns + 1 - wg) & 1);
      for (int t = k0; t < k1; ++t, ++use) {
        const uint32_t s = use % kStages;
        hp::mbar_wait(&full[s], (use / kStages) & 1);
        const uint32_t a_tile = hp::smem_u32(base + s * kStage) + rows * kRowBytes;
        const uint32_t b_tile = hp::smem_u32(base + s * kStage + kABytes);
        hp::wgmma_fence();
#pragma unroll
        for (int kk = 0; kk < kTileK / hp::kWgmmaK; ++kk)
          hp::wgmma_bf16(d, desc_at(a_tile, kk), desc_at(b_tile, kk));
        hp::wgmma_commit();
        if constexpr (kInFlight) {
          hp::wgmma_wait<1>();  // k-tile t - 1's wgmmas are done: its stage is free
          if (t > k0) release((use + kStages - 1) % kStages);
        } else {
          hp::wgmma_wait<0>();
          release(s);
        }
      }
      if constexpr (kPingPong) {  // every wgmma of the unit issued: the other consumer's turn
        if (lane == 0) hp::mbar_arrive(&turn[1 - wg]);
        ++turns;
      }
      if constexpr (kInFlight) {  // the tile's last k-tile
        hp::wgmma_wait<0>();
        release((use + kStages - 1) % kStages);
      }
      if constexpr (kPingPong) use += tiles_k;  // past the other consumer's unit
      hp::fence_registers(d);
      const int row0 = (tile.m * kCluster + rank) * kUnitM + rows, col0 = tile.n * kTileN;
      if (kTmaStore && n % kStoreAlign == 0) {
        // step 9: a cut unit's flag, this block's and this consumer's
        int* flag = piece != nullptr && piece->count > 1
                        ? flags + ((piece->unit - plan.whole) * kCluster + rank) * 2 + wg
                        : nullptr;
        const bool add = flag != nullptr && piece->index > 0;
        if (add && lane == 0) hp::wait_flag(flag, piece->index);  // the pieces before: in C
        store_through_smem(map_c, epilogue + wg * 2 * kBoxBytes, 1 + wg, row0, col0, d, add);
        if (flag != nullptr && lane == 0)
          hp::set_flag_after_bulk(flag, piece->index + 1 < piece->count ? piece->index + 1 : 0);
      } else {
        store_accumulators(C, m, n, row0, col0, d);
      }
    };
    for (int64_t u = first + (kPingPong ? wg * stride : 0); u < plan.whole;
         u += (kPingPong ? 2 : 1) * stride)
      work(u, 0, tiles_k, nullptr);
#pragma unroll
    for (int i = 0; i < 2; ++i)
      if (i < piece_count) work(pieces[i].unit, pieces[i].k_begin, pieces[i].k_end, &pieces[i]);
    if (kTmaStore && lane == 0) hp::tma_store_wait_all();  // before the buffers go away
  }
  if constexpr (kCluster > 1) {  // no block leaves while others may write to it
    __syncwarp();  // the producer's thread 0 back with its warp (the barrier is .aligned)
    hp::cluster_sync();
  }
#endif
}

}  // namespace specialized
}  // namespace ch21
