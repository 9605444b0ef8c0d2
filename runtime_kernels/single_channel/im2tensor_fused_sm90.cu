// im2tensor on Hopper (sm_90a): the skewed product of im2tensor_fused_sm80.cu on warpgroup
// MMA (wgmma), the image fed by the tensor memory accelerator (TMA). It serves the fused
// and the atomic entry points for f16 samples on sm_90 devices (neither form's partial
// sums arise: tiles overlap instead, see below); the mma.sync kernels run elsewhere and
// stay the reference.
//
// GEMM orientation, per M block of 64 rows = R output rows x S kernel columns (S = 16,
// R = 4 or S = 32, R = 2; m = r S + i):
//   A (64 x 16 per k slice) = the kernel, shifted down by r rows:
//       A_a(m, k) = K(S a + i, k - r), zero outside the kernel;
//     built once per block in shared memory, k-major core matrices (LBO 1024, SBO 128).
//   B (16 x 256) = image rows k .. k + 15 of the band (from the group's first row), image
//     columns c0 + S a .. + 255: N-major. The band is staged as planes of 8 image
//     columns, [plane][row][8 columns], one TMA box each, so a core matrix (8 rows x 8
//     columns) is 128 contiguous bytes at any row: B starts anywhere, the shift of
//     kernel-column block a is S a / 8 planes. LBO 128 (8 rows), SBO one plane.
//   D(m, c) = sum_a sum_k A_a(m, k) B(k, c + S a) = sum_y K(S a + i, y) I(c0 + c + S a,
//     row + r + y): element (i, c) belongs to output c0 + c - i of output row row + r for
//     every a, so the tensor cores add the Tr+ diagonals across kernel-column blocks (as
//     the fused kernel does) and an S-wide diagonal sum is left per output.
// Warp w of a warpgroup holds rows 16 w .. 16 w + 15: output row r = 16 w / S, kernel
// columns 16 q .. 16 q + 15 of the block (q = w mod S / 16), as 16 tiles of 16 x 16 in the
// mma fragment layout; DiagonalLane takes their diagonal sums in registers, and for
// S = 32 the two warps of a row add theirs through shared memory (warp q's sums lie 16 q
// columns to the left). Outputs c0 .. c0 + 255 - S of a tile are complete within it, so
// tiles advance by 256 - S columns and need nothing from their neighbours.
//
// A block is a producer warpgroup (one thread issues the TMA copies into a ring of
// stages, mbarriers "full" and "empty") and two consumer warpgroups, which take
// alternate row groups of the staged band and release the stage when done. They take
// turns at the tensor cores (ping-pong, two hardware barriers), so one's epilogue runs
// under the other's wgmma: 12-14 % faster than running in step. Blocks are persistent,
// one per SM, walking work items (band, tile) band by band.
//
// Float32 samples (SplitSamples): a pass splits the scaled image into in-place f16 parts
// (common/split_f32.h, split_staging.cuh), hi and mid, two planes that TMA stages side by
// side in each plane box; A holds the kernel's two parts. Per kernel-column block the
// tile's products chain in one accumulator from zero, per k16 slice kernel-mid x
// image-hi, kernel-hi x image-mid, then hi x hi, and the chain is added to the result
// outside the tensor core (round to nearest: the tensor core truncates a sum aligned to
// its largest term, so the hi x hi products must not chain over the whole kernel; one
// kernel-column block's chain of ceil((kh + 3) / 16) slices is short enough, see
// tests/test_split_f32.cpp). Two accumulators per thread, so the tile is 128 columns
// wide. It serves f32 from 7 x 7 taps on (floating_three's range); smaller kernels and
// kernels too large for shared memory take the mma.sync kernel.
//
// Non-finite samples: zero-padded taps multiply real samples, and 0 x Inf is NaN, so a
// sum that is not finite may be wrong. Finite samples give finite f32 sums (f16 inputs
// cannot overflow f32, nor can scaled parts below 2^15), so the epilogue recomputes
// exactly, on CUDA cores over the real taps, each output whose sum is not finite: one
// predicate per output on the fast path.
#include <algorithm>
#include <cstdint>

#include "common/async_copy.cuh"
#include "common/extern_call.cuh"
#include "common/mma_sync.cuh"
#include "common/tensor_map.h"
#include "common/wgmma.cuh"
#include "single_channel/diagonal_lane.cuh"
#include "single_channel/halconv_tc.h"
#include "single_channel/im2tensor_common.cuh"
#include "single_channel/split_staging.cuh"

