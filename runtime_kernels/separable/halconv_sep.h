// The separable correlation as Halide extern stages: on CUDA cores the sliding pass
// (separable_sliding.cu; the plan in separable_sliding.h) and 1D FFTs along lines
// (separable_fft.cu; the plan in separable_fft.h); on Hopper's tensor cores two line passes
// (separable_tensor_core_sm90.cu; the plan in separable_tensor_core.h).
//
// halconv_sep_sliding_<precision>(in, row_kernel, col_kernel, boundary, fill, offset_x,
// offset_y, flip, out) computes, for every output position (x, y) of `out`,
//   sum_j col(j) sum_i row(i) padded(x + i - offset_x, y + j - offset_y)
// with the kernels reversed when `flip` (convolution) and padded the image `in` extended
// by `boundary` (a halconv::Boundary value; `fill`, rounded to the storage type, for the
// constant rule) — the separable generator's definition. Given 2D (tap, term) factors, r
// terms of a low-rank kernel (the low_rank generator's definition), it sums the r terms'
// results: one pass per term, each after the first adding into the output (so in f16 the
// output is rounded once per term). A bounds query asks for the whole image and both
// kernels, as given. The call runs on Halide's current CUDA stream
// and returns 0 or a halide_error_code.
//
//   f64:    float64 samples, taps, sums and output
//   f32:    float32 throughout
//   f16f32: float16 samples and taps, float32 sums and output
//   f16:    float16 samples and taps, float32 sums (more accurate than float16 arithmetic,
//           as the tensor-core variants), float16 output
//
// halconv_sep_fft_lines_<precision>(...), the same arguments and definition for one term
// (1D kernels only), kernels up to fft_max_taps per axis: a row pass of overlap-save FFTs
// along x into a float32 intermediate of the output's width and the image's height, then
// the same along y into the output. float32 transforms in every precision it has (f32,
// f16f32, f16); the taps' spectra summed in float64. Its error is the transforms', per
// line block rather than per window: each pass's output within
// 8 u log2(M) sqrt(2 M) sum|taps| max|x| (u = 2^-24, M the pass's line length, max|x| over
// the block's samples), the row pass's error carried by the column pass's sum|taps|. A
// block holding NaN, Inf or a sample whose transform could overflow is summed directly, so
// such samples reach only the outputs whose window holds them. Scratch: the intermediate
// and the spectra (fft_lines_layout), from the installed workspace or allocated per call;
// where the workspace holds tables a plan prepared for this very call (FftLinesTables),
// only the intermediate, and the call skips its setup and spectra kernels.
//
// halconv_sep_tensor_core_f32(...), the same arguments and definition for one term (1D kernels
// of up to tensor_core_max_taps each), on sm_90 devices only: a pass of the row taps along the
// image's rows into a float32 intermediate (the output's width in lines of the image's height,
// transposed), then one of the column taps along its lines into the output. Each pass sums on
// float16 tensor cores with its samples carried as two float16 parts, each line of
// 64 MB + K - 1 samples (MB = 3 to 6, as many as fit) at its own power-of-two scale, so that a
// pass's output keeps the float32 bound (K + 4) 2^-24 sum|tap x| but for samples more than
// 2^28 below their line's largest, which keep 2^-40 of that largest absolutely. A line holding
// NaN or Inf is summed directly (the samples reach only the outputs whose window holds them).
// Scratch: the intermediate (tensor_core_workspace_bytes), from the installed workspace or
// allocated per call.
#pragma once

#include <stdint.h>

#include "HalideRuntime.h"

#ifdef __cplusplus
extern "C" {
#endif

int halconv_sep_sliding_f64(halide_buffer_t *in, halide_buffer_t *row_kernel, halide_buffer_t *col_kernel,
                            int32_t boundary, double fill, int32_t offset_x, int32_t offset_y, bool flip,
                            halide_buffer_t *out);
int halconv_sep_sliding_f32(halide_buffer_t *in, halide_buffer_t *row_kernel, halide_buffer_t *col_kernel,
                            int32_t boundary, double fill, int32_t offset_x, int32_t offset_y, bool flip,
                            halide_buffer_t *out);
int halconv_sep_sliding_f16(halide_buffer_t *in, halide_buffer_t *row_kernel, halide_buffer_t *col_kernel,
                            int32_t boundary, double fill, int32_t offset_x, int32_t offset_y, bool flip,
                            halide_buffer_t *out);
int halconv_sep_sliding_f16f32(halide_buffer_t *in, halide_buffer_t *row_kernel, halide_buffer_t *col_kernel,
                               int32_t boundary, double fill, int32_t offset_x, int32_t offset_y, bool flip,
                               halide_buffer_t *out);

int halconv_sep_fft_lines_f32(halide_buffer_t *in, halide_buffer_t *row_kernel, halide_buffer_t *col_kernel,
                              int32_t boundary, double fill, int32_t offset_x, int32_t offset_y, bool flip,
                              halide_buffer_t *out);
int halconv_sep_fft_lines_f16(halide_buffer_t *in, halide_buffer_t *row_kernel, halide_buffer_t *col_kernel,
                              int32_t boundary, double fill, int32_t offset_x, int32_t offset_y, bool flip,
                              halide_buffer_t *out);
int halconv_sep_fft_lines_f16f32(halide_buffer_t *in, halide_buffer_t *row_kernel, halide_buffer_t *col_kernel,
                                 int32_t boundary, double fill, int32_t offset_x, int32_t offset_y, bool flip,
                                 halide_buffer_t *out);

int halconv_sep_tensor_core_f32(halide_buffer_t *in, halide_buffer_t *row_kernel, halide_buffer_t *col_kernel,
                                int32_t boundary, double fill, int32_t offset_x, int32_t offset_y, bool flip,
                                halide_buffer_t *out);

#ifdef __cplusplus
}  // extern "C"
#endif
