// The separable correlation on Hopper's warpgroup tensor cores (the `tensor_core` variant of
// the separable algorithm, float32; the plan in separable_tensor_core.h):
//   output(x, y) = sum_j col(j) sum_i row(i) padded(x + i - offset_x, y + j - offset_y)
// as two passes of one kernel, each filtering lines along x and storing its sums transposed.
// A hand-written extern stage because Halide cannot issue wgmma; built as sm_90a machine
// code only, so the registry offers it on sm_90 devices alone.
//
// A pass's tile is 64 MB outputs along a line times 32 lines: D (64 x 32) = A (64 x KP)
// B (KP x 32) for each of its MB blocks of 64 outputs, with A(m, k) = tap(k - m - lead) (zero
// outside the taps: a Toeplitz block, in registers, built once a block; the lead's zero taps
// align the staged samples) and B(k, n) sample k of line n, k-major in 128-byte-swizzled
// atoms. Float32 operands as two float16 parts (hi, mid) at their own weight, three products
// (mid hi, hi mid, hi hi) chained in one accumulator; every line of a tile at its own
// power-of-two scale (its largest needed magnitude to [2^14, 2^15)) since a line's sums depend
// on that line alone. Measured forms and their times:
// bench/results/h200/separable/wgmma-passes-2026-11-28/ (this is form 5).
//
// Roles: a producer warpgroup copies each tile's lines into a ring of stages, two a consumer
// (its first warp's TMA boxes of 32 samples x 32 lines for what lies inside the lines, or its
// threads' cp.async copies where the lines are not 16 bytes apart; the boundary rule applied
// sample by sample to the rest by all its threads); one block an SM
// takes every gridDim-th tile; two consumer warpgroups take alternate tiles, split the stage's
// float32 samples in place into the float16 parts (a stage holds them where the B layout puts
// the parts they become: staged_offset), multiply, and store: where the output's rows allow,
// the sums go back into the stage and TMA stores them (4096^2, K = 43-79: the passes 6-8 %
// faster than the threads' own stores). A tile holds as many blocks of 64 outputs as it can
// (most_blocks).
// A line holding NaN or Inf among its needed samples is summed directly in float32 by the
// warp that splits it, so those values reach only the outputs whose window holds them; its
// tensor-core sums are not stored.
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <string>
#include <utility>

#include "bands/band_slab.h"
#include "common/async_copy.cuh"
#include "common/extern_call.cuh"
#include "common/mma_sync.cuh"
#include "common/split_f32.h"
#include "common/tensor_map.h"
#include "common/wgmma.cuh"
#include "common/workspace.h"
#include "separable/halconv_sep.h"
#include "separable/separable_tensor_core.h"