namespace halconv::rk::tc {
namespace {

// What the kernel reads and how it sums, per sample type.
struct HalfSamples {
    using Sample = __half;
    static constexpr int parts = 1;           // f16 planes staged per image plane
    static constexpr int tile_columns = 256;  // wgmma N: image columns of a tile
};
struct SplitSamples {
    using Sample = float;
    static constexpr int parts = 2;  // hi, mid
    static constexpr int tile_columns = 128;
};

constexpr int max_tile_columns = 256;
constexpr int m_rows = 64;  // wgmma M
constexpr int consumer_groups = 2;
constexpr int consumer_threads = consumer_groups * 128;
constexpr int block_threads = consumer_threads + 128;  // and the producer warpgroup
// The producer hands most of its registers to the consumers (128 x 40 + 256 x 232 <= 64 Ki).
constexpr int producer_registers = 40, consumer_registers = 232;
constexpr int consumer_warps = consumer_threads / 32;
constexpr int max_stages = 4;
constexpr int plane_columns = 8;  // one 16-byte core-matrix row
constexpr int plane_row_bytes = plane_columns * 2;
constexpr int tma_box_max = 256;
constexpr int a_slice_bytes = m_rows * frag * 2;  // one k16 slice of A
constexpr int barrier_bytes = 128;                // full[max_stages], empty[max_stages]
// Diagonal sums gathered gather_batch pairs of sub-tiles at a time, each in a buffer of its
// own: one warp-wide exchange for the batch instead of one per pair (the epilogue is
// latency-bound with two warps per scheduler).
constexpr int gather_batch = 4;
constexpr int gather_bytes = consumer_warps * gather_batch * reduce_floats * 4;
// S = 32: per pair of warps, two row groups' sums of the right-hand warp.
constexpr int pair_floats = 2 * max_tile_columns;
constexpr int pair_bytes = consumer_warps / 2 * pair_floats * 4;

static_assert(halconv_tc_row_phase % (m_rows / 16) == 0 && halconv_tc_row_phase % (m_rows / 32) == 0,
              "an output's sums depend on its row modulo the output rows of an M block (halconv_tc.h)");

struct WgmmaTiling {
    int s;             // kernel columns per M block: 16 or 32 (then 64 / s output rows)
    int na;            // kernel-column blocks: ceil(kw / s)
    int ksteps;        // k16 slices: ceil((kh + 64 / s - 1) / 16)
    int band_rows;     // output rows of a work item, a multiple of 2 x 64 / s
    int rows;          // staged image rows: band_rows - 64 / s + 16 ksteps
    int parts;         // f16 parts of a sample: 1, or 2 for split f32 samples
    int tile_columns;  // wgmma N
    int planes;        // staged planes: (tile_columns + s (na - 1)) / 8
    int part_bytes;    // between a plane's parts: rows x 16
    int plane_stride;  // bytes: parts x rows x 16 rounded up to 128 (TMA writes 128-byte aligned)
    int stage_bytes;   // planes x plane_stride
    int stages;        // 1 .. max_stages
    int out_columns;   // outputs per tile: tile_columns - s
    int tiles_x, bands;
    int images;                                              // of a batch: work items are (image, band, tile)
    int a_offset, stage_offset, gather_offset, pair_offset;  // from the 128-aligned base
    int smem_bytes;                                          // with 128 bytes of slack for that alignment
};

template <typename Samples>
struct WgmmaArgs {
    // f16 samples: the batch's images (x, y, image), boxes of 8 columns x rows x 1; split
    // samples: the image's parts' planes (x, y, part), boxes of 8 columns x rows x both.
    CUtensorMap image_map;
    ProblemOf<typename Samples::Sample> io;  // image 0's, for the outputs recomputed exactly
    int64_t image_stride, out_image_stride;  // elements between a batch's images and outputs
    const SplitScales *scales;               // split samples only
    WgmmaTiling t;
};

__device__ inline uint16_t half_bits(float v) {
    return __half_as_ushort(__float2half_rn(v));
}

// A in shared memory: slice (part, a, k16 slice) at 2 KB each, [k8][m8][8 m][8 k] within
// it; part 1 (split samples: the kernel's mid) after every slice of part 0.
template <int S, typename Samples>
__device__ void stage_kernel_operand(unsigned char *a_smem, const WgmmaArgs<Samples> &args) {
    const WgmmaTiling &t = args.t;
    uint16_t *dst = reinterpret_cast<uint16_t *>(a_smem);
    const int part_halfs = t.na * t.ksteps * (a_slice_bytes / 2);
    float factor[2] = {1.0f, 1.0f};
    if constexpr (Samples::parts == 2) {
        factor[0] = args.scales->kernel_scale[0];
        factor[1] = args.scales->kernel_scale[1];
    }
    for (int e = threadIdx.x; e < part_halfs; e += blockDim.x) {
        const int slice = e >> 10, within = e & 1023;
        const int k8 = within >> 9, m8 = (within >> 6) & 7, mr = (within >> 3) & 7, kk = within & 7;
        const int m = 8 * m8 + mr, a = slice / t.ksteps, ks = slice - a * t.ksteps;
        const int r = m / S, i = m % S;
        const int x = S * a + i, y = frag * ks + 8 * k8 + kk - r;
        const bool tap = x < args.io.ker.width && y >= 0 && y < args.io.ker.height;
        if constexpr (Samples::parts == 1) {
            dst[e] = tap ? __half_as_ushort(args.io.ker.tap(x, y, args.io.flip)) : uint16_t(0);
        } else {
            const split_f32::InPlaceParts v =
                tap ? in_place_parts_of(args.io.ker.tap(x, y, args.io.flip), factor) : split_f32::InPlaceParts{};
            dst[e] = half_bits(v.hi);
            dst[part_halfs + e] = half_bits(v.mid);
        }
    }
}

// Sub-tile u (columns 16 u .. 16 u + 15) of a warp's accumulators as two m16n8 fragments.
template <int N>
__device__ __forceinline__ void sub_tile(const float (&d)[N], int u, float (&f)[2][4]) {
#pragma unroll
    for (int h = 0; h < 2; h++) {
#pragma unroll
        for (int e = 0; e < 4; e++) {
            f[h][e] = d[8 * u + 4 * h + e];
        }
    }
}

__device__ __forceinline__ float as_float(__half v) {
    return __half2float(v);
}
__device__ __forceinline__ float as_float(float v) {
    return v;
}

// Output (j, k) summed on CUDA cores over the real taps only, from the caller's samples
// (out of line: the main loop keeps its registers).
template <typename Sample>
__device__ __noinline__ float exact_output(const ProblemOf<Sample> &p, int j, int k) {
    float s = 0.f;
    for (int y = 0; y < p.ker.height; y++) {
        const Sample *row = p.img.data + int64_t(k + y) * p.img.stride + j;
        for (int x = 0; x < p.ker.width; x++) {
            s += as_float(p.ker.tap(x, y, p.flip)) * as_float(row[x]);
        }
    }
    return s;
}

// One row group's tile, f16 samples: every slice chained in the accumulator. `issued`
// runs once the last wgmma is issued (the hand-over to the other consumer, whose wgmma
// then queue behind these instead of waiting for them to finish).
template <int S, int NA, typename Issued>
__device__ __forceinline__ void tile_product(float (&acc)[128], const WgmmaTiling &t, uint32_t a_base, uint32_t b_group,
                                             Issued &&issued) {
    static_assert(NA == 0, "f16 samples take the kernel-column blocks from the tiling");
    wgmma_fence();
    for (int a = 0; a < t.na; a++) {
        const uint32_t b_block = b_group + a * (S / plane_columns) * t.plane_stride;
        for (int ks = 0; ks < t.ksteps; ks++) {
            const uint64_t da = wgmma_descriptor(a_base + (a * t.ksteps + ks) * a_slice_bytes, 1024, 128);
            const uint64_t db =
                wgmma_descriptor(b_block + ks * frag * plane_row_bytes, 8 * plane_row_bytes, t.plane_stride);
            wgmma_m64n256k16<1>(acc, da, db, a + ks > 0);
        }
    }
    wgmma_commit();
    issued();
    wgmma_wait<0>();
}

__device__ __forceinline__ void add_chain(float (&acc)[64], const float (&chain)[64]) {
#pragma unroll
    for (int i = 0; i < 64; i++) {
        acc[i] += chain[i];
    }
}

// Adds kernel-column block a of a split tile to `chain` (from zero when `fresh`): per k16
// slice kernel-mid x image-hi, kernel-hi x image-mid, then hi x hi.
template <int S>
__device__ __forceinline__ void issue_split_chain(float (&chain)[64], const WgmmaTiling &t, uint32_t a_base,
                                                  uint32_t b_group, int a, bool fresh) {
    const uint32_t mid_offset = t.na * t.ksteps * a_slice_bytes;
    wgmma_fence();
    for (int ks = 0; ks < t.ksteps; ks++) {
        const uint32_t a_hi = a_base + (a * t.ksteps + ks) * a_slice_bytes;
        const uint32_t b_hi = b_group + a * (S / plane_columns) * t.plane_stride + ks * frag * plane_row_bytes;
        const uint64_t da_hi = wgmma_descriptor(a_hi, 1024, 128),
                       da_mid = wgmma_descriptor(a_hi + mid_offset, 1024, 128);
        const uint64_t db_hi = wgmma_descriptor(b_hi, 8 * plane_row_bytes, t.plane_stride);
        const uint64_t db_mid = wgmma_descriptor(b_hi + t.part_bytes, 8 * plane_row_bytes, t.plane_stride);
        wgmma_m64n128k16<1>(chain, da_mid, db_hi, !fresh || ks > 0);
        wgmma_m64n128k16<1>(chain, da_hi, db_mid, true);
        wgmma_m64n128k16<1>(chain, da_hi, db_hi, true);
    }
    wgmma_commit();
}

// One row group's tile, split samples, NA (= t.na) kernel-column blocks: each block's
// products chained in one accumulator (the first block's in acc itself), the later
// chains added to acc with round to nearest (see the top of the file); `issued` as for
// f16 samples. NA is a template parameter so that the adds between chains are straight
// code: in a loop of run-time length ptxas serialized every wgmma of the kernel.
template <int S, int NA, typename Issued>
__device__ __forceinline__ void tile_product(float (&acc)[64], const WgmmaTiling &t, uint32_t a_base, uint32_t b_group,
                                             Issued &&issued) {
    static_assert(NA >= 1, "split samples instantiate per kernel-column block count");
    float chain[64];
    issue_split_chain<S>(acc, t, a_base, b_group, 0, true);
    if constexpr (NA > 1) {
        issue_split_chain<S>(chain, t, a_base, b_group, 1, true);
    }
#pragma unroll
    for (int a = 2; a < NA; a++) {
        wgmma_wait<0>();
        add_chain(acc, chain);
        issue_split_chain<S>(chain, t, a_base, b_group, a, true);
    }
    issued();
    wgmma_wait<0>();
    if constexpr (NA > 1) {
        add_chain(acc, chain);
    }
}

// Work item `item` of the grid-strided loop: image-major, then bands, then tiles.
struct WorkItem {
    int image, band, tile;
    __device__ WorkItem(const WgmmaTiling &t, int item) {
        const int per_image = t.tiles_x * t.bands;
        image = item / per_image;
        const int within = item - image * per_image;
        band = within / t.tiles_x;
        tile = within - band * t.tiles_x;
    }
};

// The producer role: one thread stages each of the block's work items (the band's planes
// of one tile) into the ring, as far ahead as the consumers' releases allow.
template <typename Samples>
__device__ void produce_stages(const WgmmaArgs<Samples> &args, uint32_t full, uint32_t empty, uint32_t stage_base,
                               int my_items) {
    const WgmmaTiling &t = args.t;
    for (int n = 0; n < my_items; n++) {
        const int stage = n % t.stages;
        mbarrier_wait(empty + 8 * stage, ((n / t.stages) & 1) ^ 1);
        const WorkItem w(t, int(blockIdx.x) + n * int(gridDim.x));
        const uint32_t dst = stage_base + stage * t.stage_bytes, bar = full + 8 * stage;
        mbarrier_arrive_expect_tx(bar, t.planes * t.parts * t.rows * plane_row_bytes);
        for (int p = 0; p < t.planes; p++) {
            const int x = w.tile * t.out_columns + p * plane_columns, y = w.band * t.band_rows;
            tma_load_3d(dst + p * t.plane_stride, &args.image_map, x, y, Samples::parts == 1 ? w.image : 0, bar);
        }
    }
}

// The epilogue of one consumer warp: the diagonal sums of its accumulators, then (s = 32)
// the two warps of an output row added through shared memory, the split samples' scale
// undone, non-finite sums recomputed exactly, and the row stored.
template <int S, typename Samples, typename Out>
struct TileEpilogue {
    static constexpr int Q = S / frag;  // warps per output row
    static constexpr int N = Samples::tile_columns;
    static constexpr int sub_tiles = N / frag;
    static constexpr int sums_per_lane = sub_tiles / 2;

