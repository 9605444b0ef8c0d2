// Multi-channel convolution as im2col + GEMM (seed 002's im2col design): the pieces the
// entry points (entry_points.cu) chain per tile of output pixels.
//
// Layouts (Halide dimension order, fastest first):
//   image   (c, x, y)     channels innermost, C channels        = H x W x C row-major
//   kernels (c, kx, ky, n) N kernels of kw x kh x C             = N x kh x kw x C
//   output  (n, x, y)                                           = H' x W' x N
// Valid cross-correlation: out(n, x, y) = sum_{c,kx,ky} K(c, kx, ky, n) I(c, x + kx, y + ky).
//
// Column buffer of a tile of output pixels p (p = y W' + x, pixel0 <= p < pixel0 + pixels):
// row (ky kw + kx) dpitch + c, column p - pixel0 holds I(c, x + kx, y + ky); dpitch is C
// rounded up to 4 (seed 002's depth pitch), rows of channels >= C and the rows from
// kw kh dpitch up to padded_rows are zero, as are columns from `pixels` up to `pitch`.
// The GEMM then computes out(n, p) = sum_k col(k, p) kmat(n, k) with kmat the kernels
// packed the same way (row n, column (ky kw + kx) dpitch + c).
#pragma once

#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <cstdint>

namespace halconv::rk::mc {

// Pixels per im2col block and per GEMM block row; column-buffer pitches are multiples.
inline constexpr int pixel_block = 128;
// GEMM k step: padded_rows is a multiple of it.
inline constexpr int gemm_k_step = 32;

// A channels-innermost 3D tensor on the device: element (c, x, y) at c + x sx + y sy,
// counted from the region's first sample.
template <typename T>
struct Tensor3 {
    const T *data;
    int channels;
    int64_t sx, sy;
};

// The kernels as Halide hands them over: element (c, kx, ky, n) at the dot product of
// the coordinates with stride.
template <typename T>
struct Kernels {
    const T *data;
    int channels, width, height, count;
    int64_t stride[4];
};

// The output region: element (n, x, y) at n + x sx + y sy (n stride 1).
template <typename T>
struct OutputView {
    T *data;
    int filters;  // n extent
    int width;    // W'
    int64_t sx, sy;
};

// Blocks of 256 threads for a grid-stride loop over `total` elements (capped at 65535).
inline int grid_for(int64_t total) {
    return int((total + 255) / 256 < 65535 ? (total + 255) / 256 : 65535);
}

struct TileGeometry {
    int kw, kh;
    int channels;     // C
    int dpitch;       // C rounded up to 4
    int rows;         // kw kh dpitch
    int padded_rows;  // rows rounded up to gemm_k_step
    int out_width;    // W'
    int pixel0;       // first output pixel of the tile (W' H' < 2^31: 32-bit index math)
    int pixels;       // output pixels in the tile
    int pitch;        // column-buffer row pitch: pixels rounded up to pixel_block
};

// im2col of one tile into col (pitch x padded_rows elements; the zero rows from `rows`
// on are the caller's). vector_loads: the image's channel extent reaches dpitch and every
// pixel starts 4-element aligned, so seed 002's 4-wide loads are allowed.
template <typename T>
cudaError_t launch_im2col(const Tensor3<T> &image, const TileGeometry &g, bool vector_loads, T *col,
                          cudaStream_t stream);

// kmat[n * padded_rows + (ky kw + kx) dpitch + c] = K(c, kx', ky', first_filter + n) for
// n < filters (kx' = kw - 1 - kx, ky' likewise when flip), zero elsewhere up to
// padded_filters rows.
template <typename T>
cudaError_t launch_pack_kernels(const Kernels<T> &kernels, int first_filter, int filters, int padded_filters,
                                const TileGeometry &g, bool flip, T *kmat, cudaStream_t stream);

// Output columns per f16 GEMM block, from the filter count: 16, 32 or 64.
int gemm_f16_block_filters(int filters);

// f16 GEMM on tensor cores (WMMA m16n16k16, f32 accumulation) of one tile into out;
// kmat holds padded_filters = filters rounded up to gemm_f16_block_filters(filters) rows.
template <typename Out>
cudaError_t launch_gemm_f16(const __half *col, const __half *kmat, const TileGeometry &g, const OutputView<Out> &out,
                            cudaStream_t stream);

// Copies a dense tile (pixels x filters, filters fastest) into the output region.
cudaError_t launch_scatter_tile(const float *tile, const TileGeometry &g, const OutputView<float> &out,
                                cudaStream_t stream);

}  // namespace halconv::rk::mc
