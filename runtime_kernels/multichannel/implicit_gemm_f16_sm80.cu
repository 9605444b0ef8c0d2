// Implicit GEMM for multi-channel convolution (see implicit_gemm.cuh): f16 operands on
// tensor cores (mma.sync m16n8k16, f32 accumulation), the column matrix read from the
// image patch in shared memory instead of a column buffer.
//
// A block owns a filter block (blockIdx.y, BN filters) and walks output tiles of 64 x 8
// pixels with a grid stride; a warp computes MT m16 fragments (16 MT pixels of one row)
// by the BN filters: MT = 4 (8 warps) for BN <= 32, MT = 2 (16 warps) for BN = 64, whose
// 64 x 64 warp tile would not fit the register file without spills. Walking tiles lets
// weights that fit stay in shared memory for all of a block's tiles (`resident`). Per
// tile it runs the plan's steps; the patch (and the weights, when not resident) of the next step are
// copied with cp.async into the other of two stages while the current one is multiplied.
// Shared memory holds only what the copies wrote (cp.async zero-fills past the image and
// past C), and taps past the kernel are skipped or masked, so no value outside the true
// support of an output is ever multiplied, not even by a zero weight (Inf * 0 is NaN).
#include <algorithm>
#include <cstdint>
#include <limits>

#include "common/async_copy.cuh"
#include "common/extern_call.cuh"
#include "common/mma_sync.cuh"
#include "multichannel/implicit_gemm.cuh"

