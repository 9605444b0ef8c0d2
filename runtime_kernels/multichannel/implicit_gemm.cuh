// Multi-channel convolution as an implicit GEMM on tensor cores: the same product as
// im2col + GEMM (im2col.cuh), but the column matrix is never stored. A block stages the
// image patch its output tile reads (channels innermost) in shared memory and the
// tensor-core operands are read from it at shifted addresses, one kernel tap at a time.
//
// The k dimension is cut into steps of kyn kernel rows x kxn kernel columns x a chunk of
// channels, so that any kernel and channel count fits shared memory:
//   chunked (C > 8):  k rows (ky, kx, c) with c in a chunk of 16, 32 or 64 channels; the
//                     A operand of tap (kx, ky) is the patch shifted by (kx, ky), read with
//                     ldmatrix (each pixel's chunk padded to an odd number of 16 bytes).
//   dense (C <= 8):   pixels hold cpix = 2, 4 or 8 channels back to back, so kxn taps of a
//                     kernel row are one contiguous k run of kxn cpix halfs (rounded up to
//                     16): small C does not pay 16 channels per tap.
// Layouts as im2col.cuh. f16 operands, f32 accumulation: mma.sync m16n8k16 on any sm_80+
// GPU (implicit_gemm_f16_sm80.cu), or on sm_90 the warpgroup wgmma version
// (implicit_gemm_f16_sm90.cu) for C > 8 and more than 32 filters.
#pragma once

#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>

#include "common/workspace.h"
#include "contract.h"
#include "multichannel/im2col.cuh"

