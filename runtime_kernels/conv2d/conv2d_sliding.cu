// The direct correlation on CUDA cores at memory speed for small kernels (the `sliding`
// algorithm; the plan in conv2d_sliding.h):
//   output(x, y) = sum_j sum_i kernel(i, j) padded(x + i - offset_x, y + j - offset_y)
// with padded the image extended by the boundary rule, applied here per column once and
// per row as it is read (no extended copy of the image). A hand-written extern stage
// because Halide's GPU schedules stage a tile and its apron in shared memory behind a
// block barrier and then sum it: at 4096^2 f32 K = 3 that reached 0.61 of the memory
// floor, the loads' latency exposed between barriers (bench/results/h100/batch/RUN.md),
// and Halide has no asynchronous copies. Here the next rows are in flight while a thread
// sums the current one into a ring of row sums in registers, and no thread waits for
// more than its own warp.
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <cstdint>
#include <iterator>
#include <string>

#include "bands/band_slab.h"
#include "common/async_copy.cuh"
#include "common/extern_call.cuh"
#include "conv2d/conv2d_sliding.h"
#include "conv2d/halconv_conv2d.h"

namespace halconv::rk::conv2d {
namespace {

template <typename S>
struct SlidingArgs {
    const S *image;                     // image 0's sample (0, 0)
    int64_t image_stride, image_plane;  // elements between rows, between images
    int image_width, image_height;
    void *out;  // the output type's; image 0's (0, 0)
    int64_t out_stride, out_plane;
    int out_width, out_height;
    const S *taps;  // as stored, reversed here when flip
    int64_t taps_stride;
    int kw, kh;
    bool flip;
    int boundary;            // halconv::Boundary
    S fill;                  // the constant boundary's value in the storage type
    int64_t base_x, base_y;  // image column / row of output (0, 0)'s first tap
    int band_rows;
};

template <typename O, typename A>
__device__ inline O to_out(A v) {
    if constexpr (sizeof(O) == 2) {
        return __float2half_rn(v);
    } else {
        return O(v);
    }
}

// C outputs of one row, stored as one vector.
template <typename O, int C>
struct alignas(C * sizeof(O)) Outputs {
    O o[C];
};

// The image index of position i outside an axis of n samples under the rule (-1: the
// constant's fill): out of line, so that the loop over a band's rows stays small (the
// inlined remap put four of them, and their divisions, in every unrolled row).
__device__ __noinline__ int64_t outside_source(int64_t i, int64_t n, int boundary) {
    return band_source_index(i, n, boundary);
}

// What both forms below share. The taps: a kw x kh kernel placed in the last kh of B
// rows and the first kw of B columns (zeros outside, never multiplied).
template <typename S, typename A, int B>
__device__ __forceinline__ void place_taps(const SlidingArgs<S> &p, int kw, int kh, int skipped_rows, A (&w)[B][B]) {
#pragma unroll
    for (int j = 0; j < B; j++) {
#pragma unroll
        for (int i = 0; i < B; i++) {
            const int kj = j - skipped_rows;
            const int tj = p.flip ? kh - 1 - kj : kj, ti = p.flip ? kw - 1 - i : i;
            w[j][i] = kj >= 0 && i < kw ? to_accumulator(p.taps[tj * p.taps_stride + ti]) : A(0);
        }
    }
}

// The ring of sums cleared: sum[d] holds the outputs of row r0 + t - (B - 1) + d, which
// read input row t with the placed kernel's row B - 1 - d.
template <typename A, int B, int C>
__device__ __forceinline__ void clear_sums(A (&sum)[B][C]) {
#pragma unroll
    for (int d = 0; d < B; d++) {
#pragma unroll
        for (int c = 0; c < C; c++) {
            sum[d][c] = A(0);
        }
    }
}

// Whether a thread's C outputs of a row go out as one store: whole and aligned.
template <typename S, typename O, int C>
__device__ __forceinline__ bool stores_vectors(const SlidingArgs<S> &p, bool whole) {
    constexpr bool vectors = sizeof(Outputs<O, C>) <= 16;
    return vectors && whole && reinterpret_cast<uintptr_t>(p.out) % sizeof(Outputs<O, C>) == 0 &&
           p.out_stride % C == 0 && p.out_plane % C == 0;
}

// One input row's samples s[c + i] (column i of output c) into the ring.
template <typename A, int B, int C, int N>
__device__ __forceinline__ void add_row(A (&sum)[B][C], const A (&w)[B][B], const A (&s)[N], int kw, int skipped_rows) {
#pragma unroll
    for (int d = 0; d < B; d++) {
        if (B - 1 - d >= skipped_rows) {
#pragma unroll
            for (int c = 0; c < C; c++) {
#pragma unroll
                for (int i = 0; i < B; i++) {
                    if (i < kw) {
                        sum[d][c] += w[B - 1 - d][i] * s[c + i];
                    }
                }
            }
        }
    }
}

// The completed output row's C outputs at o (sum[0]).
template <typename A, typename O, int B, int C>
__device__ __forceinline__ void store_outputs(const A (&sum)[B][C], O *o, int64_t x0, int out_width, bool whole,
                                              bool vector_store) {
    if (vector_store) {
        Outputs<O, C> v;
#pragma unroll
        for (int c = 0; c < C; c++) {
            v.o[c] = to_out<O>(sum[0][c]);
        }
        *reinterpret_cast<Outputs<O, C> *>(o) = v;
    } else {
#pragma unroll
        for (int c = 0; c < C; c++) {
            if (whole || x0 + c < out_width) {
                o[c] = to_out<O>(sum[0][c]);
            }
        }
    }
}

// The ring moved on by a row.
template <typename A, int B, int C>
__device__ __forceinline__ void advance_sums(A (&sum)[B][C]) {
#pragma unroll
    for (int d = 0; d + 1 < B; d++) {
#pragma unroll
        for (int c = 0; c < C; c++) {
            sum[d][c] = sum[d + 1][c];
        }
    }
#pragma unroll
    for (int c = 0; c < C; c++) {
        sum[B - 1][c] = A(0);
    }
}

// A kw x kh correlation with kw, kh <= B: the kernel placed in the last kh of B rows and
// the first kw of B columns, the taps outside it skipped (never multiplied: 0 x inf would
// be NaN). Exact: kw = kh = B, nothing skipped (the guards fold away). C columns per
// thread; P input rows loaded into registers ahead of the sums (the form for float16
// samples).
template <typename S, typename A, typename O, int B, bool Exact, int C, int P, int MinBlocks>
__global__ void __launch_bounds__(sliding_threads, MinBlocks) conv2d_sliding_kernel(const SlidingArgs<S> p) {
    constexpr int N = C + B - 1;  // samples of one input row a thread may read
    const int64_t x0 = (int64_t(blockIdx.x) * sliding_threads + threadIdx.x) * C;
    if (x0 >= p.out_width) {
        return;
    }
    const int64_t r0 = int64_t(blockIdx.y) * p.band_rows;
    const int64_t r1 = r0 + p.band_rows < p.out_height ? r0 + p.band_rows : p.out_height;
    const S *image = p.image + int64_t(blockIdx.z) * p.image_plane;
    O *out = static_cast<O *>(p.out) + int64_t(blockIdx.z) * p.out_plane;
    const int kw = Exact ? B : p.kw, kh = Exact ? B : p.kh, skipped_rows = B - kh;
    const int64_t first_row = p.base_y - skipped_rows + r0;  // image row of input row 0

    // The image column each sample reads under the rule (-1: the constant's fill), once.
    // Away from the image's left and right edges they are consecutive (`inside`): the
    // samples are then read at constant offsets from one pointer, with no selects.
    int column[N];
    unsigned fill_columns = 0;  // bit n: sample n is the constant's fill
#pragma unroll
    for (int n = 0; n < N; n++) {
        const int64_t c = band_source_index(p.base_x + x0 + n, p.image_width, p.boundary);
        fill_columns |= c < 0 ? 1u << n : 0u;
        column[n] = c < 0 ? 0 : int(c);  // a fill sample is loaded from inside, then replaced
    }
    const bool inside = p.base_x + x0 >= 0 && p.base_x + x0 + N <= p.image_width;
    A w[B][B];
    place_taps(p, kw, kh, skipped_rows, w);
    const int rows = int(r1 - r0) + B - 1;  // input rows the band reads
    const A fill = to_accumulator(p.fill);
    const auto load_row = [&](int t, A(&s)[N]) {
        const int64_t y = first_row + t;
        const int64_t source = y >= 0 && y < p.image_height ? y : outside_source(y, p.image_height, p.boundary);
        const S *row = image + (source < 0 ? 0 : source) * p.image_stride;
        if (inside && source >= 0) {
            const S *at = row + column[0];
#pragma unroll
            for (int n = 0; n < N; n++) {
                s[n] = to_accumulator(__ldg(at + n));
            }
        } else {
#pragma unroll
            for (int n = 0; n < N; n++) {
                const A v = to_accumulator(__ldg(row + column[n]));
                s[n] = source >= 0 && !(fill_columns >> n & 1u) ? v : fill;
            }
        }
    };

    A s[P][N];
#pragma unroll
    for (int u = 0; u < P; u++) {
        if (u < rows) {
            load_row(u, s[u]);
        }
    }
    A sum[B][C];
    clear_sums(sum);
    const bool whole = x0 + C <= p.out_width;
    const bool vector_store = stores_vectors<S, O, C>(p, whole);
    for (int t0 = 0; t0 < rows; t0 += P) {
#pragma unroll
        for (int u = 0; u < P; u++) {
            const int t = t0 + u;
            if (t >= rows) {
                break;
            }
            add_row(sum, w, s[u], kw, skipped_rows);
            if (t + P < rows) {
                load_row(t + P, s[u]);
            }
            if (t >= B - 1) {
                store_outputs(sum, out + (r0 + t - (B - 1)) * p.out_stride + x0, x0, p.out_width, whole, vector_store);
            }
            advance_sums(sum);
        }
    }
}

// V samples read from shared memory as one access (the start aligned to V samples).
template <typename S, int V>
struct alignas(V * sizeof(S)) Samples {
    S v[V];
};

// The widest read (samples) that C columns per lane keep aligned: 16 bytes at most.
template <typename S, int C>
__host__ __device__ constexpr int aligned_read() {
    int v = 1;
    while (v * 2 <= C && C % (v * 2) == 0 && v * 2 * int(sizeof(S)) <= 16) {
        v *= 2;
    }
    return v;
}

// The same correlation with the input rows staged by cp.async: each warp owns a strip of
// 32 C output columns and copies the rows it reads (its strip and the kernel's apron,
// the rule applied as they are copied) into a ring of R rows of its own in shared memory,
// R - 1 rows ahead of its sums; a lane then reads its N samples of a row from the ring.
// The copies in flight hold no registers (the register kernel's loads ahead did), and a
// warp waits only for its own copies (__syncwarp, no block barrier).
template <typename S, typename A, typename O, int B, bool Exact, int C, int R>
__global__ void __launch_bounds__(sliding_threads) conv2d_staged_kernel(const SlidingArgs<S> p) {
    static_assert(sizeof(S) == 4 || sizeof(S) == 8, "cp.async copies 4, 8 or 16 bytes");
    constexpr int warps = sliding_threads / 32;
    constexpr int N = C + B - 1;              // samples of one row a lane reads
    constexpr int span = 32 * C + B - 1;      // samples of one row a warp stages
    constexpr int copies = (span + 31) / 32;  // per lane and row
    constexpr int per16 = 16 / int(sizeof(S));
    constexpr int pitch = (span + per16 - 1) / per16 * per16;  // rows 16-byte aligned
    constexpr int V = aligned_read<S, C>();
    __shared__ __align__(16) S ring[warps][R][pitch];

    const int lane = int(threadIdx.x % 32), warp = int(threadIdx.x / 32);
    const int64_t strip = (int64_t(blockIdx.x) * warps + warp) * 32 * C;  // the warp's first output column
    if (strip >= p.out_width) {
        return;  // the whole warp
    }
    const int64_t x0 = strip + lane * C;
    const int64_t r0 = int64_t(blockIdx.y) * p.band_rows;
    const int64_t r1 = r0 + p.band_rows < p.out_height ? r0 + p.band_rows : p.out_height;
    const S *image = p.image + int64_t(blockIdx.z) * p.image_plane;
    O *out = static_cast<O *>(p.out) + int64_t(blockIdx.z) * p.out_plane;
    const int kw = Exact ? B : p.kw, kh = Exact ? B : p.kh, skipped_rows = B - kh;
    const int64_t first_row = p.base_y - skipped_rows + r0;

    // The image column of each sample this lane copies (-1: the constant's fill), once.
    int column[copies];
#pragma unroll
    for (int k = 0; k < copies; k++) {
        const int q = lane + 32 * k;
        column[k] = q < span ? int(band_source_index(p.base_x + strip + q, p.image_width, p.boundary)) : -1;
    }
    const bool inside = p.base_x + strip >= 0 && p.base_x + strip + span <= p.image_width;
    A w[B][B];
    place_taps(p, kw, kh, skipped_rows, w);
    const int rows = int(r1 - r0) + B - 1;
    S *const my_ring = &ring[warp][0][0];
    // Input row t into ring slot t % R: copies, or the fill where the rule gives it.
    const auto stage = [&](int t) {
        S *dst = my_ring + (t % R) * pitch;
        const int64_t y = first_row + t;
        const int64_t source = y >= 0 && y < p.image_height ? y : outside_source(y, p.image_height, p.boundary);
        if (source < 0) {
#pragma unroll
            for (int k = 0; k < copies; k++) {
                if (lane + 32 * k < span) {
                    dst[lane + 32 * k] = p.fill;
                }
            }
            return;
        }
        const S *row = image + source * p.image_stride;
        if (inside) {
            const S *at = row + (p.base_x + strip) + lane;
#pragma unroll
            for (int k = 0; k < copies; k++) {
                if (lane + 32 * k < span) {
                    cp_async_zfill<sizeof(S)>(uint32_t(__cvta_generic_to_shared(dst + lane + 32 * k)), at + 32 * k,
                                              sizeof(S));
                }
            }
        } else {
#pragma unroll
            for (int k = 0; k < copies; k++) {
                if (column[k] >= 0) {
                    cp_async_zfill<sizeof(S)>(uint32_t(__cvta_generic_to_shared(dst + lane + 32 * k)), row + column[k],
                                              sizeof(S));
                } else if (lane + 32 * k < span) {
                    dst[lane + 32 * k] = p.fill;
                }
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
    A sum[B][C];
    clear_sums(sum);
    const bool whole = x0 + C <= p.out_width;
    const bool vector_store = stores_vectors<S, O, C>(p, whole);
    for (int t = 0; t < rows; t++) {
        cp_async_wait<R - 2>();  // this lane's copies of row t have landed
        __syncwarp();            // and every lane's, and every lane is done with row t - 1
        A s[N];
        const S *src = my_ring + (t % R) * pitch + lane * C;
#pragma unroll
        for (int n = 0; n < N; n += V) {
            if (n + V <= N) {
                const Samples<S, V> v = *reinterpret_cast<const Samples<S, V> *>(src + n);
#pragma unroll
                for (int e = 0; e < V; e++) {
                    s[n + e] = to_accumulator(v.v[e]);
                }
            } else {
#pragma unroll
                for (int e = 0; n + e < N; e++) {
                    s[n + e] = to_accumulator(src[n + e]);
                }
            }
        }
        // Row t + R - 1 into the slot of row t - 1, which every lane has read.
        if (t + R - 1 < rows) {
            stage(t + R - 1);
        }
        cp_async_commit();
        add_row(sum, w, s, kw, skipped_rows);
        if (t >= B - 1 && x0 < p.out_width) {
            store_outputs(sum, out + (r0 + t - (B - 1)) * p.out_stride + x0, x0, p.out_width, whole, vector_store);
        }
        advance_sums(sum);
    }
    cp_async_wait<0>();
}

template <typename S, typename A, typename O, int B, bool Exact>
cudaError_t launch_bucket(SlidingArgs<S> &p, int images, cudaStream_t stream) {
    constexpr SlidingShape shape = sliding_shape(B, Exact, int(sizeof(S)));
    const int64_t strip = int64_t(sliding_threads) * shape.columns;
    const int64_t strips = (int64_t(p.out_width) + strip - 1) / strip;
    p.band_rows = int(sliding_band_rows(p.out_height, strips * images, device_sm_count(), shape.band_rows));
    const dim3 grid(unsigned(strips), unsigned((int64_t(p.out_height) + p.band_rows - 1) / p.band_rows),
                    unsigned(images));
    if constexpr (shape.staged) {
        conv2d_staged_kernel<S, A, O, B, Exact, shape.columns, shape.rows_ahead>
            <<<grid, sliding_threads, 0, stream>>>(p);
    } else {
        conv2d_sliding_kernel<S, A, O, B, Exact, shape.columns, shape.rows_ahead, shape.min_blocks>
            <<<grid, sliding_threads, 0, stream>>>(p);
    }
    return cudaGetLastError();
}

// The exact kernel of a square kernel of one of the bucket edges, else the largest
// bucket's with the taps outside skipped.
template <typename S, typename A, typename O, size_t I = 0>
cudaError_t launch(SlidingArgs<S> &p, int images, cudaStream_t stream) {
    constexpr int bucket = sliding_kernel_buckets[I];
    if (p.kw == bucket && p.kh == bucket) {
        return launch_bucket<S, A, O, bucket, true>(p, images, stream);
    }
    if constexpr (I + 1 < std::size(sliding_kernel_buckets)) {
        return launch<S, A, O, I + 1>(p, images, stream);
    } else {
        return launch_bucket<S, A, O, sliding_max_kernel_edge, false>(p, images, stream);
    }
}

template <typename S, typename A, typename O>
int run(halide_buffer_t *in, halide_buffer_t *kernel, int32_t boundary, double fill, int32_t offset_x, int32_t offset_y,
        bool flip, halide_buffer_t *out, const char *name) {
    if (out->is_bounds_query()) {
        return 0;  // the whole image (or batch) and the kernel, as given: the rule is applied here
    }
    void *const uc = nullptr;
    const bool batch = out->dimensions == 3;
    if (in->dimensions != out->dimensions || kernel->dimensions != 2 || (out->dimensions != 2 && !batch)) {
        return fail(uc, name, "image and output must both be 2D (x, y) or both batches (x, y, n); the kernel 2D");
    }
    if (in->dim[0].stride != 1 || out->dim[0].stride != 1 || kernel->dim[0].stride != 1) {
        return fail(uc, name, "buffers must be dense along x (dim 0 stride 1)");
    }
    const int kw = kernel->dim[0].extent, kh = kernel->dim[1].extent;
    if (!sliding_kernel_fits(kw, kh)) {
        return fail(uc, name,
                    "kernel " + std::to_string(kw) + " x " + std::to_string(kh) + " outside the sliding pass's 1 .. " +
                        std::to_string(sliding_max_kernel_edge) +
                        " samples per axis (registry limit conv2d_sliding_kernel)");
    }
    const int images = batch ? out->dim[2].extent : 1;
    if (batch && (out->dim[2].min < in->dim[2].min ||
                  int64_t(out->dim[2].min) + images > int64_t(in->dim[2].min) + in->dim[2].extent)) {
        return fail(uc, name, "the output's images must be images of the input batch");
    }
    if (batch && images > 65535) {
        return fail(uc, name, "at most 65535 images per call (CUDA's grid limit along z)");
    }
    const int out_w = out->dim[0].extent, out_h = out->dim[1].extent;
    if (out_w <= 0 || out_h <= 0 || images <= 0) {
        return 0;
    }
    if (in->dim[0].extent <= 0 || in->dim[1].extent <= 0) {
        return fail(uc, name, "the image is empty");
    }
    cudaStream_t stream = nullptr;
    if (int e = inputs_to_device(uc, {in, kernel}, out, &stream); e != 0) {
        return e;
    }
    SlidingArgs<S> p{};
    const int64_t first_image = batch ? int64_t(out->dim[2].min - in->dim[2].min) * in->dim[2].stride : 0;
    p.image = reinterpret_cast<const S *>(uintptr_t(in->device)) + first_image;
    p.image_stride = in->dim[1].stride;
    p.image_plane = batch ? in->dim[2].stride : 0;
    p.image_width = in->dim[0].extent;
    p.image_height = in->dim[1].extent;
    p.out = reinterpret_cast<void *>(uintptr_t(out->device));
    p.out_stride = out->dim[1].stride;
    p.out_plane = batch ? out->dim[2].stride : 0;
    p.out_width = out_w;
    p.out_height = out_h;
    p.taps = reinterpret_cast<const S *>(uintptr_t(kernel->device));
    p.taps_stride = kernel->dim[1].stride;
    p.flip = flip;
    p.boundary = boundary;
    p.fill = to_storage<S>(fill);
    p.base_x = int64_t(out->dim[0].min) - offset_x - in->dim[0].min;
    p.base_y = int64_t(out->dim[1].min) - offset_y - in->dim[1].min;
    p.kw = kw;
    p.kh = kh;
    const cudaError_t e = launch<S, A, O>(p, images, stream);
    return finish_extern_call(uc, name, "sliding direct pass", e, out);
}

}  // namespace
}  // namespace halconv::rk::conv2d

using halconv::rk::conv2d::run;

extern "C" {

int halconv_conv2d_sliding_f64(halide_buffer_t *in, halide_buffer_t *kernel, int32_t boundary, double fill,
                               int32_t offset_x, int32_t offset_y, bool flip, halide_buffer_t *out) {
    return run<double, double, double>(in, kernel, boundary, fill, offset_x, offset_y, flip, out,
                                       "halconv_conv2d_sliding_f64");
}
int halconv_conv2d_sliding_f32(halide_buffer_t *in, halide_buffer_t *kernel, int32_t boundary, double fill,
                               int32_t offset_x, int32_t offset_y, bool flip, halide_buffer_t *out) {
    return run<float, float, float>(in, kernel, boundary, fill, offset_x, offset_y, flip, out,
                                    "halconv_conv2d_sliding_f32");
}
int halconv_conv2d_sliding_f16(halide_buffer_t *in, halide_buffer_t *kernel, int32_t boundary, double fill,
                               int32_t offset_x, int32_t offset_y, bool flip, halide_buffer_t *out) {
    return run<__half, float, __half>(in, kernel, boundary, fill, offset_x, offset_y, flip, out,
                                      "halconv_conv2d_sliding_f16");
}
int halconv_conv2d_sliding_f16f32(halide_buffer_t *in, halide_buffer_t *kernel, int32_t boundary, double fill,
                                  int32_t offset_x, int32_t offset_y, bool flip, halide_buffer_t *out) {
    return run<__half, float, float>(in, kernel, boundary, fill, offset_x, offset_y, flip, out,
                                     "halconv_conv2d_sliding_f16f32");
}

}  // extern "C"
