// Implicit GEMM for multi-channel convolution on Hopper (sm_90a): the product of
// implicit_gemm_f16_sm80.cu with warpgroup MMA (wgmma.cuh) instead of mma.sync. wgmma reads
// both operands straight from shared memory and runs asynchronously, so the SM's tensor
// cores are not held back by fragment loads through registers (what limits the sm_80
// kernel to ~40 % tensor-pipe use on an H100).
//
// GEMM orientation: M = 64 filters (the block's filter block, blockIdx.y), N = NPX pixels
// of one output row (128 or 256), k = (tap, channel). Per k16 slice:
//   A = weights, 64 filters x 16 channels of one tap: staged as [tap][c8][filter][8], so a
//       core matrix (8 filters x 8 channels) is 128 contiguous bytes; LBO 1024, SBO 128.
//   B = image patch, 16 channels x NPX pixels at shift (kx, ky): staged as planes of 8
//       channels, [c8][patch row][patch column][8]; the 8 pixels x 8 channels of a core
//       matrix are 128 contiguous bytes at any pixel shift; LBO = one plane, SBO 128.
// A block has two warpgroups; each owns 256 / NPX output rows of the tile (128 f32
// accumulators per thread), so a tile is NPX x (512 / NPX) pixels.
//
// The k dimension is split into steps (kernel rows x kernel columns x a channel chunk of
// 16, 32 or 64) as in the sm_80 kernel. Steps flow through a ring of four shared-memory
// stages filled with cp.async two steps ahead, while up to two steps of wgmma are in
// flight. Weights stay resident when they fit. As in the sm_80 kernel, no value outside
// an output's support is multiplied: taps past the kernel are skipped, and channels past
// C are zero-filled instead of read.
#include <algorithm>
#include <cstdint>
#include <limits>

#include "async_copy.cuh"
#include "implicit_gemm.cuh"
#include "tc_common.cuh"
#include "tc_mma.cuh"
#include "wgmma.cuh"

