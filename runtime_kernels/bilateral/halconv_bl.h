// The bilateral filter on tensor cores as a Halide extern stage (bilateral_tensor_core.cu),
// seed 003's kernel-image-loop unrolling (§III.B, eq. 10 and 11) with WMMA m32n8k16.
//
// halconv_bl_kernel_image_m32n8k16_f16f32(extended, sigma_spatial, sigma_range, radius, out)
// computes, for every output position (x, y) of `out` (float32), the bilateral filter of
// halconv.h over the (2 radius + 1)^2 window whose first sample is extended(x, y) and whose
// centre is extended(x + radius, y + radius): `extended` is the float16 image already
// extended by the boundary rule and placed so (the generator's Halide stage). A bounds
// query asks for the output region plus 2 radius per axis. The call runs on Halide's
// current CUDA stream and returns 0 or a halide_error_code.
#pragma once

#include <stdint.h>

#include "HalideRuntime.h"

#ifdef __cplusplus
extern "C" {
#endif

int halconv_bl_kernel_image_m32n8k16_f16f32(halide_buffer_t *extended, double sigma_spatial, double sigma_range,
                                            int32_t radius, halide_buffer_t *out);

#ifdef __cplusplus
}  // extern "C"
#endif
