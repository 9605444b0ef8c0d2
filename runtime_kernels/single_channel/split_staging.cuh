// float32 images and kernels on the f16 tensor cores (common/split_f32.h): the call's
// scales (a pass over image and kernel before the product kernel), the image chunks
// split into f16 parts as they are staged, the kernel's parts in shared memory, and the
// exact fallback's samples in the same scaled units.
//
// Shared-memory layout: part p of the kernel at ks + p · kernel_part_halfs, part p of the
// image window at win + p · window_part_halfs (p = 0 hi, 1 mid, 2 lo; fixed_six stages
// all three, floating_three the first two).
#pragma once

#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <cstdint>

#include "common/split_f32.h"
#include "single_channel/im2tensor_common.cuh"

namespace halconv::rk::tc {

// Written by the scale pass, read by the product kernels (device memory).
struct SplitScales {
    unsigned image_max_bits, kernel_max_bits;  // largest finite |value| as float bits (atomicMax)
    int kernel_nonfinite;                      // the kernel holds an Inf or NaN
    float image_scale[2], kernel_scale[2];     // 2^e as two factors: 2^e alone may overflow
    int unscale_exponent;                      // -(e_image + e_kernel)
};

// Parts staged per scheme.
__host__ __device__ constexpr int parts_of(split_f32::Scheme s) {
    return s == split_f32::Scheme::fixed_six ? 3 : 2;
}

// Computes the scales of `problem` into `scales` on `stream` (zeroes it first).
cudaError_t compute_split_scales(const ProblemOf<float> &problem, SplitScales *scales, cudaStream_t stream);

// The image's in-place parts (split_f32::split_in_place, scaled by `scales`) for the Hopper
// kernel, as two f16 planes at `parts`: hi, then mid part_elements later, rows `pitch`
// elements apart. Inf and NaN stay in hi (mid 0), so that every sum they enter is not
// finite and the kernel recomputes it exactly.
cudaError_t split_image_in_place(const View<const float> &img, const SplitScales *scales, __half *parts, int64_t pitch,
                                 int64_t part_elements, cudaStream_t stream);

__device__ inline float scaled(float v, const float (&factor)[2]) {
    return v * factor[0] * factor[1];
}

// The f32 form of the Hopper kernel (im2tensor_fused_sm90.cu, sm_90a): bytes of the split
// image's planes for this problem shape where it runs on device d (an sm_90 GPU, from
// 7 x 7 taps, a tiling that fits), 0 where it does not.
size_t im2tensor_wgmma_split_parts_bytes(const DeviceFacts &d, int image_width, int image_height, int kernel_width,
                                         int kernel_height, int out_width, int out_height);
// Splits p's image into `parts` (that many bytes) with the scales compute_split_scales
// wrote, then runs the kernel on d; only where im2tensor_wgmma_split_parts_bytes is not 0.
cudaError_t launch_im2tensor_wgmma_split(const DeviceFacts &d, const ProblemOf<float> &p, const SplitScales *scales,
                                         __half *parts, cudaStream_t stream);

// A value's in-place parts (the Hopper kernel's); Inf and NaN kept in hi, mid 0.
__device__ inline split_f32::InPlaceParts in_place_parts_of(float v, const float (&factor)[2]) {
    return isfinite(v) ? split_f32::split_in_place(scaled(v, factor)) : split_f32::InPlaceParts{v, 0.0f};
}

// The f16 parts of a scaled value; zeros for Inf and NaN (their tiles take the exact path).
__device__ inline split_f32::Parts parts_of_value(float v, const float (&factor)[2], split_f32::Scheme scheme,
                                                  bool &nonfinite) {
    if (!isfinite(v)) {
        nonfinite = true;
        return {0.0f, 0.0f, 0.0f};
    }
    return split_f32::split(scaled(v, factor), scheme);
}

// The zero-padded (flipped when convolving) kernel's parts, as stage_kernel stages f16.
__device__ inline void stage_kernel_parts(__half *ks, int part_halfs, int ldk, int rows, const View<const float> &k,
                                          bool flip, const SplitScales &sc, split_f32::Scheme scheme) {
    const int parts = parts_of(scheme);
    for (int e = threadIdx.x; e < rows * ldk; e += blockDim.x) {
        const int y = e / ldk, x = e - y * ldk;
        split_f32::Parts v{0.0f, 0.0f, 0.0f};
        if (x < k.width && y < k.height) {
            bool ignored = false;  // the scale pass flagged the kernel
            v = parts_of_value(k.tap(x, y, flip), sc.kernel_scale, scheme, ignored);
        }
        ks[e] = __float2half_rn(v.hi);
        ks[part_halfs + e] = __float2half_rn(v.mid);
        if (parts == 3) {
            ks[2 * part_halfs + e] = __float2half_rn(v.lo);
        }
    }
}

// ChunkStager for float samples: loads to registers (in flight during the tensor-core
// work), then splits and stores each part into its window; reports Inf or NaN.
template <int Rows>
struct SplitChunkStager {
    static constexpr int pairs_per_thread = ChunkRows<Rows>::pairs_per_thread;
    float2 held[pairs_per_thread];

