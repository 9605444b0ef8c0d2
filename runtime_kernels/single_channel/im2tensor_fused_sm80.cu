// im2tensor, fused (seed 000 Algorithm 2, §4.2.4) and fused + atomic, f16 inputs with
// f32 accumulation on tensor cores (PTX mma.sync m16n8k16 fed by ldmatrix), result
// stored as f32 or f16.
//
// A thread block owns a P-block spanning every kernel column (h_B = the padded kernel
// width), a strip of image columns (w_B) and 32 output rows (d_B). Its warps accumulate
// the product skewed: the accumulator tile of chunk J sums, over the kernel's column
// fragments a, K^T(16a.., :) S(:, 16(J+a)..), so the Tr+ diagonals of P already add up
// across fragments inside the tensor cores and only a 16-wide diagonal sum is left per
// output (instead of kw), and that sum is taken on the accumulators in registers (see
// DiagonalLane), never through a tile in shared memory. Output chunk J is complete once
// tiles J and J+1 are summed; a block walks its strip left to right carrying the upper
// diagonals in registers, so the only partial sums are the 16 outputs at each strip
// boundary:
//   - fused: each side writes them into the partial-sum buffer C, two rows per strip
//     boundary (the row-reuse rule of eq. 18-19 with one block row: blocks two strips
//     apart never share a diagonal), and a recombination kernel adds the two;
//   - atomic: each side adds them into the (zeroed) output atomically; no extra memory.
#include <cstdint>
#include <string_view>
#include <type_traits>

#include "common/mma_sync.cuh"
#include "common/workspace.h"
#include "single_channel/diagonal_lane.cuh"
#include "single_channel/halconv_tc.h"
#include "single_channel/im2tensor_common.cuh"
#include "single_channel/split_staging.cuh"

