// Edge detection in one pass over the image (halconv_edges.h). Each block filters a tile
// of 128 x 32 outputs: each of 134 threads stages one column of the tile's image samples
// plus 3 on each side in shared memory (through the boundary rule; all 38 loads in
// flight at once), each of 130 threads slides down one column of the blur — the
// Gaussian's row sums in registers, five rows deep — and writes the blurred tile plus a
// 1-sample apron to shared memory, and then every thread thresholds the Laplacian of 4
// neighbouring outputs per row and stores them as one 32-bit word. The image is read
// once from DRAM (the aprons mostly from L2) and the edges written once. H100 probes
// (bench/results/h100/edges/RUN.md): staging by element with a division per sample ran
// at 21 % of the memory floor at 4096^2, by column 44 %; taller or shorter tiles and two
// threads per column did no better.
#include "bands/band_slab.h"
#include "common/extern_call.cuh"
#include "edges/halconv_edges.h"

namespace halconv::rk::edges {
namespace {

constexpr int tile_w = 128, tile_h = 32, threads = 160;
constexpr int in_w = tile_w + 6, in_h = tile_h + 6;      // image samples 3 beyond the tile on each side
constexpr int blur_w = tile_w + 2, blur_h = tile_h + 2;  // blurred samples 1 beyond the tile
constexpr int blur_pitch = tile_w + 8, blur_first = 3;   // blurred column c (from -1) at c + 1 + blur_first:
static_assert((1 + blur_first) % 4 == 0, "");            // the tile's first column 16-byte aligned
static_assert(in_w <= threads && blur_w <= threads && tile_w / 4 == 32,
              "one staged and one blurred column per thread; a warp per output row");
constexpr float g0 = 2.0f / 17, g1 = 4.0f / 17, g2 = 5.0f / 17, g3 = 4.0f / 17, g4 = 2.0f / 17;

struct Args {
    const float *image;
    int64_t image_stride;
    int image_width, image_height;
    uint8_t *out;
    int64_t out_stride;
    int out_width, out_height;
    int64_t base_x, base_y;  // the image position of output (0, 0)
    int boundary;            // a halconv::Boundary value: 0 constant, 1 nearest, ...
    float fill, threshold;
    int tiles_x;
    bool word_stores;  // output rows and their start 4-byte aligned
};

__global__ void __launch_bounds__(threads) edges_fused_kernel(Args a) {
    __shared__ float in[in_h][in_w];
    __shared__ __align__(16) float blur[blur_h][blur_pitch];
    const int64_t ox0 = int64_t(blockIdx.x % a.tiles_x) * tile_w, oy0 = int64_t(blockIdx.x / a.tiles_x) * tile_h;
    const int64_t gx0 = a.base_x + ox0, gy0 = a.base_y + oy0;  // the tile's first output in image positions
    const int w = a.image_width, h = a.image_height;
    const bool interior = gx0 >= 3 && gy0 >= 3 && gx0 + tile_w + 3 <= w && gy0 + tile_h + 3 <= h;

    // The image samples the tile reads, extended by the rule: thread c stages column c,
    // every load issued before the first store (the kernel's time is these loads' latency).
    if (threadIdx.x < in_w) {
        const int c = threadIdx.x;
        if (interior) {
            const float *column = a.image + (gy0 - 3) * a.image_stride + (gx0 + c - 3);
            float v[in_h];
#pragma unroll
            for (int r = 0; r < in_h; r++) {
                v[r] = __ldg(column + r * a.image_stride);
            }
#pragma unroll
            for (int r = 0; r < in_h; r++) {
                in[r][c] = v[r];
            }
        } else {
            const int64_t x = band_source_index(gx0 + c - 3, w, a.boundary);
            for (int r = 0; r < in_h; r++) {
                const int64_t y = band_source_index(gy0 + r - 3, h, a.boundary);
                in[r][c] = x < 0 || y < 0 ? a.fill : __ldg(a.image + y * a.image_stride + x);
            }
        }
    }
    __syncthreads();

    // The blur, in the generator's order of sums: thread c's column is the tile's c - 1,
    // reading image columns c .. c + 4 of `in`; blurred row r is the tile's r - 1.
    if (threadIdx.x < blur_w) {
        const int c = threadIdx.x;
        const auto row_sum = [&](int r) {
            return g0 * in[r][c] + g1 * in[r][c + 1] + g2 * in[r][c + 2] + g3 * in[r][c + 3] + g4 * in[r][c + 4];
        };
        float s0 = row_sum(0), s1 = row_sum(1), s2 = row_sum(2), s3 = row_sum(3);
#pragma unroll 4
        for (int r = 0; r < blur_h; r++) {
            const float s4 = row_sum(r + 4);
            blur[r][c + blur_first] = g0 * s0 + g1 * s1 + g2 * s2 + g3 * s3 + g4 * s4;
            s0 = s1;
            s1 = s2;
            s2 = s3;
            s3 = s4;
        }
    }
    __syncthreads();

    // Under constant and nearest the Laplacian reads the blur extended by the rule, not the
    // blur of the extended image: the fill, or the nearest blurred sample inside. Only the
    // samples beside the image along one axis are read (never the corners).
    if (!interior && (a.boundary == 0 || a.boundary == 1)) {
        for (int i = threadIdx.x; i < blur_h * blur_w; i += threads) {
            const int r = i / blur_w, c = i % blur_w;
            const int64_t x = gx0 + c - 1, y = gy0 + r - 1;
            const bool outside_x = x < 0 || x >= w, outside_y = y < 0 || y >= h;
            if (outside_x == outside_y) {
                continue;
            }
            const int64_t cx = x < 0 ? 0 : x >= w ? w - 1 : x, cy = y < 0 ? 0 : y >= h ? h - 1 : y;
            blur[r][c + blur_first] = a.boundary == 0 ? a.fill : blur[cy - gy0 + 1][cx - gx0 + 1 + blur_first];
        }
        __syncthreads();
    }

    // The Laplacian's magnitude against the threshold: lane q takes outputs 4q .. 4q + 3 of
    // every fifth row.
    const int q = threadIdx.x % 32;
    const int64_t ox = ox0 + 4 * q;
    if (ox >= a.out_width) {
        return;
    }
    for (int r = threadIdx.x / 32; r < tile_h && oy0 + r < a.out_height; r += threads / 32) {
        const float4 up = *reinterpret_cast<const float4 *>(&blur[r][4 * q + 1 + blur_first]);
        const float4 mid = *reinterpret_cast<const float4 *>(&blur[r + 1][4 * q + 1 + blur_first]);
        const float4 down = *reinterpret_cast<const float4 *>(&blur[r + 2][4 * q + 1 + blur_first]);
        const float left = blur[r + 1][4 * q + blur_first], right = blur[r + 1][4 * q + 5 + blur_first];
        const auto edge = [&](float u, float l, float rt, float d, float m) -> uint32_t {
            return fabsf(u + l + rt + d - 4.0f * m) > a.threshold ? 1u : 0u;
        };
        const uint32_t e0 = edge(up.x, left, mid.y, down.x, mid.x);
        const uint32_t e1 = edge(up.y, mid.x, mid.z, down.y, mid.y);
        const uint32_t e2 = edge(up.z, mid.y, mid.w, down.z, mid.z);
        const uint32_t e3 = edge(up.w, mid.z, right, down.w, mid.w);
        uint8_t *o = a.out + (oy0 + r) * a.out_stride + ox;
        if (a.word_stores && ox + 4 <= a.out_width) {
            *reinterpret_cast<uint32_t *>(o) = e0 | e1 << 8 | e2 << 16 | e3 << 24;
        } else {
            const uint32_t e[4] = {e0, e1, e2, e3};
            for (int k = 0; k < 4 && ox + k < a.out_width; k++) {
                o[k] = uint8_t(e[k]);
            }
        }
    }
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
    const int64_t tiles_x = (int64_t(out_w) + tile_w - 1) / tile_w, tiles_y = (int64_t(out_h) + tile_h - 1) / tile_h;
    if (tiles_x * tiles_y > int64_t(0x7fffffff)) {
        return fail(uc, name, "more tiles than one CUDA grid holds");
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
    a.tiles_x = int(tiles_x);
    a.word_stores = out->device % 4 == 0 && a.out_stride % 4 == 0;
    edges_fused_kernel<<<unsigned(tiles_x * tiles_y), threads, 0, stream>>>(a);
    return finish_extern_call(uc, name, "edge kernel", cudaGetLastError(), out);
}

}  // namespace
}  // namespace halconv::rk::edges

extern "C" int halconv_edges_fused_f32(halide_buffer_t *in, int32_t boundary, float fill, float threshold,
                                       halide_buffer_t *out) {
    return halconv::rk::edges::run(in, boundary, fill, threshold, out);
}