    const WgmmaArgs<Samples> &args;
    const DiagonalLane diag;
    const int lane, warp_id, q;
    float *const gather;  // this warp's gather_batch exchange buffers
    float *const pair;    // s = 32: this warp pair's two halves of right-hand sums
    // Split samples: the sums' scale back to the caller's units, 2^unscale, one multiply
    // (rounding once, as scalbnf does) wherever 2^unscale is a normal float.
    int unscale = 0;
    bool unscale_by_multiply = true;
    float unscale_factor = 1.0f;

    __device__ TileEpilogue(const WgmmaArgs<Samples> &a, unsigned char *smem, int warp_id_, int lane_)
        : args(a),
          diag(lane_),
          lane(lane_),
          warp_id(warp_id_),
          q(warp_id_ % 4 % Q),
          gather(reinterpret_cast<float *>(smem + a.t.gather_offset) + warp_id_ * gather_batch * reduce_floats),
          pair(reinterpret_cast<float *>(smem + a.t.pair_offset) + (warp_id_ / 2) * pair_floats) {
        if constexpr (Samples::parts == 2) {
            unscale = args.scales->unscale_exponent;
            unscale_by_multiply = unscale >= -126 && unscale <= 127;
            unscale_factor = unscale_by_multiply ? __int_as_float((unscale + 127) << 23) : 1.0f;
        }
    }

