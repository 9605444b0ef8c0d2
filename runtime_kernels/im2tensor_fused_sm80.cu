// im2tensor, fused (seed 000 Algorithm 2, §4.2.4) and fused + atomic, f16 inputs with
// f32 accumulation on tensor cores (WMMA m16n16k16), result stored as f32 or f16.
//
// A thread block owns a P-block spanning every kernel column (h_B = the padded kernel
// width), a strip of image columns (w_B) and 32 output rows (d_B). Its warps accumulate
// the product skewed: the accumulator tile of chunk J sums, over the kernel's column
// fragments a, K^T(16a.., :) S(:, 16(J+a)..), so the Tr+ diagonals of P already add up
// across fragments inside the tensor cores and only a 16-wide diagonal sum is left per
// output (instead of kw). Output chunk J is complete once tiles J and J+1 are summed;
// a block walks its strip left to right carrying the upper diagonals in registers, so
// the only partial sums are the 16 outputs at each strip boundary:
//   - fused: each side writes them into the partial-sum buffer C, two rows per strip
//     boundary (the row-reuse rule of eq. 18-19 with one block row: blocks two strips
//     apart never share a diagonal), and a recombination kernel adds the two;
//   - atomic: each side adds them into the (zeroed) output atomically; no extra memory.
#include "halconv_tc.h"
#include "tc_common.cuh"

