// CUDA side of the staging copies (staging.h): one thread per element of a row, a grid of
// rows x (dimension 2) — memory bound, a pass over both buffers.
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <algorithm>

#include "staging/staging.h"

namespace halconv::rk::staging {
namespace {

__device__ double load(const char *p, Element t) {
    switch (t) {
        case Element::u8:
            return *reinterpret_cast<const uint8_t *>(p);
        case Element::u16:
            return *reinterpret_cast<const uint16_t *>(p);
        case Element::f16:
            return __half2float(*reinterpret_cast<const __half *>(p));
        case Element::f32:
            return *reinterpret_cast<const float *>(p);
        case Element::f64:
            return *reinterpret_cast<const double *>(p);
    }
    return 0.0;
}

__device__ void store(char *p, Element t, double v) {
    switch (t) {
        case Element::u8:
            *reinterpret_cast<uint8_t *>(p) = static_cast<uint8_t>(saturated(v, 255.0));
            break;
        case Element::u16:
            *reinterpret_cast<uint16_t *>(p) = static_cast<uint16_t>(saturated(v, 65535.0));
            break;
        case Element::f16:
            *reinterpret_cast<__half *>(p) = __double2half(v);
            break;
        case Element::f32:
            *reinterpret_cast<float *>(p) = static_cast<float>(v);
            break;
        case Element::f64:
            *reinterpret_cast<double *>(p) = v;
            break;
    }
}

__host__ __device__ int bytes_of(Element t) {
    return t == Element::u8 ? 1 : t == Element::u16 || t == Element::f16 ? 2 : t == Element::f32 ? 4 : 8;
}

__global__ void convert_kernel(View src, View dst) {
    const int32_t j = int32_t(blockIdx.y), k = int32_t(blockIdx.z);
    const int64_t srow = k * src.stride[2] + j * src.stride[1], drow = k * dst.stride[2] + j * dst.stride[1];
    const int sb = bytes_of(src.type), db = bytes_of(dst.type);
    for (int32_t i = int32_t(blockIdx.x * blockDim.x + threadIdx.x); i < src.extent[0];
         i += int32_t(gridDim.x * blockDim.x)) {
        store(static_cast<char *>(dst.data) + (drow + i * dst.stride[0]) * db, dst.type,
              load(static_cast<const char *>(src.data) + (srow + i * src.stride[0]) * sb, src.type));
    }
}

}  // namespace

int convert_cuda(const View &src, const View &dst, void *stream) {
    // Rows on grid y (up to 65535) and planes on z; longer columns run as several launches.
    constexpr int32_t max_rows = 65535, threads = 256;
    const dim3 block(threads);
    const int32_t x_blocks = std::min<int32_t>((src.extent[0] + threads - 1) / threads, 1024);
    for (int32_t k0 = 0; k0 < src.extent[2]; k0 += max_rows) {
        for (int32_t j0 = 0; j0 < src.extent[1]; j0 += max_rows) {
            View s = src, d = dst;
            const int64_t so = int64_t(k0) * src.stride[2] + int64_t(j0) * src.stride[1];
            const int64_t dof = int64_t(k0) * dst.stride[2] + int64_t(j0) * dst.stride[1];
            s.data = static_cast<char *>(src.data) + so * bytes_of(src.type);
            d.data = static_cast<char *>(dst.data) + dof * bytes_of(dst.type);
            s.extent[1] = d.extent[1] = std::min(max_rows, src.extent[1] - j0);
            s.extent[2] = d.extent[2] = std::min(max_rows, src.extent[2] - k0);
            const dim3 grid(unsigned(x_blocks), unsigned(s.extent[1]), unsigned(s.extent[2]));
            convert_kernel<<<grid, block, 0, static_cast<cudaStream_t>(stream)>>>(s, d);
            const cudaError_t e = cudaGetLastError();
            if (e != cudaSuccess) {
                return int(e);
            }
        }
    }
    return 0;
}

}  // namespace halconv::rk::staging
