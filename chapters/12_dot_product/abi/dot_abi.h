/* A dot product for other languages: a C ABI over the kernels of chapter 12.
 *
 *   uint64_t h;
 *   if (sw_dot_init(n, &h) == SW_DOT_OK) {    // allocates the device buffers once
 *     float r;
 *     sw_dot(h, x, y, n, &r);                 // copies x and y in, runs, copies r out
 *     sw_dot_release(h);
 *   }
 *
 * A handle is a number, not a pointer: a wrong, stale or released handle is
 * recognized and answered with SW_DOT_BAD_HANDLE instead of a crash. Every call
 * returns one of the codes below; none of them exits the process. Calls are
 * thread-safe; calls on the same handle run one at a time.
 */
#ifndef SW_DOT_ABI_H
#define SW_DOT_ABI_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

enum {
  SW_DOT_OK = 0,
  SW_DOT_BAD_HANDLE = 1,    /* not a live handle from sw_dot_init */
  SW_DOT_SIZE_MISMATCH = 2, /* n differs from the n given to sw_dot_init */
  SW_DOT_BAD_ARGUMENT = 3,  /* a null pointer, or n < 1 */
  SW_DOT_NO_GPU = 4,        /* no usable CUDA device or driver */
  SW_DOT_OUT_OF_MEMORY = 5, /* device or host memory */
  SW_DOT_CUDA_ERROR = 6     /* any other CUDA error */
};

/* Allocates device buffers for vectors of n floats; writes the handle to *handle. */
int sw_dot_init(int64_t n, uint64_t* handle);
/* *result = sum of x[i] * y[i], accumulated in float; x and y are host arrays of n floats. */
int sw_dot(uint64_t handle, const float* x, const float* y, int64_t n, float* result);
/* Frees the handle's buffers; the handle is dead afterwards. */
int sw_dot_release(uint64_t handle);
/* A static English text for a code. */
const char* sw_dot_error_string(int code);

#ifdef __cplusplus
}
#endif

#endif /* SW_DOT_ABI_H */