namespace halconv::rk::sep {
namespace {

constexpr int N = tensor_core_tile_lines;
constexpr int consumers = 2;
// The consumers, then the producer warpgroup: the block's registers, as launched (168 a thread
// at 384 threads), move from the producer to the consumers (setmaxnreg), whose Toeplitz
// fragments and accumulators spilled at 168. A consumer's setmaxnreg.inc waits until the
// producer's dec has released what it asks: at a producer of 64 and consumers of 224 it never
// did (the passes hung: bench/results/h200/separable/row-copies-2026-11-29/). At 56 the
// producer spills 4 bytes (its row copies' loop).
constexpr int threads = consumers * 128 + 128;
constexpr int launch_registers = 65536 / threads / 8 * 8;
constexpr int producer_registers = 56;
constexpr int consumer_registers = (launch_registers * threads / 128 - producer_registers) / consumers / 8 * 8;
static_assert(producer_registers * 128 + consumer_registers * 128 * consumers <= launch_registers * threads,
              "the consumers' setmaxnreg.inc takes no more than the launch and the producer's dec leave");
static_assert(consumer_registers == 224, "the consumers' fragments and accumulators (fragment_registers)");

struct PassArgs {
    CUtensorMap out_map;  // out as (line, x) boxes of 32 x 64, 128-byte swizzled, where out_tma
    bool out_tma;         // the sums stored by TMA from shared memory (out's rows 16-byte aligned)
    const float *in;
    int64_t in_pitch;    // elements between input lines
    CUtensorMap in_map;  // in as (x, line) boxes of 32 x 32, 128-byte swizzled, where in_tma
    bool in_tma;         // what lies inside the lines is copied by TMA (in's rows 16-byte aligned), else cp.async
    int64_t line;        // samples of an input line: the boundary rule's extent
    int64_t base;        // input sample of output 0's window: its first tap, or the lead's first zero
    int phase;           // outputs the first tile starts before output 0 (its first sample 16-byte aligned)
    int lines;           // input lines (a tile's n)
    float *out;          // out[x * out_pitch + line]
    int64_t out_pitch;
    bool out_pairs;  // out and out_pitch allow 8-byte stores of two lines' sums
    int out_len;     // outputs along a line
    const float *taps;
    int k;
    int lead;   // zero taps staged before the first (tensor_core_lead)
    int reach;  // lead + k: the samples an output's window spans
    bool flip;
    int boundary;            // halconv::Boundary
    float fill;              // the constant boundary's value
    const float *fill_taps;  // non-null: the fill is `fill` times these taps' sum (the second pass)
    int fill_k;
    int tiles_y;  // tiles of 32 lines: tile t covers lines from 32 (t % tiles_y)
    int tiles;    // tiles_y times the tiles along a line, taken by the blocks in turn
};

// Tile i of this block: its first output along the line (x0) and its first line (y0). The
// blocks take the tiles in turn (block b: b, b + blocks, ...), down the lines first, so that
// each holds about as many tiles at the lines' ends (copied through the boundary rule,
// slower) as any other (across the lines first, a grid of 132 blocks gave the 4096-sample
// lines' 22 or 33 tiles along them each to the same blocks, the end ones to 8 of them), and
// builds its taps' fragments once for all of them.
struct TileAt {
    int x0, y0;
};
__device__ __forceinline__ TileAt tile_at(const PassArgs &p, int span, int i) {
    const int t = int(blockIdx.x) + i * int(gridDim.x);
    return {(t / p.tiles_y) * span - p.phase, (t % p.tiles_y) * N};
}

// Two stages a consumer: a parity wait a phase ahead of a barrier returns at once, so no
// consumer may wait on a stage for a tile past the one the other waits for; with the stages a
// multiple of the consumers taking alternate tiles, each waits on its own stages only. A
// stage is its tile's B (the split works in place) and then its sums' box for TMA, so it is
// busy until the tile's store has read it: the second stage is the next tile's, copied
// meanwhile.
constexpr int stages = 2 * consumers;

// Lines a consumer's warp splits at once (of the N / 4 it splits a tile): their loads in
// flight together.
constexpr int split_batch = 2;
static_assert(N / 4 % split_batch == 0, "a warp's lines come in whole batches");

// Shared memory of a tile of MB blocks of 64 outputs at depth KP: the staged samples of a
// line (a multiple of 32), the stages (each the float16 parts hi and mid, each in 1024-byte
// atom columns over the tile's 32 lines, which first hold the float32 samples), each line's
// factor back to output units, the stages' barriers, and the 1024-byte alignment of the atoms.
constexpr int tile_width(int kp, int mb) {
    return 64 * (mb - 1) + kp;
}
constexpr int atom_plane = N / 8 * 1024;  // bytes of one atom column over a tile's lines
constexpr int tile_b_part(int kp, int mb) {
    return (tile_width(kp, mb) + 63) / 64 * atom_plane;
}
constexpr int tile_bytes(int kp, int mb) {
    return 1024 + stages * 2 * tile_b_part(kp, mb) + consumers * N * 4 + 2 * stages * 8;
}
constexpr int shared_memory_limit = 227 * 1024;

// A consumer thread's registers for its Toeplitz fragments (KP / 2: hi and mid parts, KP / 16
// slices of 4 pairs) and accumulators (16 a block), of its consumer_registers: at depth 256
// four blocks (192) spilled 256 bytes, three (176) 12 bytes.
constexpr int fragment_registers = 176;
constexpr int fragment_registers_of(int kp, int mb) {
    return kp / 2 + 16 * mb;
}

// The most blocks of 64 outputs a tile that shared memory and the registers hold at depth
// KP. Wider tiles share the stage's apron (KP - 64 samples a line) over more outputs;
// measured on the H200 (bench/results/h200/separable/tile-shapes-2026-11-28/), shared memory
// pays more as width than as a second B buffer a consumer (the next tile's split under the
// products) or a third stage: at 4096^2 the depth-192 pass pair took 0.207 ms at 2 blocks, 2
// buffers and 3 stages, 0.165 at 3 blocks, 1 buffer and 3 stages, 0.146 at 5 blocks, 1
// buffer, 2 stages.
constexpr int most_blocks(int kp) {
    int mb = 1;
    while (tile_bytes(kp, mb + 1) <= shared_memory_limit && fragment_registers_of(kp, mb + 1) <= fragment_registers) {
        mb++;
    }
    return mb;
}

template <int KP>
struct Tile {
    static constexpr int MB = most_blocks(KP);
    static constexpr int KS = KP / 16;
    static constexpr int width = tile_width(KP, MB);
    static constexpr int b_part = tile_b_part(KP, MB);
    static constexpr int groups = (width + 127) / 128;  // float4 loads of a line per lane
    static constexpr int stage_bytes = 2 * b_part;
    static constexpr int bytes = tile_bytes(KP, MB);
    static_assert(bytes <= shared_memory_limit, "the block's shared memory");
    static_assert(MB * 64 * 128 <= stage_bytes, "a stage holds its tile's sums for TMA");
    static_assert(width % 32 == 0, "the stage's TMA boxes and the split's lanes take 32-sample runs");
};

__device__ __forceinline__ void warpgroup_sync(int wg) {
    named_barrier(1 + wg, 128);
}

// Stage columns some output inside the line reads: output x reads columns x - x0 .. x - x0 +
// reach - 1. Beyond them the producer copies nothing (the split zeroes what it reads there).
__device__ __forceinline__ int columns_used(const PassArgs &p, int x0, int width) {
    const int64_t used = int64_t(p.out_len) - x0 + p.reach - 1;
    return used < 0 ? 0 : (used > width ? width : int(used));
}

// The largest |tap| of p's taps, in every lane of the calling warp.
__device__ __forceinline__ float largest_tap(const PassArgs &p, int lane) {
    float largest = 0.0f;
    for (int i = lane; i < p.k; i += 32) {
        largest = fmaxf(largest, fabsf(__ldg(p.taps + i)));
    }
    return __uint_as_float(__reduce_max_sync(0xffffffffu, __float_as_uint(largest)));
}

// Where sample k of line n lies in a float16 part (hi or mid) of a tile's B, in bytes: the
// layout the products' descriptors read (K-major, 128-byte swizzle). Each 64-sample atom of
// the line is a 128-byte row, its 16-byte chunks swizzled by n mod 8; 8 lines' rows make a
// 1024-byte atom, the tile's 32 lines an atom column.
__host__ __device__ constexpr int part_offset(int k, int n) {
    return (k / 64) * atom_plane + (n / 8) * 1024 + (n % 8) * 128 + (((k % 64 / 8) ^ (n % 8)) * 16) + (k % 8) * 2;
}

// Where stage column c of line n lies, in bytes from the stage (its hi part, then its mid
// part): on the rows of the parts the split makes of it. An atom's float32 samples 0-31 fill
// its hi row, 32-63 its mid row, in 16-byte chunks swizzled alike, as TMA's 128-byte swizzle
// writes a box of 32 samples x 32 lines; the split reads a line's atoms and writes their parts
// over them.
template <int BPart>
__host__ __device__ constexpr int staged_offset(int c, int n) {
    return (c / 32 % 2) * BPart + (c / 64) * atom_plane + (n / 8) * 1024 + (n % 8) * 128 +
           (((c % 32 / 4) ^ (n % 8)) * 16) + (c % 4) * 4;
}

// The split's lanes: lane l takes samples k .. k + 3 of each 128 (k = lane_first_sample(l)),
// 16 bytes at lane_stage_offset in the stage, and writes their hi and mid parts, 8 bytes
// each, at lane_parts_offset in the parts - in lines whose index mod 8 is rr, from the line's
// group of 8 rows; samples k + 128 c lie 2 c atom planes further in both. A quarter warp's
// loads and a half warp's stores each fall in 32 distinct banks.
__host__ __device__ constexpr int lane_first_sample(int lane) {
    return 64 * (lane / 16) + 32 * (lane / 8 % 2) + 4 * (lane % 8);
}
template <int BPart>
__host__ __device__ constexpr int lane_stage_offset(int lane, int rr) {
    return (lane / 8 % 2) * BPart + (lane / 16) * atom_plane + rr * 128 + (((lane % 8) ^ rr) * 16);
}
__host__ __device__ constexpr int lane_parts_offset(int lane, int rr) {
    return (lane / 16) * atom_plane + rr * 128 + (((4 * (lane / 8 % 2) + lane % 8 / 2) ^ rr) * 16) + (lane % 2) * 8;
}

// The lanes' offsets agree with the layouts, sample by sample, for every lane and line: each
// lane reads back the samples it converts and writes their parts where the products read.
template <int BPart>
__host__ __device__ constexpr bool split_lanes_follow_layouts() {
    for (int n = 0; n < N; n++) {
        for (int lane = 0; lane < 32; lane++) {
            for (int c = 0; c < 2; c++) {
                for (int e = 0; e < 4; e++) {
                    const int k = 128 * c + lane_first_sample(lane) + e, rows = (n / 8) * 1024 + c * 2 * atom_plane;
                    if (staged_offset<BPart>(k, n) != lane_stage_offset<BPart>(lane, n % 8) + rows + 4 * e ||
                        part_offset(k, n) != lane_parts_offset(lane, n % 8) + rows + 2 * e) {
                        return false;
                    }
                }
            }
        }
    }
    return true;
}

// Where stage column 32 h + lane of line n lies: staged_offset with the lane's chunk and word
// fixed (column_step_offset adds h's), for the producer's copies of rows that TMA cannot take.
__host__ __device__ constexpr int lane_row_offset(int lane, int n) {
    return (n / 8) * 1024 + (n % 8) * 128 + (((lane / 4) ^ (n % 8)) * 16) + (lane % 4) * 4;
}
template <int BPart>
__host__ __device__ constexpr int column_step_offset(int h) {
    return (h % 2) * BPart + (h / 2) * atom_plane;
}
template <int BPart>
__host__ __device__ constexpr bool row_copies_follow_layout(int width) {
    for (int n = 0; n < N; n++) {
        for (int lane = 0; lane < 32; lane++) {
            for (int h = 0; 32 * h < width; h++) {
                if (lane_row_offset(lane, n) + column_step_offset<BPart>(h) != staged_offset<BPart>(32 * h + lane, n)) {
                    return false;
                }
            }
        }
    }
    return true;
}

// The producer warpgroup: tile i's lines into stage i mod stages once the consumer that used
// the stage before has freed it. The columns that lie inside every line are copied in bulk:
// where the input's rows are 16 bytes apart, by TMA in boxes of 32 columns from the first
// warp (counted on the stage's "full" barrier as bytes; rows past the last line read as
// zeros); elsewhere by 4-byte asynchronous copies, a warp a line (coalesced, no index
// arithmetic a sample), each thread's held on "full" until they land. (TMA cannot take such
// rows: a box must start 16 bytes into the tensor's rows, whose pitch must be a multiple of
// 16 bytes. The rule's sample-by-sample path took an image 4094 wide 3.2-4.9x as long as one
// 4096 wide, these copies 1.6-1.8x: bench/results/h200/separable/row-copies-2026-11-29/.) The other
// columns that an output reads go through the boundary rule sample by sample, spread over the
// warpgroup with eight loads a thread in flight (a tile at the image's edge copied by one warp
// a row at a time took 10x an inner tile, and the grid waited on its edge blocks); then each
// of its threads arrives on "full", releasing its own copies (the barrier's other arrival came
// with the byte count).
template <typename T>
__device__ void produce(const PassArgs &p, unsigned char *stages_at, uint32_t full0, uint32_t empty0, int span,
                        int count) {
    const int t = int(threadIdx.x) % 128;
    float fill = p.fill;
    if (p.fill_taps != nullptr) {
        float sum = 0;
        for (int i = t % 32; i < p.fill_k; i += 32) {
            sum += __ldg(p.fill_taps + i);
        }
        for (int d = 16; d > 0; d /= 2) {
            sum += __shfl_xor_sync(0xffffffffu, sum, d);
        }
        fill = p.fill * sum;
    }
    for (int i = 0; i < count; i++) {
        const int s = i % stages;
        mbarrier_wait(empty0 + 8 * s, ((i / stages) & 1) ^ 1);
        const auto [x0, y0] = tile_at(p, span, i);
        const int rows = min(N, p.lines - y0);
        const int64_t s0 = int64_t(x0) + p.base;  // the input sample of stage column 0
        const int used = columns_used(p, x0, T::width);
        const auto clamp_to_stage = [](int64_t c) { return c < 0 ? 0 : (c > T::width ? T::width : int(c)); };
        // The columns [lo, hi) copied in bulk: by TMA, the boxes [box_lo, box_hi) of 32 columns
        // inside the lines from before `used`; else every column inside the lines before `used`.
        int box_lo = 0, box_hi = 0, lo = 0, hi = 0;
        if (p.in_tma) {
            box_lo = (clamp_to_stage(-s0) + 31) / 32;
            box_hi = max(box_lo, min(clamp_to_stage(p.line - s0) / 32, (used + 31) / 32));
            lo = box_hi > box_lo ? 32 * box_lo : 0;
            hi = box_hi > box_lo ? 32 * box_hi : 0;
        } else if (min(clamp_to_stage(p.line - s0), used) > clamp_to_stage(-s0)) {
            lo = clamp_to_stage(-s0);
            hi = min(clamp_to_stage(p.line - s0), used);
        }
        const int left = min(lo, used), right = max(used - hi, 0), per_row = left + right;
        unsigned char *stage = stages_at + s * T::stage_bytes;
        if (t < 32) {
            if (t == 0) {
                mbarrier_arrive_expect_tx(full0 + 8 * s, uint32_t(box_hi - box_lo) * (32 * N * 4));
            }
            __syncwarp();
            for (int h = box_lo + t; h < box_hi; h += 32) {
                tma_load_2d(shared_address(stage + (h % 2) * T::b_part + (h / 2) * atom_plane), &p.in_map,
                            int(s0 + 32 * h), y0, full0 + 8 * s);
            }
        }
        const float *from = p.in + int64_t(y0) * p.in_pitch;
        if (!p.in_tma && hi > lo) {
            const int lane = t % 32;
#pragma unroll 1
            for (int n = t / 32; n < rows; n += 4) {
                const float *line = from + int64_t(n) * p.in_pitch;  // stage column c at line[s0 + c]
                const uint32_t line_at = shared_address(stage) + uint32_t(lane_row_offset(lane, n));
#pragma unroll 1
                for (int c = lo / 32 * 32 + lane; c < hi; c += 32) {
                    if (c >= lo) {
                        cp_async_zfill<4>(line_at + uint32_t(column_step_offset<T::b_part>(c / 32)), line + (s0 + c),
                                          4);
                    }
                }
            }
            cp_async_mbarrier_arrive(full0 + 8 * s);
        }
        const int total = rows * per_row;
        for (int e0 = 0; e0 < total; e0 += 128 * 8) {
            float v[8];
            int at[8];
#pragma unroll
            for (int u = 0; u < 8; u++) {
                const int e = e0 + 128 * u + t;
                at[u] = -1;
                if (e < total) {
                    const int n = e / per_row, c = e % per_row < left ? e % per_row : hi + e % per_row - left;
                    const int64_t x = band_source_index(s0 + c, p.line, p.boundary);
                    v[u] = x < 0 ? fill : __ldg(from + int64_t(n) * p.in_pitch + x);
                    at[u] = staged_offset<T::b_part>(c, n);
                }
            }
#pragma unroll
            for (int u = 0; u < 8; u++) {
                if (at[u] >= 0) {
                    *reinterpret_cast<float *>(stage + at[u]) = v[u];
                }
            }
        }
        mbarrier_arrive(full0 + 8 * s);  // each thread's copies in shared memory, released
    }
}

// Outputs x0 .. x0 + outputs - 1 of line y summed in float32 from the staged line n (its
// first tap's sample at stage column `lead`), a lane an output: the rare lines holding NaN or
// Inf. Not inlined, so that its registers do not count against the products' (the pass
// spilled with it inline); its arguments by value, so that the kernel's parameters are not
// copied to local memory for it.
template <int BPart>
__device__ __noinline__ void sum_directly(const float *taps, int k, bool flip, float *out, int64_t out_pitch,
                                          int out_len, const unsigned char *stage, int n, int lead, int outputs,
                                          int lane, int x0, int y) {
    for (int m = lane; m < outputs; m += 32) {
        const int x = x0 + m;
        if (x >= 0 && x < out_len) {
            float sum = 0.0f;
            for (int i = 0; i < k; i++) {
                const float sample = *reinterpret_cast<const float *>(stage + staged_offset<BPart>(lead + m + i, n));
                sum = fmaf(__ldg(taps + (flip ? k - 1 - i : i)), sample, sum);
            }
            out[int64_t(x) * out_pitch + y] = sum;
        }
    }
}

// The larger magnitude of a and |b|, NaN where either is NaN (fmaxf would drop it).
__device__ __forceinline__ float max_magnitude(float a, float b) {
    float m;
    asm("max.NaN.f32 %0, %1, %2;" : "=f"(m) : "f"(a), "f"(fabsf(b)));
    return m;
}

// Lines n = warp + 4 (r + j), j < L, of a tile, staged as float32 in `stage` (staged_offset),
// split in place by one warp into the B parts, each line at its own power-of-two scale (the
// lane's loads and stores at its offsets above, of even and odd lines, plus the line's group of
// 8 rows); lane 0 writes each line's factor back to output units to `unscale`. The L lines'
// loads go out together, before the warp's one wait for all its lanes' loads. Samples from
// `needed` on meet only zero taps or feed no output inside the line, and are zeroed (a NaN there
// would poison the products, a stale value the scale). A line with NaN or Inf among its samples
// is summed here directly (outputs x0 .. x0 + 64 MB - 1) and its unscale marked negative: the
// epilogue skips it. The lead's samples, before the needed ones, are the line's own (copied,
// not stale) and are kept: zeroing them as well cost the passes 2-8 %
// (bench/results/h200/separable/tile-lead-2026-11-29/).
template <typename T, int L>
__device__ __forceinline__ void split_lines(const PassArgs &p, unsigned char *stage, int r, int warp, int lane,
                                            int first, const int (&load_lane)[2], const int (&store_lane)[2],
                                            float *unscale, int needed, int tap_exponent, int x0, int y0) {
    float4 v[L][T::groups];
    uint32_t largest_bits[L];
#pragma unroll
    for (int j = 0; j < L; j++) {
        const bool present = y0 + warp + 4 * (r + j) < p.lines;
        const int load_at = load_lane[(r + j) % 2] + (r + j) / 2 * 1024;
        float largest[T::groups];
#pragma unroll
        for (int c = 0; c < T::groups; c++) {
            const int k = 128 * c + first;
            v[j][c] = present && (128 * c + 128 <= T::width || k < T::width)
                          ? *reinterpret_cast<const float4 *>(stage + load_at + c * 2 * atom_plane)
                          : make_float4(0.0f, 0.0f, 0.0f, 0.0f);
            if (128 * c + 128 > needed) {  // alike in the warp: no lane's samples from `needed` on before
                v[j][c].x = k < needed ? v[j][c].x : 0.0f;
                v[j][c].y = k + 1 < needed ? v[j][c].y : 0.0f;
                v[j][c].z = k + 2 < needed ? v[j][c].z : 0.0f;
                v[j][c].w = k + 3 < needed ? v[j][c].w : 0.0f;
            }
            largest[c] =
                max_magnitude(max_magnitude(fabsf(v[j][c].x), v[j][c].y), max_magnitude(fabsf(v[j][c].z), v[j][c].w));
        }
        // A tree, not a chain of dependent maxima.
#pragma unroll
        for (int w = 1; w < T::groups; w *= 2) {
#pragma unroll
            for (int c = 0; c + w < T::groups; c += 2 * w) {
                largest[c] = max_magnitude(largest[c], largest[c + w]);
            }
        }
        // As unsigned integers, magnitudes order as floats do, and Inf and NaN above every finite one.
        largest_bits[j] = __reduce_max_sync(0xffffffffu, __float_as_uint(largest[0]));
    }
    __syncwarp();  // every lane's samples read before any lane writes parts over them
#pragma unroll
    for (int j = 0; j < L; j++) {
        const int n = warp + 4 * (r + j);
        if (largest_bits[j] >= 0x7f800000u) {
            sum_directly<T::b_part>(p.taps, p.k, p.flip, p.out, p.out_pitch, p.out_len, stage, n, p.lead, 64 * T::MB,
                                    lane, x0, y0 + n);
            if (lane == 0) {
                unscale[n] = -1.0f;
            }
            continue;
        }
        // From the bits: scale_exponent's frexp took about 20 of the split's ~260 instructions a line.
        const int e = split_f32::scale_exponent_of_bits(largest_bits[j]);
        const float scale = split_f32::pow2(e);
        if (lane == 0) {
            unscale[n] = split_f32::pow2(-e - tap_exponent);
        }
        const int store_at = store_lane[(r + j) % 2] + (r + j) / 2 * 1024;
#pragma unroll
        for (int c = 0; c < T::groups; c++) {
            if (128 * c + 128 <= T::width || 128 * c + first < T::width) {
                uint32_t h0, m0, h1, m1;
                split_f32::split_pair(v[j][c].x * scale, v[j][c].y * scale, h0, m0);
                split_f32::split_pair(v[j][c].z * scale, v[j][c].w * scale, h1, m1);
                unsigned char *const at = stage + store_at + c * 2 * atom_plane;
                *reinterpret_cast<uint2 *>(at) = make_uint2(h0, h1);
                *reinterpret_cast<uint2 *>(at + T::b_part) = make_uint2(m0, m1);
            }
        }
    }
}

// Two floats to the shared-memory address `at` (8-byte aligned).
__device__ __forceinline__ void store_shared_pair(uint32_t at, float a, float b) {
    asm volatile("st.shared.v2.f32 [%0], {%1, %2};\n" ::"r"(at), "f"(a), "f"(b) : "memory");
}

template <int KP>
__global__ void __launch_bounds__(threads, 1) line_pass(const __grid_constant__ PassArgs p) {
    using T = Tile<KP>;
    constexpr int MB = T::MB;
    static_assert(split_lanes_follow_layouts<T::b_part>(), "the split's lanes read and write the stage's layouts");
    static_assert(row_copies_follow_layout<T::b_part>(T::width),
                  "the producer's row copies land where staged_offset puts them");
    extern __shared__ unsigned char raw[];
    unsigned char *base = raw + ((1024 - (shared_address(raw) & 1023)) & 1023);  // atoms 1024-byte aligned
    unsigned char *stages_at = base;  // stage s at s * stage_bytes: its hi part, then its mid part
    float *unscale_all = reinterpret_cast<float *>(base + stages * T::stage_bytes);  // [consumer][N]
    uint64_t *bars = reinterpret_cast<uint64_t *>(unscale_all + consumers * N);
    const uint32_t full0 = shared_address(bars), empty0 = full0 + 8 * stages;
    const int tid = int(threadIdx.x);
    if (tid == 0) {
        for (int s = 0; s < stages; s++) {
            mbarrier_init(full0 + 8 * s, 1 + 128);
            mbarrier_init(empty0 + 8 * s, 1);
        }
        mbarrier_init_fence();
    }
    __syncthreads();

    const int count = (p.tiles - int(blockIdx.x) + int(gridDim.x) - 1) / int(gridDim.x);
    if (tid >= consumers * 128) {
        set_max_registers_dec<producer_registers>();
        produce<T>(p, stages_at, full0, empty0, 64 * MB, count);
        return;
    }
    set_max_registers_inc<consumer_registers>();
    // The warpgroup index from lane 0: known warp-uniform, the descriptors it enters stay in
    // uniform registers (7-21 % of the pass's time in the probe).
    const int wg = __shfl_sync(0xffffffffu, tid / 128, 0), t = tid % 128, warp = t / 32, lane = t % 32, g = lane / 4,
              q = lane % 4;
    const int tap_exponent = split_f32::scale_exponent(largest_tap(p, lane));
    const float tap_scale = split_f32::pow2(tap_exponent);
    // The Toeplitz block's fragments: rows m = 16 warp + g (+ 8), columns k = 16 ks + 2 q (+ 1) (+ 8).
    // Tap i of this thread's element is i0 + a compile-time offset, read through a pointer and
    // step that carry the flip, and tested as unsigned against k.
    const int i0 = 2 * q - 16 * warp - g - p.lead;
    const float *const taps = p.flip ? p.taps + (p.k - 1) : p.taps;
    const int step = p.flip ? -1 : 1;
    uint32_t a_hi[T::KS][4], a_mid[T::KS][4];
#pragma unroll
    for (int ks = 0; ks < T::KS; ks++) {
#pragma unroll
        for (int r = 0; r < 4; r++) {
            float v[2];
#pragma unroll
            for (int h = 0; h < 2; h++) {
                const int i = i0 + 16 * ks + (r / 2) * 8 - (r % 2) * 8 + h;
                v[h] = unsigned(i) < unsigned(p.k) ? __ldg(taps + step * i) * tap_scale : 0.0f;
            }
            split_f32::split_pair(v[0], v[1], a_hi[ks][r], a_mid[ks][r]);
        }
    }
    float *unscale = unscale_all + wg * N;
    // One descriptor a part of stage 0; each product's is it plus a constant (its start field).
    const uint64_t d_stage0 = wgmma_sw128_descriptor(shared_address(stages_at));
    // This lane's offsets in lines of even and odd r (the split's loop below).
    const int first = lane_first_sample(lane);
    const int load_lane[2] = {lane_stage_offset<T::b_part>(lane, warp), lane_stage_offset<T::b_part>(lane, warp + 4)};
    const int store_lane[2] = {lane_parts_offset(lane, warp), lane_parts_offset(lane, warp + 4)};
    for (int i = wg; i < count; i += consumers) {
        const auto [x0, y0] = tile_at(p, 64 * MB, i);
        const int s = i % stages;
        if (i >= consumers && t == 0) {
            // This consumer's previous tile: its products and stores have read their stage
            // (but for TMA's reads, awaited here), which the producer may now refill.
            if (p.out_tma) {
                bulk_wait_read<0>();
            }
            mbarrier_arrive(empty0 + 8 * ((i - consumers) % stages));
        }
        // The stage split into its parts in place. Samples from `needed` on meet only zero
        // taps; from columns_used on the producer copied none.
        const int needed = min(64 * MB + p.reach - 1, columns_used(p, x0, T::width));
        mbarrier_wait(full0 + 8 * s, (i / stages) & 1);
        unsigned char *const stage = stages_at + s * T::stage_bytes;
        // Line n = warp + 4 r: its index mod 8 is warp + 4 (r mod 2), its group of 8 rows r / 2.
#pragma unroll 1
        for (int r = 0; r < N / 4; r += split_batch) {
            split_lines<T, split_batch>(p, stage, r, warp, lane, first, load_lane, store_lane, unscale, needed,
                                        tap_exponent, x0, y0);
        }
        fence_proxy_async();
        warpgroup_sync(wg);
        const uint64_t d_hi = d_stage0 + ((s * T::stage_bytes) >> 4), d_mid = d_hi + (T::b_part >> 4);
        const uint32_t hi_at = shared_address(stage);
        float acc[MB][N / 2];
        wgmma_fence();
#pragma unroll
        for (int mb = 0; mb < MB; mb++) {
#pragma unroll
            for (int ks = 0; ks < T::KS; ks++) {
                const uint32_t b_at = (mb + ks / 4) * atom_plane + (ks % 4) * 32;
                const uint64_t db_hi = d_hi + (b_at >> 4), db_mid = d_mid + (b_at >> 4);
                wgmma_m64n32k16_ra(acc[mb], a_mid[ks], db_hi, ks > 0);
                wgmma_m64n32k16_ra(acc[mb], a_hi[ks], db_mid, true);
                wgmma_m64n32k16_ra(acc[mb], a_hi[ks], db_hi, true);
            }
        }
        wgmma_commit();
        float u[N / 8][2];
        bool summed_directly = false;  // one of this thread's lines (its unscale negative)
#pragma unroll
        for (int j = 0; j < N / 8; j++) {
            const float2 pair = *reinterpret_cast<const float2 *>(unscale + 8 * j + 2 * q);
            u[j][0] = pair.x;
            u[j][1] = pair.y;
            summed_directly |= pair.x < 0.0f || pair.y < 0.0f;
        }
        // Whether any line of the tile was summed directly, alike in every thread: each warp's
        // lanes hold all N lines between them.
        const bool tile_direct = __any_sync(0xffffffffu, summed_directly);
        wgmma_wait<0>();
        // D(m, n): output x0 + m of line y0 + n, stored at out[(x0 + m) * out_pitch + y0 + n];
        // this thread's m = 64 mb + 16 warp + g (+ 8), n = 8 j + 2 q (+ 1).
        const int xt = x0 + 16 * warp + g;
        float *o = p.out + int64_t(xt) * p.out_pitch + y0 + 2 * q;
        const int64_t eight = 8 * p.out_pitch;
        if (p.out_tma && !tile_direct && x0 >= 0) {
            // Through the tile's stage, which the products have read, as MB boxes of 64
            // outputs x 32 lines (128-byte rows, their 16-byte chunks swizzled by the row: the pairs
            // of a warp's store fall in distinct banks), stored by TMA: the warps' stores leave at
            // once, and TMA writes nothing past the output's ends. (A first tile started before
            // output 0 takes the threads' stores: its box at a negative coordinate raised an
            // illegal instruction on the H200.)
            warpgroup_sync(wg);
#pragma unroll
            for (int mb = 0; mb < MB; mb++) {
#pragma unroll
                for (int half = 0; half < 2; half++) {
                    const int row = 16 * warp + g + 8 * half;
                    const uint32_t box_row = hi_at + mb * (64 * 128) + row * 128 + (q & 1) * 8;
#pragma unroll
                    for (int j = 0; j < N / 8; j++) {
                        const int chunk = (2 * j + (q >> 1)) ^ (row & 7);
                        store_shared_pair(box_row + chunk * 16, acc[mb][4 * j + 2 * half] * u[j][0],
                                          acc[mb][4 * j + 2 * half + 1] * u[j][1]);
                    }
                }
            }
            fence_proxy_async();
            warpgroup_sync(wg);
            if (t == 0) {
                for (int mb = 0; mb < MB; mb++) {
                    tma_store_2d(&p.out_map, y0, x0 + 64 * mb, hi_at + mb * (64 * 128));
                }
                bulk_commit();
            }
        } else if (p.out_pairs && !summed_directly && x0 >= 0 && x0 + 64 * MB <= p.out_len && y0 + N <= p.lines) {
#pragma unroll
            for (int mb = 0; mb < MB; mb++) {
#pragma unroll
                for (int half = 0; half < 2; half++) {
                    float *r = o + (8 * mb + half) * eight;
#pragma unroll
                    for (int j = 0; j < N / 8; j++) {
                        *reinterpret_cast<float2 *>(r + 8 * j) =
                            make_float2(acc[mb][4 * j + 2 * half] * u[j][0], acc[mb][4 * j + 2 * half + 1] * u[j][1]);
                    }
                }
            }
        } else {
#pragma unroll
            for (int mb = 0; mb < MB; mb++) {
#pragma unroll
                for (int half = 0; half < 2; half++) {
                    const int x = xt + 64 * mb + 8 * half;
                    if (x < 0 || x >= p.out_len) {
                        continue;
                    }
                    float *r = o + (8 * mb + half) * eight;
#pragma unroll
                    for (int j = 0; j < N / 8; j++) {
#pragma unroll
                        for (int h = 0; h < 2; h++) {
                            if (y0 + 8 * j + 2 * q + h < p.lines && u[j][h] >= 0.0f) {
                                r[8 * j + h] = acc[mb][4 * j + 2 * half + h] * u[j][h];
                            }
                        }
                    }
                }
            }
        }
        warpgroup_sync(wg);  // the unscale is free for the next tile, the stage (but for TMA's reads) too
    }
    if (p.out_tma && t == 0) {
        bulk_wait<0>();  // the last sums stored before the block's shared memory goes
    }
}

// Launches one pass of the depth-KP kernel on `stream`.
template <int KP>
cudaError_t launch_depth(PassArgs p, int sms, cudaStream_t stream) {
    // Once per device, not per call.
    if (const cudaError_t e = allow_opt_in_shared_memory<line_pass<KP>>(); e != cudaSuccess) {
        return e;
    }
    const int64_t span = 64 * int64_t(Tile<KP>::MB);
    p.phase = int(((p.base % 4) + 4) % 4);
    const int64_t tiles_x = (int64_t(p.out_len) + p.phase + span - 1) / span;
    const int64_t tiles = tiles_x * ((int64_t(p.lines) + N - 1) / N);
    if (tiles > INT32_MAX) {
        return cudaErrorInvalidValue;  // the registry's limits keep outputs far below
    }
    p.tiles_y = int(tiles / tiles_x);
    p.tiles = int(tiles);
    // One block an SM (its shared memory), each taking every sms-th tile.
    const dim3 grid(unsigned(std::min<int64_t>(tiles, sms)));
    line_pass<KP><<<grid, threads, Tile<KP>::bytes, stream>>>(p);
    return cudaGetLastError();
}

// Launches one pass (the kernel of the taps' depth) on `stream`: a kernel per entry of
// tensor_core_depths.
template <size_t... I>
cudaError_t launch_at_depth(const PassArgs &p, int sms, cudaStream_t stream, std::index_sequence<I...>) {
    const int depth = tensor_core_depth(p.reach);
    cudaError_t e = cudaErrorInvalidValue;
    ((depth == tensor_core_depths[I] ? (e = launch_depth<tensor_core_depths[I]>(p, sms, stream), true) : false) || ...);
    return e;
}
cudaError_t launch_pass(const PassArgs &p, int sms, cudaStream_t stream) {
    return launch_at_depth(p, sms, stream, std::make_index_sequence<std::size(tensor_core_depths)>());
}

bool aligned(const void *ptr, int64_t pitch, int bytes, int elements) {
    return uintptr_t(ptr) % uintptr_t(bytes) == 0 && pitch % elements == 0;
}

// `data` (rows of `row` floats, `pitch` floats apart) as a 2-D tensor map of boxes of box_row x
// box_rows, 128-byte swizzled, where its rows start 16 bytes apart and the driver encodes
// tensor maps; false elsewhere.
bool encode_rows_map(CUtensorMap *map, const float *data, int64_t row, int64_t rows, int64_t pitch, cuuint32_t box_row,
                     cuuint32_t box_rows, CUtensorMapL2promotion promotion) {
    const PFN_cuTensorMapEncodeTiled_v12000 encode = tensor_map_encoder();
    if (encode == nullptr || !aligned(data, pitch, 4 * tensor_core_row_samples, tensor_core_row_samples) ||
        pitch < row) {
        return false;
    }
    const cuuint64_t dims[2] = {cuuint64_t(row), cuuint64_t(rows)};
    const cuuint64_t strides[1] = {cuuint64_t(pitch) * 4};
    const cuuint32_t box[2] = {box_row, box_rows}, unit[2] = {1, 1};
    return encode(map, CU_TENSOR_MAP_DATA_TYPE_FLOAT32, 2, const_cast<float *>(data), dims, strides, box, unit,
                  CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_128B, promotion,
                  CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE) == CUDA_SUCCESS;
}

int run(halide_buffer_t *in, halide_buffer_t *row, halide_buffer_t *col, int32_t boundary, double fill,
        int32_t offset_x, int32_t offset_y, bool flip, halide_buffer_t *out, const char *name) {
    if (out->is_bounds_query()) {
        return 0;  // the whole image (as given) and both kernels: the boundary rule is applied here
    }
    void *const uc = nullptr;
    if (in->dim[0].stride != 1 || out->dim[0].stride != 1 || row->dim[0].stride != 1 || col->dim[0].stride != 1) {
        return fail(uc, name, "buffers must be dense along x (dim 0 stride 1)");
    }
    if (row->dimensions != 1 || col->dimensions != 1) {
        return fail(uc, name, "one row and one column kernel (the tensor-core passes take no low-rank terms)");
    }
    const int kw = row->dim[0].extent, kh = col->dim[0].extent;
    if (tensor_core_depth(kw) == 0 || tensor_core_depth(kh) == 0) {
        return fail(uc, name,
                    "kernel past the tensor-core passes' " + std::to_string(tensor_core_max_taps) +
                        " taps per axis (registry limit separable_tensor_core_fits)");
    }
    DeviceFacts device;
    if (const cudaError_t e = device_facts(&device); e != cudaSuccess) {
        return report_cuda_error(uc, name, "reading the device's facts", e);
    }
    if (device.major != 9 || device.minor != 0) {
        return fail(uc, name,
                    "the tensor-core passes are sm_90a machine code: this device is sm_" +
                        std::to_string(device.major) + std::to_string(device.minor));
    }
    const int out_w = out->dim[0].extent, out_h = out->dim[1].extent;
    if (out_w <= 0 || out_h <= 0) {
        return 0;
    }
    cudaStream_t stream = nullptr;
    if (int e = inputs_to_device(uc, {in, row, col}, out, &stream); e != 0) {
        return e;
    }
    const int image_w = in->dim[0].extent, image_h = in->dim[1].extent;
    const int64_t pitch = tensor_core_intermediate_pitch(image_h);
    Scratch scratch(stream);
    float *intermediate = nullptr;
    cudaError_t e = scratch.take(tensor_core_workspace_bytes(out_w, image_h), &intermediate);
    if (e != cudaSuccess) {
        return report_cuda_error(uc, name, "allocating the intermediate", e);
    }
    const auto *image = reinterpret_cast<const float *>(uintptr_t(in->device));
    auto *result = reinterpret_cast<float *>(uintptr_t(out->device));
    PassArgs rows{};
    rows.in = image;
    rows.in_pitch = in->dim[1].stride;
    rows.line = image_w;
    rows.base = int64_t(out->dim[0].min) - offset_x - in->dim[0].min;
    rows.lines = image_h;
    rows.out = intermediate;
    rows.out_pitch = pitch;
    rows.out_pairs = true;
    rows.out_len = out_w;
    rows.taps = reinterpret_cast<const float *>(uintptr_t(row->device));
    rows.k = kw;
    rows.flip = flip;
    rows.boundary = boundary;
    rows.fill = float(fill);
    PassArgs cols = rows;
    cols.in = intermediate;
    cols.in_pitch = pitch;
    cols.line = image_h;
    cols.base = int64_t(out->dim[1].min) - offset_y - in->dim[1].min;
    cols.lines = out_w;
    cols.out = result;
    cols.out_pitch = out->dim[1].stride;
    cols.out_pairs = aligned(result, cols.out_pitch, 8, 2);
    cols.out_len = out_h;
    cols.taps = reinterpret_cast<const float *>(uintptr_t(col->device));
    cols.k = kh;
    cols.fill_taps = boundary == 0 ? rows.taps : nullptr;
    cols.fill_k = kw;
    for (PassArgs *pass : {&rows, &cols}) {
        pass->lead = tensor_core_lead(pass->k, pass->base);
        pass->reach = pass->lead + pass->k;
        pass->base -= pass->lead;
        // out as (line, x) boxes of 32 x 64 for the epilogue's TMA stores (else the threads
        // store the sums); in as (x, line) boxes of 32 x 32 for the producer (else the threads
        // copy every sample).
        pass->out_tma = encode_rows_map(&pass->out_map, pass->out, pass->lines, pass->out_len, pass->out_pitch, N, 64,
                                        CU_TENSOR_MAP_L2_PROMOTION_NONE);
        pass->in_tma = encode_rows_map(&pass->in_map, pass->in, pass->line, pass->lines, pass->in_pitch, 32, N,
                                       CU_TENSOR_MAP_L2_PROMOTION_L2_256B);
    }
    e = launch_pass(rows, device.sms, stream);
    if (e == cudaSuccess) {
        e = launch_pass(cols, device.sms, stream);
    }
    if (const cudaError_t r = scratch.release(); e == cudaSuccess) {
        e = r;
    }
    return finish_extern_call(uc, name, "separable tensor-core passes", e, out);
}

}  // namespace
}  // namespace halconv::rk::sep

extern "C" int halconv_sep_tensor_core_f32(halide_buffer_t *in, halide_buffer_t *row_kernel,
                                           halide_buffer_t *col_kernel, int32_t boundary, double fill, int32_t offset_x,
                                           int32_t offset_y, bool flip, halide_buffer_t *out) {
    return halconv::rk::sep::run(in, row_kernel, col_kernel, boundary, fill, offset_x, offset_y, flip, out,
                                 "halconv_sep_tensor_core_f32");
}