namespace halconv::rk::mc {
namespace {

using rk::cp_async_commit;
using rk::cp_async_zfill;
using rk::ldmatrix_pitch;
using rk::shared_address;
using rk::store_pair;

__device__ inline uint32_t lds32(const __half *p) {
    return *reinterpret_cast<const uint32_t *>(p);
}

constexpr int tile_w = implicit_tile_width;
constexpr int tile_h = implicit_tile_height;

// m16 fragments per warp and threads per block of a filter-block width.
template <int BN>
constexpr int warp_fragments = BN == 64 ? 2 : 4;
template <int BN>
constexpr int block_threads = tile_h *(4 / warp_fragments<BN>)*32;

template <typename Out>
struct ImplicitArgs : ImplicitProblem<Out> {
    int padded_filters;  // kmat is [step][padded_filters][k_len]
    ImplicitPlan p;
};

// CPIX: channels per staged pixel in dense mode, 0 in chunked mode.
template <int BN, int CPIX, typename Out>
__global__ void __launch_bounds__(block_threads<BN>, 1) implicit_gemm_kernel(const ImplicitArgs<Out> a) {
    constexpr bool dense = CPIX > 0;
    constexpr int NT = BN / 8;  // n8 fragments per warp
    constexpr int MT = warp_fragments<BN>;
    constexpr int threads = block_threads<BN>;
    extern __shared__ __align__(128) unsigned char smem_raw[];
    __half *const smem = reinterpret_cast<__half *>(smem_raw);
    const ImplicitPlan &p = a.p;
    const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31, g = lane >> 2, t = lane & 3;
    // This warp's output row in the tile and first pixel in the row.
    const int wy = warp / (4 / MT), px0 = (warp % (4 / MT)) * MT * 16;
    const int steps = p.steps;
    const int stage_halfs = p.halo_halfs + (p.resident ? 0 : p.weight_halfs);
    __half *const resident_w = smem;
    __half *const stages = smem + (p.resident ? steps * p.weight_halfs : 0);
    const int nb = blockIdx.y;
    const int my_tiles = (a.tiles - int(blockIdx.x) + int(gridDim.x) - 1) / int(gridDim.x);
    const int items = my_tiles * steps;

    const auto load_weights = [&](int s, __half *dst) {
        const int vecs = p.k_len / 8;
        const __half *src = a.kmat + (int64_t(s) * a.padded_filters + nb * BN) * p.k_len;
        for (int i = threadIdx.x; i < BN * vecs; i += threads) {
            const int n = i / vecs, v = i - n * vecs;
            cp_async_zfill<16>(shared_address(dst + n * p.weight_pitch + 8 * v), src + int64_t(n) * p.k_len + 8 * v,
                               16);
        }
    };
    const auto load = [&](int item, int buf) {
        const int tile = int(blockIdx.x) + (item / steps) * int(gridDim.x), s = item % steps;
        const int cc = s % p.chunks_c, r = s / p.chunks_c, cx = r % p.chunks_x, cy = r / p.chunks_x;
        const int ty = tile / a.tiles_x, tx = tile - ty * a.tiles_x;
        const int gx0 = tx * tile_w + cx * p.kxn, gy0 = ty * tile_h + cy * p.kyn;
        __half *const halo = stages + buf * stage_halfs;
        const uint32_t hs = shared_address(halo);
        if constexpr (dense) {
            const int n = p.halo_rows * p.halo_cols, bytes = a.channels * 2;
            for (int i = threadIdx.x; i < n; i += threads) {
                const int row = i / p.halo_cols, col = i - row * p.halo_cols;
                const int gx = gx0 + col, gy = gy0 + row;
                const bool in = gx < a.in_w && gy < a.in_h;
                const __half *src = in ? a.image + gy * a.sy + gx * a.sx : a.image;
                cp_async_zfill<CPIX * 2>(hs + (row * p.halo_row_pitch + col * CPIX) * 2, src, in ? bytes : 0);
            }
        } else {
            const int vecs = p.cpix / 8, n = p.halo_rows * p.halo_cols * vecs, c0 = cc * p.cpix;
            for (int i = threadIdx.x; i < n; i += threads) {
                const int pix = i / vecs, v = i - pix * vecs, row = pix / p.halo_cols, col = pix - row * p.halo_cols;
                const int gx = gx0 + col, gy = gy0 + row, c = c0 + 8 * v;
                const int valid = min(max(a.channels - c, 0), 8);
                const bool in = gx < a.in_w && gy < a.in_h && valid > 0;
                const __half *src = in ? a.image + gy * a.sy + gx * a.sx + c : a.image;
                cp_async_zfill<16>(hs + (row * p.halo_row_pitch + col * p.pixel_pitch + 8 * v) * 2, src,
                                   in ? valid * 2 : 0);
            }
        }
        if (!p.resident) {
            load_weights(s, halo + p.halo_halfs);
        }
    };

    float acc[MT][NT][4];
    const auto clear = [&] {
#pragma unroll
        for (int m = 0; m < MT; m++) {
#pragma unroll
            for (int j = 0; j < NT; j++) {
#pragma unroll
                for (int e = 0; e < 4; e++) {
                    acc[m][j][e] = 0.f;
                }
            }
        }
    };
    // One k16 slice: B fragments of the BN filters at k offset kk, then 4 x NT products.
    const auto multiply = [&](const uint32_t(&af)[MT][4], uint32_t w_lane, int kk) {
        uint32_t b[NT][2];
#pragma unroll
        for (int j = 0; j < NT / 2; j++) {
            uint32_t r[4];
            rk::ldmatrix_x4(r, w_lane + (j * 16 * p.weight_pitch + kk) * 2);
            b[2 * j][0] = r[0];
            b[2 * j][1] = r[1];
            b[2 * j + 1][0] = r[2];
            b[2 * j + 1][1] = r[3];
        }
#pragma unroll
        for (int m = 0; m < MT; m++) {
#pragma unroll
            for (int j = 0; j < NT; j++) {
                rk::mma_m16n8k16(acc[m][j], af[m], b[j][0], b[j][1]);
            }
        }
    };
    const auto compute = [&](int item, int buf) {
        const int s = item % steps;
        const int r = s / p.chunks_c, cx = r % p.chunks_x, cy = r / p.chunks_x;
        const int kyv = min(p.kyn, a.kh - cy * p.kyn), kxv = min(p.kxn, a.kw - cx * p.kxn);
        const __half *halo = stages + buf * stage_halfs;
        const __half *w = p.resident ? resident_w + s * p.weight_halfs : halo + p.halo_halfs;
        // ldmatrix rows of a pair of n8 fragments: filters (lane / 16) 8 + lane % 8, k
        // offset 8 for lanes 8..15 and 24..31.
        const uint32_t w_lane =
            shared_address(w + ((lane >> 4) * 8 + (lane & 7)) * p.weight_pitch + ((lane >> 3) & 1) * 8);
        if constexpr (dense) {
            // A(pixel, k) of kernel row ky is the patch row's halfs from pixel * CPIX on;
            // k pairs past the valid taps are zeroed instead of read.
            const int valid = kxv * CPIX;
            for (int ky = 0; ky < kyv; ky++) {
                const __half *row = halo + (wy + ky) * p.halo_row_pitch + (px0 + g) * CPIX + 2 * t;
                for (int k0 = 0; k0 < valid; k0 += 16) {
                    const bool lo = k0 + 2 * t < valid, hi = k0 + 2 * t + 8 < valid;
                    uint32_t af[MT][4];
#pragma unroll
                    for (int m = 0; m < MT; m++) {
                        const __half *q = row + 16 * m * CPIX + k0;
                        af[m][0] = lo ? lds32(q) : 0u;
                        af[m][1] = lo ? lds32(q + 8 * CPIX) : 0u;
                        af[m][2] = hi ? lds32(q + 8) : 0u;
                        af[m][3] = hi ? lds32(q + 8 * CPIX + 8) : 0u;
                    }
                    multiply(af, w_lane, ky * p.k_row + k0);
                }
            }
        } else {
            // ldmatrix rows: pixel lane % 16 of the fragment, channels 8 (lane / 16) on.
            const uint32_t a_lane =
                shared_address(halo + wy * p.halo_row_pitch + (px0 + (lane & 15)) * p.pixel_pitch + (lane >> 4) * 8);
            for (int ky = 0; ky < kyv; ky++) {
                for (int kx = 0; kx < kxv; kx++) {
                    for (int k0 = 0; k0 < p.cpix; k0 += 16) {
                        uint32_t af[MT][4];
#pragma unroll
                        for (int m = 0; m < MT; m++) {
                            rk::ldmatrix_x4(af[m],
                                            a_lane + (ky * p.halo_row_pitch + (kx + 16 * m) * p.pixel_pitch + k0) * 2);
                        }
                        multiply(af, w_lane, (ky * p.kxn + kx) * p.cpix + k0);
                    }
                }
            }
        }
    };
    const auto epilogue = [&](int tile) {
        const int ty = tile / a.tiles_x, tx = tile - ty * a.tiles_x, y = ty * tile_h + wy;
        if (y >= a.out_h) {
            return;
        }
#pragma unroll
        for (int m = 0; m < MT; m++) {
#pragma unroll
            for (int h = 0; h < 2; h++) {
                const int x = tx * tile_w + px0 + 16 * m + g + 8 * h;
                if (x < a.out_w) {
                    Out *o = a.out + y * a.osy + x * a.osx;
#pragma unroll
                    for (int j = 0; j < NT; j++) {
                        const int n = nb * BN + j * 8 + 2 * t;
                        const float v0 = acc[m][j][2 * h], v1 = acc[m][j][2 * h + 1];
                        if (a.vector_outputs >= 2 && n + 1 < a.filters) {
                            store_pair<Out>(o + n, v0, v1);
                        } else {
                            if (n < a.filters) {
                                o[n] = rk::to_output<Out>(v0);
                            }
                            if (n + 1 < a.filters) {
                                o[n + 1] = rk::to_output<Out>(v1);
                            }
                        }
                    }
                }
            }
        }
    };

    clear();
    if (p.resident) {
        for (int s = 0; s < steps; s++) {
            load_weights(s, resident_w + s * p.weight_halfs);
        }
    }
    load(0, 0);
    cp_async_commit();
    for (int i = 0; i < items; i++) {
        if (i + 1 < items) {
            load(i + 1, (i + 1) & 1);
        }
        cp_async_commit();
        rk::cp_async_wait<1>();
        __syncthreads();
        compute(i, i & 1);
        if (i % steps == steps - 1) {
            epilogue(int(blockIdx.x) + (i / steps) * int(gridDim.x));
            clear();
        }
        // The next iteration's copies overwrite the stage just read.
        __syncthreads();
    }
}

// kmat[s][n][kk]: the weights of step s in the k order the kernel multiplies them.
__global__ void pack_implicit_weights(Kernels<__half> k, int first_filter, int filters, int padded_filters,
                                      ImplicitPlan p, bool flip, __half *kmat, int64_t total) {
    for (int64_t e = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; e < total; e += int64_t(gridDim.x) * blockDim.x) {
        const int kk = int(e % p.k_len);
        const int64_t rest = e / p.k_len;
        const int n = int(rest % padded_filters), s = int(rest / padded_filters);
        const int cc = s % p.chunks_c, r = s / p.chunks_c, cx = r % p.chunks_x, cy = r / p.chunks_x;
        const int ky = kk / p.k_row, j = kk - ky * p.k_row, kx = j / p.cpix;
        const int c = (p.dense ? 0 : cc * p.cpix) + j - kx * p.cpix;
        const int gx = cx * p.kxn + kx, gy = cy * p.kyn + ky;
        __half v = __float2half_rn(0.f);
        if (n < filters && kx < p.kxn && gx < k.width && gy < k.height && c < k.channels) {
            const int sx = flip ? k.width - 1 - gx : gx, sy = flip ? k.height - 1 - gy : gy;
            v = k.data[c * k.stride[0] + sx * k.stride[1] + sy * k.stride[2] + (first_filter + n) * k.stride[3]];
        }
        kmat[e] = v;
    }
}

template <int BN, int CPIX, typename Out>
cudaError_t launch_with(const ImplicitArgs<Out> &a, int sms, cudaStream_t stream) {
    const auto kernel = implicit_gemm_kernel<BN, CPIX, Out>;
    cudaError_t e = cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, a.p.smem_bytes);
    int per_sm = 0;
    if (e == cudaSuccess) {
        e = cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel, block_threads<BN>, a.p.smem_bytes);
    }
    if (e != cudaSuccess) {
        return e;
    }
    const dim3 grid(std::min(a.tiles, sms * std::max(per_sm, 1)), a.padded_filters / BN);
    kernel<<<grid, block_threads<BN>, a.p.smem_bytes, stream>>>(a);
    return cudaGetLastError();
}

