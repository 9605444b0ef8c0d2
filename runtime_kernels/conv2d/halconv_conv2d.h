// The direct correlation on CUDA cores for small kernels as a Halide extern stage
// (conv2d_sliding.cu; the plan in conv2d_sliding.h).
//
// halconv_conv2d_sliding_<precision>(in, kernel, boundary, fill, offset_x, offset_y,
// flip, out) computes, for every output position (x, y) of `out`,
//   sum_{j < kh} sum_{i < kw} kernel(i, j) padded(x + i - offset_x, y + j - offset_y)
// with the kernel reversed in both axes when `flip` (convolution) and padded the image
// `in` extended by `boundary` (a halconv::Boundary value; `fill`, rounded to the storage
// type, for the constant rule) — the conv2d generator's definition. `in` and `out` are
// 2D (x, y) or a batch (x, y, n): output image n reads image n of `in`, each extended on
// its own. Kernels of 1 .. 7 samples each way (conv2d_sliding.h); a larger one is refused.
// A bounds query asks for the whole image (or batch) and the kernel, as given. The call
// runs on Halide's current CUDA stream and returns 0 or a halide_error_code.
//
//   f64:    float64 samples, taps, sums and output
//   f32:    float32 throughout
//   f16f32: float16 samples and taps, float32 sums and output
//   f16:    float16 samples and taps, float32 sums, float16 output
#pragma once

#include <stdint.h>

#include "HalideRuntime.h"

#ifdef __cplusplus
extern "C" {
#endif

int halconv_conv2d_sliding_f64(halide_buffer_t *in, halide_buffer_t *kernel, int32_t boundary, double fill,
                               int32_t offset_x, int32_t offset_y, bool flip, halide_buffer_t *out);
int halconv_conv2d_sliding_f32(halide_buffer_t *in, halide_buffer_t *kernel, int32_t boundary, double fill,
                               int32_t offset_x, int32_t offset_y, bool flip, halide_buffer_t *out);
int halconv_conv2d_sliding_f16(halide_buffer_t *in, halide_buffer_t *kernel, int32_t boundary, double fill,
                               int32_t offset_x, int32_t offset_y, bool flip, halide_buffer_t *out);
int halconv_conv2d_sliding_f16f32(halide_buffer_t *in, halide_buffer_t *kernel, int32_t boundary, double fill,
                                  int32_t offset_x, int32_t offset_y, bool flip, halide_buffer_t *out);

#ifdef __cplusplus
}  // extern "C"
#endif
