// Implicit GEMM for multi-channel convolution on Hopper (sm_90a): the product of
// implicit_gemm_f16_sm80.cu with warpgroup MMA (wgmma.cuh) instead of mma.sync, fed by the
// tensor memory accelerator (TMA). wgmma reads both operands straight from shared memory
// and runs asynchronously, so the SM's tensor cores are not held back by fragment loads
// through registers (what limits the sm_80 kernel to ~40 % tensor-pipe use on an H100).
//
// GEMM orientation: M = 64 filters (the block's filter block, blockIdx.y), N = NPX pixels
// of one output row (128 or 256), k = (tap, channel). Per k16 slice:
//   A = weights, 64 filters x 16 channels of one tap: staged as [tap][c8][filter][8], so a
//       core matrix (8 filters x 8 channels) is 128 contiguous bytes; LBO 1024, SBO 128.
//   B = image patch, 16 channels x NPX pixels at shift (kx, ky): staged as planes of 8
//       channels, [c8][patch row][patch column][8]; the 8 pixels x 8 channels of a core
//       matrix are 128 contiguous bytes at any pixel shift; LBO = one plane, SBO 128.
// A plane is one TMA box of the image (8 channels x patch columns x patch rows), so a
// step's patch is cc / 8 TMA copies, with the image's edges and channels past C read as
// zeros by the TMA unit.
//
// A block has two consumer warpgroups and a producer warpgroup (one thread of it copies).
// Each consumer warpgroup owns 256 / NPX output rows of the tile (128 f32 accumulators
// per thread), so a tile is NPX x (512 / NPX) pixels. The k dimension is split into steps (kernel rows x kernel
// columns x a channel chunk of 16, 32 or 64) as in the sm_80 kernel. The producer fills a
// ring of stages as far ahead as the ring allows (mbarriers: "full" when a stage's bytes
// have landed, "empty" when both warpgroups' wgmma that read it have completed), so the
// consumers never wait on a block-wide barrier. Weights stay resident when they fit. No
// value outside an output's support is multiplied: taps past the kernel are skipped, and
// channels past C are zeros.
//
// The epilogue goes through shared memory: a warpgroup writes 128 pixels x 64 filters of
// its accumulators there, then stores them as 16-byte vectors, each pixel's filters
// contiguous (direct stores from the accumulator layout fill half of every 32-byte sector).
#include <algorithm>
#include <cstdint>
#include <limits>

#include "common/async_copy.cuh"
#include "common/extern_call.cuh"
#include "common/mma_sync.cuh"
#include "common/tensor_map.h"
#include "common/wgmma.cuh"
#include "multichannel/implicit_gemm.cuh"