    __device__ void load(const ChunkRows<Rows, float> &rows, int q) {
        const int x = q * frag + ChunkRows<Rows>::column();
#pragma unroll
        for (int i = 0; i < pairs_per_thread; i++) {
            float2 v = make_float2(0.0f, 0.0f);
            if (rows.row[i] != nullptr) {
                const float *p = rows.row[i] + q * frag;
                if (rows.aligned && x + 1 < rows.width) {
                    v = __ldg(reinterpret_cast<const float2 *>(p));
                } else {
                    v.x = x < rows.width ? __ldg(p) : 0.0f;
                    v.y = x + 1 < rows.width ? __ldg(p + 1) : 0.0f;
                }
            }
            held[i] = v;
        }
    }

    __device__ bool store(__half *win, int part_halfs, int pitch, int slot, const SplitScales &sc,
                          split_f32::Scheme scheme) const {
        const int c = ChunkRows<Rows>::column();
        bool bad = false;
#pragma unroll
        for (int i = 0; i < pairs_per_thread; i++) {
            const int r = (threadIdx.x >> 3) + i * (threads_per_block / 8);
            if (r < Rows) {
                const int at = r * pitch + slot * frag + c;
                const split_f32::Parts a = parts_of_value(held[i].x, sc.image_scale, scheme, bad);
                const split_f32::Parts b = parts_of_value(held[i].y, sc.image_scale, scheme, bad);
                *reinterpret_cast<__half2 *>(win + at) = __floats2half2_rn(a.hi, b.hi);
                *reinterpret_cast<__half2 *>(win + part_halfs + at) = __floats2half2_rn(a.mid, b.mid);
                if (parts_of(scheme) == 3) {
                    *reinterpret_cast<__half2 *>(win + 2 * part_halfs + at) = __floats2half2_rn(a.lo, b.lo);
                }
            }
        }
        return bad;
    }
};

// Exact stand-in for one element of a skewed product tile, in the scaled units of the
// split tiles, from the float32 samples in global memory (only where a staged sample or
// the kernel is not finite; only real taps, as skewed_element_exact):
//   D(i, c) = sum_{a < na, x = 16a+i < kw} sum_{y < kh} K(x, y) I(16(chunk0 + a) + c, row + y).
__device__ inline float skewed_element_exact_split(const ProblemOf<float> &io, const SplitScales &sc, int chunk0,
                                                   int na, int row, int i, int c) {
    const View<const float> &k = io.ker;
    float s = 0.f;
    for (int a = 0; a < na; a++) {
        const int x = a * frag + i, col = (chunk0 + a) * frag + c;
        if (x >= k.width) {
            break;
        }
        for (int y = 0; y < k.height; y++) {
            const int iy = row + y;
            const float sample = col < io.img.width && iy < io.img.height ? io.img.tap(col, iy, false) : 0.0f;
            s += scaled(k.tap(x, y, io.flip), sc.kernel_scale) * scaled(sample, sc.image_scale);
        }
    }
    return s;
}

// The tile as this lane's elements of two m16n8 C fragments (layout in common/mma_sync.cuh).
__device__ inline void skewed_fragments_exact_split(float (&acc)[2][4], const ProblemOf<float> &io,
                                                    const SplitScales &sc, int chunk0, int na, int row) {
    const int lane = threadIdx.x & 31, g = lane >> 2, t = lane & 3;
    // Unrolled so that acc is indexed by constants and stays in registers.
#pragma unroll
    for (int h = 0; h < 2; h++) {
#pragma unroll
        for (int e = 0; e < 4; e++) {
            const int i = g + 8 * (e >> 1), c = 8 * h + 2 * t + (e & 1);
            acc[h][e] = skewed_element_exact_split(io, sc, chunk0, na, row, i, c);
        }
    }
}

}  // namespace halconv::rk::tc