namespace halconv::tc {
namespace {

using namespace nvcuda;

constexpr int rows_per_warp = 4;                             // output rows w, w+8, w+16, w+24
constexpr int block_rows = warps_per_block * rows_per_warp;  // 32 output rows per block

struct FusedParams {
    Problem io;
    int na;            // kernel column fragments: ceil(kw / 16)
    int ldk;           // padded kernel row pitch (halfs)
    int pitch;         // staged window row pitch (halfs)
    int slots;         // ring slots of column chunks
    int jtot;          // skewed tiles along x: ceil(out_width / 16) + 1
    int strip_chunks;  // tiles per block strip
    float *partials;   // C (fused): [row][boundary][2][16]; null for atomic
    int boundaries;    // strips - 1
};

template <typename Out, bool Atomic>
__device__ void emit_partial(const FusedParams &p, int k, int boundary, int side, int chunk, int d, float v) {
    if (k >= p.io.out_height) {
        return;
    }
    if constexpr (Atomic) {
        const int j = chunk * frag + d;
        if (j < p.io.out_width) {
            atomicAdd(p.io.at<Out>(j, k), to_output<Out>(v));
        }
    } else {
        p.partials[(int64_t(k) * p.boundaries + boundary) * 32 + side * frag + d] = v;
    }
}

// Column chunks staged per step (one barrier each): several for small kernels, whose
// tiles are cheap, so the global loads of the next step hide behind enough work.
__host__ __device__ constexpr int chunks_per_step(int nb) {
    return nb <= 2 ? 4 : (nb <= 4 ? 2 : 1);
}

template <int NB, typename Out, bool Atomic>
__global__ void __launch_bounds__(threads_per_block, 2) im2tensor_fused_kernel(FusedParams p) {
    constexpr int rows = block_rows + NB * frag;  // staged image rows
    constexpr int CH = chunks_per_step(NB);
    extern __shared__ __align__(128) unsigned char smem[];
    const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
    __half *ks = reinterpret_cast<__half *>(smem);
    __half *win = ks + NB * frag * p.ldk;
    float *scratch = reinterpret_cast<float *>(win + rows * p.pitch) + warp * tile_pair_floats;

    const int k0 = blockIdx.y * block_rows;
    const int J0 = blockIdx.x * p.strip_chunks;
    const int J1 = min(J0 + p.strip_chunks, p.jtot);
    stage_kernel(ks, p.ldk, NB * frag, p.io.ker, p.io.flip);

    // Step J computes tiles J .. J+CH-1, reading chunks J .. J+CH+na-2, while the
    // chunks of the next step arrive: 2 CH + na - 1 chunks live in the ring.
    ChunkStager<rows> stager[CH];
    uint32_t bad = 0;  // bit i: chunk J + i holds an Inf or NaN
    for (int i = 0; i < p.na + CH - 1; i++) {
        stager[0].load(p.io.img, k0, J0 + i);
        bad |= uint32_t(__syncthreads_or(stager[0].store(win, p.pitch, (J0 + i) % p.slots))) << i;
    }

    const int d = lane & 15, pick = lane >> 4;  // this lane's diagonal and tile of each pair
    float carry[rows_per_warp / 2] = {};
    for (int J = J0; J < J1; J += CH) {
        const bool more = J + CH < J1;
        if (more) {
#pragma unroll
            for (int c = 0; c < CH; c++) {
                stager[c].load(p.io.img, k0, J + CH + p.na - 1 + c);
            }
        }
        for (int c = 0; c < CH && J + c < J1; c++) {
            const int tile = J + c;
            const bool exact = ((bad >> c) & ((1u << p.na) - 1)) != 0;
            wmma::fragment<wmma::accumulator, 16, 16, 16, float> acc[rows_per_warp];
            if (!exact) {
#pragma unroll
                for (int r = 0; r < rows_per_warp; r++) {
                    wmma::fill_fragment(acc[r], 0.f);
                }
                for (int a = 0; a < p.na; a++) {
                    wmma::fragment<wmma::matrix_a, 16, 16, 16, __half, wmma::col_major> fa[NB];
#pragma unroll
                    for (int b = 0; b < NB; b++) {
                        wmma::load_matrix_sync(fa[b], ks + b * frag * p.ldk + a * frag, p.ldk);
                    }
                    const __half *col = win + ((tile + a) % p.slots) * frag + warp * p.pitch;
                    // Row w + 8r with y fragment b reads window rows w + 8(r + 2b): one
                    // load of B serves every (r, b) on that anti-diagonal.
#pragma unroll
                    for (int t = 0; t < 2 * NB + 2; t++) {
                        wmma::fragment<wmma::matrix_b, 16, 16, 16, __half, wmma::row_major> fb;
                        wmma::load_matrix_sync(fb, col + 8 * t * p.pitch, p.pitch);
#pragma unroll
                        for (int b = 0; b < NB; b++) {
                            const int r = t - 2 * b;
                            if (r >= 0 && r < rows_per_warp) {
                                wmma::mma_sync(acc[r], fa[b], fb, acc[r]);
                            }
                        }
                    }
                }
            }
#pragma unroll
            for (int pr = 0; pr < rows_per_warp / 2; pr++) {
                float *t0 = scratch, *t1 = scratch + tile_second_offset;
                if (exact) {
                    skewed_tile_exact(t0, ks, p.ldk, win, p.pitch, p.slots, tile, p.na, p.io.ker.width, p.io.ker.height,
                                      warp + 16 * pr);
                    skewed_tile_exact(t1, ks, p.ldk, win, p.pitch, p.slots, tile, p.na, p.io.ker.width, p.io.ker.height,
                                      warp + 16 * pr + 8);
                } else {
                    wmma::store_matrix_sync(t0, acc[2 * pr], tile_ld, wmma::mem_row_major);
                    wmma::store_matrix_sync(t1, acc[2 * pr + 1], tile_ld, wmma::mem_row_major);
                }
                __syncwarp();
                float upper, lower;
                diagonal_sums(pick ? t1 : t0, d, upper, lower);
                __syncwarp();
                const int k = k0 + warp + 16 * pr + 8 * pick;
                if (tile > J0) {
                    p.io.store<Out>((tile - 1) * frag + d, k, carry[pr] + lower);
                } else if (J0 > 0) {
                    emit_partial<Out, Atomic>(p, k, blockIdx.x - 1, 1, J0 - 1, d, lower);
                }
                carry[pr] = upper;
            }
        }
        if (more) {
            bool b = false;
#pragma unroll
            for (int c = 0; c < CH; c++) {
                b |= stager[c].store(win, p.pitch, (J + CH + p.na - 1 + c) % p.slots);
            }
            // One barrier for the step: a non-finite sample marks all its new chunks.
            const uint32_t any = __syncthreads_or(b) ? (1u << CH) - 1 : 0u;
            bad = (bad >> CH) | (any << (p.na - 1));
        }
    }
    if (J1 < p.jtot) {
#pragma unroll
        for (int pr = 0; pr < rows_per_warp / 2; pr++) {
            emit_partial<Out, Atomic>(p, k0 + warp + 16 * pr + 8 * pick, blockIdx.x, 0, J1 - 1, d, carry[pr]);
        }
    }
}

// Outputs of the boundary chunks: C's two partial rows added (fused) or zeroed before
// both sides add into them (atomic). One thread per (row, boundary, diagonal).
template <typename Out, bool Zero>
__global__ void boundary_chunks_kernel(FusedParams p) {
    const int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
    const int d = int(i & 15);
    const int64_t edge = i >> 4;  // row * boundaries + boundary
    if (edge >= int64_t(p.io.out_height) * p.boundaries) {
        return;
    }
    const int k = int(edge / p.boundaries), b = int(edge % p.boundaries);
    const int j = ((b + 1) * p.strip_chunks - 1) * frag + d;
    p.io.store<Out>(j, k, Zero ? 0.f : p.partials[edge * 32 + d] + p.partials[edge * 32 + frag + d]);
}

template <typename Out, bool Atomic>
int run(void *uc, halide_buffer_t *in, halide_buffer_t *kernel, bool flip, halide_buffer_t *out, const char *name) {
    ExternCall call;
    const int status = prepare_extern_call(uc, in, kernel, flip, out, output_type<Out>(), name, &call);
    if (status != 0) {
        return status < 0 ? 0 : status;
    }
    FusedParams p{};
    p.io = call.problem;
    p.na = (p.io.ker.width + frag - 1) / frag;
    const int nb = (p.io.ker.height + frag - 1) / frag;
    p.ldk = odd_fragment_multiple(p.na * frag);
    p.slots = p.na + 2 * chunks_per_step(nb) - 1;
    p.pitch = odd_fragment_multiple(p.slots * frag);
    p.jtot = (p.io.out_width + frag - 1) / frag + 1;
    const int row_blocks = (p.io.out_height + block_rows - 1) / block_rows;
    p.strip_chunks = strip_chunks_for(p.jtot, row_blocks);
    const int strips = (p.jtot + p.strip_chunks - 1) / p.strip_chunks;
    p.boundaries = strips - 1;
    const int rows = block_rows + nb * frag;
    const size_t smem = size_t(nb * frag * p.ldk + rows * p.pitch) * sizeof(__half) +
                        size_t(warps_per_block * tile_pair_floats) * sizeof(float);

    cudaError_t e = cudaSuccess;
    const unsigned edge_blocks = unsigned((int64_t(p.io.out_height) * p.boundaries * frag + 255) / 256);
    if (!Atomic && p.boundaries > 0) {
        e = cudaMallocAsync(reinterpret_cast<void **>(&p.partials),
                            size_t(p.io.out_height) * p.boundaries * 32 * sizeof(float), call.stream);
        if (e != cudaSuccess) {
            return report_cuda_error(uc, name, "allocating the partial-sum buffer", e);
        }
    }
    if (Atomic && p.boundaries > 0) {
        boundary_chunks_kernel<Out, true><<<edge_blocks, 256, 0, call.stream>>>(p);
        e = cudaGetLastError();
    }
    if (e == cudaSuccess) {
        e = with_row_fragments(nb, [&](auto NB) {
            constexpr auto kernel = im2tensor_fused_kernel<NB.value, Out, Atomic>;
            if (const cudaError_t f = allow_opt_in_shared_memory<kernel>(); f != cudaSuccess) {
                return f;
            }
            kernel<<<dim3(strips, row_blocks), threads_per_block, smem, call.stream>>>(p);
            return cudaGetLastError();
        });
    }
    if (e == cudaSuccess && !Atomic && p.boundaries > 0) {
        boundary_chunks_kernel<Out, false><<<edge_blocks, 256, 0, call.stream>>>(p);
        e = cudaGetLastError();
    }
    if (p.partials != nullptr) {
        const cudaError_t f = cudaFreeAsync(p.partials, call.stream);
        e = e == cudaSuccess ? f : e;
    }
    return finish_extern_call(uc, name, "launching the kernels", e, out);
}

}  // namespace
}  // namespace halconv::tc

extern "C" {

int halconv_tc_im2tensor_fused_f16f32(halide_buffer_t *in, halide_buffer_t *kernel, bool flip, halide_buffer_t *out) {
    return halconv::tc::run<float, false>(nullptr, in, kernel, flip, out, "im2tensor_fused");
}
int halconv_tc_im2tensor_fused_f16(halide_buffer_t *in, halide_buffer_t *kernel, bool flip, halide_buffer_t *out) {
    return halconv::tc::run<__half, false>(nullptr, in, kernel, flip, out, "im2tensor_fused");
}
int halconv_tc_im2tensor_atomic_f16f32(halide_buffer_t *in, halide_buffer_t *kernel, bool flip, halide_buffer_t *out) {
    return halconv::tc::run<float, true>(nullptr, in, kernel, flip, out, "im2tensor_atomic");
}
int halconv_tc_im2tensor_atomic_f16(halide_buffer_t *in, halide_buffer_t *kernel, bool flip, halide_buffer_t *out) {
    return halconv::tc::run<__half, true>(nullptr, in, kernel, flip, out, "im2tensor_atomic");
}

}  // extern "C"