namespace halconv::rk::mc {
namespace {

using rk::shared_address;

constexpr int wg_filters = 64;  // wgmma M
constexpr int wg_groups = 2;    // consumer warpgroups per block
constexpr int wg_threads = wg_groups * 128;
constexpr int block_threads = wg_threads + 128;  // and the producer warpgroup
// Registers per thread: the launch gives each of the 384 threads 168; the producer hands
// most of its share to the consumers (128 x 40 + 256 x 232 <= 64 Ki).
constexpr int producer_registers = 40, consumer_registers = 232;
constexpr int min_stages = 3, max_stages = 8;
constexpr int a_plane_bytes = wg_filters * 16;  // one 8-channel plane of the A operand
constexpr int barrier_bytes = 256;              // full[max_stages], empty[max_stages], weights
constexpr int tma_box_max = 256;                // TMA box edge limit
constexpr int staged_pixels = 128;              // pixels per epilogue pass of a warpgroup

// Bytes per pixel in the epilogue staging: 64 filters plus 16 bytes, so that the 8 pixel
// rows one stmatrix block writes (f16), or the 8 pixels x 4 filter pairs of a warp's pair
// stores (f32), fall on different banks.
__host__ __device__ constexpr int staging_pitch(int out_bytes) {
    return wg_filters * out_bytes + 16;
}

struct WgmmaPlan {
    int npx;     // tile width, wgmma N
    int tile_h;  // wg_groups * 256 / npx
    int cc;      // channels per chunk: 16, 32 or 64
    int kyn, kxn;
    int chunks_c, chunks_y, chunks_x;
    int steps;  // chunks_c chunks_y chunks_x, c fastest
    int halo_rows, halo_cols;
    int plane_bytes;   // one 8-channel plane of a stage's patch: one TMA box
    int plane_stride;  // plane_bytes rounded up to 128 (TMA writes 128-byte aligned)
    int halo_bytes;    // cc / 8 plane strides
    int weight_bytes;  // one step's A operand: kyn kxn cc / 8 planes
    bool resident;
    int stage_bytes;     // patch, plus the step's weights when not resident
    int stage_tx;        // bytes the copies of one stage write
    int stages;          // min_stages .. max_stages
    int staging_offset;  // epilogue staging, from the 128-aligned base
    int smem_bytes;      // with 128 bytes of slack for that alignment
    int fixed_taps;      // kernel edge K when the plan is K x K taps by 16 channels per step, else 0
};

template <typename Out>
struct WgmmaArgs : ImplicitProblem<Out> {  // kmat is [filter block][step][tap][c8][64][8]
    CUtensorMap image_map;                 // (channel, x, y) of the image region, one plane per box
    WgmmaPlan p;
};

// KT > 0: the plan takes the whole KT x KT kernel in one step with 16-channel chunks
// (plan.fixed_taps), and the step's wgmma are unrolled; 0: any plan, loops.
template <int NPX, int KT, typename Out>
__global__ void __launch_bounds__(block_threads, 1) implicit_wgmma_kernel(const __grid_constant__ WgmmaArgs<Out> a) {
    constexpr int rows = 256 / NPX;  // output rows per warpgroup
    constexpr int tile_h = wg_groups * rows;
    constexpr int acc_n = NPX / 2;
    constexpr int pitch = staging_pitch(sizeof(Out));
    extern __shared__ unsigned char smem_raw[];
    const WgmmaPlan &p = a.p;
    const uint32_t raw = shared_address(smem_raw), base = (raw + 127) & ~127u;
    const uint32_t full = base, empty = base + 8 * max_stages, weights_ready = base + 16 * max_stages;
    const uint32_t weights = base + barrier_bytes;
    const uint32_t stages = weights + (p.resident ? p.steps * p.weight_bytes : 0);
    const int steps = p.steps;
    const int nb = blockIdx.y;
    const int my_tiles = (a.tiles - int(blockIdx.x) + int(gridDim.x) - 1) / int(gridDim.x);
    const int items = my_tiles * steps;
    const __half *const kmat = a.kmat + int64_t(nb) * steps * (p.weight_bytes / 2);

    if (threadIdx.x == 0) {
        for (int s = 0; s < p.stages; s++) {
            rk::mbarrier_init(full + 8 * s, 1);
            rk::mbarrier_init(empty + 8 * s, wg_groups);
        }
        rk::mbarrier_init(weights_ready, 1);
        rk::mbarrier_init_fence();
    }
    __syncthreads();

    if (threadIdx.x >= wg_threads) {
        // The producer: one thread issues every copy, waiting only for stages to free up.
        rk::set_max_registers_dec<producer_registers>();
        if (threadIdx.x == wg_threads) {
            if (p.resident) {
                rk::mbarrier_arrive_expect_tx(weights_ready, steps * p.weight_bytes);
                rk::bulk_load(weights, kmat, steps * p.weight_bytes, weights_ready);
            }
            for (int i = 0; i < items; i++) {
                const int stage = i % p.stages;
                rk::mbarrier_wait(empty + 8 * stage, ((i / p.stages) & 1) ^ 1);
                const int tile = int(blockIdx.x) + (i / steps) * int(gridDim.x), s = i % steps;
                const int cc = s % p.chunks_c, r = s / p.chunks_c, cx = r % p.chunks_x, cy = r / p.chunks_x;
                const int ty = tile / a.tiles_x, tx = tile - ty * a.tiles_x;
                const uint32_t dst = stages + stage * p.stage_bytes, bar = full + 8 * stage;
                rk::mbarrier_arrive_expect_tx(bar, p.stage_tx);
                for (int v = 0; v < p.cc / 8; v++) {
                    rk::tma_load_3d(dst + v * p.plane_stride, &a.image_map, cc * p.cc + 8 * v, tx * NPX + cx * p.kxn,
                                    ty * tile_h + cy * p.kyn, bar);
                }
                if (!p.resident) {
                    rk::bulk_load(dst + p.halo_bytes, kmat + int64_t(s) * (p.weight_bytes / 2), p.weight_bytes, bar);
                }
            }
        }
        return;
    }

    rk::set_max_registers_inc<consumer_registers>();
    const int group = threadIdx.x >> 7, warp = (threadIdx.x >> 5) & 3, lane = threadIdx.x & 31;
    const int g = lane >> 2, t = lane & 3;
    float acc[rows][acc_n];
    // Queues the wgmma of step s (its data in `stage`) for this warpgroup's rows; the
    // first step of a tile overwrites the accumulators instead of adding to them.
    const auto compute = [&](int s, int stage) {
        const int cc = s % p.chunks_c, r = s / p.chunks_c, cx = r % p.chunks_x, cy = r / p.chunks_x;
        const int kyv = min(p.kyn, a.kh - cy * p.kyn), kxv = min(p.kxn, a.kw - cx * p.kxn);
        // k16 slices holding channels below C (the rest would multiply zeros).
        const int slices = min(p.cc, round_up(a.channels - cc * p.cc, 16)) / 16;
        const uint32_t halo = stages + stage * p.stage_bytes;
        const uint32_t w = p.resident ? weights + s * p.weight_bytes : halo + p.halo_bytes;
        const uint64_t da = rk::wgmma_descriptor(w, a_plane_bytes, 128);
        const uint64_t db = rk::wgmma_descriptor(halo, p.plane_stride, 128);
        const auto mma = [&](float(&d)[acc_n], uint32_t a_offset, uint32_t b_offset, bool accumulate) {
            if constexpr (NPX == 256) {
                rk::wgmma_m64n256k16(d, rk::wgmma_offset(da, a_offset), rk::wgmma_offset(db, b_offset), accumulate);
            } else {
                rk::wgmma_m64n128k16(d, rk::wgmma_offset(da, a_offset), rk::wgmma_offset(db, b_offset), accumulate);
            }
        };
        rk::wgmma_fence();
#pragma unroll
        for (int rr = 0; rr < rows; rr++) {
            const int row = group * rows + rr;
            if constexpr (KT > 0) {
                // The whole kernel in one step, one k16 slice per tap: straight-line wgmma.
                const uint32_t row_bytes = p.halo_cols * 16;
#pragma unroll
                for (int ky = 0; ky < KT; ky++) {
#pragma unroll
                    for (int kx = 0; kx < KT; kx++) {
                        mma(acc[rr], (ky * KT + kx) * 2 * a_plane_bytes, (row + ky) * row_bytes + kx * 16,
                            s != 0 || ky + kx > 0);
                    }
                }
            } else {
                bool accumulate = s != 0;
                for (int ky = 0; ky < kyv; ky++) {
                    for (int kx = 0; kx < kxv; kx++) {
                        const int tap = ky * p.kxn + kx;
                        for (int q = 0; q < slices; q++) {
                            mma(acc[rr], (tap * (p.cc / 8) + 2 * q) * a_plane_bytes,
                                2 * q * p.plane_stride + ((row + ky) * p.halo_cols + kx) * 16, accumulate);
                            accumulate = true;
                        }
                    }
                }
            }
        }
        rk::wgmma_commit();
    };
    // One arrival per warpgroup once its wgmma that read the stage have completed.
    const auto release = [&](int stage) {
        if ((threadIdx.x & 127) == 0) {
            rk::mbarrier_arrive(empty + 8 * stage);
        }
    };
    // The epilogue, per 128 pixels of a row: accumulators -> staging (pixel-major, each
    // pixel's 64 filters contiguous) -> 16-byte global stores. Lane (g, t) holds filters
    // 16 warp + g (+ 8) at pixels 8j + 2t, 8j + 2t + 1, the mma fragment layout: f16
    // results go through stmatrix with transposition (four 8 x 8 blocks per instruction);
    // f32 ones pair adjacent filters with one shuffle (lane g ^ 1) and store the pair.
    // Every accumulator is read on every path (only the global stores are conditional):
    // ptxas serializes all wgmma of a kernel that reads accumulators under a branch it
    // cannot prove warpgroup-uniform.
    unsigned char *const staging = smem_raw + (base - raw) + p.staging_offset + group * staged_pixels * pitch;
    const uint32_t staging_shared = shared_address(staging);
    const int wg_thread = threadIdx.x & 127;
    constexpr int per_chunk = 16 / sizeof(Out);     // outputs per 16-byte store
    constexpr int chunks = wg_filters / per_chunk;  // per pixel
    constexpr int pixel_step = 128 / chunks;        // pixels apart for one thread
    const int chunk = wg_thread % chunks, first_px = wg_thread / chunks;
    const auto stage_out = [&](const float(&d)[acc_n], int half) {
        if constexpr (sizeof(Out) == 2) {
            const int i = lane >> 3, r = lane & 7;  // this lane addresses row r of block i
            const uint32_t row_address = staging_shared + (8 * (i >> 1) + r) * pitch + (16 * warp + 8 * (i & 1)) * 2;
#pragma unroll
            for (int j = 0; j < staged_pixels / 8; j += 2) {
                const int jj = half * (staged_pixels / 8) + j;
                rk::stmatrix_x4_trans(row_address + 8 * j * pitch, rk::pack_half2(d[4 * jj], d[4 * jj + 1]),
                                      rk::pack_half2(d[4 * jj + 2], d[4 * jj + 3]),
                                      rk::pack_half2(d[4 * jj + 4], d[4 * jj + 5]),
                                      rk::pack_half2(d[4 * jj + 6], d[4 * jj + 7]));
            }
        } else {
            const bool odd = g & 1;
#pragma unroll
            for (int h = 0; h < 2; h++) {
                const int n = 16 * warp + 8 * h + g - odd;
#pragma unroll
                for (int j = 0; j < staged_pixels / 8; j++) {
                    const int jj = half * (staged_pixels / 8) + j;
                    const float e0 = d[4 * jj + 2 * h], e1 = d[4 * jj + 2 * h + 1];
                    const float other = __shfl_xor_sync(0xffffffffu, odd ? e0 : e1, 4);
                    rk::store_pair<Out>(reinterpret_cast<Out *>(staging + (8 * j + 2 * t + odd) * pitch) + n,
                                        odd ? other : e0, odd ? e1 : other);
                }
            }
        }
    };
    const auto epilogue = [&](int tile) {
        const int ty = tile / a.tiles_x, tx = tile - ty * a.tiles_x;
        // Whole 64-filter blocks with aligned pixels take 16-byte stores.
        const bool vector = a.vector_outputs == per_chunk && (nb + 1) * wg_filters <= a.filters;
#pragma unroll
        for (int rr = 0; rr < rows; rr++) {
            const int y = ty * tile_h + group * rows + rr;
#pragma unroll
            for (int half = 0; half < NPX / staged_pixels; half++) {
                stage_out(acc[rr], half);
                rk::named_barrier(1 + group, 128);
                const int x = tx * NPX + half * staged_pixels + first_px;
                if (y < a.out_h) {
                    Out *const o = a.out + y * a.osy + x * a.osx + nb * wg_filters + chunk * per_chunk;
                    const unsigned char *const src = staging + first_px * pitch + 16 * chunk;
                    if (vector) {
#pragma unroll
                        for (int q = 0; q < staged_pixels / pixel_step; q++) {
                            if (x + q * pixel_step < a.out_w) {
                                *reinterpret_cast<uint4 *>(o + q * pixel_step * a.osx) =
                                    *reinterpret_cast<const uint4 *>(src + q * pixel_step * pitch);
                            }
                        }
                    } else {
                        for (int q = 0; q < staged_pixels / pixel_step && x + q * pixel_step < a.out_w; q++) {
                            const Out *const e = reinterpret_cast<const Out *>(src + q * pixel_step * pitch);
                            for (int m = 0; m < per_chunk && nb * wg_filters + chunk * per_chunk + m < a.filters; m++) {
                                o[q * pixel_step * a.osx + m] = e[m];
                            }
                        }
                    }
                }
                rk::named_barrier(1 + group, 128);
            }
        }
    };

    if (p.resident) {
        rk::mbarrier_wait(weights_ready, 0);
    }
    // Step i's stage is released once step i + 1 is queued and step i has completed, so
    // up to two steps of wgmma are in flight while the producer refills the rest.
    int stage = 0, phase = 0, previous = 0;
    for (int tile_i = 0; tile_i < my_tiles; tile_i++) {
        for (int s = 0; s < steps; s++) {
            rk::mbarrier_wait(full + 8 * stage, phase);
            compute(s, stage);
            rk::wgmma_wait<1>();
            if (s > 0) {
                release(previous);
            }
            previous = stage;
            if (++stage == p.stages) {
                stage = 0;
                phase ^= 1;
            }
        }
        rk::wgmma_wait<0>();
        release(previous);
        epilogue(int(blockIdx.x) + tile_i * int(gridDim.x));
    }
}

// kmat[nb][s][tap][c8][f][8]: the A operand of every step, as the stages hold it.
__global__ void pack_wgmma_weights(Kernels<__half> k, int first_filter, int filters, WgmmaPlan p, bool flip,
                                   __half *kmat, int64_t total) {
    const int taps = p.kyn * p.kxn, planes = p.cc / 8;
    for (int64_t e = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; e < total; e += int64_t(gridDim.x) * blockDim.x) {
        const int c8 = int(e % 8), f = int(e / 8 % wg_filters);
        int64_t rest = e / (8 * wg_filters);
        const int plane = int(rest % planes);
        rest /= planes;
        const int tap = int(rest % taps);
        rest /= taps;
        const int s = int(rest % p.steps), nb = int(rest / p.steps);
        const int cc = s % p.chunks_c, r = s / p.chunks_c, cx = r % p.chunks_x, cy = r / p.chunks_x;
        const int gx = cx * p.kxn + tap % p.kxn, gy = cy * p.kyn + tap / p.kxn;
        const int c = cc * p.cc + plane * 8 + c8, n = nb * wg_filters + f;
        __half v = __float2half_rn(0.f);
        if (n < filters && gx < k.width && gy < k.height && c < k.channels) {
            const int sx = flip ? k.width - 1 - gx : gx, sy = flip ? k.height - 1 - gy : gy;
            v = k.data[c * k.stride[0] + sx * k.stride[1] + sy * k.stride[2] + (first_filter + n) * k.stride[3]];
        }
        kmat[e] = v;
    }
}

// The cheapest plan (per image: bytes copied into shared memory, the tensor work the
// padding of k and of the tiles adds, a fixed cost per step) whose stages (at least
// min_stages, then as many as fit up to max_stages) and epilogue staging for outputs of
// out_bytes fit smem_limit; steps == 0 when none does.
WgmmaPlan plan_wgmma(int channels, int kw, int kh, int out_w, int out_h, int out_bytes, size_t smem_limit) {
    WgmmaPlan best{};
    double best_cost = std::numeric_limits<double>::infinity();
    const size_t staging = size_t(wg_groups) * staged_pixels * staging_pitch(out_bytes);
    const size_t fixed = 128 + barrier_bytes + staging;
    for (int npx : {128, 256}) {
        for (int cc : {16, 32, 64}) {
            if (cc > round_up(channels, 16)) {
                continue;
            }
            for (int kyn = 1; kyn <= kh; kyn++) {
                for (int kxn = 1; kxn <= kw; kxn++) {
                    WgmmaPlan q{};
                    q.npx = npx;
                    q.tile_h = wg_groups * 256 / npx;
                    q.cc = cc;
                    q.kyn = kyn;
                    q.kxn = kxn;
                    q.chunks_c = (channels + cc - 1) / cc;
                    q.chunks_y = (kh + kyn - 1) / kyn;
                    q.chunks_x = (kw + kxn - 1) / kxn;
                    q.steps = q.chunks_c * q.chunks_y * q.chunks_x;
                    q.halo_rows = q.tile_h + kyn - 1;
                    q.halo_cols = npx + kxn - 1;
                    if (q.halo_cols > tma_box_max || q.halo_rows > tma_box_max) {
                        continue;
                    }
                    q.plane_bytes = q.halo_rows * q.halo_cols * 16;
                    q.plane_stride = round_up(q.plane_bytes, 128);
                    q.halo_bytes = cc / 8 * q.plane_stride;
                    q.weight_bytes = kyn * kxn * cc / 8 * a_plane_bytes;
                    const size_t all_weights = size_t(q.steps) * q.weight_bytes;
                    if (fixed + all_weights + size_t(min_stages) * q.halo_bytes <= smem_limit) {
                        q.resident = true;
                        q.stage_bytes = q.halo_bytes;
                    } else if (fixed + size_t(min_stages) * (q.halo_bytes + q.weight_bytes) <= smem_limit) {
                        q.stage_bytes = q.halo_bytes + q.weight_bytes;
                    } else {
                        continue;
                    }
                    const size_t ring = smem_limit - fixed - (q.resident ? all_weights : 0);
                    q.stages = int(std::min<size_t>(max_stages, ring / size_t(q.stage_bytes)));
                    q.stage_tx = cc / 8 * q.plane_bytes + (q.resident ? 0 : q.weight_bytes);
                    q.staging_offset = barrier_bytes + (q.resident ? int(all_weights) : 0) + q.stages * q.stage_bytes;
                    q.smem_bytes = 128 + q.staging_offset + int(staging);
                    // About 54 flops of wgmma take as long as a byte copied from L2 on an H100
                    // SM (measured with the cp.async predecessor of this kernel, where it
                    // picked N 128 over N 256 at 1024^2 x C 64, K 3: 0.257 ms against 0.269).
                    const double tiles = double((out_w + npx - 1) / npx) * ((out_h + q.tile_h - 1) / q.tile_h);
                    const double copied =
                        double(q.steps) * q.halo_bytes + (q.resident ? 0.0 : double(q.steps) * q.weight_bytes);
                    const double k_total = double(q.chunks_c) * cc * q.chunks_x * kxn * q.chunks_y * kyn;
                    const double flops = 2.0 * npx * q.tile_h * wg_filters * k_total;
                    const double cost = tiles * (copied + flops / 54 + q.steps * 2048.0);
                    // Kernels of 1, 3 or 5 taps square in one step of 16 channels run the
                    // unrolled kernel, whose issue overhead per wgmma is a fraction of the
                    // loops': preferred whenever it fits.
                    q.fixed_taps =
                        kw == kh && (kw == 1 || kw == 3 || kw == 5) && kxn == kw && kyn == kh && cc == 16 ? kw : 0;
                    const bool better =
                        q.fixed_taps != best.fixed_taps ? q.fixed_taps > best.fixed_taps : cost < best_cost;
                    if (better) {
                        best_cost = cost;
                        best = q;
                    }
                }
            }
        }
    }
    return best;
}

template <int NPX, int KT, typename Out>
cudaError_t launch_with(const WgmmaArgs<Out> &a, int blocks_x, int filter_blocks, cudaStream_t stream) {
    const auto kernel = implicit_wgmma_kernel<NPX, KT, Out>;
    cudaError_t e = cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, a.p.smem_bytes);
    if (e != cudaSuccess) {
        return e;
    }
    kernel<<<dim3(blocks_x, filter_blocks), block_threads, a.p.smem_bytes, stream>>>(a);
    return cudaGetLastError();
}

template <int NPX, typename Out>
cudaError_t launch_taps(const WgmmaArgs<Out> &a, int blocks_x, int filter_blocks, cudaStream_t stream) {
    switch (a.p.fixed_taps) {
        case 1:
            return launch_with<NPX, 1>(a, blocks_x, filter_blocks, stream);
        case 3:
            return launch_with<NPX, 3>(a, blocks_x, filter_blocks, stream);
        case 5:
            return launch_with<NPX, 5>(a, blocks_x, filter_blocks, stream);
        default:
            return launch_with<NPX, 0>(a, blocks_x, filter_blocks, stream);
    }
}

template <typename Out>
cudaError_t launch_npx(const WgmmaArgs<Out> &a, int blocks_x, int filter_blocks, cudaStream_t stream) {
    return a.p.npx == 256 ? launch_taps<256>(a, blocks_x, filter_blocks, stream)
                          : launch_taps<128>(a, blocks_x, filter_blocks, stream);
}

// The image region as a (channel, x, y) tensor of f16 whose boxes are one plane of a
// stage: 8 channels x halo_cols x halo_rows. img's strides are multiples of 8 halfs and
// its start 16-byte aligned (aligned_image), as the TMA unit requires.
cudaError_t encode_image_map(const Tensor3<__half> &img, int channels, int in_w, int in_h, const WgmmaPlan &p,
                             CUtensorMap *map) {
    const PFN_cuTensorMapEncodeTiled_v12000 encode = rk::tensor_map_encoder();
    if (encode == nullptr) {
        return cudaErrorNotSupported;
    }
    const cuuint64_t dims[3] = {cuuint64_t(channels), cuuint64_t(in_w), cuuint64_t(in_h)};
    const cuuint64_t strides[2] = {cuuint64_t(img.sx) * 2, cuuint64_t(img.sy) * 2};
    const cuuint32_t box[3] = {8, cuuint32_t(p.halo_cols), cuuint32_t(p.halo_rows)};
    const cuuint32_t unit[3] = {1, 1, 1};
    const CUresult r = encode(map, CU_TENSOR_MAP_DATA_TYPE_FLOAT16, 3, const_cast<__half *>(img.data), dims, strides,
                              box, unit, CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_NONE,
                              CU_TENSOR_MAP_L2_PROMOTION_L2_128B, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
    return r == CUDA_SUCCESS ? cudaSuccess : cudaErrorInvalidValue;
}

// Whether the wgmma kernel runs this problem on device d, and its plan: an sm_90 GPU
// whose driver encodes tensor maps, C > 8, more than 32 filters, a plan that fits.
bool wgmma_plan_for(const DeviceFacts &d, int channels, int kw, int kh, int filters, int out_w, int out_h,
                    int out_bytes, WgmmaPlan *p) {
    if (d.major != 9 || d.minor != 0 || channels <= 8 || filters <= 32 || rk::tensor_map_encoder() == nullptr) {
        return false;
    }
    *p = plan_wgmma(channels, kw, kh, out_w, out_h, out_bytes, size_t(d.smem_limit));
    return p->steps != 0;
}

// Halfs of the packed weights: every step's A operand for each block of 64 filters.
int64_t wgmma_weight_halfs(const WgmmaPlan &p, int filters) {
    const int filter_blocks = (filters + wg_filters - 1) / wg_filters;
    return int64_t(filter_blocks) * p.steps * (p.weight_bytes / 2);
}

}  // namespace

size_t implicit_wgmma_weight_bytes(const DeviceFacts &d, int channels, int kw, int kh, int filters, int out_w,
                                   int out_h, int out_bytes) {
    WgmmaPlan p{};
    return wgmma_plan_for(d, channels, kw, kh, filters, out_w, out_h, out_bytes, &p)
               ? size_t(wgmma_weight_halfs(p, filters)) * 2
               : 0;
}

template <typename Out>
cudaError_t launch_implicit_wgmma_f16(const Tensor3<__half> &image, int in_w, int in_h, const Kernels<__half> &kernels,
                                      int first_filter, bool flip, const OutputView<Out> &out, int out_height,
                                      Scratch &scratch, cudaStream_t stream, bool *ran) {
    *ran = false;
    DeviceFacts d;
    cudaError_t e = device_facts(&d);
    WgmmaArgs<Out> a{};
    if (e != cudaSuccess || !wgmma_plan_for(d, kernels.channels, kernels.width, kernels.height, out.filters, out.width,
                                            out_height, int(sizeof(Out)), &a.p)) {
        return e;
    }
    *ran = true;
    __half *kmat = nullptr;
    Tensor3<__half> img{};
    e = aligned_image(image, in_w, in_h, 8, &img, scratch, stream);
    const int filter_blocks = (out.filters + wg_filters - 1) / wg_filters;
    const int64_t kmat_total = wgmma_weight_halfs(a.p, out.filters);
    if (e == cudaSuccess) {
        e = scratch.take(size_t(kmat_total) * 2, &kmat);
    }
    if (e == cudaSuccess) {
        pack_wgmma_weights<<<grid_for(kmat_total), 256, 0, stream>>>(kernels, first_filter, out.filters, a.p, flip,
                                                                     kmat, kmat_total);
        e = cudaGetLastError();
    }
    if (e == cudaSuccess) {
        static_cast<ImplicitProblem<Out> &>(a) =
            implicit_problem(img, in_w, in_h, kernels, kmat, out, out_height, a.p.npx, a.p.tile_h);
        e = encode_image_map(img, kernels.channels, in_w, in_h, a.p, &a.image_map);
    }
    if (e == cudaSuccess) {
        // One block per SM (the stages take most of its shared memory), shared among
        // the filter blocks; each block walks its tiles.
        const int blocks_x = std::max(1, std::min(a.tiles, d.sms / filter_blocks));
        e = launch_npx(a, blocks_x, filter_blocks, stream);
    }
    return e;
}

template cudaError_t launch_implicit_wgmma_f16<float>(const Tensor3<__half> &, int, int, const Kernels<__half> &, int,
                                                      bool, const OutputView<float> &, int, Scratch &, cudaStream_t,
                                                      bool *);
template cudaError_t launch_implicit_wgmma_f16<__half>(const Tensor3<__half> &, int, int, const Kernels<__half> &, int,
                                                       bool, const OutputView<__half> &, int, Scratch &, cudaStream_t,
                                                       bool *);

}  // namespace halconv::rk::mc