    // sums[p] of lane L is column 32 p + L of this warp's sums, output c0 + 32 p + L - 16 q
    // (sub-tile 0's lower parts and the last sub-tile's upper parts belong to outputs of
    // the neighbouring tiles).
    __device__ __forceinline__ void diagonal_sums(const float (&acc)[N / 2], float (&sums)[sums_per_lane]) const {
        float carry[4] = {0.f, 0.f, 0.f, 0.f}, total0[4], total1[4], f[2][4];
        sub_tile(acc, 0, f);
        diag.split(f, carry, total0);
#pragma unroll
        for (int b = 0; b < sums_per_lane; b += gather_batch) {
#pragma unroll
            for (int p = b; p < b + gather_batch; p++) {
                sub_tile(acc, 2 * p + 1, f);
                diag.split(f, carry, total0);
                if (2 * p + 2 < sub_tiles) {
                    sub_tile(acc, 2 * p + 2, f);
                } else {
                    f[0][0] = f[0][1] = f[0][2] = f[0][3] = f[1][0] = f[1][1] = f[1][2] = f[1][3] = 0.f;
                }
                diag.split(f, carry, total1);
                diag.scatter(gather + (p - b) * reduce_floats, total0, total1);
            }
            __syncwarp();
#pragma unroll
            for (int p = b; p < b + gather_batch; p++) {
                sums[p] = DiagonalLane::collect(gather + (p - b) * reduce_floats, lane);
            }
            __syncwarp();
        }
    }

