// Entry points of the multi-channel GEMM convolutions (im2col, implicit_gemm), in Halide's
// extern-stage convention (see single_channel/halconv_tc.h): with out->is_bounds_query() they report the image
// region they read and return 0; otherwise they compute, on Halide's current CUDA stream,
// the valid cross-correlation of `in` by each of the N kernels (flipped in x and y when
// `flip`: convolution) and return 0 or a halide_error_code.
//   in      (c, x, y)      C channels innermost (dim 0 stride 1), read from its first channel
//   kernel  (c, kx, ky, n) N kernels of kw x kh x C, any strides
//   out     (n, x, y)      dim 0 stride 1; output channel n uses kernel n (same coordinates)
// The bounds query asks for channels channel_min .. channel_min + channel_pitch - 1: the
// image's own channels, or from 0 the GEMM's channel pitch (contract.h) when the producer
// pads them. Generators call them through define_extern
// (generators/multichannel_gemm_generator.cpp), by the names contract.h builds:
// halconv_mc_<gemm>_<precision>.
#pragma once

#include <stddef.h>

#include "HalideRuntime.h"

#ifdef __cplusplus
extern "C" {
#endif

// float16 image and kernels, tensor cores (WMMA) with float32 accumulation; float32 output.
int halconv_mc_im2col_f16f32(halide_buffer_t *in, halide_buffer_t *kernel, bool flip, int32_t channel_min,
                             int32_t channel_pitch, halide_buffer_t *out);
// The same with a float16 output.
int halconv_mc_im2col_f16(halide_buffer_t *in, halide_buffer_t *kernel, bool flip, int32_t channel_min,
                          int32_t channel_pitch, halide_buffer_t *out);
// float32 everywhere, the GEMM through cuBLAS (SGEMM, no TF32).
int halconv_mc_im2col_f32(halide_buffer_t *in, halide_buffer_t *kernel, bool flip, int32_t channel_min,
                          int32_t channel_pitch, halide_buffer_t *out);

// Implicit GEMM (no column buffer: the image patch staged in shared memory is the column
// matrix), float16 image and kernels on tensor cores with float32 accumulation; float32
// or float16 output. Reads pixels 16 bytes at a time when the image's strides allow it
// (channel pitch a multiple of 8, or C <= 8 with pitch 2 / 4 / 8), else copies the
// region padded first.
int halconv_mc_implicit_gemm_f16f32(halide_buffer_t *in, halide_buffer_t *kernel, bool flip, int32_t channel_min,
                                    int32_t channel_pitch, halide_buffer_t *out);
int halconv_mc_implicit_gemm_f16(halide_buffer_t *in, halide_buffer_t *kernel, bool flip, int32_t channel_min,
                                 int32_t channel_pitch, halide_buffer_t *out);

// Device bytes of scratch one call of halconv_mc_<gemm>_<precision> takes for an
// out_width x out_height output of `filters` kernels of kernel_width x kernel_height x
// channels on the current device: the workspace a caller installs (common/workspace.h)
// so that the call allocates nothing. gemm and precision as in contract.h; an unknown one
// gives SIZE_MAX.
size_t halconv_mc_workspace_bytes(const char *gemm, const char *precision, int channels, int kernel_width,
                                  int kernel_height, int filters, int out_width, int out_height);

#ifdef __cplusplus
}
#endif
