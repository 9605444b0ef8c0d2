// im2tensor, basic (seed 000 Algorithm 1): two kernels. The first computes the
// matrix-tensor product P_k = K^T S_k on tensor cores (WMMA m16n16k16, f16 in, f32
// accumulate) without building S: each output row k reads image rows k .. k+kh-1 staged
// in shared memory. P is stored whole in global memory (f32). The second sums P along
// its diagonals (Tr+) into the output. P takes padded(kw) x padded(W) floats per output
// row, so the rows are processed in bands that bound P to band_bytes.
#include <algorithm>

#include "common/workspace.h"
#include "single_channel/halconv_tc.h"
#include "single_channel/im2tensor_common.cuh"

namespace halconv::rk::tc {
namespace {

using namespace nvcuda;

constexpr int band_rows_per_block = warps_per_block;  // one output row per warp
constexpr int chunks_per_block = 8;                   // 128 image columns
constexpr size_t band_bytes = size_t(256) << 20;

struct BasicParams {
    Problem io;
    int na, nb;     // kernel column / row fragments
    int ldk;        // padded kernel pitch (halfs)
    int pitch;      // staged tile pitch (halfs)
    int p_width;    // P columns: padded image width
    int band0;      // first output row of the band
    int band_rows;  // output rows in the band
    float *p;       // P[(row - band0) * 16na + x][c]
};

__global__ void __launch_bounds__(threads_per_block) product_kernel(BasicParams p) {
    extern __shared__ __align__(128) unsigned char smem[];
    const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
    const int rows = band_rows_per_block + p.nb * frag;
    const int cols = chunks_per_block * frag;
    __half *ks = reinterpret_cast<__half *>(smem);
    __half *tile = ks + p.nb * frag * p.ldk;
    const int k_local0 = blockIdx.y * band_rows_per_block;
    const int row0 = p.band0 + k_local0, col0 = blockIdx.x * cols;

    stage_kernel(ks, p.ldk, p.nb * frag, p.io.ker, p.io.flip);
    bool bad = false;
    const uint16_t *src = reinterpret_cast<const uint16_t *>(p.io.img.data);
    for (int e = threadIdx.x; e < rows * cols; e += blockDim.x) {
        const int r = e / cols, c = e - r * cols;
        const int y = row0 + r, x = col0 + c;
        const uint16_t v =
            (y < p.io.img.height && x < p.io.img.width) ? __ldg(src + int64_t(y) * p.io.img.stride + x) : 0;
        reinterpret_cast<uint16_t *>(tile)[r * p.pitch + c] = v;
        bad |= nonfinite_bits(v);
    }
    const bool exact = __syncthreads_or(bad) != 0;

    const int k_local = k_local0 + warp;
    if (k_local >= p.band_rows) {
        return;
    }
    const int p_rows = p.na * frag;
    for (int q = 0; q < chunks_per_block; q++) {
        const int c0 = col0 + q * frag;
        if (c0 >= p.p_width) {
            break;
        }
        for (int a = 0; a < p.na; a++) {
            float *dst = p.p + (int64_t(k_local) * p_rows + a * frag) * p.p_width + c0;
            if (exact) {
                // Zero-padded taps would meet Inf as 0 * Inf = NaN: only real taps here.
                for (int e = lane; e < frag * frag; e += 32) {
                    const int i = e >> 4, c = e & 15, x = a * frag + i;
                    float s = 0.f;
                    for (int y = 0; x < p.io.ker.width && y < p.io.ker.height; y++) {
                        s += __half2float(ks[y * p.ldk + x]) * __half2float(tile[(warp + y) * p.pitch + q * frag + c]);
                    }
                    dst[int64_t(i) * p.p_width + c] = s;
                }
                continue;
            }
            wmma::fragment<wmma::accumulator, 16, 16, 16, float> acc;
            wmma::fill_fragment(acc, 0.f);
            for (int b = 0; b < p.nb; b++) {
                wmma::fragment<wmma::matrix_a, 16, 16, 16, __half, wmma::col_major> fa;
                wmma::fragment<wmma::matrix_b, 16, 16, 16, __half, wmma::row_major> fb;
                wmma::load_matrix_sync(fa, ks + b * frag * p.ldk + a * frag, p.ldk);
                wmma::load_matrix_sync(fb, tile + (warp + b * frag) * p.pitch + q * frag, p.pitch);
                wmma::mma_sync(acc, fa, fb, acc);
            }
            wmma::store_matrix_sync(dst, acc, p.p_width, wmma::mem_row_major);
        }
    }
}

// Tr+: R(j, k) = sum_{x < kw} P_k(x, j + x); consecutive threads read consecutive columns.
template <typename Out>
__global__ void diagonal_sum_kernel(BasicParams p) {
    const int j = blockIdx.x * blockDim.x + threadIdx.x;
    const int k_local = blockIdx.y;
    if (j >= p.io.out_width) {
        return;
    }
    const float *row = p.p + int64_t(k_local) * p.na * frag * p.p_width + j;
    float s = 0.f;
    for (int x = 0; x < p.io.ker.width; x++) {
        s += row[int64_t(x) * p.p_width + x];
    }
    p.io.store<Out>(j, p.band0 + k_local, s);
}

// P's rows per band and bytes per output row for an out_width x out_height output and a
// kw x kh kernel: whole blocks of rows, no more than the output has, within the grid's
// y limit, P within band_bytes.
struct Band {
    int rows;
    size_t row_bytes;
};
Band band_of(int out_width, int out_height, int kw) {
    const int na = (kw + frag - 1) / frag;
    const int p_width = (out_width + kw - 1 + frag - 1) / frag * frag;
    const size_t row_bytes = size_t(na) * frag * p_width * sizeof(float);
    int band = int(std::max<size_t>(1, band_bytes / row_bytes));
    band = std::min({std::max(band / band_rows_per_block, 1) * band_rows_per_block,
                     (out_height + band_rows_per_block - 1) / band_rows_per_block * band_rows_per_block,
                     65535 / band_rows_per_block * band_rows_per_block});
    return {band, row_bytes};
}

template <typename Out>
int run(void *uc, halide_buffer_t *in, halide_buffer_t *kernel, bool flip, halide_buffer_t *out, const char *name) {
    if (in->dimensions == 3) {
        return for_each_image(uc, name, in, kernel, out, [&](halide_buffer_t *image, halide_buffer_t *result) {
            return run<Out>(uc, image, kernel, flip, result, name);
        });
    }
    ExternCall call;
    const int status = prepare_extern_call(uc, in, kernel, flip, out, output_type<Out>(), name, &call);
    if (status != 0) {
        return status < 0 ? 0 : status;
    }
    BasicParams p{};
    p.io = call.problem;
    p.na = (p.io.ker.width + frag - 1) / frag;
    p.nb = (p.io.ker.height + frag - 1) / frag;
    p.ldk = odd_fragment_multiple(p.na * frag);
    p.pitch = odd_fragment_multiple(chunks_per_block * frag);
    p.p_width = (p.io.img.width + frag - 1) / frag * frag;
    const int out_height = p.io.out_height;
    const Band band = band_of(p.io.out_width, out_height, p.io.ker.width);
    const size_t smem = size_t(p.nb * frag * p.ldk + (band_rows_per_block + p.nb * frag) * p.pitch) * sizeof(__half);

    cudaError_t e = allow_opt_in_shared_memory<product_kernel>();
    if (e != cudaSuccess) {
        return report_cuda_error(uc, name, "raising the shared-memory limit", e);
    }
    rk::Scratch scratch(call.stream);
    e = scratch.take(size_t(band.rows) * band.row_bytes, &p.p);
    if (e != cudaSuccess) {
        return report_cuda_error(uc, name, "allocating P", e);
    }
    for (p.band0 = 0; p.band0 < out_height && e == cudaSuccess; p.band0 += band.rows) {
        p.band_rows = std::min(band.rows, out_height - p.band0);
        const dim3 grid((p.p_width + chunks_per_block * frag - 1) / (chunks_per_block * frag),
                        (p.band_rows + band_rows_per_block - 1) / band_rows_per_block);
        product_kernel<<<grid, threads_per_block, smem, call.stream>>>(p);
        diagonal_sum_kernel<Out><<<dim3((p.io.out_width + 255) / 256, p.band_rows), 256, 0, call.stream>>>(p);
        e = cudaGetLastError();
    }
    const cudaError_t f = scratch.release();
    e = e == cudaSuccess ? f : e;
    return finish_extern_call(uc, name, "launching the kernels", e, out);
}

}  // namespace

size_t im2tensor_workspace_bytes(int out_width, int out_height, int kernel_width) {
    const Band band = band_of(out_width, out_height, kernel_width);
    return rk::scratch_bytes({size_t(band.rows) * band.row_bytes});
}

}  // namespace halconv::rk::tc

extern "C" {

int halconv_tc_im2tensor_f16f32(halide_buffer_t *in, halide_buffer_t *kernel, bool flip, halide_buffer_t *out) {
    return halconv::rk::tc::run<float>(nullptr, in, kernel, flip, out, "im2tensor");
}
int halconv_tc_im2tensor_f16(halide_buffer_t *in, halide_buffer_t *kernel, bool flip, halide_buffer_t *out) {
    return halconv::rk::tc::run<__half>(nullptr, in, kernel, flip, out, "im2tensor");
}

}  // extern "C"