    // Output row y of the batch's image `image`, columns c0 ..; turn picks the half of the
    // pair buffer (s = 32), so that a warp pair's next row group cannot overwrite sums not
    // yet read.
    __device__ __forceinline__ void store(const float (&sums)[sums_per_lane], int image, int c0, int y,
                                          int turn) const {
        float *const right = pair + (turn & 1) * N;
        if constexpr (Q == 2) {
            if (q == 1) {
#pragma unroll
                for (int p = 0; p < sums_per_lane; p++) {
                    right[32 * p + lane] = sums[p];
                }
            }
            named_barrier(1 + warp_id / 2, 64);
        }
        if (q != 0) {
            return;
        }
#pragma unroll
        for (int p = 0; p < sums_per_lane; p++) {
            const int v = 32 * p + lane, j = c0 + v;
            float s = sums[p];
            if constexpr (Q == 2) {
                s += v + frag < N ? right[v + frag] : 0.f;
            }
            if (v < args.t.out_columns && j < args.io.out_width && y < args.io.out_height) {
                if (!isfinite(s)) {
                    ProblemOf<typename Samples::Sample> io = args.io;
                    io.img.data += image * args.image_stride;
                    s = exact_output(io, j, y);
                } else if constexpr (Samples::parts == 2) {
                    s = unscale_by_multiply ? s * unscale_factor : scalbnf(s, unscale);
                }
                args.io.template at<Out>(j, y)[image * args.out_image_stride] = to_output<Out>(s);
            }
        }
    }
};

template <int S, typename Samples, typename Out, int NA>
__global__ void __launch_bounds__(block_threads, 1)
    im2tensor_wgmma_kernel(const __grid_constant__ WgmmaArgs<Samples> args) {
    constexpr int R = m_rows / S;  // output rows per M block
    using Epilogue = TileEpilogue<S, Samples, Out>;
    extern __shared__ unsigned char smem_raw[];
    const WgmmaTiling &t = args.t;
    const uint32_t raw = shared_address(smem_raw), base = (raw + 127) & ~127u;
    unsigned char *const smem = smem_raw + (base - raw);
    const uint32_t full = base, empty = base + 8 * max_stages;
    const uint32_t a_base = base + t.a_offset, stage_base = base + t.stage_offset;
    const int items = t.tiles_x * t.bands * t.images;
    const int my_items = (items - int(blockIdx.x) + int(gridDim.x) - 1) / int(gridDim.x);

    stage_kernel_operand<S>(smem + t.a_offset, args);
    fence_proxy_async();  // A's stores before the consumers' wgmma read it
    if (threadIdx.x == 0) {
        for (int s = 0; s < t.stages; s++) {
            mbarrier_init(full + 8 * s, 1);
            mbarrier_init(empty + 8 * s, consumer_groups);
        }
        mbarrier_init_fence();
    }
    __syncthreads();

    if (threadIdx.x >= consumer_threads) {
        set_max_registers_dec<producer_registers>();
        if (threadIdx.x == consumer_threads) {
            produce_stages(args, full, empty, stage_base, my_items);
        }
        return;
    }

    // The consumers: alternate row groups of each staged band, product then epilogue.
    set_max_registers_inc<consumer_registers>();
    const int group = threadIdx.x >> 7, warp = (threadIdx.x >> 5) & 3;
    const int r = warp * frag / S;
    const Epilogue epilogue(args, smem, threadIdx.x >> 5, threadIdx.x & 31);
    const int groups = t.band_rows / R;
    float acc[Epilogue::N / 2];
    int turn = 0;  // row groups this warpgroup has finished: the pair buffer's half
    // Ping-pong: the warpgroups take turns at the tensor cores (hardware barriers 5 and 6;
    // s = 32's warp pairs use 1-4), so that one's epilogue runs under the other's wgmma.
    const int my_turn = 5 + group, other_turn = 6 - group;
    if (group == 1) {
        named_barrier_arrive(5, 256);
    }

    for (int n = 0; n < my_items; n++) {
        const int stage = n % t.stages;
        mbarrier_wait(full + 8 * stage, (n / t.stages) & 1);
        const WorkItem w(t, int(blockIdx.x) + n * int(gridDim.x));
        const uint32_t b_stage = stage_base + stage * t.stage_bytes;
        for (int g = group; g < groups; g += consumer_groups, turn++) {
            named_barrier(my_turn, 256);
            tile_product<S, NA>(acc, t, a_base, b_stage + g * R * plane_row_bytes,
                                [other_turn] { named_barrier_arrive(other_turn, 256); });
            float sums[Epilogue::sums_per_lane];
            epilogue.diagonal_sums(acc, sums);
            epilogue.store(sums, w.image, w.tile * t.out_columns, w.band * t.band_rows + g * R + r, turn);
        }
        if ((threadIdx.x & 127) == 0) {
            mbarrier_arrive(empty + 8 * stage);
        }
    }
    if (group == 0) {
        named_barrier(my_turn, 256);  // the other's last turn handed back
    }
}

// The tiling of a kernel-column width s for Samples, or stages == 0 when none fits
// smem_limit: the tallest band (64, 32, 16 output rows) with two stages or more, else
// with one.
template <typename Samples>
WgmmaTiling tiling_for(int s, int kw, int kh, int out_w, int out_h, int smem_limit) {
    constexpr int parts = Samples::parts, tile_columns = Samples::tile_columns;
    const int r = m_rows / s;
    WgmmaTiling t{};
    t.s = s;
    t.parts = parts;
    t.tile_columns = tile_columns;
    t.na = (kw + s - 1) / s;
    t.ksteps = (kh + r - 1 + frag - 1) / frag;
    t.planes = (tile_columns + s * (t.na - 1)) / plane_columns;
    t.out_columns = tile_columns - s;
    t.a_offset = barrier_bytes;
    t.gather_offset = t.a_offset + parts * t.na * t.ksteps * a_slice_bytes;
    t.pair_offset = t.gather_offset + gather_bytes;
    t.stage_offset = t.pair_offset + (s == 32 ? pair_bytes : 0);
    WgmmaTiling one_stage{};
    for (int band_rows : {64, 32, 16}) {
        WgmmaTiling c = t;
        c.band_rows = band_rows;
        c.rows = band_rows - r + frag * t.ksteps;
        if (c.rows > tma_box_max) {
            continue;
        }
        c.part_bytes = c.rows * plane_row_bytes;
        c.plane_stride = (parts * c.part_bytes + 127) / 128 * 128;
        c.stage_bytes = c.planes * c.plane_stride;
        const int room = smem_limit - 128 - c.stage_offset;
        c.stages = std::min(max_stages, std::max(0, room / c.stage_bytes));
        c.smem_bytes = 128 + c.stage_offset + c.stages * c.stage_bytes;
        c.tiles_x = (out_w + c.out_columns - 1) / c.out_columns;
        c.bands = (out_h + band_rows - 1) / band_rows;
        c.images = 1;
        if (c.stages >= 2) {
            return c;
        }
        if (c.stages == 1 && one_stage.stages == 0) {
            one_stage = c;
        }
    }
    return one_stage;
}

// Clocks of an SM per output, for choosing s: the tensor cores' time (a m64n256k16 wgmma
// takes 128 clocks of an H100 SM) plus the epilogue's, as measured with the warpgroups in
// step (before ping-pong hid part of the sum; the ranking is what matters here). The
// epilogue costs about the same per row group for either s (the diagonal sums of 16
// sub-tiles per warp), which holds 960 outputs for s = 16 and 448 for s = 32: about 2660
// clocks per pair of s = 16 groups and 3150 per pair of s = 32 groups (H100, 4096^2). So
// s = 16 wins unless only s = 32 fits (kernels about 100 wide and more).
double clocks_per_output(const WgmmaTiling &t) {
    const int r = m_rows / t.s;
    const double outputs = double(r) * t.out_columns;
    const double tensor = double(t.na) * t.ksteps * 128 / outputs;
    const double epilogue = (t.s == 16 ? 2660.0 : 3150.0) / (2 * outputs);
    return tensor + epilogue;
}

// The f16 images of a batch as a 3-D tensor (x, y, image) whose boxes are one plane of a
// stage: 8 columns x rows x 1 (`planes` images `plane_elements` apart); or the split
// image's two planes (split_image_in_place, `planes` = 2), boxes of 8 columns x rows x
// both parts.
cudaError_t encode_image_map(const void *data, int width, int height, int64_t pitch, int planes, int64_t plane_elements,
                             const WgmmaTiling &t, CUtensorMap *map) {
    const PFN_cuTensorMapEncodeTiled_v12000 encode = tensor_map_encoder();
    const cuuint64_t dims[3] = {cuuint64_t(width), cuuint64_t(height), cuuint64_t(planes)};
    // A stride must be a positive multiple of 16 bytes even where its dimension has extent 1.
    const cuuint64_t strides[2] = {cuuint64_t(pitch) * 2, cuuint64_t(planes > 1 ? plane_elements : pitch * height) * 2};
    const cuuint32_t box[3] = {plane_columns, cuuint32_t(t.rows), cuuint32_t(t.parts)};
    const cuuint32_t unit[3] = {1, 1, 1};
    const CUresult r = encode(map, CU_TENSOR_MAP_DATA_TYPE_FLOAT16, 3, const_cast<void *>(data), dims, strides, box,
                              unit, CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_NONE,
                              CU_TENSOR_MAP_L2_PROMOTION_L2_128B, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
    return r == CUDA_SUCCESS ? cudaSuccess : cudaErrorInvalidValue;
}

// NA: the kernel-column blocks for split samples (1 .. 8), 0 for f16 samples.
template <int S, typename Samples, typename Out, int NA = 0>
cudaError_t launch_with(const WgmmaArgs<Samples> &args, int blocks, cudaStream_t stream) {
    const cudaError_t e = allow_opt_in_shared_memory<im2tensor_wgmma_kernel<S, Samples, Out, NA>>();
    if (e != cudaSuccess) {
        return e;
    }
    im2tensor_wgmma_kernel<S, Samples, Out, NA><<<blocks, block_threads, args.t.smem_bytes, stream>>>(args);
    return cudaGetLastError();
}

template <int NA = 1>
cudaError_t launch_split(const WgmmaArgs<SplitSamples> &args, int blocks, cudaStream_t stream) {
    if constexpr (NA < max_kernel_edge / 16) {
        if (args.t.na > NA) {
            return launch_split<NA + 1>(args, blocks, stream);
        }
    }
    return launch_with<16, SplitSamples, float, NA>(args, blocks, stream);
}

// Whether the wgmma kernels can run on device d at all: an sm_90 device and a driver with
// tensor maps.
bool hopper(const DeviceFacts &d) {
    return d.major == 9 && d.minor == 0 && tensor_map_encoder() != nullptr;
}

// The cheaper tiling of the two kernel-column widths for f16 samples; false where none fits.
bool half_tiling(int kw, int kh, int out_w, int out_h, const DeviceFacts &d, WgmmaTiling *best) {
    *best = WgmmaTiling{};
    for (int s : {16, 32}) {
        const WgmmaTiling t = tiling_for<HalfSamples>(s, kw, kh, out_w, out_h, d.smem_limit);
        if (t.stages > 0 && (best->stages == 0 || clocks_per_output(t) < clocks_per_output(*best))) {
            *best = t;
        }
    }
    return best->stages > 0;
}

// The tiling for split f32 samples (s = 16 only: with 128-column tiles s = 32 would waste
// a quarter); false where floating_three is not accurate enough (split_f32::scheme_for)
// or none fits.
bool split_tiling(int kw, int kh, int out_w, int out_h, const DeviceFacts &d, WgmmaTiling *t) {
    if (split_f32::scheme_for(kw, kh) != split_f32::Scheme::floating_three) {
        return false;
    }
    *t = tiling_for<SplitSamples>(16, kw, kh, out_w, out_h, d.smem_limit);
    return t->stages > 0;
}

template <typename Samples, typename Out>
cudaError_t launch(WgmmaArgs<Samples> &args, const DeviceFacts &d, cudaStream_t stream) {
    const int blocks = std::max(1, std::min(args.t.tiles_x * args.t.bands * args.t.images, d.sms));
    if constexpr (Samples::parts == 2) {
        return launch_split(args, blocks, stream);
    } else {
        return args.t.s == 32 ? launch_with<32, Samples, Out>(args, blocks, stream)
                              : launch_with<16, Samples, Out>(args, blocks, stream);
    }
}

// Elements between rows of the split image's planes (TMA-addressable).
int64_t wgmma_split_pitch(int image_width) {
    return halconv_tc_tma_pitch(image_width, sizeof(__half));
}

}  // namespace

template <typename Out>
cudaError_t launch_im2tensor_wgmma(const Problem &p, const BatchOf &batch, cudaStream_t stream, bool *ran) {
    *ran = false;
    DeviceFacts d;
    WgmmaArgs<HalfSamples> args{};
    cudaError_t e = device_facts(&d);
    const int64_t item_limit = int64_t(1) << 31;
    if (e != cudaSuccess || !hopper(d) ||
        !halconv_tc_tma_rows(reinterpret_cast<uintptr_t>(p.img.data), p.img.stride * int64_t(sizeof(__half))) ||
        (batch.images > 1 && batch.image_stride * int64_t(sizeof(__half)) % 16 != 0) ||
        !half_tiling(p.ker.width, p.ker.height, p.out_width, p.out_height, d, &args.t) ||
        int64_t(args.t.tiles_x) * args.t.bands * batch.images >= item_limit) {
        return e;
    }
    *ran = true;
    args.io = p;
    args.t.images = batch.images;
    args.image_stride = batch.image_stride;
    args.out_image_stride = batch.out_image_stride;
    e = encode_image_map(p.img.data, p.img.width, p.img.height, p.img.stride, batch.images, batch.image_stride, args.t,
                         &args.image_map);
    return e == cudaSuccess ? launch<HalfSamples, Out>(args, d, stream) : e;
}

template cudaError_t launch_im2tensor_wgmma<float>(const Problem &, const BatchOf &, cudaStream_t, bool *);
template cudaError_t launch_im2tensor_wgmma<__half>(const Problem &, const BatchOf &, cudaStream_t, bool *);

size_t im2tensor_wgmma_split_parts_bytes(const DeviceFacts &d, int image_width, int image_height, int kernel_width,
                                         int kernel_height, int out_width, int out_height) {
    WgmmaTiling t{};
    if (!hopper(d) || !split_tiling(kernel_width, kernel_height, out_width, out_height, d, &t)) {
        return 0;
    }
    return size_t(SplitSamples::parts) * size_t(wgmma_split_pitch(image_width)) * size_t(image_height) * sizeof(__half);
}

cudaError_t launch_im2tensor_wgmma_split(const DeviceFacts &d, const ProblemOf<float> &p, const SplitScales *scales,
                                         __half *parts, cudaStream_t stream) {
    WgmmaArgs<SplitSamples> args{};
    if (!hopper(d) || !split_tiling(p.ker.width, p.ker.height, p.out_width, p.out_height, d, &args.t)) {
        return cudaErrorInvalidValue;  // the caller asked im2tensor_wgmma_split_parts_bytes first
    }
    const int64_t pitch = wgmma_split_pitch(p.img.width), part_elements = pitch * p.img.height;
    args.io = p;
    args.scales = scales;
    cudaError_t e = split_image_in_place(p.img, scales, parts, pitch, part_elements, stream);
    if (e == cudaSuccess) {
        e = encode_image_map(parts, p.img.width, p.img.height, pitch, SplitSamples::parts, part_elements, args.t,
                             &args.image_map);
    }
    return e == cudaSuccess ? launch<SplitSamples, float>(args, d, stream) : e;
}

}  // namespace halconv::rk::tc
