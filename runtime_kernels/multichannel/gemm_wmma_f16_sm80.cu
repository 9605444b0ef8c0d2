// The GEMM of im2col on tensor cores: out(n, p) = sum_k col(k, p) kmat(n, k), f16
// operands, f32 accumulation (WMMA m16n16k16), f32 or f16 result.
//
// A block computes 128 pixels x BN filters (BN = 16, 32 or 64, from the filter count, so
// few filters do not pay for 64 columns of tensor work); warp w owns pixels 16w .. 16w+15
// and all BN filters (BN / 16 accumulators). The k loop stages 32 rows of the column
// buffer (A, read as col_major: pixels are contiguous) and 32 columns of kmat (B,
// col_major: k contiguous) per step in two shared-memory stages, the next step's tiles
// loaded to registers (16-byte loads) before the tensor-core work on the current one:
// one barrier per step. The epilogue goes through shared memory so that any output
// strides (and the pixel and filter edges) are handled with consecutive lanes on
// consecutive filters.
#include <mma.h>

#include "common/extern_call.cuh"
#include "multichannel/im2col.cuh"

namespace halconv::rk::mc {
namespace {

using namespace nvcuda;

constexpr int block_pixels = pixel_block;  // BM
constexpr int k_step = gemm_k_step;        // BK
constexpr int warps = block_pixels / 16;
constexpr int threads = warps * 32;
// Shared-memory pitches in halfs: multiples of 8 (WMMA's ldm for f16) that are not
// multiples of 64, so consecutive rows start in different banks.
constexpr int lda = block_pixels + 8;
constexpr int ldb = k_step + 8;

template <int BN>
struct GemmShape {
    static constexpr int ldc = BN + 4;  // f32 epilogue pitch
    static constexpr int stage_halfs = k_step * lda + BN * ldb;
    static constexpr int operand_bytes = 2 * stage_halfs * 2;
    static constexpr int epilogue_bytes = warps * 16 * ldc * 4;
    static constexpr int smem_bytes = operand_bytes > epilogue_bytes ? operand_bytes : epilogue_bytes;
    static constexpr int a_loads = k_step * block_pixels / 8 / threads;  // uint4 per thread
    static constexpr int b_loads = BN * k_step / 8;                      // uint4 per block
};

template <int BN, typename Out>
__global__ void __launch_bounds__(threads)
    gemm_f16_kernel(const __half *col, const __half *kmat, TileGeometry g, OutputView<Out> out) {
    using S = GemmShape<BN>;
    __shared__ __align__(128) unsigned char smem[S::smem_bytes];
    __half *stage_base = reinterpret_cast<__half *>(smem);
    const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
    const int m0 = blockIdx.x * block_pixels, n0 = blockIdx.y * BN;

    uint4 ra[S::a_loads];
    uint4 rb;
    const auto load = [&](int k0) {
#pragma unroll
        for (int i = 0; i < S::a_loads; i++) {
            const int e = threadIdx.x + i * threads, row = e / (block_pixels / 8), c = e % (block_pixels / 8);
            ra[i] = __ldg(reinterpret_cast<const uint4 *>(col + int64_t(k0 + row) * g.pitch + m0 + 8 * c));
        }
        if (threadIdx.x < S::b_loads) {
            const int row = threadIdx.x / (k_step / 8), c = threadIdx.x % (k_step / 8);
            rb = __ldg(reinterpret_cast<const uint4 *>(kmat + int64_t(n0 + row) * g.padded_rows + k0 + 8 * c));
        }
    };
    const auto store = [&](int stage) {
        __half *as = stage_base + stage * S::stage_halfs, *bs = as + k_step * lda;
#pragma unroll
        for (int i = 0; i < S::a_loads; i++) {
            const int e = threadIdx.x + i * threads, row = e / (block_pixels / 8), c = e % (block_pixels / 8);
            *reinterpret_cast<uint4 *>(as + row * lda + 8 * c) = ra[i];
        }
        if (threadIdx.x < S::b_loads) {
            const int row = threadIdx.x / (k_step / 8), c = threadIdx.x % (k_step / 8);
            *reinterpret_cast<uint4 *>(bs + row * ldb + 8 * c) = rb;
        }
    };

    wmma::fragment<wmma::accumulator, 16, 16, 16, float> acc[BN / 16];
#pragma unroll
    for (int j = 0; j < BN / 16; j++) {
        wmma::fill_fragment(acc[j], 0.f);
    }
    const int steps = g.padded_rows / k_step;
    load(0);
    store(0);
    __syncthreads();
    for (int s = 0; s < steps; s++) {
        if (s + 1 < steps) {
            load((s + 1) * k_step);
        }
        const __half *as = stage_base + (s & 1) * S::stage_halfs, *bs = as + k_step * lda;
#pragma unroll
        for (int kk = 0; kk < k_step; kk += 16) {
            wmma::fragment<wmma::matrix_a, 16, 16, 16, __half, wmma::col_major> fa;
            wmma::load_matrix_sync(fa, as + kk * lda + warp * 16, lda);
#pragma unroll
            for (int j = 0; j < BN / 16; j++) {
                wmma::fragment<wmma::matrix_b, 16, 16, 16, __half, wmma::col_major> fb;
                wmma::load_matrix_sync(fb, bs + j * 16 * ldb + kk, ldb);
                wmma::mma_sync(acc[j], fa, fb, acc[j]);
            }
        }
        if (s + 1 < steps) {
            store((s + 1) & 1);
        }
        __syncthreads();
    }

    float *tile = reinterpret_cast<float *>(smem) + warp * 16 * S::ldc;
#pragma unroll
    for (int j = 0; j < BN / 16; j++) {
        wmma::store_matrix_sync(tile + j * 16, acc[j], S::ldc, wmma::mem_row_major);
    }
    __syncwarp();
    // Lane l writes filters l, l + 32, ... of rows (pixels) i; one division per row.
    constexpr int lanes_per_row = BN < 32 ? BN : 32, rows_per_pass = 32 / lanes_per_row;
    const int n = lane % lanes_per_row;
    for (int i = lane / lanes_per_row; i < 16; i += rows_per_pass) {
        const int local = m0 + warp * 16 + i;
        if (local >= g.pixels) {
            break;
        }
        const int p = g.pixel0 + local, y = p / out.width, x = p - y * out.width;
        Out *row = out.data + int64_t(y) * out.sy + int64_t(x) * out.sx + n0;
#pragma unroll
        for (int j = n; j < BN; j += lanes_per_row) {
            if (n0 + j < out.filters) {
                row[j] = rk::to_output<Out>(tile[i * S::ldc + j]);
            }
        }
    }
}

}  // namespace

int gemm_f16_block_filters(int filters) {
    return filters <= 16 ? 16 : (filters <= 32 ? 32 : 64);
}

template <typename Out>
cudaError_t launch_gemm_f16(const __half *col, const __half *kmat, const TileGeometry &g, const OutputView<Out> &out,
                            cudaStream_t stream) {
    const int bn = gemm_f16_block_filters(out.filters);
    const dim3 grid(g.pitch / block_pixels, (out.filters + bn - 1) / bn);
    switch (bn) {
        case 16:
            gemm_f16_kernel<16, Out><<<grid, threads, 0, stream>>>(col, kmat, g, out);
            break;
        case 32:
            gemm_f16_kernel<32, Out><<<grid, threads, 0, stream>>>(col, kmat, g, out);
            break;
        default:
            gemm_f16_kernel<64, Out><<<grid, threads, 0, stream>>>(col, kmat, g, out);
    }
    return cudaGetLastError();
}

template cudaError_t launch_gemm_f16<float>(const __half *, const __half *, const TileGeometry &,
                                            const OutputView<float> &, cudaStream_t);
template cudaError_t launch_gemm_f16<__half>(const __half *, const __half *, const TileGeometry &,
                                             const OutputView<__half> &, cudaStream_t);

}  // namespace halconv::rk::mc
