// Edge detection of seed 001 on CUDA as one hand-written kernel, a Halide extern stage
// (edges_fused.cu).
//
// halconv_edges_fused_f32(in, boundary, fill, threshold, out) computes the edges
// generator's definition (generators/edges_generator.cpp) for every output position
// (x, y) of `out` (uint8), read from image position (x, y) of `in` (float32; the two
// buffers share coordinates): the image extended by `boundary` (a halconv::Boundary
// value, `fill` for the constant rule) blurred by [2 4 5 4 2] / 17 along x then y; that
// blur extended by the same rule (constant: fill; nearest: the nearest blurred sample;
// reflect, mirror, wrap: the blur of the extended image, which is the extended blur as
// the Gaussian is symmetric); its Laplacian [0 1 0; 1 -4 1; 0 1 0]; 1 where the
// Laplacian's magnitude exceeds `threshold`, else 0. float32 throughout. The output region
// must lie inside the image (the pipeline's is the image's). A bounds query asks for the
// whole image, as given. The call runs on Halide's current CUDA stream and returns 0 or a
// halide_error_code.
#pragma once

#include <stdint.h>

#include "HalideRuntime.h"

#ifdef __cplusplus
extern "C" {
#endif

int halconv_edges_fused_f32(halide_buffer_t *in, int32_t boundary, float fill, float threshold, halide_buffer_t *out);

#ifdef __cplusplus
}  // extern "C"
#endif
