// The CUDA form of a band slab's pads (band_slab.h).
#include <cuda_runtime.h>

#include <algorithm>
#include <cstring>

#include "bands/band_slab.h"

namespace halconv::rk {
namespace {

// One thread per pad element: the pad columns of every row, then every element of the
// fill rows (both grid-stride, so any slab fits a 1D grid).
template <typename T>
__global__ void fill_pads_kernel(BandPads p) {
    T fill;
    memcpy(&fill, &p.fill_bits, sizeof(T));
    T *slab = static_cast<T *>(p.slab);
    const int64_t pads = p.width - p.image_width;
    const int64_t stride = int64_t(gridDim.x) * blockDim.x;
    for (int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < pads * p.rows; i += stride) {
        const int64_t r = i / pads, k = i % pads;
        const int64_t c = k < p.offset_x ? k : k + p.image_width;
        T *row = slab + r * p.pitch;
        if (p.row_is_fill[r]) {
            row[c] = fill;
            continue;
        }
        const int64_t x = band_source_index(c - p.offset_x, p.image_width, p.boundary);
        row[c] = x < 0 ? fill : row[p.offset_x + x];
    }
    if (!p.any_fill_row) {
        return;
    }
    for (int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < p.image_width * p.rows; i += stride) {
        const int64_t r = i / p.image_width;
        if (p.row_is_fill[r]) {
            slab[r * p.pitch + p.offset_x + i % p.image_width] = fill;
        }
    }
}

template <typename T>
int launch(const BandPads &p, cudaStream_t stream) {
    constexpr int threads = 256;
    const int64_t work = (p.any_fill_row ? p.width : p.width - p.image_width) * p.rows;
    const int blocks = int(std::min<int64_t>((work + threads - 1) / threads, 4096));
    fill_pads_kernel<T><<<blocks, threads, 0, stream>>>(p);
    return int(cudaGetLastError());
}

}  // namespace

int band_fill_pads_cuda(const BandPads &p, void *stream) {
    if (p.rows <= 0 || (p.width == p.image_width && !p.any_fill_row)) {
        return int(cudaSuccess);
    }
    const auto s = static_cast<cudaStream_t>(stream);
    switch (p.elem_bytes) {
        case 2:
            return launch<uint16_t>(p, s);
        case 4:
            return launch<uint32_t>(p, s);
        default:
            return launch<uint64_t>(p, s);
    }
}

}  // namespace halconv::rk
