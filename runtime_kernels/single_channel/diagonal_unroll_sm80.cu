// Diagonal kernel-image-loop unrolling (seed 003 §IV.C) for LTI filters, f16 inputs with
// f32 accumulation on tensor cores, in the two WMMA layouts the paper compares.
//
// Kernel-loop unrolling multiplies the transposed kernel (A: kernel columns x kernel
// rows) by an image patch (B: kernel rows x image columns); only the main diagonal of
// D = A B is one pixel's convolution. The diagonal variant also uses the off-diagonals,
// which are the column sums of neighbouring pixels, and unrolls the image loop with the
// kernel width as stride so every pixel's missing diagonals come from the neighbouring
// product. Unlike fused im2tensor there is no shared P-block and no partial-sum buffer:
// each warp computes, for its own output columns, every product tile that contributes,
// recomputing the tiles its neighbours also need.
//   - m16n16k16: 16 output columns per step from two 16x16 tiles (this chunk's and the
//     next: 2x the tensor work of fused im2tensor);
//   - m32n8k16: 32 kernel columns by 8 image columns per tile; 8 output columns need 5
//     tiles (the paper's faster layout for LTV filters, slower here for LTI).
// Both accumulate skewed over the kernel's column fragments (see im2tensor_fused_sm80.cu).
#include "single_channel/halconv_tc.h"
#include "single_channel/im2tensor_common.cuh"