template <int BN, typename Out>
cudaError_t launch_cpix(const ImplicitArgs<Out> &a, int sms, cudaStream_t stream) {
    if (!a.p.dense) {
        return launch_with<BN, 0>(a, sms, stream);
    }
    switch (a.p.cpix) {
        case 2:
            return launch_with<BN, 2>(a, sms, stream);
        case 4:
            return launch_with<BN, 4>(a, sms, stream);
        default:
            return launch_with<BN, 8>(a, sms, stream);
    }
}

// The image region with each pixel's channels padded with zeros to `pitch` halfs, rows
// dense: the layout the kernels' aligned copies need.
__global__ void repack_image(Tensor3<__half> in, int w, int pitch, __half *out, int64_t total) {
    for (int64_t e = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; e < total; e += int64_t(gridDim.x) * blockDim.x) {
        const int c = int(e % pitch);
        const int64_t pix = e / pitch;
        const int y = int(pix / w), x = int(pix - int64_t(y) * w);
        out[e] = c < in.channels ? in.data[y * in.sy + x * in.sx + c] : __float2half_rn(0.f);
    }
}

}  // namespace

cudaError_t aligned_image(const Tensor3<__half> &image, int in_w, int in_h, int align, Tensor3<__half> *img,
                          Scratch &scratch, cudaStream_t stream) {
    *img = image;
    if (image.sx % align == 0 && image.sy % align == 0 && reinterpret_cast<uintptr_t>(image.data) % (2 * align) == 0) {
        return cudaSuccess;
    }
    const int pitch = contract::implicit_gemm_channel_pitch(image.channels);
    const int64_t total = int64_t(in_w) * in_h * pitch;
    __half *copy = nullptr;
    cudaError_t e = scratch.take(size_t(total) * 2, &copy);
    if (e == cudaSuccess) {
        repack_image<<<grid_for(total), 256, 0, stream>>>(image, in_w, pitch, copy, total);
        e = cudaGetLastError();
        *img = {copy, image.channels, pitch, int64_t(in_w) * pitch};
    }
    return e;
}

