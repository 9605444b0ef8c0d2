// Device and host pieces shared by the single-channel tensor-core kernels (im2tensor
// basic, fused, atomic; diagonal kernel-image-loop unrolling): the zero-padded kernel in
// shared memory, the ring of staged image column chunks, the diagonal extraction of a
// 16x16 product tile, the exact fallback, the problem every entry point computes and its
// extern-call prologue, strip sizing.
//
// Notation (seed 000): valid correlation R(j, k) = sum_{y<kh, x<kw} K(x, y) I(j + x, k + y),
// x along the width. P_k = K^T S_k holds P_k(x, c) = sum_y K(x, y) I(c, k + y); output
// (j, k) is the sum of P_k along the diagonal c - x = j (the Tr+ operation).
#pragma once

#include <cuda_fp16.h>
#include <cuda_runtime.h>
#include <mma.h>

#include <cstdint>
#include <string>
#include <string_view>
#include <type_traits>

#include "HalideRuntime.h"
#include "common/extern_call.cuh"
#include "contract.h"

namespace halconv::rk::tc {

// Tensor-core fragment edge (WMMA m16n16k16): kernels are zero-padded to multiples of it.
inline constexpr int frag = contract::tensor_core_fragment;
inline constexpr int warps_per_block = 8;
inline constexpr int threads_per_block = warps_per_block * 32;
inline constexpr int max_kernel_edge = contract::tensor_core_max_kernel_edge;

// Smallest odd multiple of 16 halfs holding n: shared-memory row pitches that keep
// fragment rows 32-byte aligned (WMMA's requirement) with as few bank conflicts as that
// allows.
inline int odd_fragment_multiple(int n) {
    const int m = (n + frag - 1) / frag;
    return (m % 2 == 1 ? m : m + 1) * frag;
}

// f16 bit patterns with an all-ones exponent are Inf or NaN.
__device__ inline bool nonfinite_bits(uint16_t bits) {
    return (bits & 0x7c00u) == 0x7c00u;
}

// Zero-padded (flipped when convolving) kernel in shared memory: ks[y * ldk + x] =
// K(x, y) for x < kw, y < kh, else 0. ldk is an odd multiple of 16 halfs (32-byte
// aligned fragment rows, fewer bank conflicts).
__device__ inline void stage_kernel(__half *ks, int ldk, int rows, const View<const __half> &k, bool flip) {
    uint16_t *dst = reinterpret_cast<uint16_t *>(ks);
    for (int e = threadIdx.x; e < rows * ldk; e += blockDim.x) {
        const int y = e / ldk, x = e - y * ldk;
        dst[e] = x < k.width && y < k.height ? __half_as_ushort(k.tap(x, y, flip)) : uint16_t(0);
    }
}

// A ring of image column chunks in shared memory: Rows image rows from row0, chunk q
// (image columns 16q .. 16q+15) in slot q % slots; win[row * pitch + slot * 16 + c].
// Samples outside the image are staged as zeros, so no thread reads out of bounds.
// Each thread moves the same column pair (c, c + 1) of rows r, r + 32, ... of every
// chunk; ChunkRows holds where those rows start, computed once per block. Element: the
// samples as loaded (uint16_t: f16 bits; float for the f32 split).
template <int Rows, typename Element = uint16_t>
struct ChunkRows {
    static constexpr int pairs_per_thread = (Rows * 8 + threads_per_block - 1) / threads_per_block;
    const Element *row[pairs_per_thread];  // this thread's column pair of chunk 0; null outside the image
    int width;
    bool aligned;  // every pair starts aligned to two elements: one vector load per pair

    template <typename Sample>
    __device__ ChunkRows(const View<const Sample> &img, int row0) : width(img.width) {
        static_assert(sizeof(Sample) == sizeof(Element));
        const Element *src = reinterpret_cast<const Element *>(img.data);
        aligned = (reinterpret_cast<uintptr_t>(src) & (2 * sizeof(Element) - 1)) == 0 && img.stride % 2 == 0;
#pragma unroll
        for (int i = 0; i < pairs_per_thread; i++) {
            const int r = (threadIdx.x >> 3) + i * (threads_per_block / 8), y = row0 + r;
            row[i] = r < Rows && y < img.height ? src + int64_t(y) * img.stride + column() : nullptr;
        }
    }

    __device__ static int column() {
        return 2 * (threadIdx.x & 7);
    }
};

// Loads go to registers first (load) so they are in flight during the tensor-core work,
// then to shared memory (store), which reports whether any staged sample was Inf or NaN.
template <int Rows>
struct ChunkStager {
    static constexpr int pairs_per_thread = ChunkRows<Rows>::pairs_per_thread;
    uint32_t held[pairs_per_thread];

