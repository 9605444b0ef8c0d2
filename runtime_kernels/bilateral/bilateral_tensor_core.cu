// The bilateral filter on tensor cores as seed 003 formulates it (§III.B): kernel-image-loop
// unrolling, the numerator and the denominator each a matrix product with the spatial
// weights. A warp takes 8 outputs of a row (n of WMMA m32n8k16) and, per window row and
// 16 window columns (k), builds
//   A (32 x 16): row 0 the spatial weights ws(k) of those columns, rows 1 ... 31 zero,
//   B (16 x 8):  B_num(k, n) = wr(k, n) I(q_k,n), B_den(k, n) = wr(k, n),
// so that row 0 of A B_num and A B_den accumulates the 8 outputs' sums (float32). The
// range weights depend on the output (a linear time-variant filter): neighbouring outputs
// share no products, and only row 0 of A does work — why the paper finds tensor cores no
// faster than CUDA cores here; this stage exists to rerun that comparison
// (halconv_bench --report bilateral). Operands float16, sums float32.
#include <cuda_fp16.h>
#include <cuda_runtime.h>
#include <mma.h>

#include <cstdint>

#include "bilateral/halconv_bl.h"
#include "common/extern_call.cuh"

namespace halconv::rk::bl {
namespace {

using namespace nvcuda;

constexpr int pixels = 8;  // n: the outputs a warp computes at a time
constexpr int taps = 16;   // k: window columns per product
constexpr int rows = 32;   // m: only row 0 is used
constexpr int warps = 4;

struct Args {
    const __half *extended;  // output (x, y)'s window starts at extended[y * stride + x]
    int64_t extended_stride;
    float *out;
    int64_t out_stride;
    int width, height;  // of the output
    int radius;
    float spatial_scale;  // -1 / (2 sigma_spatial^2)
    float range_scale;    // -1 / (2 sigma_range^2)
};

__global__ void __launch_bounds__(warps * 32) kernel_image_m32n8k16(const Args p) {
    __shared__ __align__(32) __half a_tiles[warps][rows * taps];
    __shared__ __align__(32) __half b_tiles[warps][2][taps * pixels];  // column-major, leading dimension taps
    __shared__ __align__(32) float c_tiles[warps][2][rows * pixels];
    const int warp = int(threadIdx.x) / 32, lane = int(threadIdx.x) % 32;
    __half *a = a_tiles[warp];
    for (int i = lane; i < rows * taps; i += 32) {
        a[i] = __float2half(0.0f);
    }
    const int groups_per_row = (p.width + pixels - 1) / pixels;
    const int64_t group = int64_t(blockIdx.x) * warps + warp;
    if (group >= int64_t(groups_per_row) * p.height) {
        return;  // the whole warp: the block synchronizes nothing
    }
    const int y = int(group / groups_per_row), x0 = int(group % groups_per_row) * pixels;
    const int window = 2 * p.radius + 1;
    // This lane's entries of B: output n = lane / 4 (one past the right edge computes a
    // copy of the last, not stored), window columns 4 (lane % 4) ... + 3 of the 16.
    const int n = lane / 4, k0 = (lane % 4) * 4;
    const int x = min(x0 + n, p.width - 1);
    const float centre = __half2float(p.extended[int64_t(y + p.radius) * p.extended_stride + x + p.radius]);
    wmma::fragment<wmma::accumulator, rows, pixels, taps, float> num, den;
    wmma::fill_fragment(num, 0.0f);
    wmma::fill_fragment(den, 0.0f);
    wmma::fragment<wmma::matrix_a, rows, pixels, taps, __half, wmma::row_major> fa;
    wmma::fragment<wmma::matrix_b, rows, pixels, taps, __half, wmma::col_major> fb;
    for (int j = 0; j < window; j++) {
        const __half *line = p.extended + int64_t(y + j) * p.extended_stride + x;
        const float dy = float(j - p.radius);
        for (int i0 = 0; i0 < window; i0 += taps) {
            __syncwarp();  // the last products have read the tiles
            if (lane < taps) {
                const float dx = float(i0 + lane - p.radius);
                a[lane] = __float2half(i0 + lane < window ? __expf((dx * dx + dy * dy) * p.spatial_scale) : 0.0f);
            }
#pragma unroll
            for (int t = 0; t < 4; t++) {
                const int k = k0 + t, i = i0 + k;
                float wq = 0.0f, w = 0.0f;
                if (i < window) {
                    const float q = __half2float(line[i]);
                    const float d = q - centre;
                    w = __expf(d * d * p.range_scale);
                    wq = w * q;
                }
                b_tiles[warp][0][n * taps + k] = __float2half(wq);
                b_tiles[warp][1][n * taps + k] = __float2half(w);
            }
            __syncwarp();
            wmma::load_matrix_sync(fa, a, taps);
            wmma::load_matrix_sync(fb, b_tiles[warp][0], taps);
            wmma::mma_sync(num, fa, fb, num);
            wmma::load_matrix_sync(fb, b_tiles[warp][1], taps);
            wmma::mma_sync(den, fa, fb, den);
        }
    }
    wmma::store_matrix_sync(c_tiles[warp][0], num, pixels, wmma::mem_row_major);
    wmma::store_matrix_sync(c_tiles[warp][1], den, pixels, wmma::mem_row_major);
    __syncwarp();
    if (lane < pixels && x0 + lane < p.width) {
        p.out[int64_t(y) * p.out_stride + x0 + lane] = c_tiles[warp][0][lane] / c_tiles[warp][1][lane];
    }
}

}  // namespace
}  // namespace halconv::rk::bl