namespace halconv::rk::mc {

__host__ __device__ inline int round_up(int v, int m) {
    return (v + m - 1) / m * m;
}

// Output tile of one block, 64 x 8 pixels (how warps share it: implicit_gemm_f16_sm80.cu).
inline constexpr int implicit_tile_width = 64;
inline constexpr int implicit_tile_height = 8;

struct ImplicitPlan {
    bool dense;
    int block_filters;  // BN: 16, 32 or 64
    int cpix;           // dense: channels per staged pixel (2, 4, 8); chunked: chunk CC
    int pixel_pitch;    // halfs per pixel in shared memory
    int kyn, kxn;       // kernel rows and columns per step
    int chunks_c, chunks_y, chunks_x;
    int steps;         // chunks_c chunks_y chunks_x, in that nesting (c fastest)
    int k_row;         // k length of one kernel row of a step
    int k_len;         // k length of a step: kyn k_row
    int weight_pitch;  // halfs per filter row of a step's weights in shared memory
    int halo_rows, halo_cols, halo_row_pitch;
    int halo_halfs;    // one stage's patch (rounded to 64 halfs)
    int weight_halfs;  // one step's weights for block_filters filters (rounded to 64)
    bool resident;     // every step's weights stay in shared memory for the block's life
    int smem_bytes;
};

// The cheapest step split (bytes staged per tile, weighted with the tensor work padding
// adds) that fits smem_limit bytes of shared memory; filters sets the block width.
ImplicitPlan plan_implicit(int channels, int kw, int kh, int filters, size_t smem_limit);

// What both implicit-GEMM kernels read besides their plan: the image region (aligned as
// their copies need), the packed weights, the output and its tiling.
template <typename Out>
struct ImplicitProblem {
    const __half *image;  // first pixel of the region read
    int64_t sx, sy;
    int channels, in_w, in_h;
    const __half *kmat;  // packed weights, in the kernel's own layout
    Out *out;
    int64_t osx, osy;
    int filters, out_w, out_h;
    int vector_outputs;  // outputs one aligned vector store of at most 16 bytes may write
    int tiles_x, tiles;
    int kw, kh;
};

template <typename Out>
ImplicitProblem<Out> implicit_problem(const Tensor3<__half> &img, int in_w, int in_h, const Kernels<__half> &kernels,
                                      const __half *kmat, const OutputView<Out> &out, int out_height, int tile_w,
                                      int tile_h) {
    ImplicitProblem<Out> q{};
    q.image = img.data;
    q.sx = img.sx;
    q.sy = img.sy;
    q.channels = kernels.channels;
    q.in_w = in_w;
    q.in_h = in_h;
    q.kmat = kmat;
    q.out = out.data;
    q.osx = out.sx;
    q.osy = out.sy;
    q.filters = out.filters;
    q.out_w = out.width;
    q.out_h = out_height;
    // The largest of 16 bytes' worth of outputs, halved down to 1, that divides both
    // pixel strides and the start's alignment.
    q.vector_outputs = 16 / sizeof(Out);
    while (q.vector_outputs > 1 && (out.sx % q.vector_outputs != 0 || out.sy % q.vector_outputs != 0 ||
                                    reinterpret_cast<uintptr_t>(out.data) % (q.vector_outputs * sizeof(Out)) != 0)) {
        q.vector_outputs /= 2;
    }
    q.tiles_x = (out.width + tile_w - 1) / tile_w;
    q.tiles = q.tiles_x * ((out_height + tile_h - 1) / tile_h);
    q.kw = kernels.width;
    q.kh = kernels.height;
    return q;
}

// Halfs of the sm80 kernel's packed weights: every step's k run for each filter, the
// filters rounded up to the plan's block.
int64_t implicit_weight_halfs(const ImplicitPlan &p, int filters);

// Bytes of the wgmma kernel's packed weights on device d, or 0 where it does not run.
size_t implicit_wgmma_weight_bytes(const DeviceFacts &d, int channels, int kw, int kh, int filters, int out_w,
                                   int out_h, int out_bytes);

// Scratch (common/workspace.h) the implicit GEMM takes for an out_w x out_h output of
// `filters` filters on the current device: the packed weights of the kernel that runs,
// after room for the aligned image copy (taken only when the image's strides need it).
size_t implicit_gemm_scratch_bytes(int channels, int kw, int kh, int filters, int out_w, int out_h, int out_bytes);

// *img = image when its pixels can be read `align` halfs (16 bytes at most) at a time,
// else a copy taken from `scratch` with each pixel's channels padded with zeros to
// contract::implicit_gemm_channel_pitch.
cudaError_t aligned_image(const Tensor3<__half> &image, int in_w, int in_h, int align, Tensor3<__half> *img,
                          Scratch &scratch, cudaStream_t stream);

// The valid correlation of image (region in_w x in_h, at least out.width + kw - 1 by the
// output height + kh - 1) by filters [first_filter, first_filter + out.filters) of
// `kernels`, into out. Images whose pixels cannot be read 16 bytes (2 cpix bytes when
// C <= 8) at a time are first copied into a padded buffer; that copy and the packed
// weights come from `scratch`.
template <typename Out>
cudaError_t launch_implicit_gemm_f16(const Tensor3<__half> &image, int in_w, int in_h, const Kernels<__half> &kernels,
                                     int first_filter, bool flip, const OutputView<Out> &out, int out_height,
                                     Scratch &scratch, cudaStream_t stream);

// As launch_implicit_gemm_f16, on Hopper warpgroup MMA, where it applies: an sm_90 GPU
// (wgmma has no later or earlier form) whose driver encodes TMA tensor maps, C > 8 and
// more than 32 filters (one 64-filter warpgroup tile; fewer waste most of it), and a plan
// that fits shared memory. Elsewhere *ran is false and nothing is queued.
template <typename Out>
cudaError_t launch_implicit_wgmma_f16(const Tensor3<__half> &image, int in_w, int in_h, const Kernels<__half> &kernels,
                                      int first_filter, bool flip, const OutputView<Out> &out, int out_height,
                                      Scratch &scratch, cudaStream_t stream, bool *ran);

}  // namespace halconv::rk::mc