namespace halconv::mc {
namespace {

using tc::cp_async_commit;
using tc::cp_async_zfill;
using tc::shared_address;

constexpr int wg_filters = 64;  // wgmma M
constexpr int wg_groups = 2;    // warpgroups per block
constexpr int wg_threads = wg_groups * 128;
constexpr int wg_stages = 4;
constexpr int a_plane_bytes = wg_filters * 16;  // one 8-channel plane of the A operand

struct WgmmaPlan {
    int npx;     // tile width, wgmma N
    int tile_h;  // wg_groups * 256 / npx
    int cc;      // channels per chunk: 16, 32 or 64
    int kyn, kxn;
    int chunks_c, chunks_y, chunks_x;
    int steps;  // chunks_c chunks_y chunks_x, c fastest
    int halo_rows, halo_cols;
    int plane_bytes;   // one 8-channel plane of a stage's patch
    int halo_bytes;    // cc / 8 planes
    int weight_bytes;  // one step's A operand: kyn kxn cc / 8 planes
    bool resident;
    int stage_bytes;  // patch, plus the step's weights when not resident
    int smem_bytes;
    int fixed_taps;  // kernel edge K when the plan is K x K taps by 16 channels per step, else 0
};

template <typename Out>
struct WgmmaArgs : ImplicitProblem<Out> {  // kmat is [filter block][step][tap][c8][64][8]
    WgmmaPlan p;
};

// KT > 0: the plan takes the whole KT x KT kernel in one step with 16-channel chunks
// (plan.fixed_taps), and the step's wgmma are unrolled; 0: any plan, loops.
template <int NPX, int KT, typename Out>
__global__ void __launch_bounds__(wg_threads, 1) implicit_wgmma_kernel(const WgmmaArgs<Out> a) {
    constexpr int rows = 256 / NPX;  // output rows per warpgroup
    constexpr int tile_h = wg_groups * rows;
    constexpr int acc_n = NPX / 2;
    extern __shared__ __align__(128) unsigned char smem_raw[];
    const WgmmaPlan &p = a.p;
    const int group = threadIdx.x >> 7, warp = (threadIdx.x >> 5) & 3, lane = threadIdx.x & 31;
    const int g = lane >> 2, t = lane & 3;
    const uint32_t base = shared_address(smem_raw);
    const uint32_t stages = base + (p.resident ? p.steps * p.weight_bytes : 0);
    const int steps = p.steps;
    const int nb = blockIdx.y;
    const int my_tiles = (a.tiles - int(blockIdx.x) + int(gridDim.x) - 1) / int(gridDim.x);
    const int items = my_tiles * steps;
    const __half *const kmat = a.kmat + int64_t(nb) * steps * (p.weight_bytes / 2);

    const auto load_weights = [&](int s, uint32_t dst) {
        const __half *src = kmat + int64_t(s) * (p.weight_bytes / 2);
        for (int i = threadIdx.x; i < p.weight_bytes / 16; i += wg_threads) {
            cp_async_zfill<16>(dst + 16 * i, src + 8 * i, 16);
        }
    };
    // Patch copies: a thread's 8-channel vector (v) is the same for every pixel it copies
    // (the thread stride is a multiple of cc / 8), and its pixels advance by a fixed
    // stride, so rows and columns are stepped instead of divided out per copy.
    const int vecs = p.cc / 8, v = int(threadIdx.x) % vecs, pixel_stride = wg_threads / vecs;
    const int halo_pixels = p.halo_rows * p.halo_cols;
    const int first_pixel = int(threadIdx.x) / vecs;
    const int first_row = first_pixel / p.halo_cols, first_col = first_pixel - first_row * p.halo_cols;
    const auto load = [&](int item) {
        const int tile = int(blockIdx.x) + (item / steps) * int(gridDim.x), s = item % steps;
        const int cc = s % p.chunks_c, r = s / p.chunks_c, cx = r % p.chunks_x, cy = r / p.chunks_x;
        const int ty = tile / a.tiles_x, tx = tile - ty * a.tiles_x;
        const int gx0 = tx * NPX + cx * p.kxn, gy0 = ty * tile_h + cy * p.kyn, c = cc * p.cc + 8 * v;
        const uint32_t halo = stages + (item % wg_stages) * p.stage_bytes;
        const int valid = min(max(a.channels - c, 0), 8);
        uint32_t dst = halo + v * p.plane_bytes + first_pixel * 16;
        int gx = gx0 + first_col, gy = gy0 + first_row;
        const __half *src = a.image + c + gy * a.sy + gx * a.sx;
        // pixel_stride (at most 128) is below halo_cols (at least 128): one wrap at most.
        for (int pix = first_pixel; pix < halo_pixels; pix += pixel_stride) {
            const bool in = gx < a.in_w && gy < a.in_h && valid > 0;
            cp_async_zfill<16>(dst, in ? src : a.image, in ? valid * 2 : 0);
            dst += pixel_stride * 16;
            gx += pixel_stride;
            src += pixel_stride * a.sx;
            if (gx >= gx0 + p.halo_cols) {
                gx -= p.halo_cols;
                gy++;
                src += a.sy - p.halo_cols * a.sx;
            }
        }
        if (!p.resident) {
            load_weights(s, halo + p.halo_bytes);
        }
    };

    float acc[rows][acc_n];
    // Queues the wgmma of one step (item) for this warpgroup's rows; the first step of a
    // tile overwrites the accumulators instead of adding to them.
    const auto compute = [&](int item) {
        const int s = item % steps;
        const int cc = s % p.chunks_c, r = s / p.chunks_c, cx = r % p.chunks_x, cy = r / p.chunks_x;
        const int kyv = min(p.kyn, a.kh - cy * p.kyn), kxv = min(p.kxn, a.kw - cx * p.kxn);
        // k16 slices holding channels below C (the rest would multiply zeros).
        const int slices = min(p.cc, round_up(a.channels - cc * p.cc, 16)) / 16;
        const uint32_t halo = stages + (item % wg_stages) * p.stage_bytes;
        const uint32_t w = p.resident ? base + s * p.weight_bytes : halo + p.halo_bytes;
        const uint64_t da = tc::wgmma_descriptor(w, a_plane_bytes, 128);
        const uint64_t db = tc::wgmma_descriptor(halo, p.plane_bytes, 128);
        const auto mma = [&](float(&d)[acc_n], uint32_t a_offset, uint32_t b_offset, bool accumulate) {
            if constexpr (NPX == 256) {
                tc::wgmma_m64n256k16(d, tc::wgmma_offset(da, a_offset), tc::wgmma_offset(db, b_offset), accumulate);
            } else {
                tc::wgmma_m64n128k16(d, tc::wgmma_offset(da, a_offset), tc::wgmma_offset(db, b_offset), accumulate);
            }
        };
        tc::wgmma_fence();
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
                                2 * q * p.plane_bytes + ((row + ky) * p.halo_cols + kx) * 16, accumulate);
                            accumulate = true;
                        }
                    }
                }
            }
        }
        tc::wgmma_commit();
    };
    // Lane (g, t) holds filters f = 16 warp + g (+ 8) at pixels 8j + 2t and 8j + 2t + 1;
    // one shuffle with lane g ^ 1 turns that into two adjacent filters at one pixel, so
    // every store writes an aligned pair. Every accumulator is read on every path (only
    // the stores are conditional): ptxas serializes all wgmma of a kernel that reads
    // accumulators under a branch it cannot prove warpgroup-uniform.
    const auto epilogue = [&](int tile) {
        const int ty = tile / a.tiles_x, tx = tile - ty * a.tiles_x;
        const bool odd = g & 1;
        // Pairs that are whole and aligned (the common case) take a store each.
        const bool whole = a.pair_stores && (nb + 1) * wg_filters <= a.filters;
#pragma unroll
        for (int rr = 0; rr < rows; rr++) {
            const int y = ty * tile_h + group * rows + rr;
#pragma unroll
            for (int h = 0; h < 2; h++) {
                const int n = nb * wg_filters + 16 * warp + 8 * h + g - odd;
                const int x0 = tx * NPX + 2 * t + odd;
                Out *o = a.out + y * a.osy + x0 * a.osx + n;
                const bool row_in = y < a.out_h;
#pragma unroll
                for (int j = 0; j < NPX / 8; j++) {
                    const float e0 = acc[rr][4 * j + 2 * h], e1 = acc[rr][4 * j + 2 * h + 1];
                    const float other = __shfl_xor_sync(0xffffffffu, odd ? e0 : e1, 4);
                    const float v0 = odd ? other : e0, v1 = odd ? e1 : other;
                    Out *const oj = o + 8 * j * a.osx;
                    if (row_in && x0 + 8 * j < a.out_w) {
                        if (whole) {
                            tc::store_pair<Out>(oj, v0, v1);
                        } else {
                            if (n < a.filters) {
                                oj[0] = tc::to_output<Out>(v0);
                            }
                            if (n + 1 < a.filters) {
                                oj[1] = tc::to_output<Out>(v1);
                            }
                        }
                    }
                }
            }
        }
    };

    if (p.resident) {
        for (int s = 0; s < steps; s++) {
            load_weights(s, base + s * p.weight_bytes);
        }
    }
    // Copies run two steps ahead: iteration i writes step i + 2 into the stage of step
    // i - 2, whose wgmma every warpgroup has waited for (wgmma_wait<1> after queuing step
    // i - 1) before this iteration's barrier. Steps i - 1 and i may be multiplying, step
    // i + 1 copying: four stages.
    for (int i = 0; i < 2; i++) {
        if (i < items) {
            load(i);
        }
        cp_async_commit();
    }
    // Tiles and steps are separate loops (not one loop over items with the epilogue under a
    // branch): at the join of such a branch ptxas waits for every wgmma, which drains the
    // tensor pipe once per step instead of once per tile.
    for (int tile_i = 0, i = 0; tile_i < my_tiles; tile_i++) {
        for (int s = 0; s < steps; s++, i++) {
            tc::cp_async_wait<1>();
            tc::fence_proxy_async_shared();
            __syncthreads();
            if (i + 2 < items) {
                load(i + 2);
            }
            cp_async_commit();
            compute(i);
            tc::wgmma_wait<1>();
        }
        tc::wgmma_wait<0>();
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
// padding of k and of the tiles adds, a fixed cost per step) whose four stages fit
// smem_limit; steps == 0 when none does.
WgmmaPlan plan_wgmma(int channels, int kw, int kh, int out_w, int out_h, size_t smem_limit) {
    WgmmaPlan best{};
    double best_cost = std::numeric_limits<double>::infinity();
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
                    q.plane_bytes = q.halo_rows * q.halo_cols * 16;
                    q.halo_bytes = cc / 8 * q.plane_bytes;
                    q.weight_bytes = kyn * kxn * cc / 8 * a_plane_bytes;
                    const size_t resident = size_t(q.steps) * q.weight_bytes + size_t(wg_stages) * q.halo_bytes;
                    const size_t staged = size_t(wg_stages) * (q.halo_bytes + q.weight_bytes);
                    if (resident <= smem_limit) {
                        q.resident = true;
                        q.stage_bytes = q.halo_bytes;
                        q.smem_bytes = int(resident);
                    } else if (staged <= smem_limit) {
                        q.stage_bytes = q.halo_bytes + q.weight_bytes;
                        q.smem_bytes = int(staged);
                    } else {
                        continue;
                    }
                    // About 54 flops of wgmma take as long as a byte copied from L2 on an H100
                    // SM. (At 1024^2 x C 64, K 3 this picks N 128: 0.257 ms against 0.269 for
                    // N 256, which copies 30 % more.)
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
    kernel<<<dim3(blocks_x, filter_blocks), wg_threads, a.p.smem_bytes, stream>>>(a);
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

}  // namespace

bool implicit_wgmma_applies(int channels, int kw, int kh, int filters) {
    DeviceFacts d;
    if (device_facts(&d) != cudaSuccess || d.major != 9 || d.minor != 0 || channels <= 8 || filters <= 32) {
        return false;
    }
    return plan_wgmma(channels, kw, kh, 256, 2, size_t(d.smem_limit)).steps > 0;
}

template <typename Out>
cudaError_t launch_implicit_wgmma_f16(const Tensor3<__half> &image, int in_w, int in_h, const Kernels<__half> &kernels,
                                      int first_filter, bool flip, const OutputView<Out> &out, int out_height,
                                      cudaStream_t stream) {
    DeviceFacts d;
    cudaError_t e = device_facts(&d);
    if (e != cudaSuccess) {
        return e;
    }
    WgmmaArgs<Out> a{};
    a.p = plan_wgmma(kernels.channels, kernels.width, kernels.height, out.width, out_height, size_t(d.smem_limit));
    if (a.p.steps == 0) {
        return cudaErrorInvalidConfiguration;  // implicit_wgmma_applies said no
    }
    __half *packed = nullptr, *kmat = nullptr;
    Tensor3<__half> img{};
    e = aligned_image(image, in_w, in_h, 8, &img, &packed, stream);
    const int filter_blocks = (out.filters + wg_filters - 1) / wg_filters;
    const int64_t kmat_total = int64_t(filter_blocks) * a.p.steps * (a.p.weight_bytes / 2);
    if (e == cudaSuccess) {
        e = cudaMallocAsync(reinterpret_cast<void **>(&kmat), size_t(kmat_total) * 2, stream);
    }
    if (e == cudaSuccess) {
        pack_wgmma_weights<<<grid_for(kmat_total), 256, 0, stream>>>(kernels, first_filter, out.filters, a.p, flip,
                                                                     kmat, kmat_total);
        e = cudaGetLastError();
    }
    if (e == cudaSuccess) {
        static_cast<ImplicitProblem<Out> &>(a) =
            implicit_problem(img, in_w, in_h, kernels, kmat, out, out_height, a.p.npx, a.p.tile_h);
        // One block per SM (the stages take most of its shared memory), shared among
        // the filter blocks; each block walks its tiles.
        const int blocks_x = std::max(1, std::min(a.tiles, d.sms / filter_blocks));
        e = launch_npx(a, blocks_x, filter_blocks, stream);
    }
    return free_async(e, {packed, kmat}, stream);
}

template cudaError_t launch_implicit_wgmma_f16<float>(const Tensor3<__half> &, int, int, const Kernels<__half> &, int,
                                                      bool, const OutputView<float> &, int, cudaStream_t);
template cudaError_t launch_implicit_wgmma_f16<__half>(const Tensor3<__half> &, int, int, const Kernels<__half> &, int,
                                                       bool, const OutputView<__half> &, int, cudaStream_t);

}  // namespace halconv::mc