namespace halconv::rk::tc {
namespace {

constexpr int rows_per_warp = 4;                             // output rows w, w+8, w+16, w+24
constexpr int block_rows = warps_per_block * rows_per_warp;  // 32 output rows per block

template <typename Sample>
struct FusedParamsOf {
    ProblemOf<Sample> io;
    int na;            // kernel column fragments: ceil(kw / 16)
    int ldk;           // padded kernel row pitch (halfs)
    int pitch;         // staged window row pitch (halfs)
    int slots;         // ring slots of column chunks
    int jtot;          // skewed tiles along x: ceil(out_width / 16) + 1
    int strip_chunks;  // tiles per block strip
    float *partials;   // C (fused): [row][boundary][2][16]; null for atomic
    int boundaries;    // strips - 1
};

// The f32 kernel's second parameter: the call's scales (device memory) and how values
// split. Apart from FusedParamsOf so that the f16 kernel's parameters stay as they were
// (with them in, ptxas allocated its registers differently and spilled at NB = 2).
struct SplitFields {
    const SplitScales *scales;
    split_f32::Scheme scheme;
};
using FusedParams = FusedParamsOf<__half>;

// A boundary chunk's partial sum (atomic: added into the output; kept out of line, where
// inlined it costs the main loop registers and spills).
template <typename Out, typename Sample>
__device__ __noinline__ void add_partial(const ProblemOf<Sample> &io, int j, int k, float v) {
    if (j < io.out_width && k < io.out_height) {
        atomicAdd(io.template at<Out>(j, k), to_output<Out>(v));
    }
}

template <typename Out, bool Atomic, typename Sample>
__device__ void emit_partial(const FusedParamsOf<Sample> &p, int k, int boundary, int side, int chunk, int d, float v) {
    if constexpr (Atomic) {
        add_partial<Out>(p.io, chunk * frag + d, k, v);
    } else if (k < p.io.out_height) {
        p.partials[(int64_t(k) * p.boundaries + boundary) * 32 + side * frag + d] = v;
    }
}

// Column chunks staged per step (one barrier each): several for small kernels, whose
// tiles are cheap, so the global loads of the next step hide behind enough work.
__host__ __device__ constexpr int chunks_per_step(int nb) {
    return nb <= 2 ? 4 : (nb <= 4 ? 2 : 1);
}

// A warp's share of a strip's outputs (both kernels' epilogue): each tile's diagonal sums
// (DiagonalLane) stored, the upper diagonals carried in registers to the next tile, the
// strip's first and last outputs emitted as partial sums. `finish` maps a sum to the
// output's units (the identity, or the f32 split's scaling back). Free functions over
// the kernel's own diag and carry: kept as locals, the f16 kernel's registers stay as
// they were (held in a struct, ptxas spills more at NB = 2).

// Output row of this lane's sums for the pair (2 pr, 2 pr + 1), reduced together: lanes
// 0..15 get row 2 pr; row0 is the warp's first.
__device__ inline int pair_row(int row0, int lane, int pr) {
    return row0 + 8 * (2 * pr + (lane >> 4));
}

// Tile `tile` of the strip from J0 done: the outputs of chunk tile - 1 are complete.
template <typename Out, bool Atomic, typename Sample, typename Finish>
__device__ __forceinline__ void tile_done(const FusedParamsOf<Sample> &p, const DiagonalLane &diag,
                                          float (&carry)[rows_per_warp][4], float *buffer,
                                          const float (&acc)[rows_per_warp][2][4], int tile, int J0, int row0, int lane,
                                          Finish finish) {
    const int d = lane & 15;
#pragma unroll
    for (int pr = 0; pr < rows_per_warp / 2; pr++) {
        float total0[4], total1[4];
        diag.split(acc[2 * pr], carry[2 * pr], total0);
        diag.split(acc[2 * pr + 1], carry[2 * pr + 1], total1);
        const float sum = finish(diag.gather(buffer, total0, total1, lane));
        const int k = pair_row(row0, lane, pr);
        if (tile > J0) {
            p.io.template store<Out>((tile - 1) * frag + d, k, sum);
        } else if (J0 > 0) {
            emit_partial<Out, Atomic>(p, k, blockIdx.x - 1, 1, J0 - 1, d, sum);
        }
    }
}

// The strip ended at J1 before the last tile: its carried sums are a partial.
template <typename Out, bool Atomic, typename Sample, typename Finish>
__device__ __forceinline__ void strip_done(const FusedParamsOf<Sample> &p, const DiagonalLane &diag,
                                           float (&carry)[rows_per_warp][4], float *buffer, int J1, int row0, int lane,
                                           Finish finish) {
    const int d = lane & 15;
    const float none[2][4] = {};
#pragma unroll
    for (int pr = 0; pr < rows_per_warp / 2; pr++) {
        float total0[4], total1[4];
        diag.split(none, carry[2 * pr], total0);
        diag.split(none, carry[2 * pr + 1], total1);
        const float sum = finish(diag.gather(buffer, total0, total1, lane));
        emit_partial<Out, Atomic>(p, pair_row(row0, lane, pr), blockIdx.x, 0, J1 - 1, d, sum);
    }
}

// f16 samples: the sums are in the output's units.
struct AsSummed {
    __device__ float operator()(float v) const { return v; }
};

template <int NB, typename Out, bool Atomic>
__global__ void __launch_bounds__(threads_per_block, 2) im2tensor_fused_kernel(FusedParams p) {
    constexpr int rows = block_rows + NB * frag;  // staged image rows
    constexpr int CH = chunks_per_step(NB);
    extern __shared__ __align__(128) unsigned char smem[];
    const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
    __half *ks = reinterpret_cast<__half *>(smem);
    __half *win = ks + NB * frag * p.ldk;
    float *buffer = reinterpret_cast<float *>(win + rows * p.pitch) + warp * reduce_floats;

    const int k0 = row_block_index() * block_rows;
    if (k0 >= p.io.out_height) {
        return;  // past the last row block (row_block_grid)
    }
    const int J0 = blockIdx.x * p.strip_chunks;
    const int J1 = min(J0 + p.strip_chunks, p.jtot);
    stage_kernel(ks, p.ldk, NB * frag, p.io.ker, p.io.flip);

    // Step J computes tiles J .. J+CH-1, reading chunks J .. J+CH+na-2, while the
    // chunks of the next step arrive: 2 CH + na - 1 chunks live in the ring.
    const ChunkRows<rows> source(p.io.img, k0);
    ChunkStager<rows> stager[CH];
    uint32_t bad = 0;  // bit i: chunk J + i holds an Inf or NaN
    int fill_slot = J0 % p.slots;
    for (int i = 0; i < p.na + CH - 1; i++) {
        stager[0].load(source, J0 + i);
        bad |= uint32_t(__syncthreads_or(stager[0].store(win, p.pitch, fill_slot))) << i;
        fill_slot = fill_slot + 1 == p.slots ? 0 : fill_slot + 1;
    }

    // ldmatrix addresses of this lane: A = K^T from ks (kernel rows are A's columns, so
    // transposed), B = the window rows (image rows are B's rows, so transposed too).
    const uint32_t a_lane = shared_address(ks + ((lane >> 4) * 8 + (lane & 7)) * p.ldk + ((lane >> 3) & 1) * 8);
    const uint32_t b_lane =
        shared_address(win + (warp + ((lane >> 3) & 1) * 8 + (lane & 7)) * p.pitch + (lane >> 4) * 8);
    const DiagonalLane diag(lane);
    float carry[rows_per_warp][4] = {};

    // Tile J's product with kernel column fragment a, whose A fragments are fa, reading
    // the chunk in `slot`. Row w + 8r with kernel-row fragment b reads window rows
    // w + 8(r + 2b): one B load serves that whole anti-diagonal.
    auto product_with = [&](float(&acc)[rows_per_warp][2][4], const uint32_t(&fa)[NB][4], int slot) {
        const uint32_t b_col = b_lane + 2u * uint32_t(slot * frag);
#pragma unroll
        for (int t = 0; t < 2 * NB + 2; t++) {
            uint32_t fb[4];
            ldmatrix_x4_trans(fb, b_col + 2u * uint32_t(8 * t * p.pitch));
#pragma unroll
            for (int b = 0; b < NB; b++) {
                const int r = t - 2 * b;
                if (r >= 0 && r < rows_per_warp) {
                    mma_m16n8k16(acc[r][0], fa[b], fb[0], fb[1]);
                    mma_m16n8k16(acc[r][1], fa[b], fb[2], fb[3]);
                }
            }
        }
    };

    // Short, narrow kernels (both at most 32): their A fragments stay in registers for the
    // whole strip instead of being reloaded for every tile.
    constexpr int cached_columns = NB <= 2 ? 2 : 1;
    const bool cached = NB <= 2 && p.na <= cached_columns;
    uint32_t fa_cached[cached_columns][NB][4] = {};
    if (cached) {
#pragma unroll
        for (int a = 0; a < cached_columns; a++) {
#pragma unroll
            for (int b = 0; b < NB; b++) {
                if (a < p.na) {
                    ldmatrix_x4_trans(fa_cached[a][b], a_lane + 2u * uint32_t(a * frag + b * frag * p.ldk));
                }
            }
        }
    }

    int slot0 = J0 % p.slots;
    for (int J = J0; J < J1; J += CH) {
        const bool more = J + CH < J1;
        if (more) {
#pragma unroll
            for (int c = 0; c < CH; c++) {
                stager[c].load(source, J + CH + p.na - 1 + c);
            }
        }
        for (int c = 0; c < CH && J + c < J1; c++) {
            const int tile = J + c;
            const bool exact = ((bad >> c) & ((1u << p.na) - 1)) != 0;
            float acc[rows_per_warp][2][4] = {};
            if (!exact) {
                if (cached) {
                    int slot = slot0;
#pragma unroll
                    for (int a = 0; a < cached_columns; a++) {
                        if (a < p.na) {
                            product_with(acc, fa_cached[a], slot);
                            slot = slot + 1 == p.slots ? 0 : slot + 1;
                        }
                    }
                } else {
                    int slot = slot0;
                    for (int a = 0; a < p.na; a++) {
                        const uint32_t a_col = a_lane + 2u * uint32_t(a * frag);
                        if constexpr (NB <= 4) {
                            uint32_t fa[NB][4];
#pragma unroll
                            for (int b = 0; b < NB; b++) {
                                ldmatrix_x4_trans(fa[b], a_col + 2u * uint32_t(b * frag * p.ldk));
                            }
                            product_with(acc, fa, slot);
                        } else {
                            // Tall kernels: A fragments one at a time (registers).
                            const uint32_t b_col = b_lane + 2u * uint32_t(slot * frag);
#pragma unroll
                            for (int b = 0; b < NB; b++) {
                                uint32_t fa[4];
                                ldmatrix_x4_trans(fa, a_col + 2u * uint32_t(b * frag * p.ldk));
#pragma unroll
                                for (int r = 0; r < rows_per_warp; r++) {
                                    uint32_t fb[4];
                                    ldmatrix_x4_trans(fb, b_col + 2u * uint32_t(8 * (r + 2 * b) * p.pitch));
                                    mma_m16n8k16(acc[r][0], fa, fb[0], fb[1]);
                                    mma_m16n8k16(acc[r][1], fa, fb[2], fb[3]);
                                }
                            }
                        }
                        slot = slot + 1 == p.slots ? 0 : slot + 1;
                    }
                }
            } else {
#pragma unroll
                for (int r = 0; r < rows_per_warp; r++) {
                    skewed_fragments_exact(acc[r], ks, p.ldk, win, p.pitch, p.slots, slot0, p.na, p.io.ker.width,
                                           p.io.ker.height, warp + 8 * r);
                }
            }
            slot0 = slot0 + 1 == p.slots ? 0 : slot0 + 1;
            tile_done<Out, Atomic>(p, diag, carry, buffer, acc, tile, J0, k0 + warp, lane, AsSummed{});
        }
        if (more) {
            bool b = false;
#pragma unroll
            for (int c = 0; c < CH; c++) {
                b |= stager[c].store(win, p.pitch, fill_slot);
                fill_slot = fill_slot + 1 == p.slots ? 0 : fill_slot + 1;
            }
            // One barrier for the step: a non-finite sample marks all its new chunks.
            const uint32_t any = __syncthreads_or(b) ? (1u << CH) - 1 : 0u;
            bad = (bad >> CH) | (any << (p.na - 1));
        }
    }
    if (J1 < p.jtot) {
        strip_done<Out, Atomic>(p, diag, carry, buffer, J1, k0 + warp, lane, AsSummed{});
    }
}

// ---- float32 samples, split (split_staging.cuh, common/split_f32.h) ----

// d += A B, or with Outside: A B summed into a zero accumulator, then added to d with
// round to nearest (the tensor core truncates a sum aligned to its largest term, so the
// hi x hi blocks must not chain in C: bench/results/h100/split_f32/RUN.md).
template <bool Outside>
__device__ __forceinline__ void mma_into(float (&d)[4], const uint32_t (&a)[4], uint32_t b0, uint32_t b1) {
    if constexpr (Outside) {
        float t[4] = {0.f, 0.f, 0.f, 0.f};
        mma_m16n8k16(t, a, b0, b1);
#pragma unroll
        for (int i = 0; i < 4; i++) {
            d[i] += t[i];
        }
    } else {
        mma_m16n8k16(d, a, b0, b1);
    }
}

// One kernel-column fragment's product of one kernel part (A fragments from a_col) with
// one image part (B from b_col) into the four rows' tiles, as product_with does for f16.
template <int NB, bool Outside>
__device__ __forceinline__ void part_product(float (&acc)[rows_per_warp][2][4], uint32_t a_col, uint32_t b_col, int ldk,
                                             int pitch) {
    if constexpr (NB <= 4) {
        uint32_t fa[NB][4];
#pragma unroll
        for (int b = 0; b < NB; b++) {
            ldmatrix_x4_trans(fa[b], a_col + 2u * uint32_t(b * frag * ldk));
        }
#pragma unroll
        for (int t = 0; t < 2 * NB + 2; t++) {
            uint32_t fb[4];
            ldmatrix_x4_trans(fb, b_col + 2u * uint32_t(8 * t * pitch));
#pragma unroll
            for (int b = 0; b < NB; b++) {
                const int r = t - 2 * b;
                if (r >= 0 && r < rows_per_warp) {
                    mma_into<Outside>(acc[r][0], fa[b], fb[0], fb[1]);
                    mma_into<Outside>(acc[r][1], fa[b], fb[2], fb[3]);
                }
            }
        }
    } else {
#pragma unroll
        for (int b = 0; b < NB; b++) {
            uint32_t fa[4];
            ldmatrix_x4_trans(fa, a_col + 2u * uint32_t(b * frag * ldk));
#pragma unroll
            for (int r = 0; r < rows_per_warp; r++) {
                uint32_t fb[4];
                ldmatrix_x4_trans(fb, b_col + 2u * uint32_t(8 * (r + 2 * b) * pitch));
                mma_into<Outside>(acc[r][0], fa, fb[0], fb[1]);
                mma_into<Outside>(acc[r][1], fa, fb[2], fb[3]);
            }
        }
    }
}

__device__ __forceinline__ void scale_tiles(float (&acc)[rows_per_warp][2][4], float w) {
#pragma unroll
    for (int r = 0; r < rows_per_warp; r++) {
#pragma unroll
        for (int h = 0; h < 2; h++) {
#pragma unroll
            for (int i = 0; i < 4; i++) {
                acc[r][h][i] *= w;
            }
        }
    }
}

// Where this lane's ldmatrix rows of kernel part `kp` and image part `ip` start.
struct SplitOperands {
    uint32_t a_lane, b_lane;     // part 0
    uint32_t kernel_part_bytes;  // between kernel parts
    uint32_t window_part_bytes;  // between image parts
    int ldk, pitch, slots, na;

