// CUB's device-wide calls that several chapters time as their vendor line. Each is
// a template that compiles CUB's kernels for every GPU architecture of the build;
// here they compile once, into common/, instead of in every chapter that includes a
// harness (CUB's own argument order: temporary storage and its size first).
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>

namespace sw {

// cub::DeviceReduce::Sum of n floats into *out.
cudaError_t cub_sum(void* temp, size_t& temp_bytes, const float* in, float* out, int64_t n,
                    cudaStream_t stream = nullptr);

// cub::DeviceHistogram::HistogramEven: levels - 1 bins of equal width over [lower, upper).
cudaError_t cub_histogram_even(void* temp, size_t& temp_bytes, const uint8_t* in, unsigned* counts,
                               int levels, int lower, int upper, int n);
cudaError_t cub_histogram_even(void* temp, size_t& temp_bytes, const uint16_t* in, unsigned* counts,
                               int levels, int lower, int upper, int n);
cudaError_t cub_histogram_even(void* temp, size_t& temp_bytes, const uint32_t* in, unsigned* counts,
                               int levels, unsigned lower, unsigned upper, int n);

// cub::DeviceScan::InclusiveSum (inclusive) or ExclusiveSum of n elements into out.
cudaError_t cub_scan_sum(void* temp, size_t& temp_bytes, const uint32_t* in, uint32_t* out,
                         int64_t n, bool inclusive, cudaStream_t stream = nullptr);
cudaError_t cub_scan_sum(void* temp, size_t& temp_bytes, const float* in, float* out, int64_t n,
                         bool inclusive, cudaStream_t stream = nullptr);

}  // namespace sw
