// The recursive Gaussian on CUDA as a Halide extern stage (recursive_gaussian.cu; the
// filter and the coefficient layout in recursive_layout.h).
//
// halconv_rg_segments_<precision>(in, coefficients, powers, boundary, fill, out) filters
// `in` along y, then along x, with the coefficients of each axis (float64, as
// src/recursive_gaussian.cpp computes them for the image's extent and `boundary`, a
// halconv::Boundary value; `fill`, rounded to the storage type, for the constant rule),
// into `out` of the image's extent. A bounds query asks for the whole image and tables,
// as given. Each line is split into segments, a thread each, whose states from zero
// are carried along the line. Lines of up to 8192 samples (where the device has room for
// a cluster of 8 blocks of the stage's shared memory) are filtered whole, one kernel per
// axis that reads and writes each line once: segments of 32 samples, carried by warp
// scans and across a cluster's blocks. Longer lines go by segments of rk::rg::segment
// samples in three kernels per axis: one sums each segment's states from zero, one carries
// them along the line (runs of segments folded in parallel, then combined) and finds the
// boundary states, one filters each segment from its carried states and writes the result
// transposed, so that the second axis is read as the first. Their scratch
// (rk::rg::workspace_bytes, an upper bound for both ways) comes from the caller's
// workspace. Runs on Halide's current CUDA stream; returns 0 or a halide_error_code.
//
//   f64:    float64 samples, sums and output
//   f32:    float32 throughout
//   f16f32: float16 samples, float32 sums and output
#pragma once

#include <stddef.h>
#include <stdint.h>

#include "HalideRuntime.h"

#ifdef __cplusplus
extern "C" {
#endif

// Device bytes of scratch the stage takes for a width x height image in `precision`
// ("f64", "f32", "f16f32") on the current device: 0 where both axes go by whole lines;
// SIZE_MAX for an unknown precision.
size_t halconv_rg_workspace_bytes(const char *precision, int32_t width, int32_t height);

int halconv_rg_segments_f64(halide_buffer_t *in, halide_buffer_t *coefficients, halide_buffer_t *powers,
                            int32_t boundary, double fill, halide_buffer_t *out);
int halconv_rg_segments_f32(halide_buffer_t *in, halide_buffer_t *coefficients, halide_buffer_t *powers,
                            int32_t boundary, double fill, halide_buffer_t *out);
int halconv_rg_segments_f16f32(halide_buffer_t *in, halide_buffer_t *coefficients, halide_buffer_t *powers,
                               int32_t boundary, double fill, halide_buffer_t *out);

#ifdef __cplusplus
}  // extern "C"
#endif