    // The skewed tile from the split parts, weight by weight, smallest first:
    //   fixed_six: (mid·mid + hi·lo + lo·hi) · 2^-b chained in C, then
    //   both: (+ hi·mid + mid·hi) · 2^-b chained in C, then + hi·hi, block by block
    //   outside the tensor core.
    // (Kernel parts are A, image parts B: "hi·lo" is kernel hi times image lo.)
    template <int NB>
    __device__ __forceinline__ void tile(float (&acc)[rows_per_warp][2][4], int slot0, split_f32::Scheme scheme) const {
#pragma unroll
        for (int r = 0; r < rows_per_warp; r++) {
#pragma unroll
            for (int h = 0; h < 2; h++) {
#pragma unroll
                for (int i = 0; i < 4; i++) {
                    acc[r][h][i] = 0.f;
                }
            }
        }
        const float w = split_f32::part_weight(scheme);
        if (scheme == split_f32::Scheme::fixed_six) {
            chain<NB, false>(acc, 1, 1, slot0);
            chain<NB, false>(acc, 0, 2, slot0);
            chain<NB, false>(acc, 2, 0, slot0);
            scale_tiles(acc, w);
        }
        chain<NB, false>(acc, 0, 1, slot0);
        chain<NB, false>(acc, 1, 0, slot0);
        scale_tiles(acc, w);
        chain<NB, true>(acc, 0, 0, slot0);
    }

