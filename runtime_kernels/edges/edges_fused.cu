// Edge detection in one pass over the image (halconv_edges.h), in the way of the sliding
// direct pass (conv2d/conv2d_sliding.cu): each warp owns a strip of 128 output columns
// (4 per lane) and a band of rows, and walks down it. It copies the image rows it reads
// (its strip and 4 samples on each side, the boundary rule applied per column once and per
// row as it is read) with cp.async into a ring of rows of its own in shared memory, rows
// ahead of its sums; each lane reads its 10 samples of a row, sums them into the 6
// Gaussian row sums its outputs' Laplacian needs, keeps the last 5 rows of those sums and
// the last 3 blurred rows in registers, and thresholds the Laplacian of the row that
// completes, storing 4 outputs as one 32-bit word. No block barrier: a warp waits only
// for its own copies. H100 (bench/results/h100/edges/RUN.md): the previous kernel (one
// 128 x 32 tile per block staged behind barriers, then summed) ran at 45 % of the memory
// floor at 4096^2, latency-bound between its barriers; this one's time is its instructions.
#include <algorithm>

#include "bands/band_slab.h"
#include "common/async_copy.cuh"
#include "common/extern_call.cuh"
#include "edges/halconv_edges.h"

namespace halconv::rk::edges {
namespace {

constexpr int threads = 128, warps = threads / 32;
constexpr int columns = 4;                // outputs per lane along x: one 32-bit store
constexpr int strip_w = 32 * columns;     // a warp's output columns
constexpr int radius = 2;                 // of the Gaussian
constexpr int apron = radius + 1;         // image samples beyond an output: the blur's and the Laplacian's
constexpr int lead = 4;                   // ring sample 0 is image column strip - lead: 16-byte aligned rows
constexpr int span = strip_w + 2 * lead;  // image samples of a row a warp stages
constexpr int copies = (span + 31) / 32;  // per lane and row, one sample each
constexpr int chunks = span / 4;          // per row in 16-byte copies
constexpr int skip = lead - apron;        // samples a lane's three 16-byte reads start before its first
static_assert(skip >= 0 && span % 4 == 0 && columns * 31 + 12 <= span && skip + columns + 2 * apron <= 12,
              "a lane's samples in three 16-byte reads");
constexpr float g0 = 2.0f / 17, g1 = 4.0f / 17, g2 = 5.0f / 17, g3 = 4.0f / 17, g4 = 2.0f / 17;

struct Args {
    const float *image;
    int64_t image_stride;
    int image_width, image_height;
    uint8_t *out;
    int64_t out_stride;
    int out_width, out_height;
    int64_t base_x, base_y;  // the image position of output (0, 0); outputs lie inside the image
    int boundary;            // a halconv::Boundary value: 0 constant, 1 nearest, ...
    float fill, threshold;
    int band_rows;
    bool word_stores;  // output rows and their start 4-byte aligned
};

// The image index of position i outside an axis of n samples under the rule (-1: the
// constant's fill), out of line: the row loop stays small.
__device__ __noinline__ int64_t outside_source(int64_t i, int64_t n, int boundary) {
    return band_source_index(i, n, boundary);
}

// R: the ring's rows (R - 1 rows in flight ahead of the sums); MinBlocks: blocks per SM the
// registers are capped for.
template <int R, int MinBlocks>
__global__ void __launch_bounds__(threads, MinBlocks) edges_sliding_kernel(const Args a) {
    __shared__ __align__(16) float ring[warps][R][span];
    const int lane = int(threadIdx.x % 32), warp = int(threadIdx.x / 32);
    const int64_t strip = (int64_t(blockIdx.x) * warps + warp) * strip_w;  // the warp's first output column
    if (strip >= a.out_width) {
        return;  // the whole warp
    }
    const int64_t x0 = strip + lane * columns;
    const int64_t r0 = int64_t(blockIdx.y) * a.band_rows;
    const int64_t r1 = r0 + a.band_rows < a.out_height ? r0 + a.band_rows : a.out_height;
    const int w = a.image_width, h = a.image_height;
    const int64_t first_x = a.base_x + strip - lead, first_row = a.base_y + r0 - apron;

    // The image column of each sample this lane copies (-1: the constant's fill), once.
    int column[copies];
#pragma unroll
    for (int k = 0; k < copies; k++) {
        const int q = lane + 32 * k;
        column[k] = q < span ? int(band_source_index(first_x + q, w, a.boundary)) : -1;
    }
    // Rows inside the image along x and 16-byte aligned are copied 16 bytes at a time.
    const bool vectors = first_x >= 0 && first_x + span <= w && first_x % 4 == 0 && a.image_stride % 4 == 0 &&
                         reinterpret_cast<uintptr_t>(a.image) % 16 == 0;
    const int rows = int(r1 - r0) + 2 * apron;  // image rows the band reads
    float *const my_ring = &ring[warp][0][0];
    // Image row t of the band into ring slot t % R: copies, or the fill where the rule gives it.
    const auto stage = [&](int t) {
        float *dst = my_ring + (t % R) * span;
        const int64_t y = first_row + t;
        const int64_t source = y >= 0 && y < h ? y : outside_source(y, h, a.boundary);
        if (source < 0) {
#pragma unroll
            for (int k = 0; k < copies; k++) {
                if (lane + 32 * k < span) {
                    dst[lane + 32 * k] = a.fill;
                }
            }
            return;
        }
        const float *row = a.image + source * a.image_stride;
        if (vectors) {
#pragma unroll
            for (int q = lane; q < chunks; q += 32) {
                cp_async_zfill<16>(uint32_t(__cvta_generic_to_shared(dst + 4 * q)), row + first_x + 4 * q, 16);
            }
            return;
        }
#pragma unroll
        for (int k = 0; k < copies; k++) {
            const int q = lane + 32 * k;
            if (column[k] >= 0) {
                cp_async_zfill<4>(uint32_t(__cvta_generic_to_shared(dst + q)), row + column[k], 4);
            } else if (q < span) {
                dst[q] = a.fill;
            }
        }
    };
#pragma unroll
    for (int t = 0; t < R - 1; t++) {
        if (t < rows) {
            stage(t);
        }
        cp_async_commit();
    }

    // Under constant and nearest the Laplacian reads the blur extended by the rule, not the
    // blur of the extended image: at the image's edges a neighbour outside is the fill or
    // (nearest) the output's own blurred sample. Outputs lie inside the image, so only
    // their four neighbours can be outside, one axis at a time.
    const bool edge_rule = a.boundary == 0 || a.boundary == 1;
    const bool left_edge = a.base_x + x0 == 0;
    const bool word_store = a.word_stores && x0 + columns <= a.out_width;
    // v[d][c]: the Gaussian's row sum at column x0 - 1 + c in the d-th last row read; up /
    // mid / down: the last three blurred rows, the same columns.
    float v[5][columns + 2] = {}, up[columns + 2] = {}, mid[columns + 2] = {}, down[columns + 2] = {};
    for (int t = 0; t < rows; t++) {
        cp_async_wait<R - 2>();  // this lane's copies of row t have landed
        __syncwarp();            // and every lane's, and every lane is done with row t - 1
        // s[skip + n]: image column x0 - apron + n.
        float s[12];
        const float *src = my_ring + (t % R) * span + lane * columns;
#pragma unroll
        for (int n = 0; n < 12; n += 4) {
            const float4 q = *reinterpret_cast<const float4 *>(src + n);
            s[n] = q.x, s[n + 1] = q.y, s[n + 2] = q.z, s[n + 3] = q.w;
        }
        // Row t + R - 1 into the slot of row t - 1, which every lane has read.
        if (t + R - 1 < rows) {
            stage(t + R - 1);
        }
        cp_async_commit();
#pragma unroll
        for (int c = 0; c < columns + 2; c++) {
#pragma unroll
            for (int d = 0; d < 4; d++) {
                v[d][c] = v[d + 1][c];
            }
            const float *x = s + skip + c;
            v[4][c] = g0 * x[0] + g1 * x[1] + g2 * x[2] + g3 * x[3] + g4 * x[4];
        }
        if (t < 2 * radius) {
            continue;  // the first blurred row needs 5 rows of sums
        }
#pragma unroll
        for (int c = 0; c < columns + 2; c++) {
            up[c] = mid[c];
            mid[c] = down[c];
            down[c] = g0 * v[0][c] + g1 * v[1][c] + g2 * v[2][c] + g3 * v[3][c] + g4 * v[4][c];
        }
        if (t < 2 * apron || x0 >= a.out_width) {
            continue;  // the first output needs three blurred rows; a lane past the output still stages
        }
        const int64_t o = r0 + t - 2 * apron, y = a.base_y + o;
        if (edge_rule) {
            // The neighbours outside the image replaced in place: none of them is read again
            // (up is dropped next row; down at the last row and the sides are never outputs).
#pragma unroll
            for (int c = 1; c <= columns; c++) {
                const float outside = a.boundary == 0 ? a.fill : mid[c];
                up[c] = y == 0 ? outside : up[c];
                down[c] = y == h - 1 ? outside : down[c];
                mid[c + 1] = a.base_x + x0 + c == w ? outside : mid[c + 1];
            }
            mid[0] = left_edge ? (a.boundary == 0 ? a.fill : mid[1]) : mid[0];
        }
        uint32_t e[columns];
#pragma unroll
        for (int c = 0; c < columns; c++) {
            e[c] = fabsf(up[c + 1] + mid[c] + mid[c + 2] + down[c + 1] - 4.0f * mid[c + 1]) > a.threshold ? 1u : 0u;
        }
        uint8_t *out = a.out + o * a.out_stride + x0;
        if (word_store) {
            *reinterpret_cast<uint32_t *>(out) = e[0] | e[1] << 8 | e[2] << 16 | e[3] << 24;
        } else {
#pragma unroll
            for (int c = 0; c < columns; c++) {
                if (x0 + c < a.out_width) {
                    out[c] = uint8_t(e[c]);
                }
            }
        }
    }
    cp_async_wait<0>();
}

// The ring's rows, the blocks per SM the registers are capped for, and the band's output
// rows aimed at (bench/results/h100/edges/RUN.md).
constexpr int ring_rows = 8, min_blocks = 4, target_band_rows = 64;

// Output rows per band: about target_band_rows, adjusted so that the grid is whole waves of
// the `resident` blocks the device holds at once (a last partial wave of long bands left
// most SMs idle: H100 4096^2, 48-row bands 15 % slower than 64-row ones), and within
// CUDA's grid limit along y.
int64_t band_rows_for(int64_t out_height, int64_t blocks_x, int64_t resident) {
    const int64_t waves =
        std::max<int64_t>(1, (out_height * blocks_x + resident * target_band_rows - 1) / (resident * target_band_rows));
    const int64_t bands = std::min<int64_t>(std::max<int64_t>(1, waves * resident / blocks_x), 65535);
    return (out_height + bands - 1) / bands;
}

int run(halide_buffer_t *in, int32_t boundary, float fill, float threshold, halide_buffer_t *out) {
    const char *name = "halconv_edges_fused_f32";
    if (out->is_bounds_query()) {
        return 0;  // the whole image, as given: the boundary rule is applied here
    }
    void *const uc = nullptr;
    if (in->dim[0].stride != 1 || out->dim[0].stride != 1) {
        return fail(uc, name, "buffers must be dense along x (dim 0 stride 1)");
    }
    const int out_w = out->dim[0].extent, out_h = out->dim[1].extent;
    if (out_w <= 0 || out_h <= 0) {
        return 0;
    }
    if (out->dim[0].min < in->dim[0].min || out->dim[1].min < in->dim[1].min ||
        int64_t(out->dim[0].min) + out_w > int64_t(in->dim[0].min) + in->dim[0].extent ||
        int64_t(out->dim[1].min) + out_h > int64_t(in->dim[1].min) + in->dim[1].extent) {
        return fail(uc, name, "the output region must lie inside the image");
    }
    cudaStream_t stream = nullptr;
    if (int e = inputs_to_device(uc, {in}, out, &stream); e != 0) {
        return e;
    }
    Args a{};
    a.image = reinterpret_cast<const float *>(uintptr_t(in->device));
    a.image_stride = in->dim[1].stride;
    a.image_width = in->dim[0].extent;
    a.image_height = in->dim[1].extent;
    a.out = reinterpret_cast<uint8_t *>(uintptr_t(out->device));
    a.out_stride = out->dim[1].stride;
    a.out_width = out_w;
    a.out_height = out_h;
    a.base_x = int64_t(out->dim[0].min) - in->dim[0].min;
    a.base_y = int64_t(out->dim[1].min) - in->dim[1].min;
    a.boundary = boundary;
    a.fill = fill;
    a.threshold = threshold;
    a.word_stores = out->device % 4 == 0 && a.out_stride % 4 == 0;
    const int64_t blocks_x = (int64_t(out_w) + warps * strip_w - 1) / (warps * strip_w);
    static const int per_sm = [] {
        int n = 0;
        return cudaOccupancyMaxActiveBlocksPerMultiprocessor(&n, edges_sliding_kernel<ring_rows, min_blocks>, threads,
                                                             0) == cudaSuccess &&
                       n > 0
                   ? n
                   : min_blocks;
    }();
    a.band_rows = int(band_rows_for(out_h, blocks_x, int64_t(per_sm) * device_sm_count()));
    const int64_t bands = (int64_t(out_h) + a.band_rows - 1) / a.band_rows;
    edges_sliding_kernel<ring_rows, min_blocks><<<dim3(unsigned(blocks_x), unsigned(bands)), threads, 0, stream>>>(a);
    return finish_extern_call(uc, name, "edge kernel", cudaGetLastError(), out);
}

}  // namespace
}  // namespace halconv::rk::edges

extern "C" int halconv_edges_fused_f32(halide_buffer_t *in, int32_t boundary, float fill, float threshold,
                                       halide_buffer_t *out) {
    return halconv::rk::edges::run(in, boundary, fill, threshold, out);
}
