// The scale pass of the f32 tensor-core entries: the largest finite magnitude of image and
// kernel (one read of each), then the powers of two that put each in [2^14, 2^15).
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
    for (int y = blockIdx.x; y < io.img.height; y += gridDim.x) {
        const float *row = io.img.data + int64_t(y) * io.img.stride;
        for (int x = threadIdx.x; x < io.img.width; x += blockDim.x) {
            const float v = fabsf(row[x]);
            m = isfinite(v) ? fmaxf(m, v) : m;
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

}  // namespace

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