    __device__ void load(const ChunkRows<Rows> &rows, int q) {
        const int x = q * frag + ChunkRows<Rows>::column();
#pragma unroll
        for (int i = 0; i < pairs_per_thread; i++) {
            uint32_t v = 0;
            if (rows.row[i] != nullptr) {
                const uint16_t *p = rows.row[i] + q * frag;
                if (rows.aligned && x + 1 < rows.width) {
                    v = __ldg(reinterpret_cast<const uint32_t *>(p));
                } else {
                    const uint32_t lo = x < rows.width ? __ldg(p) : 0u;
                    const uint32_t hi = x + 1 < rows.width ? __ldg(p + 1) : 0u;
                    v = lo | (hi << 16);
                }
            }
            held[i] = v;
        }
    }

    // right_halves (optional, same pitch): the chunk's columns 8..15 again at the start
    // of their slot, 32-byte aligned for 8-column-wide fragments.
    __device__ bool store(__half *win, int pitch, int slot, __half *right_halves = nullptr) const {
        const int c = ChunkRows<Rows>::column();
        bool bad = false;
#pragma unroll
        for (int i = 0; i < pairs_per_thread; i++) {
            const int r = (threadIdx.x >> 3) + i * (threads_per_block / 8);
            if (r < Rows) {
                const int at = r * pitch + slot * frag + c;
                *reinterpret_cast<uint32_t *>(win + at) = held[i];
                if (right_halves != nullptr && c >= 8) {
                    *reinterpret_cast<uint32_t *>(right_halves + at - 8) = held[i];
                }
                bad |= nonfinite_bits(uint16_t(held[i])) || nonfinite_bits(uint16_t(held[i] >> 16));
            }
        }
        return bad;
    }
};

// Per-warp scratch for two 16x16 f32 tiles, rows tile_ld floats apart: the padding
// spreads the accumulator stores over more banks (ld 16 puts every other row on the
// same banks), and the second tile starts 16 banks after the first so the two
// half-warps summing them never share a bank.
inline constexpr int tile_ld = 20;
inline constexpr int tile_floats = 16 * tile_ld;
inline constexpr int tile_second_offset = tile_floats + 16;
inline constexpr int tile_pair_floats = tile_second_offset + tile_floats;

// Diagonal sums of a 16x16 tile D (rows x, columns c) stored row-major (ld tile_ld):
// lane d (0..15 of its half-warp) returns upper = sum_{i <= 15-d} D(i, i+d) and
// lower = sum_{i > 15-d} D(i, i+d-16). With the skewed accumulation of the kernels, D
// of chunk J gives output 16J+d its upper part and output 16(J-1)+d its lower part.
__device__ inline void diagonal_sums(const float *tile, int d, float &upper, float &lower) {
    upper = 0.f;
    lower = 0.f;
#pragma unroll
    for (int i = 0; i < frag; i++) {
        const int c = (i + d) & 15;
        const float v = tile[i * tile_ld + c];
        if (i + d < frag) {
            upper += v;
        } else {
            lower += v;
        }
    }
}

// Exact (CUDA-core) stand-in for the tensor-core product tile, used only where staged
// samples are not finite: zero-padded taps would turn Inf into NaN (0 * Inf) at pixels
// outside the footprint. Element (i, c) of the skewed tile
//   D(i, c) = sum_{a < na, x = 16a+i < kw} sum_{y < kh} K(x, y) I(chunk0 + a, c; row + y),
// chunk slots taken modulo `slots`.
__device__ inline float skewed_element_exact(const __half *ks, int ldk, const __half *win, int pitch, int slots,
                                             int chunk0, int na, int kw, int kh, int row, int i, int c) {
    float s = 0.f;
    for (int a = 0; a < na; a++) {
        const int x = a * frag + i;
        if (x >= kw) {
            break;
        }
        const __half *col = win + ((chunk0 + a) % slots) * frag + c;
        for (int y = 0; y < kh; y++) {
            s += __half2float(ks[y * ldk + x]) * __half2float(col[(row + y) * pitch]);
        }
    }
    return s;
}

// The whole tile into the warp's scratch (row-major, ld tile_ld).
__device__ inline void skewed_tile_exact(float *tile, const __half *ks, int ldk, const __half *win, int pitch,
                                         int slots, int chunk0, int na, int kw, int kh, int row) {
    const int lane = threadIdx.x & 31;
    for (int e = lane; e < frag * frag; e += 32) {
        const int i = e >> 4, c = e & 15;
        tile[i * tile_ld + c] = skewed_element_exact(ks, ldk, win, pitch, slots, chunk0, na, kw, kh, row, i, c);
    }
}

// The tile as this lane's elements of two m16n8 C fragments (columns 0..7 and 8..15;
// layout in common/mma_sync.cuh).
__device__ inline void skewed_fragments_exact(float (&acc)[2][4], const __half *ks, int ldk, const __half *win,
                                              int pitch, int slots, int chunk0, int na, int kw, int kh, int row) {
    const int lane = threadIdx.x & 31, g = lane >> 2, t = lane & 3;
    for (int h = 0; h < 2; h++) {
        for (int e = 0; e < 4; e++) {
            const int i = g + 8 * (e >> 1), c = 8 * h + 2 * t + (e & 1);
            acc[h][e] = skewed_element_exact(ks, ldk, win, pitch, slots, chunk0, na, kw, kh, row, i, c);
        }
    }
}

// ---- Host side ----

// What every entry point computes: the valid correlation of img (the output region
// plus the kernel's halo, from its first sample) by ker, flipped when flip, into out.
// Sample: __half for the f16 entries, float for the f32 ones (split on the way in).
template <typename Sample>
struct ProblemOf {
    View<const Sample> img;
    View<const Sample> ker;
    bool flip;
    void *out;
    int out_width, out_height;
    int64_t out_stride;