    // Every kernel-column fragment of kernel part kp times image part ip.
    template <int NB, bool Outside>
    __device__ __forceinline__ void chain(float (&acc)[rows_per_warp][2][4], int kp, int ip, int slot0) const {
        int slot = slot0;
        for (int a = 0; a < na; a++) {
            part_product<NB, Outside>(acc, a_lane + kp * kernel_part_bytes + 2u * uint32_t(a * frag),
                                      b_lane + ip * window_part_bytes + 2u * uint32_t(slot * frag), ldk, pitch);
            slot = slot + 1 == slots ? 0 : slot + 1;
        }
    }
};

// im2tensor_fused_kernel for float32 image and kernel: the same strips, ring and diagonal
// epilogue; the samples split into f16 parts where they are staged, each tile summed from
// the parts (SplitOperands::tile), the sums scaled back when stored. The strip walk is
// written out again rather than shared: as a template over both kernels' tile products,
// ptxas spilled the f16 kernel's main loop (issue 21's first refactor, reverted).
template <int NB, bool Atomic>
__global__ void __launch_bounds__(threads_per_block, 2)
    im2tensor_fused_split_kernel(FusedParamsOf<float> p, SplitFields split) {
    constexpr int rows = block_rows + NB * frag;  // staged image rows
    constexpr int CH = chunks_per_step(NB);
    extern __shared__ __align__(128) unsigned char smem[];
    const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
    const int parts = parts_of(split.scheme);
    const int kernel_part = NB * frag * p.ldk, window_part = rows * p.pitch;
    __half *ks = reinterpret_cast<__half *>(smem);
    __half *win = ks + parts * kernel_part;
    float *buffer = reinterpret_cast<float *>(win + parts * window_part) + warp * reduce_floats;
    const SplitScales sc = *split.scales;

    const int k0 = row_block_index() * block_rows;
    if (k0 >= p.io.out_height) {
        return;  // past the last row block (row_block_grid)
    }
    const int J0 = blockIdx.x * p.strip_chunks;
    const int J1 = min(J0 + p.strip_chunks, p.jtot);
    stage_kernel_parts(ks, kernel_part, p.ldk, NB * frag, p.io.ker, p.io.flip, sc, split.scheme);

    const ChunkRows<rows, float> source(p.io.img, k0);
    SplitChunkStager<rows> stager[CH];
    uint32_t bad = 0;  // bit i: chunk J + i holds an Inf or NaN
    int fill_slot = J0 % p.slots;
    for (int i = 0; i < p.na + CH - 1; i++) {
        stager[0].load(source, J0 + i);
        const bool b = stager[0].store(win, window_part, p.pitch, fill_slot, sc, split.scheme);
        bad |= uint32_t(__syncthreads_or(b)) << i;
        fill_slot = fill_slot + 1 == p.slots ? 0 : fill_slot + 1;
    }

    const SplitOperands ops{
        shared_address(ks + ((lane >> 4) * 8 + (lane & 7)) * p.ldk + ((lane >> 3) & 1) * 8),
        shared_address(win + (warp + ((lane >> 3) & 1) * 8 + (lane & 7)) * p.pitch + (lane >> 4) * 8),
        2u * uint32_t(kernel_part),
        2u * uint32_t(window_part),
        p.ldk,
        p.pitch,
        p.slots,
        p.na};
    const DiagonalLane diag(lane);
    float carry[rows_per_warp][4] = {};
    const auto scaled_back = [e = sc.unscale_exponent](float v) { return scalbnf(v, e); };

    int slot0 = J0 % p.slots;
    for (int J = J0; J < J1; J += CH) {
        const bool more = J + CH < J1;
        if (more) {
#pragma unroll
            for (int c = 0; c < CH; c++) {
                stager[c].load(source, J + CH + p.na - 1 + c);
            }
        }
        for (int c = 0; c < CH && J + c < J1; c++) {
            const int tile = J + c;
            const bool exact = sc.kernel_nonfinite != 0 || ((bad >> c) & ((1u << p.na) - 1)) != 0;
            float acc[rows_per_warp][2][4];
            if (!exact) {
                ops.tile<NB>(acc, slot0, split.scheme);
            } else {
#pragma unroll
                for (int r = 0; r < rows_per_warp; r++) {
                    skewed_fragments_exact_split(acc[r], p.io, sc, tile, p.na, k0 + warp + 8 * r);
                }
            }
            slot0 = slot0 + 1 == p.slots ? 0 : slot0 + 1;
            tile_done<float, Atomic>(p, diag, carry, buffer, acc, tile, J0, k0 + warp, lane, scaled_back);
        }
        if (more) {
            bool b = false;
#pragma unroll
            for (int c = 0; c < CH; c++) {
                b |= stager[c].store(win, window_part, p.pitch, fill_slot, sc, split.scheme);
                fill_slot = fill_slot + 1 == p.slots ? 0 : fill_slot + 1;
            }
            const uint32_t any = __syncthreads_or(b) ? (1u << CH) - 1 : 0u;
            bad = (bad >> CH) | (any << (p.na - 1));
        }
    }
    if (J1 < p.jtot) {
        strip_done<float, Atomic>(p, diag, carry, buffer, J1, k0 + warp, lane, scaled_back);
    }
}

// Outputs of the boundary chunks: C's two partial rows added (fused) or zeroed before
// both sides add into them (atomic). One thread per (row, boundary, diagonal).
template <typename Out, bool Zero, typename Sample>
__global__ void boundary_chunks_kernel(FusedParamsOf<Sample> p) {
    const int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
    const int d = int(i & 15);
    const int64_t edge = i >> 4;  // row * boundaries + boundary
    if (edge >= int64_t(p.io.out_height) * p.boundaries) {
        return;
    }
    const int k = int(edge / p.boundaries), b = int(edge % p.boundaries);
    const int j = ((b + 1) * p.strip_chunks - 1) * frag + d;
    p.io.template store<Out>(j, k, Zero ? 0.f : p.partials[edge * 32 + d] + p.partials[edge * 32 + frag + d]);
}

// Launch geometry of one call: the parameters without the problem's pointers, the
// dynamic shared memory, the kernel instantiation and the grid.
template <typename Sample>
struct FusedLaunch {
    static constexpr bool split = std::is_same_v<Sample, float>;
    using Kernel =
        std::conditional_t<split, void (*)(FusedParamsOf<float>, SplitFields), void (*)(FusedParamsOf<Sample>)>;
    FusedParamsOf<Sample> p{};
    SplitFields split_fields{};  // float32 samples only
    size_t smem = 0;
    Kernel fused = nullptr;  // the instantiation for this kernel height
    int strips = 0, row_blocks = 0;
};

// f16 samples are staged as they are; float32 ones as their split parts (2 or 3 copies
// of the kernel and of the window).
template <typename Sample>
int staged_parts(const FusedLaunch<Sample> &l) {
    return FusedLaunch<Sample>::split ? parts_of(l.split_fields.scheme) : 1;
}

template <typename Sample, typename Out, bool Atomic>
cudaError_t configure(FusedLaunch<Sample> &l) {
    FusedParamsOf<Sample> &p = l.p;
    p.na = (p.io.ker.width + frag - 1) / frag;
    const int nb = (p.io.ker.height + frag - 1) / frag;
    l.split_fields.scheme = split_f32::scheme_for(p.io.ker.width, p.io.ker.height);
    p.ldk = ldmatrix_pitch(p.na * frag);
    p.slots = p.na + 2 * chunks_per_step(nb) - 1;
    p.pitch = ldmatrix_pitch(p.slots * frag);
    p.jtot = (p.io.out_width + frag - 1) / frag + 1;
    l.row_blocks = (p.io.out_height + block_rows - 1) / block_rows;
    const int rows = block_rows + nb * frag;
    l.smem = size_t(staged_parts(l)) * size_t(nb * frag * p.ldk + rows * p.pitch) * sizeof(__half) +
             size_t(warps_per_block * reduce_floats) * sizeof(float);
    const cudaError_t e = with_row_fragments(nb, [&](auto NB) {
        typename FusedLaunch<Sample>::Kernel kernel = nullptr;
        cudaError_t f = cudaSuccess;
        if constexpr (FusedLaunch<Sample>::split) {
            kernel = im2tensor_fused_split_kernel<NB.value, Atomic>;
            f = allow_opt_in_shared_memory<im2tensor_fused_split_kernel<NB.value, Atomic>>();
        } else {
            kernel = im2tensor_fused_kernel<NB.value, Out, Atomic>;
            f = allow_opt_in_shared_memory<im2tensor_fused_kernel<NB.value, Out, Atomic>>();
        }
        l.fused = kernel;
        int resident = 0;
        if (f == cudaSuccess) {
            f = cudaOccupancyMaxActiveBlocksPerMultiprocessor(&resident, kernel, threads_per_block, l.smem);
        }
        p.strip_chunks = strip_chunks_for_waves(p.jtot, l.row_blocks, resident, p.na + chunks_per_step(nb) - 1);
        return f;
    });
    l.strips = (p.jtot + p.strip_chunks - 1) / p.strip_chunks;
    p.boundaries = l.strips - 1;
    return e;
}

// Bytes of the partial sums at strip boundaries (fused only: atomic adds them in place).
template <bool Atomic, typename Sample>
size_t partials_bytes(const FusedParamsOf<Sample> &p) {
    return !Atomic && p.boundaries > 0 ? size_t(p.io.out_height) * p.boundaries * 32 * sizeof(float) : 0;
}

// Bytes of the scales (float32 samples only).
template <typename Sample>
constexpr size_t scales_bytes() {
    return FusedLaunch<Sample>::split ? sizeof(SplitScales) : 0;
}

// The f32 call on the wgmma kernel where it runs; *ran false where it does not or its
// planes could not be allocated (nothing launched then).
cudaError_t run_wgmma_split(const ExternCallOf<float> &call, bool *ran) {
    *ran = false;
    const ProblemOf<float> &p = call.problem;
    DeviceFacts d;
    cudaError_t e = device_facts(&d);
    const size_t parts_bytes = e == cudaSuccess
                                   ? im2tensor_wgmma_split_parts_bytes(d, p.img.width, p.img.height, p.ker.width,
                                                                       p.ker.height, p.out_width, p.out_height)
                                   : 0;
    if (parts_bytes == 0) {
        return e;
    }
    rk::Scratch scratch(call.stream);
    SplitScales *scales = nullptr;
    __half *parts = nullptr;
    e = scratch.take(sizeof(SplitScales), &scales);
    if (e == cudaSuccess) {
        e = scratch.take(parts_bytes, &parts);
    }
    if (e == cudaErrorMemoryAllocation) {
        (void)cudaGetLastError();
        return scratch.release();
    }
    *ran = true;
    if (e == cudaSuccess) {
        e = compute_split_scales(p, scales, call.stream);
    }
    if (e == cudaSuccess) {
        e = launch_im2tensor_wgmma_split(d, p, scales, parts, call.stream);
    }
    const cudaError_t f = scratch.release();
    return e == cudaSuccess ? f : e;
}

template <typename Sample, typename Out, bool Atomic>
int run(void *uc, halide_buffer_t *in, halide_buffer_t *kernel, bool flip, halide_buffer_t *out, const char *name);

// A batch (x, y, n): f16 samples on sm_90 in one launch of the wgmma kernel where it can
// read the images; else image by image. (A plan calls this form only where the first
// holds: contract::tensor_core_batch_in_one_launch.)
template <typename Sample, typename Out, bool Atomic>
int run_batch(void *uc, halide_buffer_t *in, halide_buffer_t *kernel, bool flip, halide_buffer_t *out,
              const char *name) {
    if (const int status = prepare_batch(uc, name, in, kernel, out); status != 0) {
        return status < 0 ? 0 : status;
    }
    if constexpr (!FusedLaunch<Sample>::split) {
        ImageOfBatch first(in, out->dim[2].min - in->dim[2].min), first_out(out, 0);
        ExternCallOf<Sample> call;
        if (const int status = prepare_extern_call(uc, &first.buffer, kernel, flip, &first_out.buffer,
                                                   output_type<Out>(), name, &call);
            status != 0) {
            return status;
        }
        const BatchOf batch{
            .images = out->dim[2].extent, .image_stride = in->dim[2].stride, .out_image_stride = out->dim[2].stride};
        bool ran = false;
        const cudaError_t e = launch_im2tensor_wgmma<Out>(call.problem, batch, call.stream, &ran);
        if (ran || e != cudaSuccess) {
            return finish_extern_call(uc, name, "launching the kernels", e, out);
        }
    }
    return each_image(in, out, [&](halide_buffer_t *image, halide_buffer_t *result) {
        return run<Sample, Out, Atomic>(uc, image, kernel, flip, result, name);
    });
}

template <typename Sample, typename Out, bool Atomic>
int run(void *uc, halide_buffer_t *in, halide_buffer_t *kernel, bool flip, halide_buffer_t *out, const char *name) {
    if (in->dimensions == 3) {
        return run_batch<Sample, Out, Atomic>(uc, in, kernel, flip, out, name);
    }
    ExternCallOf<Sample> call;
    const int status = prepare_extern_call(uc, in, kernel, flip, out, output_type<Out>(), name, &call);
    if (status != 0) {
        return status < 0 ? 0 : status;
    }
    if constexpr (!FusedLaunch<Sample>::split) {
        // sm_90: the wgmma kernel (im2tensor_fused_sm90.cu) where it can read the image.
        bool ran = false;
        const cudaError_t e = launch_im2tensor_wgmma<Out>(call.problem, BatchOf{}, call.stream, &ran);
        if (ran || e != cudaSuccess) {
            return finish_extern_call(uc, name, "launching the kernels", e, out);
        }
    } else {
        // sm_90: the wgmma kernel on the split image's planes, unless they do not fit in
        // device memory (then the mma.sync kernel, which splits as it stages).
        bool ran = false;
        const cudaError_t e = run_wgmma_split(call, &ran);
        if (ran || e != cudaSuccess) {
            return finish_extern_call(uc, name, "launching the kernels", e, out);
        }
    }
    FusedLaunch<Sample> l;
    l.p.io = call.problem;
    cudaError_t e = configure<Sample, Out, Atomic>(l);
    if (e != cudaSuccess) {
        return report_cuda_error(uc, name, "configuring the kernel", e);
    }
    FusedParamsOf<Sample> &p = l.p;
    const unsigned edge_blocks = unsigned((int64_t(p.io.out_height) * p.boundaries * frag + 255) / 256);
    rk::Scratch scratch(call.stream);
    e = scratch.take(partials_bytes<Atomic>(p), &p.partials);
    if (e != cudaSuccess) {
        return report_cuda_error(uc, name, "allocating the partial-sum buffer", e);
    }
    if constexpr (FusedLaunch<Sample>::split) {
        SplitScales *scales = nullptr;
        e = scratch.take(scales_bytes<Sample>(), &scales);
        if (e == cudaSuccess) {
            e = compute_split_scales(p.io, scales, call.stream);
        }
        l.split_fields.scales = scales;
    }
    if (e == cudaSuccess && Atomic && p.boundaries > 0) {
        boundary_chunks_kernel<Out, true><<<edge_blocks, 256, 0, call.stream>>>(p);
        e = cudaGetLastError();
    }
    if (e == cudaSuccess) {
        if constexpr (FusedLaunch<Sample>::split) {
            l.fused<<<row_block_grid(l.strips, l.row_blocks), threads_per_block, l.smem, call.stream>>>(p,
                                                                                                        l.split_fields);
        } else {
            l.fused<<<row_block_grid(l.strips, l.row_blocks), threads_per_block, l.smem, call.stream>>>(p);
        }
        e = cudaGetLastError();
    }
    if (e == cudaSuccess && !Atomic && p.boundaries > 0) {
        boundary_chunks_kernel<Out, false><<<edge_blocks, 256, 0, call.stream>>>(p);
        e = cudaGetLastError();
    }
    const cudaError_t f = scratch.release();
    e = e == cudaSuccess ? f : e;
    return finish_extern_call(uc, name, "launching the kernels", e, out);
}

// The mma.sync kernels' scratch; for float32 samples on sm_90 the wgmma kernel's (scales
// and split planes; with f16 samples it takes none, and whether it runs depends on the
// image's alignment, which a workspace query does not know).
template <typename Sample, typename Out, bool Atomic>
size_t workspace_bytes(int out_width, int out_height, int kernel_width, int kernel_height) {
    if constexpr (FusedLaunch<Sample>::split) {
        DeviceFacts d;
        const size_t parts =
            device_facts(&d) == cudaSuccess
                ? im2tensor_wgmma_split_parts_bytes(d, out_width + kernel_width - 1, out_height + kernel_height - 1,
                                                    kernel_width, kernel_height, out_width, out_height)
                : 0;
        if (parts > 0) {
            return rk::scratch_bytes({sizeof(SplitScales), parts});
        }
    }
    FusedLaunch<Sample> l;
    l.p.io.out_width = out_width;
    l.p.io.out_height = out_height;
    l.p.io.ker.width = kernel_width;
    l.p.io.ker.height = kernel_height;
    if (configure<Sample, Out, Atomic>(l) != cudaSuccess) {
        return 0;
    }
    return rk::scratch_bytes({partials_bytes<Atomic>(l.p), scales_bytes<Sample>()});
}

template <typename Sample, typename Out>
size_t workspace_bytes(bool atomic, int out_width, int out_height, int kernel_width, int kernel_height) {
    return atomic ? workspace_bytes<Sample, Out, true>(out_width, out_height, kernel_width, kernel_height)
                  : workspace_bytes<Sample, Out, false>(out_width, out_height, kernel_width, kernel_height);
}

}  // namespace

size_t im2tensor_fused_workspace_bytes(int out_width, int out_height, int kernel_width, int kernel_height,
                                       std::string_view precision, bool atomic) {
    if (precision == "f16") {
        return workspace_bytes<__half, __half>(atomic, out_width, out_height, kernel_width, kernel_height);
    }
    if (precision == "f16f32") {
        return workspace_bytes<__half, float>(atomic, out_width, out_height, kernel_width, kernel_height);
    }
    if (precision == "f32") {
        return workspace_bytes<float, float>(atomic, out_width, out_height, kernel_width, kernel_height);
    }
    return SIZE_MAX;
}

}  // namespace halconv::rk::tc

