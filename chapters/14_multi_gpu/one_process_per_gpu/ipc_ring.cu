// Chapter 14, Part 3: Part 2's ring across processes (see ranks.h). Each rank exports its
// vectors and a counter with cudaIpcGetMemHandle, the handles travel through the bootstrap,
// and each rank opens its predecessor's vectors (cudaIpcOpenMemHandle): Part 2's ring_copies
// and ring_add then read them as they read a peer pointer. Part 2's events order work that one
// thread queues; across processes nothing orders the queuing, so the events become counters in
// device memory: after each step a rank's GPU writes how many steps it has done, before a
// step its GPU waits for its predecessor's count, and a call starts when the next rank has
// counted the previous call done (it has read this rank's output).
#include <unistd.h>

#include <cstring>

#include "common/check.h"
#include "ranks.h"

namespace ch14 {
namespace {

// What a rank tells the others: its buffers' IPC handles, its GPU and its host.
struct Exported {
  cudaIpcMemHandle_t send, recv, done;
  char bus_id[32];
  char host[64];
};

__device__ uint64_t global_ns() {
  uint64_t t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}

// Waits until *done >= target: another rank's counter, read over NVLink through its IPC
// mapping. Returns after timeout_ns anyway, so that no kernel spins on after a rank died: by
// then the host's wait loop (half that time-out) has aborted and exited.
__global__ void wait_for_step(const volatile uint64_t* done, uint64_t target, uint64_t timeout_ns) {
  const uint64_t start = global_ns();
  while (*done < target && global_ns() - start < timeout_ns) __nanosleep(256);
}

// Publishes that this rank finished a step. The step's kernel or copy came before on this
// stream, so its writes are done; the fence keeps them before the counter for a reader on
// another GPU.
__global__ void finish_step(volatile uint64_t* done, uint64_t count) {
  __threadfence_system();
  *done = count;
}

// Opens another rank's buffer in this process (once per handle; the pointer is kept for close).
template <class T>
T* open(IpcRing* ring, const cudaIpcMemHandle_t& handle) {
  void* p = nullptr;
  CUDA_CHECK(cudaIpcOpenMemHandle(&p, handle, cudaIpcMemLazyEnablePeerAccess));
  ring->opened.push_back(p);
  return static_cast<T*>(p);
}

}  // namespace

std::string open_ipc_ring(Rank& rank, int64_t capacity, int max_slices, IpcRing* ring) {
  const int k = rank.env.size, me = rank.env.rank;
  ring->n = capacity;
  ring->send.allocate(capacity);
  ring->recv.allocate(capacity);
  ring->staging.allocate(capacity);
  ring->done.allocate(max_slices + 1);  // the steps done per slice, then the calls done
  CUDA_CHECK(cudaMemset(ring->done.get(), 0, ring->done.bytes()));
  CUDA_CHECK(cudaDeviceSynchronize());  // the counters are zero before any rank reads them
  ring->joined.resize(max_slices);
  for (cudaEvent_t& e : ring->joined)
    CUDA_CHECK(cudaEventCreateWithFlags(&e, cudaEventDisableTiming));

  Exported mine{};
  CUDA_CHECK(cudaIpcGetMemHandle(&mine.send, ring->send.get()));
  CUDA_CHECK(cudaIpcGetMemHandle(&mine.recv, ring->recv.get()));
  CUDA_CHECK(cudaIpcGetMemHandle(&mine.done, ring->done.get()));
  std::strncpy(mine.bus_id, rank.bus_id.c_str(), sizeof mine.bus_id - 1);
  std::strncpy(mine.host, rank.host.c_str(), sizeof mine.host - 1);
  std::vector<std::string> blobs;
  rank.require(
      rank.boot->allgather(std::string(reinterpret_cast<const char*>(&mine), sizeof mine), &blobs));
  std::vector<Exported> all(k);
  for (int r = 0; r < k; ++r) {
    if (blobs[r].size() != sizeof(Exported))
      rank.require({kExitBootstrap, "bootstrap: rank " + std::to_string(r) +
                                        "'s IPC handles have " + std::to_string(blobs[r].size()) +
                                        " bytes"});
    std::memcpy(&all[r], blobs[r].data(), sizeof(Exported));
  }

  RingView& v = ring->view;
  v.count = k;
  v.pos = me;
  v.gpu = v.prev_gpu = rank.device;
  v.send = ring->send.get();
  v.recv = ring->recv.get();
  v.staging = ring->staging.get();
  v.add_grid = ring_add_grid();
  if (k == 1) return "";  // no neighbour: the ring is a copy
  const int prev = (me + k - 1) % k, next = (me + 1) % k;
  for (int r = 0; r < k; ++r)
    if (std::strncmp(all[r].host, mine.host, sizeof mine.host) != 0)
      return std::string("rank ") + std::to_string(r) + " is on host " + all[r].host +
             ", this rank on " + mine.host + ": CUDA IPC works within one host";
  int prev_gpu = -1, next_gpu = -1, to_prev = 0, to_next = 0;  // as this process numbers them
  if (cudaDeviceGetByPCIBusId(&prev_gpu, all[prev].bus_id) != cudaSuccess ||
      cudaDeviceGetByPCIBusId(&next_gpu, all[next].bus_id) != cudaSuccess) {
    cudaGetLastError();  // clear it: the answer is the reason below
    return "a neighbour's GPU is not visible to rank " + std::to_string(me) +
           " (CUDA_VISIBLE_DEVICES must show every GPU of the host)";
  }
  CUDA_CHECK(cudaDeviceCanAccessPeer(&to_prev, rank.device, prev_gpu));
  CUDA_CHECK(cudaDeviceCanAccessPeer(&to_next, rank.device, next_gpu));
  if (!to_prev || !to_next)
    return "GPU " + rank.bus_id + " has no peer access to its neighbours' GPUs";
  // Loaded now, not at a first launch: loading a kernel may wait for the GPU to be idle, and a
  // waiting kernel on another rank's GPU may be waiting for this one (CUDA's lazy loading).
  cudaFuncAttributes attributes;
  CUDA_CHECK(cudaFuncGetAttributes(&attributes, wait_for_step));
  CUDA_CHECK(cudaFuncGetAttributes(&attributes, finish_step));
  // The mappings live in this rank's context (view.prev_gpu stays this GPU): copies from them
  // are copies within it, whose copy engine reads the other GPU over NVLink.
  v.prev_send = open<float>(ring, all[prev].send);
  v.prev_recv = open<float>(ring, all[prev].recv);
  ring->prev_done = open<uint64_t>(ring, all[prev].done);
  ring->next_done = next == prev ? ring->prev_done : open<uint64_t>(ring, all[next].done);
  return "";
}

void launch_ipc_ring(Rank& rank, IpcRing& r) {
  const int k = r.view.count;
  if (k == 1) {  // no neighbour: the sum is the input
    CUDA_CHECK(cudaMemcpyAsync(r.view.recv, r.view.send, r.n * sizeof(float),
                               cudaMemcpyDeviceToDevice, rank.streams[0]));
    return;
  }
  const uint64_t steps = ring_steps(k), base = r.calls * steps;
  const auto timeout_ns = static_cast<uint64_t>(2e9 * rank.timeout_s);
  uint64_t* calls_done = r.done.get() + r.joined.size();
  const uint64_t* next_calls_done = r.next_done + r.joined.size();
  for (int s = 0; s < ring_steps(k); ++s)
    for (int j = 0; j < r.slices; ++j) {
      cudaStream_t stream = rank.streams[j];
      if (s > 0)  // the previous rank has finished step s - 1 of this slice
        wait_for_step<<<1, 1, 0, stream>>>(r.prev_done + j, base + s, timeout_ns);
      else if (r.calls > 0)  // the next rank has finished the previous call: read this output
        wait_for_step<<<1, 1, 0, stream>>>(next_calls_done, r.calls, timeout_ns);
      CHECK_LAUNCH();
      const RingAdd a = ring_copies(r.view, r.n, r.slices, r.peer_reads, s, j, stream);
      if (a.n > 0) {
        ring_add<<<add_blocks(r.view.add_grid, a.n), kAddBlock, 0, stream>>>(a.mine, a.theirs,
                                                                             a.out, a.n);
        CHECK_LAUNCH();
      }
      finish_step<<<1, 1, 0, stream>>>(r.done.get() + j, base + s + 1);
      CHECK_LAUNCH();
    }
  // The call is over on this rank when every slice is: stream 0 joins the others, then counts.
  for (int j = 1; j < r.slices; ++j) {
    CUDA_CHECK(cudaEventRecord(r.joined[j], rank.streams[j]));
    CUDA_CHECK(cudaStreamWaitEvent(rank.streams[0], r.joined[j], 0));
  }
  finish_step<<<1, 1, 0, rank.streams[0]>>>(calls_done, r.calls + 1);
  CHECK_LAUNCH();
  ++r.calls;
}

void IpcRing::close() {
  for (void* p : opened) CUDA_CHECK(cudaIpcCloseMemHandle(p));
  opened.clear();
  for (cudaEvent_t e : joined) CUDA_CHECK(cudaEventDestroy(e));
  joined.clear();
}

}  // namespace ch14