    template <typename Out>
    __device__ Out *at(int j, int k) const {
        return static_cast<Out *>(out) + int64_t(k) * out_stride + j;
    }
    // Writes output (j, k) when it lies inside the output.
    template <typename Out>
    __device__ void store(int j, int k, float v) const {
        if (j < out_width && k < out_height) {
            *at<Out>(j, k) = to_output<Out>(v);
        }
    }
};
using Problem = ProblemOf<__half>;

template <typename Sample>
struct ExternCallOf {
    cudaStream_t stream = nullptr;
    ProblemOf<Sample> problem{};
};
using ExternCall = ExternCallOf<__half>;

// Bounds query: valid correlation reads the output region plus the kernel's halo; the
// kernel is read whole. Real call: inputs moved to the device, types and strides
// checked (image and kernel of the call's Sample type), the stream fetched from Halide's
// (overridden) hook. Returns -1 when this was a bounds query (nothing else to do), 0 to
// go on, or a halide_error_code.
template <typename Sample>
int prepare_extern_call(void *user_context, halide_buffer_t *in, halide_buffer_t *kernel, bool flip,
                        halide_buffer_t *out, halide_type_t out_type, const char *name, ExternCallOf<Sample> *call);

// Scratch bytes of one call of each stage with scratch (workspace.h), per the problem's
// output and kernel extents on the current device: im2tensor's P, fused's partial sums.
size_t im2tensor_workspace_bytes(int out_width, int out_height, int kernel_width);
// precision: a tensor-core entry's ("f16", "f16f32", "f32"); SIZE_MAX for another.
size_t im2tensor_fused_workspace_bytes(int out_width, int out_height, int kernel_width, int kernel_height,
                                       std::string_view precision, bool atomic);

// A batch of problems alike but for their memory: image i at p.img.data + i image_stride,
// its output at p.out + i out_image_stride (elements).
struct BatchOf {
    int images = 1;
    int64_t image_stride = 0, out_image_stride = 0;
};

// im2tensor on Hopper (im2tensor_fused_sm90.cu, sm_90a machine code; no scratch): runs p
// (every image of `batch`, in one launch) where the current device is an sm_90 GPU, TMA
// can address the images' rows and a tiling fits, setting *ran to whether it did;
// launches nothing otherwise. Out: float or __half.
template <typename Out>
cudaError_t launch_im2tensor_wgmma(const Problem &p, const BatchOf &batch, cudaStream_t stream, bool *ran);

// Grids of `strips` x `row_blocks` blocks: CUDA allows at most 65535 blocks along y, so
// a taller output's row blocks continue along z (a 1 x 10^6 image has 125000 row blocks
// of 8 rows). A block's row block is row_block_index(); the grid may hold a few more
// than row_blocks, and those blocks return at once.
inline dim3 row_block_grid(int strips, int row_blocks) {
    const int y = row_blocks < 65535 ? row_blocks : 65535;
    return dim3(unsigned(strips), unsigned(y), unsigned((row_blocks + y - 1) / y));
}
__device__ inline int row_block_index() {
    return int(blockIdx.y + blockIdx.z * gridDim.y);
}

// Column chunks per block strip so that strips x row_blocks blocks make about four
// blocks per SM (fewer strips mean fewer boundary partial sums).
int strip_chunks_for(int chunks, int row_blocks);

// Column chunks per block strip for a kernel of which resident_per_sm blocks fit on an
// SM: the strip count that finishes soonest, counting whole waves of blocks and the
// prologue_chunks each block stages before its first tile; ties go to fewer strips.
int strip_chunks_for_waves(int chunks, int row_blocks, int resident_per_sm, int prologue_chunks);

// Calls f(std::integral_constant<int, NB>{}) for the kernel-row fragment count nb
// (1 .. 8, the counts the kernels are instantiated for).
template <typename F>
cudaError_t with_row_fragments(int nb, F &&f) {
    switch (nb) {
        case 1:
            return f(std::integral_constant<int, 1>{});
        case 2:
            return f(std::integral_constant<int, 2>{});
        case 3:
            return f(std::integral_constant<int, 3>{});
        case 4:
            return f(std::integral_constant<int, 4>{});
        case 5:
            return f(std::integral_constant<int, 5>{});
        case 6:
            return f(std::integral_constant<int, 6>{});
        case 7:
            return f(std::integral_constant<int, 7>{});
        default:
            return f(std::integral_constant<int, 8>{});
    }
}

}  // namespace halconv::rk::tc
