// Entry points of the tensor-core kernels, in Halide's extern-stage convention: called
// with out->is_bounds_query() set, they report the image region they read (the output
// region plus the kernel's halo) and return 0; otherwise they move the inputs to the
// device, compute the valid cross-correlation of `in` by `kernel` (flipped in both axes
// when `flip`: convolution) into `out` on Halide's current CUDA stream, and return 0 or
// a halide_error_code. The image and kernel are float16 for *_f16f32 (writes float32) and
// *_f16 (writes float16), every variant accumulating in float32; float32 for *_f32, split
// into float16 parts for float32 accuracy (common/split_f32.h). Kernels from 1x1 to 128x128.
// A batch of images (in and out 3D, x, y, n; one kernel) is one call: im2tensor_fused and
// im2tensor_atomic run its f16 samples on sm_90 in one launch, the rest image by image.
// Generators call them through define_extern (generators/tensor_core_stage.h), by the
// names contract.h builds: halconv_tc_<variant>_<precision>.
#pragma once

#include <stddef.h>
#include <stdint.h>

#include "HalideRuntime.h"

#ifdef __cplusplus
extern "C" {
#endif

// The kernels sum an output from the same products in the same order wherever it lies,
// except for its row's position modulo this: the Hopper kernel stacks 2 or 4 output rows
// in one wgmma (im2tensor_fused_sm90.cu). Row bands start at multiples of it, so that they
// reproduce the one-shot call bit for bit (src/bands.h).
enum { halconv_tc_row_phase = 4 };

// The Hopper kernel reads image rows with TMA: from a 16-byte aligned start (0, a buffer
// not on the device yet, counts as aligned: its device copy will be), 16-byte multiples
// apart. Callers that lay out an image for it (the Plan's extended image, band slabs) pad
// a row of `width` elements of `element_bytes` to halconv_tc_tma_pitch elements.
static inline int halconv_tc_tma_rows(uintptr_t start, int64_t pitch_bytes) {
    return start % 16 == 0 && pitch_bytes % 16 == 0;
}
static inline int64_t halconv_tc_tma_pitch(int64_t width, int64_t element_bytes) {
    const int64_t per_16_bytes = 16 / element_bytes;
    return (width + per_16_bytes - 1) / per_16_bytes * per_16_bytes;
}

// im2tensor (seed 000 Algorithm 1): P = K^T S into a global buffer, then Tr+.
int halconv_tc_im2tensor_f16f32(halide_buffer_t *in, halide_buffer_t *kernel, bool flip, halide_buffer_t *out);
int halconv_tc_im2tensor_f16(halide_buffer_t *in, halide_buffer_t *kernel, bool flip, halide_buffer_t *out);
// im2tensor fused (Algorithm 2): P-blocks in shared memory, partial sums in C, recombination.
int halconv_tc_im2tensor_fused_f16f32(halide_buffer_t *in, halide_buffer_t *kernel, bool flip, halide_buffer_t *out);
int halconv_tc_im2tensor_fused_f16(halide_buffer_t *in, halide_buffer_t *kernel, bool flip, halide_buffer_t *out);
int halconv_tc_im2tensor_fused_f32(halide_buffer_t *in, halide_buffer_t *kernel, bool flip, halide_buffer_t *out);
// im2tensor fused + atomic: partial sums added atomically into the output.
int halconv_tc_im2tensor_atomic_f16f32(halide_buffer_t *in, halide_buffer_t *kernel, bool flip, halide_buffer_t *out);
int halconv_tc_im2tensor_atomic_f16(halide_buffer_t *in, halide_buffer_t *kernel, bool flip, halide_buffer_t *out);
int halconv_tc_im2tensor_atomic_f32(halide_buffer_t *in, halide_buffer_t *kernel, bool flip, halide_buffer_t *out);
// Diagonal kernel-image-loop unrolling (seed 003 §IV.C), WMMA 16x16x16 and 32x8x16 layouts.
int halconv_tc_diagonal_unroll_f16f32(halide_buffer_t *in, halide_buffer_t *kernel, bool flip, halide_buffer_t *out);
int halconv_tc_diagonal_unroll_f16(halide_buffer_t *in, halide_buffer_t *kernel, bool flip, halide_buffer_t *out);
int halconv_tc_diagonal_unroll_m32n8k16_f16f32(halide_buffer_t *in, halide_buffer_t *kernel, bool flip,
                                               halide_buffer_t *out);
int halconv_tc_diagonal_unroll_m32n8k16_f16(halide_buffer_t *in, halide_buffer_t *kernel, bool flip,
                                            halide_buffer_t *out);

// Device bytes of scratch one call of halconv_tc_<variant>_<precision> takes for an
// out_width x out_height output and a kernel_width x kernel_height kernel on the current
// device: the workspace a caller installs so that the call allocates nothing
// (common/workspace.h). variant is one of contract::tensor_core_variants ("im2tensor_fused",
// "diagonal_unroll", ...), precision "f16", "f16f32" or "f32"; a pair without an entry
// point (contract::tensor_core_takes) gives SIZE_MAX.
size_t halconv_tc_workspace_bytes(const char *variant, const char *precision, int out_width, int out_height,
                                  int kernel_width, int kernel_height);

#ifdef __cplusplus
}
#endif
