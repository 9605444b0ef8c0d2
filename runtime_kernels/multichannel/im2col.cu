// im2col for C channels as seed 002 designs it. A block moves 128 output pixels x one
// kernel position (blockIdx.y): its threads load the pixels' channels (4 per load, so
// consecutive threads read consecutive 8- or 16-byte words of the image: a kernel
// position's 128 pixels of one row are one contiguous run), store them transposed into
// shared memory (channel rows x 128 pixels), and each warp then writes whole 128-pixel
// rows of the column buffer with 4-wide stores. One kernel per depth-pitch class
// (dpitch 4, 8, 12, 16: everything unrolled) and a general one that walks channels in
// groups of 16 and also takes images whose pixels cannot be read 4 at a time.
// Also here: the kernel packing and the scatter of a dense f32 tile.
#include "multichannel/im2col.cuh"

namespace halconv::rk::mc {
namespace {

constexpr int group_channels = 16;  // channel rows staged per pass
// Seed 002's +4 row padding: rows stay 16-byte aligned for the 4-wide reads, and a
// warp's transposed stores (several channels of a few pixels) spread over more banks.
constexpr int tile_pitch = pixel_block + 4;
constexpr int threads = pixel_block;

template <typename T>
struct Quad;
template <>
struct Quad<float> {
    using type = float4;
};
template <>
struct Quad<__half> {
    using type = uint2;
};

template <typename T>
__device__ inline T zero() {
    return T(0.0f);
}

// Channels c0 + 4 v .. + 3 of one pixel; channels at or past `channels` read as 0.
template <typename T>
__device__ inline void load_quad(const T *p, int valid, bool vector_load, T (&v)[4]) {
    if (vector_load) {
        using Q = typename Quad<T>::type;
        const Q q = __ldg(reinterpret_cast<const Q *>(p));
        memcpy(v, &q, sizeof(q));
#pragma unroll
        for (int i = 0; i < 4; i++) {
            v[i] = i < valid ? v[i] : zero<T>();
        }
    } else {
#pragma unroll
        for (int i = 0; i < 4; i++) {
            v[i] = i < valid ? p[i] : zero<T>();
        }
    }
}

struct Im2colArgs {
    TileGeometry g;
    bool vector_loads;
};

// Moves channels c0 .. c0 + 4 Q - 1 of the block's pixels at kernel position blockIdx.y.
template <typename T, int Q>
__device__ inline void move_group(const Tensor3<T> &img, const Im2colArgs &a, T *col, T *tile, int c0) {
    const TileGeometry &g = a.g;
    const int kpos = blockIdx.y, ky = kpos / g.kw, kx = kpos - ky * g.kw;
    const int local0 = blockIdx.x * pixel_block;
#pragma unroll
    for (int i = 0; i < Q; i++) {
        const int e = threadIdx.x + i * threads;
        const int j = e / Q, q = e - j * Q;  // pixel of the block, quad of the group
        const int local = local0 + j;
        const int c = c0 + 4 * q;
        T v[4];
        if (local < g.pixels) {
            const int p = g.pixel0 + local, y = p / g.out_width, x = p - y * g.out_width;
            const T *src = img.data + int64_t(y + ky) * img.sy + int64_t(x + kx) * img.sx + c;
            load_quad(src, g.channels - c, a.vector_loads, v);
        } else {
#pragma unroll
            for (int k = 0; k < 4; k++) {
                v[k] = zero<T>();
            }
        }
#pragma unroll
        for (int k = 0; k < 4; k++) {
            tile[(4 * q + k) * tile_pitch + j] = v[k];
        }
    }
    __syncthreads();
    using QT = typename Quad<T>::type;
    const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
    for (int r = warp; r < 4 * Q; r += threads / 32) {
        const int64_t row = int64_t(kpos) * g.dpitch + c0 + r;
        *reinterpret_cast<QT *>(col + row * g.pitch + local0 + 4 * lane) =
            *reinterpret_cast<const QT *>(tile + r * tile_pitch + 4 * lane);
    }
    __syncthreads();
}

// dpitch = 4 Q <= 16, vector loads: one pass, fully unrolled.
template <typename T, int Q>
__global__ void __launch_bounds__(threads) im2col_dpitch_kernel(Tensor3<T> img, Im2colArgs a, T *col) {
    __shared__ __align__(16) T tile[group_channels * tile_pitch];
    move_group<T, Q>(img, a, col, tile, 0);
}

// Any channel count and layout: groups of 16 channels, the last one narrower.
template <typename T>
__global__ void __launch_bounds__(threads) im2col_general_kernel(Tensor3<T> img, Im2colArgs a, T *col) {
    __shared__ __align__(16) T tile[group_channels * tile_pitch];
    for (int c0 = 0; c0 < a.g.dpitch; c0 += group_channels) {
        switch ((a.g.dpitch - c0 >= group_channels ? group_channels : a.g.dpitch - c0) / 4) {
            case 1:
                move_group<T, 1>(img, a, col, tile, c0);
                break;
            case 2:
                move_group<T, 2>(img, a, col, tile, c0);
                break;
            case 3:
                move_group<T, 3>(img, a, col, tile, c0);
                break;
            default:
                move_group<T, 4>(img, a, col, tile, c0);
        }
    }
}

template <typename T>
__global__ void pack_kernels_kernel(Kernels<T> k, int first_filter, int filters, int padded_rows, int dpitch, bool flip,
                                    T *kmat, int64_t total) {
    for (int64_t e = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; e < total; e += int64_t(gridDim.x) * blockDim.x) {
        const int n = int(e / padded_rows), r = int(e - int64_t(n) * padded_rows);
        const int kpos = r / dpitch, c = r - kpos * dpitch;
        T v = zero<T>();
        if (n < filters && c < k.channels && kpos < k.width * k.height) {
            const int ky = kpos / k.width, kx = kpos - ky * k.width;
            const int sx = flip ? k.width - 1 - kx : kx, sy = flip ? k.height - 1 - ky : ky;
            v = k.data[c * k.stride[0] + sx * k.stride[1] + sy * k.stride[2] + (first_filter + n) * k.stride[3]];
        }
        kmat[e] = v;
    }
}

__global__ void scatter_tile_kernel(const float *tile, TileGeometry g, OutputView<float> out) {
    const int64_t total = int64_t(g.pixels) * out.filters;
    for (int64_t e = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; e < total; e += int64_t(gridDim.x) * blockDim.x) {
        const int local = int(e / out.filters), n = int(e - int64_t(local) * out.filters);
        const int p = g.pixel0 + local, y = p / out.width, x = p - y * out.width;
        out.data[int64_t(y) * out.sy + int64_t(x) * out.sx + n] = tile[e];
    }
}

}  // namespace

template <typename T>
cudaError_t launch_im2col(const Tensor3<T> &image, const TileGeometry &g, bool vector_loads, T *col,
                          cudaStream_t stream) {
    const Im2colArgs a{g, vector_loads};
    const dim3 grid(g.pitch / pixel_block, g.kw * g.kh);
    if (vector_loads && g.dpitch <= group_channels) {
        switch (g.dpitch / 4) {
            case 1:
                im2col_dpitch_kernel<T, 1><<<grid, threads, 0, stream>>>(image, a, col);
                break;
            case 2:
                im2col_dpitch_kernel<T, 2><<<grid, threads, 0, stream>>>(image, a, col);
                break;
            case 3:
                im2col_dpitch_kernel<T, 3><<<grid, threads, 0, stream>>>(image, a, col);
                break;
            default:
                im2col_dpitch_kernel<T, 4><<<grid, threads, 0, stream>>>(image, a, col);
        }
    } else {
        im2col_general_kernel<T><<<grid, threads, 0, stream>>>(image, a, col);
    }
    return cudaGetLastError();
}

template <typename T>
cudaError_t launch_pack_kernels(const Kernels<T> &kernels, int first_filter, int filters, int padded_filters,
                                const TileGeometry &g, bool flip, T *kmat, cudaStream_t stream) {
    const int64_t total = int64_t(padded_filters) * g.padded_rows;
    pack_kernels_kernel<T><<<grid_for(total), 256, 0, stream>>>(kernels, first_filter, filters, g.padded_rows, g.dpitch,
                                                                flip, kmat, total);
    return cudaGetLastError();
}

cudaError_t launch_scatter_tile(const float *tile, const TileGeometry &g, const OutputView<float> &out,
                                cudaStream_t stream) {
    scatter_tile_kernel<<<grid_for(int64_t(g.pixels) * out.filters), 256, 0, stream>>>(tile, g, out);
    return cudaGetLastError();
}

template cudaError_t launch_im2col<float>(const Tensor3<float> &, const TileGeometry &, bool, float *, cudaStream_t);
template cudaError_t launch_im2col<__half>(const Tensor3<__half> &, const TileGeometry &, bool, __half *, cudaStream_t);
template cudaError_t launch_pack_kernels<float>(const Kernels<float> &, int, int, int, const TileGeometry &, bool,
                                                float *, cudaStream_t);
template cudaError_t launch_pack_kernels<__half>(const Kernels<__half> &, int, int, int, const TileGeometry &, bool,
                                                 __half *, cudaStream_t);

}  // namespace halconv::rk::mc