extern "C" int halconv_bl_kernel_image_m32n8k16_f16f32(halide_buffer_t *extended, double sigma_spatial,
                                                       double sigma_range, int32_t radius, halide_buffer_t *out) {
    using namespace halconv::rk;
    const char *name = "halconv_bl_kernel_image_m32n8k16_f16f32";
    void *const uc = nullptr;
    if (out->is_bounds_query()) {
        for (int d = 0; d < 2; d++) {
            extended->dim[d].min = out->dim[d].min;
            extended->dim[d].extent = out->dim[d].extent + 2 * radius;
        }
        return 0;
    }
    if (extended->dim[0].stride != 1 || out->dim[0].stride != 1) {
        return fail(uc, name, "buffers must be dense along x (dim 0 stride 1)");
    }
    const int64_t x0 = int64_t(out->dim[0].min) - extended->dim[0].min;
    const int64_t y0 = int64_t(out->dim[1].min) - extended->dim[1].min;
    if (x0 < 0 || y0 < 0 || x0 + out->dim[0].extent + 2 * radius > extended->dim[0].extent ||
        y0 + out->dim[1].extent + 2 * radius > extended->dim[1].extent) {
        return fail(uc, name, "the extended image does not cover the output region plus the window");
    }
    if (out->dim[0].extent <= 0 || out->dim[1].extent <= 0) {
        return 0;
    }
    cudaStream_t stream = nullptr;
    if (int e = inputs_to_device(uc, {extended}, out, &stream); e != 0) {
        return e;
    }
    bl::Args p{};
    p.extended_stride = extended->dim[1].stride;
    p.extended = reinterpret_cast<const __half *>(uintptr_t(extended->device)) + y0 * p.extended_stride + x0;
    p.out = reinterpret_cast<float *>(uintptr_t(out->device));
    p.out_stride = out->dim[1].stride;
    p.width = out->dim[0].extent;
    p.height = out->dim[1].extent;
    p.radius = radius;
    p.spatial_scale = float(-0.5 / (sigma_spatial * sigma_spatial));
    p.range_scale = float(-0.5 / (sigma_range * sigma_range));
    const int64_t groups = (int64_t(p.width) + bl::pixels - 1) / bl::pixels * p.height;
    const int64_t blocks = (groups + bl::warps - 1) / bl::warps;
    if (blocks > 0x7fffffff) {
        return fail(uc, name, "the output has more than 2^31 - 1 blocks of 32 outputs");
    }
    bl::kernel_image_m32n8k16<<<unsigned(blocks), bl::warps * 32, 0, stream>>>(p);
    return finish_extern_call(uc, name, "bilateral tensor-core pass", cudaGetLastError(), out);
}
