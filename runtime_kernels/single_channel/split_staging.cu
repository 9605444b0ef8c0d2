// The scale pass of the f32 tensor-core entries: the largest finite magnitude of image and
// kernel (one read of each), then the powers of two that put each in [2^14, 2^15); and the
// Hopper kernel's split pass, the scaled image as two f16 planes.
#include <algorithm>

#include "single_channel/split_staging.cuh"

namespace halconv::rk::tc {
namespace {

constexpr int scale_threads = 256;

__device__ float warp_max(float v) {
#pragma unroll
    for (int o = 16; o > 0; o >>= 1) {
        v = fmaxf(v, __shfl_xor_sync(0xffffffffu, v, o));
    }
    return v;
}

// Block b reads rows b, b + gridDim.x, ... of the image; block 0 also the kernel.
// Non-negative floats order as their bits, so atomicMax on the bits takes the largest.
__global__ void __launch_bounds__(scale_threads) max_abs_kernel(ProblemOf<float> io, SplitScales *scales) {
    float m = 0.0f;
    const auto take = [&m](float v) {
        v = fabsf(v);
        m = isfinite(v) ? fmaxf(m, v) : m;
    };
    for (int y = blockIdx.x; y < io.img.height; y += gridDim.x) {
        const float *row = io.img.data + int64_t(y) * io.img.stride;
        // Four samples per load where the row is 16-byte aligned (a whole row's worth of
        // loads in flight per block).
        const int vector_end = reinterpret_cast<uintptr_t>(row) % 16 == 0 ? io.img.width / 4 * 4 : 0;
#pragma unroll 4
        for (int x = 4 * threadIdx.x; x < vector_end; x += 4 * blockDim.x) {
            const float4 q = *reinterpret_cast<const float4 *>(row + x);
            take(q.x), take(q.y), take(q.z), take(q.w);
        }
        for (int x = vector_end + threadIdx.x; x < io.img.width; x += blockDim.x) {
            take(row[x]);
        }
    }
    m = warp_max(m);
    if ((threadIdx.x & 31) == 0) {
        atomicMax(&scales->image_max_bits, __float_as_uint(m));
    }
    if (blockIdx.x != 0) {
        return;
    }
    float k = 0.0f;
    bool nonfinite = false;
    for (int e = threadIdx.x; e < io.ker.width * io.ker.height; e += blockDim.x) {
        const int y = e / io.ker.width, x = e - y * io.ker.width;
        const float v = fabsf(io.ker.data[int64_t(y) * io.ker.stride + x]);
        nonfinite |= !isfinite(v);
        k = isfinite(v) ? fmaxf(k, v) : k;
    }
    k = warp_max(k);
    if ((threadIdx.x & 31) == 0) {
        atomicMax(&scales->kernel_max_bits, __float_as_uint(k));
    }
    if (__syncthreads_or(nonfinite) && threadIdx.x == 0) {
        scales->kernel_nonfinite = 1;
    }
}

__device__ void factors(int e, float (&f)[2]) {
    const int half = e / 2;
    f[0] = ldexpf(1.0f, half);
    f[1] = ldexpf(1.0f, e - half);
}

__global__ void finish_scales_kernel(SplitScales *s) {
    const int ei = split_f32::scale_exponent(__uint_as_float(s->image_max_bits));
    const int ek = split_f32::scale_exponent(__uint_as_float(s->kernel_max_bits));
    factors(ei, s->image_scale);
    factors(ek, s->kernel_scale);
    s->unscale_exponent = -(ei + ek);
}

// Thread (x, row) splits image columns 4x .. 4x + 3, then 4 (x + stride) .., of rows row,
// row + gridDim.y, ...: one 16-byte load where the row allows.
__global__ void __launch_bounds__(scale_threads)
    split_in_place_kernel(View<const float> img, const SplitScales *scales, __half *parts, int64_t pitch,
                          int64_t part_elements) {
    const float factor[2] = {scales->image_scale[0], scales->image_scale[1]};
    for (int y = blockIdx.y; y < img.height; y += gridDim.y) {
        const float *row = img.data + int64_t(y) * img.stride;
        __half *hi = parts + int64_t(y) * pitch, *mid = hi + part_elements;
        const bool vector_row = reinterpret_cast<uintptr_t>(row) % 16 == 0;
        for (int x = 4 * (blockIdx.x * blockDim.x + threadIdx.x); x < img.width; x += 4 * gridDim.x * blockDim.x) {
            float v[4];
            if (vector_row && x + 3 < img.width) {
                const float4 q = *reinterpret_cast<const float4 *>(row + x);
                v[0] = q.x, v[1] = q.y, v[2] = q.z, v[3] = q.w;
            } else {
#pragma unroll
                for (int i = 0; i < 4; i++) {
                    v[i] = x + i < img.width ? row[x + i] : 0.0f;
                }
            }
            // pitch is a multiple of 8 halfs: x (a multiple of 4) is pair-aligned in both planes,
            // and the padding past the width is the planes' own.
#pragma unroll
            for (int i = 0; i < 4; i += 2) {
                const split_f32::InPlaceParts a = in_place_parts_of(v[i], factor);
                const split_f32::InPlaceParts b = in_place_parts_of(v[i + 1], factor);
                *reinterpret_cast<__half2 *>(hi + x + i) = __floats2half2_rn(a.hi, b.hi);
                *reinterpret_cast<__half2 *>(mid + x + i) = __floats2half2_rn(a.mid, b.mid);
            }
        }
    }
}

}  // namespace

cudaError_t split_image_in_place(const View<const float> &img, const SplitScales *scales, __half *parts, int64_t pitch,
                                 int64_t part_elements, cudaStream_t stream) {
    const int columns = std::min((img.width + 4 * scale_threads - 1) / (4 * scale_threads), 64);
    const int rows = std::max(1, std::min(img.height, 65535));
    const int row_blocks = std::max(1, std::min(rows, 8 * device_sm_count() / columns));
    split_in_place_kernel<<<dim3(unsigned(columns), unsigned(row_blocks)), scale_threads, 0, stream>>>(
        img, scales, parts, pitch, part_elements);
    return cudaGetLastError();
}

cudaError_t compute_split_scales(const ProblemOf<float> &problem, SplitScales *scales, cudaStream_t stream) {
    cudaError_t e = cudaMemsetAsync(scales, 0, sizeof(SplitScales), stream);
    if (e != cudaSuccess) {
        return e;
    }
    const int blocks = std::max(1, std::min(problem.img.height, 4 * device_sm_count()));
    max_abs_kernel<<<blocks, scale_threads, 0, stream>>>(problem, scales);
    finish_scales_kernel<<<1, 1, 0, stream>>>(scales);
    return cudaGetLastError();
}

}  // namespace halconv::rk::tc