ImplicitPlan plan_implicit(int channels, int kw, int kh, int filters, size_t smem_limit) {
    const bool dense = channels <= 8;
    const int bn = gemm_f16_block_filters(filters);
    ImplicitPlan best{};
    double best_cost = std::numeric_limits<double>::infinity();
    for (int cc : {16, 32, 64, 2, 4, 8}) {
        if (dense ? cc != contract::implicit_gemm_channel_pitch(channels) : (cc < 16 || cc > round_up(channels, 16))) {
            continue;
        }
        for (int kyn = 1; kyn <= kh; kyn++) {
            for (int kxn = 1; kxn <= kw; kxn++) {
                ImplicitPlan q{};
                q.dense = dense;
                q.block_filters = bn;
                q.cpix = cc;
                q.pixel_pitch = dense ? cc : ldmatrix_pitch(cc);
                q.kyn = kyn;
                q.kxn = kxn;
                q.chunks_c = dense ? 1 : (channels + cc - 1) / cc;
                q.chunks_y = (kh + kyn - 1) / kyn;
                q.chunks_x = (kw + kxn - 1) / kxn;
                q.steps = q.chunks_c * q.chunks_y * q.chunks_x;
                q.k_row = dense ? round_up(kxn * cc, 16) : kxn * cc;
                q.k_len = kyn * q.k_row;
                q.weight_pitch = ldmatrix_pitch(q.k_len);
                q.halo_rows = tile_h + kyn - 1;
                q.halo_cols = tile_w + kxn - 1;
                q.halo_row_pitch = q.halo_cols * q.pixel_pitch;
                q.halo_halfs = round_up(q.halo_rows * q.halo_row_pitch, 64);
                q.weight_halfs = round_up(bn * q.weight_pitch, 64);
                const size_t resident_bytes = (size_t(q.steps) * q.weight_halfs + 2 * size_t(q.halo_halfs)) * 2;
                const size_t staged_bytes = 2 * (size_t(q.halo_halfs) + q.weight_halfs) * 2;
                if (resident_bytes <= smem_limit) {
                    q.resident = true;
                    q.smem_bytes = int(resident_bytes);
                } else if (staged_bytes <= smem_limit) {
                    q.smem_bytes = int(staged_bytes);
                } else {
                    continue;
                }
                // Per tile: bytes copied into shared memory, plus the tensor work of the
                // padded k (about 27 flops take as long as a byte from L2 on an H100 SM),
                // plus a fixed cost per step (two barriers, the pipeline turn).
                const double copied = double(q.steps) * q.halo_rows * q.halo_cols * cc * 2 +
                                      (q.resident ? 0.0 : double(q.steps) * bn * q.k_len * 2);
                const double k_total = dense ? double(kh) * q.chunks_x * q.k_row : double(q.chunks_c) * cc * kw * kh;
                const double flops = 2.0 * tile_w * tile_h * bn * k_total;
                const double cost = copied + flops / 27 + q.steps * 2048.0;
                if (cost < best_cost) {
                    best_cost = cost;
                    best = q;
                }
            }
        }
    }
    return best;
}