namespace halconv::rk::tc {
namespace {

using namespace nvcuda;

struct DiagonalUnrollParams {
    Problem io;
    int na;            // kernel column fragments (16 or 32 wide, per layout)
    int ldk;           // padded kernel pitch (halfs)
    int pitch;         // window pitch (halfs)
    int slots;         // ring slots of 16-column chunks
    int chunks;        // output chunks of 16 columns
    int strip_chunks;  // chunks per block
};

// ---- m16n16k16: 8 warps x 4 output rows (w, w+8, w+16, w+24) per block ----

constexpr int rows16 = 4;
constexpr int block_rows16 = warps_per_block * rows16;

template <int NB, typename Out>
__global__ void __launch_bounds__(threads_per_block) diagonal_unroll_m16n16k16_kernel(DiagonalUnrollParams p) {
    constexpr int rows = block_rows16 + NB * frag;
    extern __shared__ __align__(128) unsigned char smem[];
    const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
    __half *ks = reinterpret_cast<__half *>(smem);
    __half *win = ks + NB * frag * p.ldk;
    float *scratch = reinterpret_cast<float *>(win + rows * p.pitch) + warp * tile_pair_floats;
    const int k0 = row_block_index() * block_rows16;
    if (k0 >= p.io.out_height) {
        return;  // past the last row block (row_block_grid)
    }
    const int J0 = blockIdx.x * p.strip_chunks, J1 = min(J0 + p.strip_chunks, p.chunks);
    stage_kernel(ks, p.ldk, NB * frag, p.io.ker, p.io.flip);

    // Step J reads chunks J .. J+na (tiles J and J+1).
    const ChunkRows<rows> source(p.io.img, k0);
    ChunkStager<rows> stager;
    uint32_t bad = 0;
    for (int i = 0; i <= p.na; i++) {
        stager.load(source, J0 + i);
        bad |= uint32_t(__syncthreads_or(stager.store(win, p.pitch, (J0 + i) % p.slots))) << i;
    }
    const uint32_t mask = (2u << p.na) - 1;
    const int d = lane & 15, pick = lane >> 4;
    for (int J = J0; J < J1; J++) {
        const bool more = J + 1 < J1;
        if (more) {
            stager.load(source, J + p.na + 1);
        }
        const bool exact = (bad & mask) != 0;
        wmma::fragment<wmma::accumulator, 16, 16, 16, float> acc[2][rows16];
        if (!exact) {
#pragma unroll
            for (int r = 0; r < rows16; r++) {
                wmma::fill_fragment(acc[0][r], 0.f);
                wmma::fill_fragment(acc[1][r], 0.f);
            }
            for (int a = 0; a < p.na; a++) {
                wmma::fragment<wmma::matrix_a, 16, 16, 16, __half, wmma::col_major> fa[NB];
#pragma unroll
                for (int b = 0; b < NB; b++) {
                    wmma::load_matrix_sync(fa[b], ks + b * frag * p.ldk + a * frag, p.ldk);
                }
#pragma unroll
                for (int n = 0; n < 2; n++) {
                    const __half *col = win + ((J + n + a) % p.slots) * frag + warp * p.pitch;
#pragma unroll
                    for (int t = 0; t < 2 * NB + 2; t++) {
                        wmma::fragment<wmma::matrix_b, 16, 16, 16, __half, wmma::row_major> fb;
                        wmma::load_matrix_sync(fb, col + 8 * t * p.pitch, p.pitch);
#pragma unroll
                        for (int b = 0; b < NB; b++) {
                            const int r = t - 2 * b;
                            if (r >= 0 && r < rows16) {
                                wmma::mma_sync(acc[n][r], fa[b], fb, acc[n][r]);
                            }
                        }
                    }
                }
            }
        }
#pragma unroll
        for (int r = 0; r < rows16; r++) {
            float *t0 = scratch, *t1 = scratch + tile_second_offset;
            const int row = warp + 8 * r;
            if (exact) {
                skewed_tile_exact(t0, ks, p.ldk, win, p.pitch, p.slots, J, p.na, p.io.ker.width, p.io.ker.height, row);
                skewed_tile_exact(t1, ks, p.ldk, win, p.pitch, p.slots, J + 1, p.na, p.io.ker.width, p.io.ker.height,
                                  row);
            } else {
                wmma::store_matrix_sync(t0, acc[0][r], tile_ld, wmma::mem_row_major);
                wmma::store_matrix_sync(t1, acc[1][r], tile_ld, wmma::mem_row_major);
            }
            __syncwarp();
            float upper, lower;
            diagonal_sums(pick ? t1 : t0, d, upper, lower);
            __syncwarp();
            // Output 16J+d: upper diagonal of tile J (lanes 0-15) + lower of tile J+1 (16-31).
            const float part = pick ? lower : upper;
            const float sum = part + __shfl_down_sync(0xffffffffu, part, 16);
            if (pick == 0) {
                p.io.store<Out>(J * frag + d, k0 + row, sum);
            }
        }
        if (more) {
            const bool b = stager.store(win, p.pitch, (J + p.na + 1) % p.slots);
            bad = (bad >> 1) | (uint32_t(__syncthreads_or(b)) << p.na);
        }
    }
}

// ---- m32n8k16: 8 warps x 1 output row per block ----
//
// Tile (h, t) of step J: kernel columns 32a..32a+31 times image columns
// 16J + 8(h + t) + 32a .. +7, summed over a; output 16J + 8h + d collects
// D_{h,t}(8t + c - d, c) over t < 5, c < 8. Image column offsets are multiples of 8,
// but WMMA wants 32-byte aligned tiles: the right half of every staged chunk is
// stored again, aligned, in a second window (win8).

constexpr int block_rows32 = warps_per_block;
constexpr int tiles32 = 5;
constexpr int tile32_floats = 32 * 8;

// Exact stand-in for tile (h, t) where staged samples are not finite.
__device__ void m32n8k16_tile_exact(float *tile, const __half *ks, int ldk, const __half *win, int pitch, int slots,
                                    int J, int offset8, int na, int kw, int kh, int row) {
    const int lane = threadIdx.x & 31;
    for (int e = lane; e < tile32_floats; e += 32) {
        const int i = e >> 3, c = e & 7;
        float s = 0.f;
        for (int a = 0; a < na; a++) {
            const int x = 32 * a + i;
            if (x >= kw) {
                break;
            }
            const int column = 8 * offset8 + 32 * a + c;  // relative to 16J
            const __half *src = win + ((J + column / frag) % slots) * frag + column % frag;
            for (int y = 0; y < kh; y++) {
                s += __half2float(ks[y * ldk + x]) * __half2float(src[(row + y) * pitch]);
            }
        }
        tile[e] = s;
    }
}

template <int NB, typename Out>
__global__ void __launch_bounds__(threads_per_block) diagonal_unroll_m32n8k16_kernel(DiagonalUnrollParams p) {
    constexpr int rows = block_rows32 + NB * frag;
    extern __shared__ __align__(128) unsigned char smem[];
    const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
    __half *ks = reinterpret_cast<__half *>(smem);
    __half *win = ks + NB * frag * p.ldk;
    __half *win8 = win + rows * p.pitch;
    float *scratch = reinterpret_cast<float *>(win8 + rows * p.pitch) + warp * tiles32 * tile32_floats;
    const int k0 = row_block_index() * block_rows32;
    if (k0 >= p.io.out_height) {
        return;  // past the last row block (row_block_grid)
    }
    const int J0 = blockIdx.x * p.strip_chunks, J1 = min(J0 + p.strip_chunks, p.chunks);
    const int span = 2 * p.na + 1;  // chunks read per step
    stage_kernel(ks, p.ldk, NB * frag, p.io.ker, p.io.flip);

    const ChunkRows<rows> source(p.io.img, k0);
    ChunkStager<rows> stager;
    uint64_t bad = 0;
    for (int i = 0; i < span; i++) {
        stager.load(source, J0 + i);
        bad |= uint64_t(__syncthreads_or(stager.store(win, p.pitch, (J0 + i) % p.slots, win8))) << i;
    }
    const uint64_t mask = (uint64_t(1) << span) - 1;
    const int d = lane & 7, g = lane >> 3;
    for (int J = J0; J < J1; J++) {
        const bool more = J + 1 < J1;
        if (more) {
            stager.load(source, J + span);
        }
        const bool exact = (bad & mask) != 0;
        wmma::fragment<wmma::accumulator, 32, 8, 16, float> acc[2][tiles32];
        if (!exact) {
#pragma unroll
            for (int h = 0; h < 2; h++) {
#pragma unroll
                for (int t = 0; t < tiles32; t++) {
                    wmma::fill_fragment(acc[h][t], 0.f);
                }
            }
            for (int a = 0; a < p.na; a++) {
#pragma unroll
                for (int b = 0; b < NB; b++) {
                    wmma::fragment<wmma::matrix_a, 32, 8, 16, __half, wmma::col_major> fa;
                    wmma::load_matrix_sync(fa, ks + b * frag * p.ldk + 32 * a, p.ldk);
                    const int row = warp + b * frag;
#pragma unroll
                    for (int u = 0; u < tiles32 + 1; u++) {
                        // Columns 16J + 8u + 32a: chunk J + u/2 + 2a, left half or (win8) right half.
                        const int slot = (J + u / 2 + 2 * a) % p.slots;
                        const __half *src = ((u & 1) ? win8 : win) + row * p.pitch + slot * frag;
                        wmma::fragment<wmma::matrix_b, 32, 8, 16, __half, wmma::row_major> fb;
                        wmma::load_matrix_sync(fb, src, p.pitch);
                        if (u < tiles32) {
                            wmma::mma_sync(acc[0][u], fa, fb, acc[0][u]);
                        }
                        if (u > 0) {
                            wmma::mma_sync(acc[1][u - 1], fa, fb, acc[1][u - 1]);
                        }
                    }
                }
            }
        }
#pragma unroll
        for (int h = 0; h < 2; h++) {
#pragma unroll
            for (int t = 0; t < tiles32; t++) {
                float *tile = scratch + t * tile32_floats;
                if (exact) {
                    m32n8k16_tile_exact(tile, ks, p.ldk, win, p.pitch, p.slots, J, h + t, p.na, p.io.ker.width,
                                        p.io.ker.height, warp);
                } else {
                    wmma::store_matrix_sync(tile, acc[h][t], 8, wmma::mem_row_major);
                }
            }
            __syncwarp();
            float s = 0.f;
#pragma unroll
            for (int t = 0; t < tiles32; t++) {
#pragma unroll
                for (int c = 2 * g; c < 2 * g + 2; c++) {
                    const int i = 8 * t + c - d;
                    if (i >= 0 && i < 32) {
                        s += scratch[t * tile32_floats + i * 8 + c];
                    }
                }
            }
            __syncwarp();
            s += __shfl_xor_sync(0xffffffffu, s, 8);
            s += __shfl_xor_sync(0xffffffffu, s, 16);
            if (g == 0) {
                p.io.store<Out>(J * frag + 8 * h + d, k0 + warp, s);
            }
        }
        if (more) {
            const bool b = stager.store(win, p.pitch, (J + span) % p.slots, win8);
            bad = (bad >> 1) | (uint64_t(__syncthreads_or(b)) << (span - 1));
        }
    }
}

template <int Layout, typename Out>
int run(void *uc, halide_buffer_t *in, halide_buffer_t *kernel, bool flip, halide_buffer_t *out, const char *name) {
    if (in->dimensions == 3) {
        return for_each_image(uc, name, in, kernel, out, [&](halide_buffer_t *image, halide_buffer_t *result) {
            return run<Layout, Out>(uc, image, kernel, flip, result, name);
        });
    }
    ExternCall call;
    const int status = prepare_extern_call(uc, in, kernel, flip, out, output_type<Out>(), name, &call);
    if (status != 0) {
        return status < 0 ? 0 : status;
    }
    DiagonalUnrollParams p{};
    p.io = call.problem;
    const int a_width = Layout == 16 ? frag : 32;  // kernel columns per A fragment
    p.na = (p.io.ker.width + a_width - 1) / a_width;
    const int nb = (p.io.ker.height + frag - 1) / frag;
    p.ldk = odd_fragment_multiple(p.na * a_width);
    p.slots = Layout == 16 ? p.na + 2 : 2 * p.na + 2;
    p.pitch = odd_fragment_multiple(p.slots * frag);
    p.chunks = (p.io.out_width + frag - 1) / frag;
    const int block_rows = Layout == 16 ? block_rows16 : block_rows32;
    const int row_blocks = (p.io.out_height + block_rows - 1) / block_rows;
    p.strip_chunks = strip_chunks_for(p.chunks, row_blocks);
    const int strips = (p.chunks + p.strip_chunks - 1) / p.strip_chunks;
    const int rows = block_rows + nb * frag;
    const int windows = Layout == 16 ? 1 : 2;
    const int scratch_floats = Layout == 16 ? tile_pair_floats : tiles32 * tile32_floats;
    const size_t smem = size_t(nb * frag * p.ldk + windows * rows * p.pitch) * sizeof(__half) +
                        size_t(warps_per_block * scratch_floats) * sizeof(float);
    const cudaError_t e = with_row_fragments(nb, [&](auto NB) {
        constexpr auto kernel = Layout == 16 ? diagonal_unroll_m16n16k16_kernel<NB.value, Out>
                                             : diagonal_unroll_m32n8k16_kernel<NB.value, Out>;
        if (const cudaError_t f = allow_opt_in_shared_memory<kernel>(); f != cudaSuccess) {
            return f;
        }
        kernel<<<row_block_grid(strips, row_blocks), threads_per_block, smem, call.stream>>>(p);
        return cudaGetLastError();
    });
    return finish_extern_call(uc, name, "launching the kernel", e, out);
}

}  // namespace
}  // namespace halconv::rk::tc

extern "C" {

int halconv_tc_diagonal_unroll_f16f32(halide_buffer_t *in, halide_buffer_t *kernel, bool flip, halide_buffer_t *out) {
    return halconv::rk::tc::run<16, float>(nullptr, in, kernel, flip, out, "diagonal_unroll");
}
int halconv_tc_diagonal_unroll_f16(halide_buffer_t *in, halide_buffer_t *kernel, bool flip, halide_buffer_t *out) {
    return halconv::rk::tc::run<16, __half>(nullptr, in, kernel, flip, out, "diagonal_unroll");
}
int halconv_tc_diagonal_unroll_m32n8k16_f16f32(halide_buffer_t *in, halide_buffer_t *kernel, bool flip,
                                               halide_buffer_t *out) {
    return halconv::rk::tc::run<32, float>(nullptr, in, kernel, flip, out, "diagonal_unroll_m32n8k16");
}
int halconv_tc_diagonal_unroll_m32n8k16_f16(halide_buffer_t *in, halide_buffer_t *kernel, bool flip,
                                            halide_buffer_t *out) {
    return halconv::rk::tc::run<32, __half>(nullptr, in, kernel, flip, out, "diagonal_unroll_m32n8k16");
}

}  // extern "C"
