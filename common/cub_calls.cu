// CUB's device-wide calls, compiled once (see cub_calls.h).
#include <cub/device/device_histogram.cuh>
#include <cub/device/device_reduce.cuh>
#include <cub/device/device_scan.cuh>

#include "cub_calls.h"

namespace sw {

cudaError_t cub_sum(void* temp, size_t& temp_bytes, const float* in, float* out, int64_t n,
                    cudaStream_t stream) {
  return cub::DeviceReduce::Sum(temp, temp_bytes, in, out, n, stream);
}

cudaError_t cub_histogram_even(void* temp, size_t& temp_bytes, const uint8_t* in, unsigned* counts,
                               int levels, int lower, int upper, int n) {
  return cub::DeviceHistogram::HistogramEven(temp, temp_bytes, in, counts, levels, lower, upper, n);
}
cudaError_t cub_histogram_even(void* temp, size_t& temp_bytes, const uint16_t* in, unsigned* counts,
                               int levels, int lower, int upper, int n) {
  return cub::DeviceHistogram::HistogramEven(temp, temp_bytes, in, counts, levels, lower, upper, n);
}
cudaError_t cub_histogram_even(void* temp, size_t& temp_bytes, const uint32_t* in, unsigned* counts,
                               int levels, unsigned lower, unsigned upper, int n) {
  return cub::DeviceHistogram::HistogramEven(temp, temp_bytes, in, counts, levels, lower, upper, n);
}

template <class T>
cudaError_t scan_sum(void* temp, size_t& temp_bytes, const T* in, T* out, int64_t n, bool inclusive,
                     cudaStream_t stream) {
  return inclusive ? cub::DeviceScan::InclusiveSum(temp, temp_bytes, in, out, n, stream)
                   : cub::DeviceScan::ExclusiveSum(temp, temp_bytes, in, out, n, stream);
}
cudaError_t cub_scan_sum(void* temp, size_t& temp_bytes, const uint32_t* in, uint32_t* out,
                         int64_t n, bool inclusive, cudaStream_t stream) {
  return scan_sum(temp, temp_bytes, in, out, n, inclusive, stream);
}
cudaError_t cub_scan_sum(void* temp, size_t& temp_bytes, const float* in, float* out, int64_t n,
                         bool inclusive, cudaStream_t stream) {
  return scan_sum(temp, temp_bytes, in, out, n, inclusive, stream);
}

}  // namespace sw
