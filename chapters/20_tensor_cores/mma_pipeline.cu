// Chapter 20, steps 3 and 4: a cp.async pipeline of shared-memory stages, rows XOR-swizzled
// (step 3); the warps' operands loaded one step ahead, and a deeper k tile (step 4).
#include "pipeline.cuh"

namespace ch20 {
namespace pipeline {

// A warp's operands for k kk to kk + 15 of one stage: per i, one ldmatrix.x4 of A (mma tile
// i's 16 x 16); per pair of mma tiles j, j + 1, one ldmatrix.x4.trans of B, split into their
// two registers each.
template <class S>
__device__ __forceinline__ void load_fragments(uint32_t (&a)[kTilesM][4], uint32_t (&b)[kTilesN][2],
                                               const uint16_t* as, const uint16_t* bs, int kk,
                                               int warp_row, int warp_col, int lane) {
  const int lane_row = lane % 16, lane_chunk = lane / 16;  // this lane's ldmatrix row
#pragma unroll
  for (int i = 0; i < kTilesM; ++i)
    ldmatrix_x4(a[i],
                &as[a_at<S::kChunksA>(warp_row + i * kMmaM + lane_row, kk / kChunk + lane_chunk)]);
#pragma unroll
  for (int j = 0; j < kTilesN; j += 2) {
    uint32_t r[4];
    ldmatrix_x4_trans(r, &bs[b_at(kk + lane_row, (warp_col + j * kMmaN) / kChunk + lane_chunk)]);
    split_pair(b, j, r);
  }
}

// Step 3. The pipeline: stages 0 to 2 are filled before the loop; at tile t the block waits
// for tile t's copies (at most kStages - 2 groups still in flight), one barrier (tile t is in
// shared memory for every thread, and every warp is done with tile t - 1), then starts the
// copies of tile t + 3 into the stage tile t - 1 used, and multiplies tile t while they and
// those of tiles t + 1 and t + 2 are in flight. Per 16 of k a warp issues 4 ldmatrix.x4 (A),
// 4 ldmatrix.x4.trans (B) and 32 mma.sync, as in step 2 (swizzled addresses).
template <class T>
__global__ void __launch_bounds__(kThreads, 1)
    gemm_mma_cp_async(const uint16_t* __restrict__ A, const uint16_t* __restrict__ B,
                      float* __restrict__ C, int m, int n, int k, float alpha, float beta,
                      bool vec) {
  using S = Stages<32, 4>;
  constexpr int kTileK = 32, kStages = 4;
  extern __shared__ __align__(128) uint16_t shared[];  // stage s: A tile, then B tile
  const Place w = place();
  const int tiles = static_cast<int>(sw::ceil_div(k, kTileK));
  fill_first_stages<S, kTileK, kStages>(A, B, shared, m, n, k, w.row0, w.col0, tiles, vec);
  float acc[kTilesM][kTilesN][4] = {};
  for (int t = 0; t < tiles; ++t) {
    cp_async_wait<kStages - 2>();
    __syncthreads();
    const int next = t + kStages - 1;
    uint16_t* refill = shared + next % kStages * S::kStage;
    if (next < tiles) load_stage<S>(A, B, refill, m, n, k, w.row0, w.col0, next * kTileK, vec);
    cp_async_commit();
    const uint16_t* as = shared + t % kStages * S::kStage;
#pragma unroll
    for (int kk = 0; kk < kTileK; kk += kMmaK) {
      uint32_t a[kTilesM][4], b[kTilesN][2];
      load_fragments<S>(a, b, as, as + S::kStageA, kk, w.warp_row, w.warp_col, w.lane);
      multiply<T>(acc, a, b);
    }
  }
  store_warp_tile(C, m, n, w.row0, w.col0, w.warp_row, w.warp_col, w.lane, acc, alpha, beta);
}

// Step 4: step 3's pipeline, and the warp's operands one step of 16 ahead: two sets of
// fragments in registers, the next set loaded by ldmatrix while the mma.syncs of this one
// run. The wait and the barrier for tile t + 1 move to before tile t's last 16 of k, so that
// tile t + 1's first operands load while tile t's last mma.syncs run (every warp has loaded
// its last operands of tile t before the barrier: after it, tile t's stage may be refilled,
// which the block starts at tile t + 1's first step). A deeper k tile (kTileK 64) halves
// the barriers and the waits a product needs.
template <class T, int kTileK, int kStages>
__global__ void __launch_bounds__(kThreads, 1)
    gemm_mma_ahead(const uint16_t* __restrict__ A, const uint16_t* __restrict__ B,
                   float* __restrict__ C, int m, int n, int k, float alpha, float beta, bool vec) {
  using S = Stages<kTileK, kStages>;
  constexpr int kSteps = kTileK / kMmaK;  // steps of 16 a tile
  static_assert(kSteps % 2 == 0, "the two sets of fragments alternate within a tile");
  extern __shared__ __align__(128) uint16_t shared[];  // stage s: A tile, then B tile
  const Place w = place();
  const int tiles = static_cast<int>(sw::ceil_div(k, kTileK));
  fill_first_stages<S, kTileK, kStages>(A, B, shared, m, n, k, w.row0, w.col0, tiles, vec);
  float acc[kTilesM][kTilesN][4] = {};
  uint32_t a[2][kTilesM][4], b[2][kTilesN][2];
  cp_async_wait<kStages - 2>();
  __syncthreads();
  load_fragments<S>(a[0], b[0], shared, shared + S::kStageA, 0, w.warp_row, w.warp_col, w.lane);
  for (int t = 0; t < tiles; ++t) {
    const uint16_t* as = shared + t % kStages * S::kStage;
#pragma unroll
    for (int s = 0; s < kSteps; ++s) {
      // Tile t + kStages - 1 into the stage of tile t - 1, which every warp has finished
      // (the barrier before tile t - 1's last step): its A tile at the first step, its B tile
      // at the second, one group.
      const int next = t + kStages - 1;
      uint16_t* refill = shared + next % kStages * S::kStage;
      if (s == 0 && next < tiles) load_a<S>(A, refill, m, k, w.row0, next * kTileK, vec);
      if (s == 1) {
        if (next < tiles) load_b<S>(B, refill + S::kStageA, n, k, w.col0, next * kTileK, vec);
        cp_async_commit();
      }
      if (s < kSteps - 1) {
        load_fragments<S>(a[(s + 1) % 2], b[(s + 1) % 2], as, as + S::kStageA, (s + 1) * kMmaK,
                          w.warp_row, w.warp_col, w.lane);
      } else {
        cp_async_wait<kStages - 2>();  // tile t + 1's copies have landed, for every thread
        __syncthreads();
        const uint16_t* next_as = shared + (t + 1) % kStages * S::kStage;
        if (t + 1 < tiles)
          load_fragments<S>(a[0], b[0], next_as, next_as + S::kStageA, 0, w.warp_row, w.warp_col,
                            w.lane);
      }
      multiply<T>(acc, a[s % 2], b[s % 2]);
    }
  }
  store_warp_tile(C, m, n, w.row0, w.col0, w.warp_row, w.warp_col, w.lane, acc, alpha, beta);
}

template <int kTileK, int kStages>
void launch_ahead(const gm::Args& a) {
  constexpr int kBytes = Stages<kTileK, kStages>::kSharedBytes;
  const Kernel kernel = a.type == gm::InputType::kBf16
                            ? allowed<gemm_mma_ahead<__nv_bfloat16, kTileK, kStages>, kBytes>()
                            : allowed<gemm_mma_ahead<__half, kTileK, kStages>, kBytes>();
  kernel<<<tile_grid(a, kTileM, kTileN), kThreads, kBytes>>>(a.a16, a.b16, a.c, a.m, a.n, a.k,
                                                             a.alpha, a.beta, gm::vector_ok(a));
  CHECK_LAUNCH();
}

}  // namespace pipeline

void launch_mma_cp_async(const gm::Args& a) {
  using namespace pipeline;
  constexpr int kBytes = Stages<32, 4>::kSharedBytes;
  const Kernel kernel = a.type == gm::InputType::kBf16
                            ? allowed<gemm_mma_cp_async<__nv_bfloat16>, kBytes>()
                            : allowed<gemm_mma_cp_async<__half>, kBytes>();
  kernel<<<tile_grid(a, kTileM, kTileN), kThreads, kBytes>>>(a.a16, a.b16, a.c, a.m, a.n, a.k,
                                                             a.alpha, a.beta, gm::vector_ok(a));
  CHECK_LAUNCH();
}

// Step 4's tiles (--config): the index is Args::config, the default first.
const std::vector<gm::TileConfig> kAheadConfigs = {
    {"k64-s3", pipeline::kTileM, pipeline::kTileN, 64, pipeline::kThreads, 3},
    {"k32-s4", pipeline::kTileM, pipeline::kTileN, 32, pipeline::kThreads, 4},
};
void launch_mma_ahead(const gm::Args& a) {
  a.config == 1 ? pipeline::launch_ahead<32, 4>(a) : pipeline::launch_ahead<64, 3>(a);
}

}  // namespace ch20