extern "C" {

int halconv_tc_im2tensor_fused_f16f32(halide_buffer_t *in, halide_buffer_t *kernel, bool flip, halide_buffer_t *out) {
    return halconv::rk::tc::run<__half, float, false>(nullptr, in, kernel, flip, out, "im2tensor_fused");
}
int halconv_tc_im2tensor_fused_f16(halide_buffer_t *in, halide_buffer_t *kernel, bool flip, halide_buffer_t *out) {
    return halconv::rk::tc::run<__half, __half, false>(nullptr, in, kernel, flip, out, "im2tensor_fused");
}
int halconv_tc_im2tensor_fused_f32(halide_buffer_t *in, halide_buffer_t *kernel, bool flip, halide_buffer_t *out) {
    return halconv::rk::tc::run<float, float, false>(nullptr, in, kernel, flip, out, "im2tensor_fused");
}
int halconv_tc_im2tensor_atomic_f16f32(halide_buffer_t *in, halide_buffer_t *kernel, bool flip, halide_buffer_t *out) {
    return halconv::rk::tc::run<__half, float, true>(nullptr, in, kernel, flip, out, "im2tensor_atomic");
}
int halconv_tc_im2tensor_atomic_f16(halide_buffer_t *in, halide_buffer_t *kernel, bool flip, halide_buffer_t *out) {
    return halconv::rk::tc::run<__half, __half, true>(nullptr, in, kernel, flip, out, "im2tensor_atomic");
}
int halconv_tc_im2tensor_atomic_f32(halide_buffer_t *in, halide_buffer_t *kernel, bool flip, halide_buffer_t *out) {
    return halconv::rk::tc::run<float, float, true>(nullptr, in, kernel, flip, out, "im2tensor_atomic");
}

}  // extern "C"