int64_t implicit_weight_halfs(const ImplicitPlan &p, int filters) {
    return int64_t(p.steps) * round_up(filters, p.block_filters) * p.k_len;
}

size_t implicit_gemm_scratch_bytes(int channels, int kw, int kh, int filters, int out_w, int out_h, int out_bytes) {
    DeviceFacts d;
    if (device_facts(&d) != cudaSuccess) {
        return 0;
    }
    const size_t copy =
        size_t(out_w + kw - 1) * size_t(out_h + kh - 1) * size_t(contract::implicit_gemm_channel_pitch(channels)) * 2;
    size_t weights = implicit_wgmma_weight_bytes(d, channels, kw, kh, filters, out_w, out_h, out_bytes);
    if (weights == 0) {
        const ImplicitPlan p = plan_implicit(channels, kw, kh, filters, size_t(d.smem_limit));
        weights = size_t(implicit_weight_halfs(p, filters)) * 2;
    }
    return scratch_bytes({copy, weights});
}

template <typename Out>
cudaError_t launch_implicit_gemm_f16(const Tensor3<__half> &image, int in_w, int in_h, const Kernels<__half> &kernels,
                                     int first_filter, bool flip, const OutputView<Out> &out, int out_height,
                                     Scratch &scratch, cudaStream_t stream) {
    DeviceFacts d;
    cudaError_t e = device_facts(&d);
    if (e != cudaSuccess) {
        return e;
    }
    ImplicitArgs<Out> a{};
    a.p = plan_implicit(kernels.channels, kernels.width, kernels.height, out.filters, size_t(d.smem_limit));
    if (a.p.steps == 0) {
        return cudaErrorInvalidConfiguration;  // not even one tap of 16 channels fits
    }
    const int bn = a.p.block_filters;
    // The copies read 2 cpix bytes (dense) or 16 bytes (chunked) per load.
    __half *kmat = nullptr;
    Tensor3<__half> img{};
    e = aligned_image(image, in_w, in_h, a.p.dense ? a.p.cpix : 8, &img, scratch, stream);
    a.padded_filters = round_up(out.filters, bn);
    const int64_t kmat_total = implicit_weight_halfs(a.p, out.filters);
    if (e == cudaSuccess) {
        e = scratch.take(size_t(kmat_total) * 2, &kmat);
    }
    if (e == cudaSuccess) {
        pack_implicit_weights<<<grid_for(kmat_total), 256, 0, stream>>>(kernels, first_filter, out.filters,
                                                                        a.padded_filters, a.p, flip, kmat, kmat_total);
        e = cudaGetLastError();
    }
    if (e == cudaSuccess) {
        static_cast<ImplicitProblem<Out> &>(a) =
            implicit_problem(img, in_w, in_h, kernels, kmat, out, out_height, tile_w, tile_h);
        switch (bn) {
            case 16:
                e = launch_cpix<16>(a, d.sms, stream);
                break;
            case 32:
                e = launch_cpix<32>(a, d.sms, stream);
                break;
            default:
                e = launch_cpix<64>(a, d.sms, stream);
        }
    }
    return e;
}

template cudaError_t launch_implicit_gemm_f16<float>(const Tensor3<__half> &, int, int, const Kernels<__half> &, int,
                                                     bool, const OutputView<float> &, int, Scratch &, cudaStream_t);
template cudaError_t launch_implicit_gemm_f16<__half>(const Tensor3<__half> &, int, int, const Kernels<__half> &, int,
                                                      bool, const OutputView<__half> &, int, Scratch &, cudaStream_t);

}  // namespace halconv::rk::mc
