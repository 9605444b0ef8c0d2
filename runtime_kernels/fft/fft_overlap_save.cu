// FFT convolution by overlap-save (halconv_fft.h): the prepared plans and spectrum, the
// per-batch kernels and the extern entry points. Two forms of a batch:
//   - float32 transforms (f32, f16f32, f16), fused: three kernels of ours per batch. Row
//     transforms read the tiles straight from the extended image (the gather) and
//     write the row spectra; one kernel per column group transforms each column,
//     multiplies it by the kernel's spectrum and transforms it back (the product and
//     both column passes, in registers); the inverse row transforms write only the
//     tile's outputs (the crop). Three passes over the batch's spectra instead of a
//     plain cuFFT call's 2-pass forward, product and 2-pass inverse, and the batch's
//     spectra stay in the L2 cache between them.
//   - float64: cuFFT's D2Z / Z2D between our gather, product and crop kernels.
#include <cuda_fp16.h>
#include <cufft.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <mutex>
#include <stdexcept>
#include <string>
#include <tuple>
#include <vector>

#include "HalideRuntimeCuda.h"
#include "common/cuda_libraries.h"
#include "common/extern_call.cuh"
#include "common/workspace.h"
#include "fft/fft_line.cuh"
#include "fft/halconv_fft.h"

namespace halconv::rk {

namespace {

// The types of a precision: storage (image and kernel), transform, output.
template <FftPrecision P>
struct FftTypes;
template <>
struct FftTypes<FftPrecision::f64> {
    using Storage = double;
    using Real = double;
    using Complex = cufftDoubleComplex;
    using Out = double;
};
template <>
struct FftTypes<FftPrecision::f32> {
    using Storage = float;
    using Real = float;
    using Complex = cufftComplex;
    using Out = float;
};
template <>
struct FftTypes<FftPrecision::f16> {
    using Storage = __half;
    using Real = float;
    using Complex = cufftComplex;
    using Out = __half;
};
template <>
struct FftTypes<FftPrecision::f16f32> {
    using Storage = __half;
    using Real = float;
    using Complex = cufftComplex;
    using Out = float;
};

bool is_f64(FftPrecision p) {
    return p == FftPrecision::f64;
}
size_t storage_bytes(FftPrecision p) {
    return p == FftPrecision::f64 ? 8 : p == FftPrecision::f32 ? 4 : 2;
}

__device__ inline float to_float(__half v) {
    return __half2float(v);
}
__device__ inline float to_float(float v) {
    return v;
}

template <typename Real, typename Storage>
__device__ inline Real widen(Storage v) {
    if constexpr (std::is_same_v<Storage, double>) {
        return Real(v);
    } else {
        return Real(to_float(v));
    }
}

template <typename Out, typename Real>
__device__ inline Out narrow(Real v) {
    if constexpr (std::is_same_v<Out, __half>) {
        return __float2half_rn(float(v));
    } else {
        return Out(v);
    }
}

struct Strided {
    const void *data;
    int width, height;
    int64_t stride;  // elements between rows
};

// Real blocks of `count` tiles from first_tile on: block b holds the extended image at
// (tile's origin + (x, y)), zero past its end. A block holding a sample beyond `limit`
// (or NaN) marks its tile in `flags` (zeroed before).
template <typename Storage, typename Real>
__global__ void gather_tiles(Strided image, FftTiling t, int first_tile, Real *blocks, unsigned *flags, Real limit) {
    const int b = int(blockIdx.z), tile = first_tile + b;
    const int ox = (tile % t.tiles_x) * t.step_x, oy = (tile / t.tiles_x) * t.step_y;
    const int x = int(blockIdx.x * blockDim.x + threadIdx.x);
    const Storage *src = static_cast<const Storage *>(image.data);
    Real *dst = blocks + size_t(b) * size_t(t.tile_x) * size_t(t.tile_y);
    bool bad = false;
    for (int y = int(blockIdx.y * blockDim.y + threadIdx.y); y < t.tile_y; y += int(gridDim.y * blockDim.y)) {
        if (x < t.tile_x) {
            const int gx = ox + x, gy = oy + y;
            Real v = 0;
            if (gx < image.width && gy < image.height) {
                v = widen<Real>(src[int64_t(gy) * image.stride + gx]);
            }
            bad = bad || !(fabs(v) <= limit);
            dst[size_t(y) * size_t(t.tile_x) + size_t(x)] = v;
        }
    }
    if (__syncthreads_or(bad) && threadIdx.x == 0 && threadIdx.y == 0) {
        flags[b] = 1;
    }
}

// x[i] *= w[i mod per_tile]: every block's spectrum times the kernel's (conjugated and
// scaled by 1 / (T_x T_y) beforehand).
template <typename Complex>
__global__ void multiply_spectra(Complex *x, const Complex *w, size_t per_tile, size_t total) {
    for (size_t i = size_t(blockIdx.x) * blockDim.x + threadIdx.x; i < total; i += size_t(gridDim.x) * blockDim.x) {
        const Complex a = x[i], k = w[i % per_tile];
        x[i] = {a.x * k.x - a.y * k.y, a.x * k.y + a.y * k.x};
    }
}

// The direct sum of output (ox, oy): the fallback of flagged tiles.
template <typename Storage, typename Real>
__device__ Real direct_output(const Strided &image, const Strided &kernel, bool flip, int ox, int oy) {
    const Storage *img = static_cast<const Storage *>(image.data);
    const Storage *ker = static_cast<const Storage *>(kernel.data);
    Real sum = 0;
    for (int v = 0; v < kernel.height; v++) {
        const int kv = flip ? kernel.height - 1 - v : v;
        for (int u = 0; u < kernel.width; u++) {
            const int ku = flip ? kernel.width - 1 - u : u;
            sum += widen<Real>(ker[int64_t(kv) * kernel.stride + ku]) *
                   widen<Real>(img[int64_t(oy + v) * image.stride + ox + u]);
        }
    }
    return sum;
}

// Each tile's outputs from its block (the first step_x x step_y samples), or by direct
// sums where the tile is flagged.
template <typename Storage, typename Real, typename Out>
__global__ void crop_tiles(const Real *blocks, const unsigned *flags, FftTiling t, int first_tile, Strided image,
                           Strided kernel, bool flip, Out *out, int out_width, int out_height, int64_t out_stride) {
    const int b = int(blockIdx.z), tile = first_tile + b;
    const int ox = (tile % t.tiles_x) * t.step_x, oy = (tile / t.tiles_x) * t.step_y;
    const int x = int(blockIdx.x * blockDim.x + threadIdx.x);
    const bool flagged = flags[b] != 0;
    const Real *src = blocks + size_t(b) * size_t(t.tile_x) * size_t(t.tile_y);
    for (int y = int(blockIdx.y * blockDim.y + threadIdx.y); y < t.step_y; y += int(gridDim.y * blockDim.y)) {
        const int gx = ox + x, gy = oy + y;
        if (x < t.step_x && gx < out_width && gy < out_height) {
            const Real v = flagged ? direct_output<Storage, Real>(image, kernel, flip, gx, gy)
                                   : src[size_t(y) * size_t(t.tile_x) + size_t(x)];
            out[int64_t(gy) * out_stride + gx] = narrow<Out>(v);
        }
    }
}

// The kernel zero-padded to one block, flipped when `flip`.
template <typename Storage, typename Real>
__global__ void place_kernel(Strided kernel, bool flip, Real *block, int tile_x, int tile_y) {
    const int x = int(blockIdx.x * blockDim.x + threadIdx.x), y = int(blockIdx.y * blockDim.y + threadIdx.y);
    if (x >= tile_x || y >= tile_y) {
        return;
    }
    Real v = 0;
    if (x < kernel.width && y < kernel.height) {
        const int kx = flip ? kernel.width - 1 - x : x, ky = flip ? kernel.height - 1 - y : y;
        v = widen<Real>(static_cast<const Storage *>(kernel.data)[int64_t(ky) * kernel.stride + kx]);
    }
    block[size_t(y) * size_t(tile_x) + size_t(x)] = v;
}

template <typename Complex, typename Real>
__global__ void conjugate_scaled(Complex *w, size_t n, Real scale) {
    const size_t i = size_t(blockIdx.x) * blockDim.x + threadIdx.x;
    if (i < n) {
        w[i] = {w[i].x * scale, -w[i].y * scale};
    }
}

// ---- The fused form (float32 transforms) ----
//
// A tile's T_x real columns are N_x = T_x / 2 complex points (even samples real, odd
// ones imaginary); its spectrum rows hold the N_x + 1 values of the real transform,
// `pitch` complex values apart, tile after tile (`tile_values` apart).

// Points per thread of a row or column transform (fft_line.cuh), as measured on the
// H100 (bench/results/h100/fft/fused/RUN.md): 8 for rows (more threads in flight) and
// 16 for the columns (one exchange fewer for each of their two transforms). Twiddles
// loaded a pass ahead (fft_line's Prefetch) gain 3-10 % in the rows and in most column
// lengths, but cost 256-point columns 10 % (their 16 x 16 passes hold 15 twiddles across
// the exchange, at 100-128 registers already).
inline constexpr int row_points = 8, column_points = 16;
// Entries of the pass tables of an n-point transform with `points` per thread (one at
// least: each axis's tables are allocated either way).
inline int pass_table_entries(int n, int points) {
    return std::max(fft_line::pass_table_size(n, std::min(n, points)), 1);
}
template <int N>
__host__ __device__ constexpr bool column_prefetch() {
    return N != 256;
}
// Lines (rows) per block of the row kernels: about 256 threads.
template <int N>
__host__ __device__ constexpr int row_lines() {
    constexpr int T = fft_line::Shape<N, row_points>::T;
    return T >= 256 ? 1 : 256 / T;
}
// Columns per block of the column kernel: about 512 threads, from 2 columns (16 bytes
// of a spectrum row per load) to 32.
template <int N>
__host__ __device__ constexpr int column_group() {
    constexpr int by_threads = 512 / fft_line::Shape<N, column_points>::T;
    return by_threads < 2 ? 2 : by_threads > 32 ? 32 : by_threads;
}
template <int N>
__host__ __device__ constexpr int row_threads() {
    return row_lines<N>() * fft_line::Shape<N, row_points>::T;
}
template <int N>
__host__ __device__ constexpr int column_threads() {
    return column_group<N>() * fft_line::Shape<N, column_points>::T;
}
// Points between the column kernel's lines in shared memory: a half-warp spans min(C, 16)
// of its C lines.
template <int N>
__host__ __device__ constexpr int column_line_stride() {
    return fft_line::bank_spread_stride(N, column_group<N>());
}
// The column kernel's dynamic shared memory: its group's lines.
template <int N>
constexpr size_t column_shared_bytes() {
    return size_t(column_group<N>()) * column_line_stride<N>() * sizeof(float2);
}

struct Spectra {
    float2 *data;
    int64_t pitch;        // complex values between rows
    int64_t tile_values;  // complex values between tiles
};

// Where a thread of a row kernel works: line `line` of its block (row y of tile b of
// the batch, the tile's first output at (ox, oy)), points j + T m of that row.
template <int N>
struct RowPlace {
    int line, j, b, ox, oy, y;
    __device__ RowPlace(const FftTiling &t, int first_tile) {
        constexpr int T = fft_line::Shape<N, row_points>::T;
        line = int(threadIdx.x) / T;
        j = int(threadIdx.x) % T;
        b = int(blockIdx.y);
        const int tile = first_tile + b;
        ox = (tile % t.tiles_x) * t.step_x;
        oy = (tile / t.tiles_x) * t.step_y;
        y = int(blockIdx.x) * row_lines<N>() + line;
    }
};

// Two adjacent samples at an even index of an 8- (float) or 4-byte (half) aligned row.
__device__ inline float2 load_pair(const float *p) {
    return *reinterpret_cast<const float2 *>(p);
}
__device__ inline float2 load_pair(const __half *p) {
    return __half22float2(*reinterpret_cast<const __half2 *>(p));
}
__device__ inline void store_pair(float *p, float a, float b) {
    *reinterpret_cast<float2 *>(p) = make_float2(a, b);
}
__device__ inline void store_pair(__half *p, float a, float b) {
    *reinterpret_cast<__half2 *>(p) = __floats2half2_rn(a, b);
}
// Whether rows of `stride` elements from `data` allow pair accesses at even x.
template <typename T>
__device__ inline bool pairs_aligned(const T *data, int64_t stride) {
    return reinterpret_cast<uintptr_t>(data) % (2 * sizeof(T)) == 0 && stride % 2 == 0;
}

// Row y of every tile of the batch (blockIdx.y): the forward real transform of the
// tile's T_x = 2 N samples of the extended image from (ox, oy + y), zero past its end.
// A sample beyond `limit` (or NaN) flags the tile.
template <typename Storage, int N>
__global__ void __launch_bounds__(row_threads<N>())
    rows_forward(Strided image, FftTiling t, int first_tile, Spectra spectra, unsigned *flags, float limit,
                 const float2 *twiddles, fft_line::PassTables passes) {
    using namespace fft_line;
    constexpr int Points = row_points;
    using Sh = Shape<N, Points>;
    __shared__ float2 shared[row_lines<N>() * Sh::stride];
    const RowPlace<N> at(t, first_tile);
    const LineBarrier<Sh::T> barrier;
    const int j = at.j, b = at.b, ox = at.ox, y = at.y, gy = at.oy + at.y;
    const bool row_in = y < t.tile_y && gy < image.height;
    const Storage *src = static_cast<const Storage *>(image.data) + int64_t(gy) * image.stride;
    const bool pairs = ox % 2 == 0 && pairs_aligned(static_cast<const Storage *>(image.data), image.stride);
    float2 v[Sh::S];
    bool bad = false;
#pragma unroll
    for (int m = 0; m < Sh::S; m++) {
        const int gx = ox + 2 * (j + Sh::T * m);
        float2 s = make_float2(0.0f, 0.0f);
        if (row_in && pairs && gx + 1 < image.width) {
            s = load_pair(src + gx);
        } else if (row_in) {
            s.x = gx < image.width ? to_float(src[gx]) : 0.0f;
            s.y = gx + 1 < image.width ? to_float(src[gx + 1]) : 0.0f;
        }
        bad = bad || !(fabsf(s.x) <= limit) || !(fabsf(s.y) <= limit);
        v[m] = s;
    }
    float2 *sh = shared + at.line * Sh::stride;
    forward<N, Points, true>(v, sh, j, passes, barrier);
    // Z[k] and Z[N - k] give the real transform's X[k] = (Z[k] + conj Z[N-k]) / 2 +
    // w^k (Z[k] - conj Z[N-k]) / 2i, w = exp(-2 pi i / T_x); X[N] = Re Z[0] - Im Z[0].
    // (w^k loaded before the exchange, to hide its latency behind it.)
    float2 wk[Sh::S];
#pragma unroll
    for (int m = 0; m < Sh::S; m++) {
        wk[m] = __ldg(&twiddles[(j + Sh::T * m) * (kTableSize / (2 * N))]);
    }
    barrier.sync();
#pragma unroll
    for (int m = 0; m < Sh::S; m++) {
        sh[padded(j + Sh::T * m)] = v[m];
    }
    barrier.sync();
    if (y < t.tile_y) {
        float2 *row = spectra.data + int64_t(b) * spectra.tile_values + int64_t(y) * spectra.pitch;
#pragma unroll
        for (int m = 0; m < Sh::S; m++) {
            const int k = j + Sh::T * m;
            const float2 z = v[m], zc = conj(sh[padded((N - k) & (N - 1))]);
            const float2 even = (z + zc) * 0.5f, odd = times_i(zc - z) * 0.5f;
            row[k] = even + cmul(wk[m], odd);
        }
        if (j == 0) {
            row[N] = make_float2(v[0].x - v[0].y, 0.0f);
        }
    }
    if (__syncthreads_or(bad) && threadIdx.x == 0) {
        flags[b] = 1;
    }
}

// Columns blockIdx.x * C ... of every tile of the batch (blockIdx.y): forward transform
// of the column (N = T_y points), times the kernel's conjugate spectrum (scaled by
// 1 / (T_x T_y)), inverse transform, in place.
template <int N>
__global__ void __launch_bounds__(column_threads<N>())
    columns_product(Spectra spectra, int columns, const float2 *kernel_spectrum, fft_line::PassTables passes) {
    using namespace fft_line;
    constexpr int Points = column_points;
    using Sh = Shape<N, Points>;
    constexpr int C = column_group<N>();
    extern __shared__ float2 shared[];
    const int c = int(threadIdx.x) % C, j = int(threadIdx.x) / C;
    const int column = int(blockIdx.x) * C + c;
    const bool in = column < columns;
    // 32-bit offsets (a tile's spectrum holds fewer than 2^31 values): 64-bit addresses
    // of the 16 points kept for the stores cost registers and occupancy.
    const int first = j * int(spectra.pitch) + column, step = Sh::T * int(spectra.pitch);
    float2 *tile = spectra.data + int64_t(blockIdx.y) * spectra.tile_values;
    float2 v[Sh::S];
#pragma unroll
    for (int m = 0; m < Sh::S; m++) {
        v[m] = in ? tile[first + m * step] : make_float2(0.0f, 0.0f);
    }
    float2 *sh = shared + c * column_line_stride<N>();
    forward<N, Points, column_prefetch<N>()>(v, sh, j, passes, BlockBarrier{});
    // The inverse as conj(forward(conj x)).
#pragma unroll
    for (int m = 0; m < Sh::S; m++) {
        const float2 w = in ? __ldg(&kernel_spectrum[first + m * step]) : make_float2(0.0f, 0.0f);
        v[m] = conj(cmul(v[m], w));
    }
    forward<N, Points, column_prefetch<N>()>(v, sh, j, passes, BlockBarrier{});
    if (in) {
#pragma unroll
        for (int m = 0; m < Sh::S; m++) {
            tile[first + m * step] = conj(v[m]);
        }
    }
}

// Row y < step_y of every tile of the batch (blockIdx.y): the inverse real transform of
// its spectrum row, whose first step_x samples are the tile's outputs; a flagged tile's
// outputs come from direct sums instead.
template <typename Storage, typename Out, int N>
__global__ void __launch_bounds__(row_threads<N>())
    rows_inverse(Spectra spectra, const unsigned *flags, FftTiling t, int first_tile, Strided image, Strided kernel,
                 bool flip, Out *out, int out_width, int out_height, int64_t out_stride, const float2 *twiddles,
                 fft_line::PassTables passes) {
    using namespace fft_line;
    constexpr int Points = row_points;
    using Sh = Shape<N, Points>;
    __shared__ float2 shared[row_lines<N>() * Sh::stride];
    const RowPlace<N> at(t, first_tile);
    const LineBarrier<Sh::T> barrier;
    const int j = at.j, b = at.b, ox = at.ox, y = at.y, gy = at.oy + at.y;
    const bool row_out = y < t.step_y && gy < out_height;
    Out *dst = out + int64_t(gy) * out_stride;
    if (flags[b] != 0) {  // the same for the whole block
        for (int x = j; row_out && x < t.step_x && ox + x < out_width; x += Sh::T) {
            dst[ox + x] = narrow<Out>(direct_output<Storage, float>(image, kernel, flip, ox + x, gy));
        }
        return;
    }
    // Z'[k] = (X[k] + conj X[N-k]) + i w^-k (X[k] - conj X[N-k]): twice the transform of
    // the even + i odd samples, so that N points give the T_x-point inverse's scale.
    const float2 *row = spectra.data + int64_t(b) * spectra.tile_values + int64_t(y < t.step_y ? y : 0) * spectra.pitch;
    float2 v[Sh::S];
#pragma unroll
    for (int m = 0; m < Sh::S; m++) {
        const int k = j + Sh::T * m;
        const float2 x = row[k], xc = conj(row[N - k]);
        const float2 w = conj(__ldg(&twiddles[k * (kTableSize / (2 * N))]));
        // The inverse as conj(forward(conj x)).
        v[m] = conj((x + xc) + times_i(cmul(w, x - xc)));
    }
    forward<N, Points, true>(v, shared + at.line * Sh::stride, j, passes, barrier);
    if (row_out) {
        // Samples 2n and 2n + 1 are z[n]'s real and imaginary parts, z = conj(v).
        const bool pairs = ox % 2 == 0 && pairs_aligned(out, out_stride);
#pragma unroll
        for (int m = 0; m < Sh::S; m++) {
            const int x = 2 * (j + Sh::T * m);
            const bool first = x < t.step_x && ox + x < out_width;
            const bool second = x + 1 < t.step_x && ox + x + 1 < out_width;
            if (pairs && second) {
                store_pair(dst + ox + x, v[m].x, -v[m].y);
            } else {
                if (first) {
                    dst[ox + x] = narrow<Out>(v[m].x);
                }
                if (second) {
                    dst[ox + x + 1] = narrow<Out>(-v[m].y);
                }
            }
        }
    }
}

std::string cufft_message(cufftResult r, const char *what) {
    return std::string("cuFFT error ") + std::to_string(int(r)) + " in " + what;
}

void check_cufft(cufftResult r, const char *what) {
    if (r != CUFFT_SUCCESS) {
        throw std::runtime_error(cufft_message(r, what));
    }
}

// cuFFT's functions; throws where cuFFT cannot be opened (a plan of algorithm fft is
// refused before this by the registry's limit, src/limits.cpp).
const CufftFunctions &cufft() {
    const CudaLibrary<CufftFunctions> &library = cufft_library();
    if (!library.usable()) {
        throw std::runtime_error("the FFT needs cuFFT: " + library.error);
    }
    return library.functions;
}

void check_cuda_rk(cudaError_t e, const char *what) {
    if (e != cudaSuccess) {
        throw std::runtime_error(std::string(what) + ": " + cudaGetErrorString(e));
    }
}

size_t spectrum_elements(const FftTiling &t) {
    return size_t(t.tile_y) * size_t(t.tile_x / 2 + 1);
}

dim3 tile_grid(int width, int height, int count) {
    // 32 x 8 threads; rows beyond 8 x 64 looped over inside the block.
    return dim3(unsigned((width + 31) / 32), unsigned(std::min((height + 7) / 8, 64)), unsigned(count));
}

}  // namespace

class PreparedFft {
public:
    FftPrecision precision;
    FftTiling tiling;
    int kernel_width, kernel_height;
    bool flip = false;
    bool has_kernel = false;
    double limit = 0.0;  // larger samples (or NaN) send their tile to direct sums
    // float64: the batch's cuFFT plans. They hold a stream and a work area: one call at
    // a time sets and uses them.
    cufftHandle forward = 0, inverse = 0;
    bool forward_made = false, inverse_made = false;
    size_t work_bytes = 0;
    std::mutex mutex;
    // The kernel's conjugate spectrum, fft_spectrum_pitch values per row.
    void *spectrum = nullptr;
    // float32 transforms: the fused kernels' twiddle table and their row and column
    // transforms' pass tables (fft_line_plan.h).
    float2 *twiddles = nullptr, *row_tables = nullptr, *column_tables = nullptr;

    ~PreparedFft() {
        // A plan was made only through an opened cuFFT.
        if (forward_made) {
            cufft_library().functions.destroy(forward);
        }
        if (inverse_made) {
            cufft_library().functions.destroy(inverse);
        }
        if (spectrum != nullptr) {
            cudaFree(spectrum);  // synchronizes: no call still reads it
        }
        for (float2 *table : {twiddles, row_tables, column_tables}) {
            if (table != nullptr) {
                cudaFree(table);
            }
        }
    }
};

void PreparedFftDeleter::operator()(PreparedFft *p) const {
    delete p;
}

PreparedFftPtr prepare_fft(FftPrecision precision, int out_width, int out_height, int kernel_width, int kernel_height) {
    const FftTiling t = fft_tiling(out_width, out_height, kernel_width, kernel_height, precision);
    if (t.tile_x == 0) {
        throw std::runtime_error("kernel " + std::to_string(kernel_width) + " x " + std::to_string(kernel_height) +
                                 " is larger than the FFT's largest transform allows (kernels up to " +
                                 std::to_string(fft_max_kernel) + " per axis)");
    }
    PreparedFftPtr p(new PreparedFft);
    p->precision = precision;
    p->tiling = t;
    p->kernel_width = kernel_width;
    p->kernel_height = kernel_height;
    if (!is_f64(precision)) {
        return p;  // the fused kernels need no plan
    }
    long long n[2] = {t.tile_y, t.tile_x};
    size_t forward_work = 0, inverse_work = 0;
    check_cufft(cufft().create(&p->forward), "cufftCreate");
    p->forward_made = true;
    check_cufft(cufft().set_auto_allocation(p->forward, 0), "cufftSetAutoAllocation");
    check_cufft(
        cufft().make_plan_many64(p->forward, 2, n, nullptr, 1, 0, nullptr, 1, 0, CUFFT_D2Z, t.batch, &forward_work),
        "the forward plan");
    check_cufft(cufft().create(&p->inverse), "cufftCreate");
    p->inverse_made = true;
    check_cufft(cufft().set_auto_allocation(p->inverse, 0), "cufftSetAutoAllocation");
    check_cufft(
        cufft().make_plan_many64(p->inverse, 2, n, nullptr, 1, 0, nullptr, 1, 0, CUFFT_Z2D, t.batch, &inverse_work),
        "the inverse plan");
    p->work_bytes = std::max(forward_work, inverse_work);
    return p;
}

size_t fft_workspace_bytes(const PreparedFft &p) {
    const FftTiling &t = p.tiling;
    return scratch_bytes(
        {fft_tile_buffer_bytes(t, p.precision) * size_t(t.batch), size_t(t.batch) * sizeof(unsigned), p.work_bytes});
}

size_t fft_spectrum_bytes(const PreparedFft &p) {
    const FftTiling &t = p.tiling;
    return fft_block_spectrum_bytes(t, p.precision) +
           (is_f64(p.precision) ? 0
                                : (fft_line::kTableSize + size_t(pass_table_entries(t.tile_x / 2, row_points)) +
                                   size_t(pass_table_entries(t.tile_y, column_points))) *
                                      sizeof(float2));
}

const FftTiling &fft_tiling_of(const PreparedFft &p) {
    return p.tiling;
}

namespace {

template <FftPrecision P>
void compute_spectrum(PreparedFft &p, const Strided &kernel, bool flip, cudaStream_t stream) {
    using Ty = FftTypes<P>;
    using Complex = typename Ty::Complex;
    const FftTiling &t = p.tiling;
    const size_t elements = spectrum_elements(t);
    const size_t row_values = size_t(t.tile_x / 2 + 1), pitch = size_t(fft_spectrum_pitch(t, P));
    typename Ty::Real *block = nullptr;
    Complex *dense = nullptr;  // cuFFT's layout, when the pitch differs
    cufftHandle plan = 0;
    const auto cleanup = [&] {
        if (plan != 0) {
            cufft_library().functions.destroy(plan);
        }
        cudaFree(block);
        cudaFree(dense);
    };
    try {
        check_cuda_rk(cudaMalloc(&block, size_t(t.tile_x) * size_t(t.tile_y) * sizeof(typename Ty::Real)),
                      "allocating the kernel's block");
        if (p.spectrum == nullptr) {
            check_cuda_rk(cudaMalloc(&p.spectrum, pitch * size_t(t.tile_y) * sizeof(Complex)),
                          "allocating the kernel's spectrum");
        }
        if (pitch != row_values) {
            check_cuda_rk(cudaMalloc(&dense, elements * sizeof(Complex)), "allocating the kernel's spectrum");
        }
        if constexpr (P != FftPrecision::f64) {
            if (p.twiddles == nullptr) {
                check_cuda_rk(cudaMalloc(&p.twiddles, fft_line::kTableSize * sizeof(float2)),
                              "allocating the twiddle table");
                fft_line::fill_twiddle_table<<<fft_line::kTableSize / 256, 256, 0, stream>>>(p.twiddles);
                check_cuda_rk(cudaGetLastError(), "the twiddle table");
            }
            // Each axis's transform (rows: T_x / 2 points, columns: T_y) has its pass tables,
            // copied from the table (after it, in stream order).
            for (const auto &[tables, n, points] : {std::tuple{&p.row_tables, t.tile_x / 2, row_points},
                                                    std::tuple{&p.column_tables, t.tile_y, column_points}}) {
                if (*tables == nullptr) {
                    const int entries = pass_table_entries(n, points);
                    check_cuda_rk(cudaMalloc(tables, size_t(entries) * sizeof(float2)), "allocating the pass tables");
                    fft_line::fill_pass_tables<<<(entries + 255) / 256, 256, 0, stream>>>(*tables, p.twiddles, n,
                                                                                          std::min(n, points));
                    check_cuda_rk(cudaGetLastError(), "the pass tables");
                }
            }
        }
        const dim3 threads(32, 8);
        const dim3 grid(unsigned((t.tile_x + 31) / 32), unsigned((t.tile_y + 7) / 8));
        place_kernel<typename Ty::Storage, typename Ty::Real>
            <<<grid, threads, 0, stream>>>(kernel, flip, block, t.tile_x, t.tile_y);
        check_cuda_rk(cudaGetLastError(), "placing the kernel");
        check_cufft(cufft().plan_2d(&plan, t.tile_y, t.tile_x, is_f64(P) ? CUFFT_D2Z : CUFFT_R2C), "the kernel's plan");
        check_cufft(cufft().set_stream(plan, stream), "cufftSetStream");
        Complex *w = dense != nullptr ? dense : static_cast<Complex *>(p.spectrum);
        if constexpr (P == FftPrecision::f64) {
            check_cufft(cufft().exec_d2z(plan, block, w), "the kernel's transform");
        } else {
            check_cufft(cufft().exec_r2c(plan, block, w), "the kernel's transform");
        }
        const typename Ty::Real scale = typename Ty::Real(1.0 / (double(t.tile_x) * double(t.tile_y)));
        conjugate_scaled<<<unsigned((elements + 255) / 256), 256, 0, stream>>>(w, elements, scale);
        check_cuda_rk(cudaGetLastError(), "conjugating the spectrum");
        if (dense != nullptr) {
            check_cuda_rk(
                cudaMemcpy2DAsync(p.spectrum, pitch * sizeof(Complex), dense, row_values * sizeof(Complex),
                                  row_values * sizeof(Complex), size_t(t.tile_y), cudaMemcpyDeviceToDevice, stream),
                "laying out the spectrum");
        }
        check_cuda_rk(cudaStreamSynchronize(stream), "the kernel's spectrum");
    } catch (...) {
        cleanup();
        throw;
    }
    cleanup();
}

// Sum of |kernel| (its values copied to the host), for the tiles' overflow limit.
double kernel_abs_sum(const Strided &kernel, FftPrecision precision) {
    const size_t bytes = storage_bytes(precision);
    std::vector<unsigned char> host(size_t(kernel.width) * size_t(kernel.height) * bytes);
    check_cuda_rk(cudaMemcpy2D(host.data(), size_t(kernel.width) * bytes, kernel.data, size_t(kernel.stride) * bytes,
                               size_t(kernel.width) * bytes, size_t(kernel.height), cudaMemcpyDeviceToHost),
                  "reading the kernel");
    double sum = 0.0;
    for (size_t i = 0; i < size_t(kernel.width) * size_t(kernel.height); i++) {
        if (precision == FftPrecision::f64) {
            sum += std::abs(reinterpret_cast<const double *>(host.data())[i]);
        } else if (precision == FftPrecision::f32) {
            sum += std::abs(double(reinterpret_cast<const float *>(host.data())[i]));
        } else {
            sum += std::abs(double(__half2float(reinterpret_cast<const __half *>(host.data())[i])));
        }
    }
    return sum;
}

}  // namespace

void set_fft_kernel(PreparedFft &p, const void *kernel_device, int row_stride, bool flip, void *stream) {
    const Strided kernel{kernel_device, p.kernel_width, p.kernel_height, row_stride};
    const auto s = static_cast<cudaStream_t>(stream);
    check_cuda_rk(cudaStreamSynchronize(s), "waiting for the kernel's upload");
    switch (p.precision) {
        case FftPrecision::f64:
            compute_spectrum<FftPrecision::f64>(p, kernel, flip, s);
            break;
        case FftPrecision::f32:
            compute_spectrum<FftPrecision::f32>(p, kernel, flip, s);
            break;
        case FftPrecision::f16:
            compute_spectrum<FftPrecision::f16>(p, kernel, flip, s);
            break;
        case FftPrecision::f16f32:
            compute_spectrum<FftPrecision::f16f32>(p, kernel, flip, s);
            break;
    }
    p.limit = fft_transform_limit(double(p.tiling.tile_x) * double(p.tiling.tile_y),
                                  kernel_abs_sum(kernel, p.precision), is_f64(p.precision));
    p.flip = flip;
    p.has_kernel = true;
}

namespace {

// Calls f with std::integral_constant<int, n> for a power of two n in [8, 4096].
template <typename F>
void with_line_size(int n, F &&f) {
    switch (n) {
        case 8:
            return f(std::integral_constant<int, 8>{});
        case 16:
            return f(std::integral_constant<int, 16>{});
        case 32:
            return f(std::integral_constant<int, 32>{});
        case 64:
            return f(std::integral_constant<int, 64>{});
        case 128:
            return f(std::integral_constant<int, 128>{});
        case 256:
            return f(std::integral_constant<int, 256>{});
        case 512:
            return f(std::integral_constant<int, 512>{});
        case 1024:
            return f(std::integral_constant<int, 1024>{});
        case 2048:
            return f(std::integral_constant<int, 2048>{});
        case 4096:
            return f(std::integral_constant<int, 4096>{});
        default:
            return;  // fft_tiling makes no other size
    }
}

// Every batch of tiles through the fused kernels: row transforms (gather), column
// transforms with the product, inverse row transforms (crop).
template <FftPrecision P>
cudaError_t run_fused_batches(const PreparedFft &p, const Strided &image, const Strided &kernel, void *out,
                              int out_width, int out_height, int64_t out_stride, cudaStream_t stream,
                              std::string *what) {
    using Ty = FftTypes<P>;
    using Storage = typename Ty::Storage;
    using Out = typename Ty::Out;
    const FftTiling &t = p.tiling;
    Scratch scratch(stream);
    float2 *data = nullptr;
    unsigned *flags = nullptr;
    cudaError_t e = scratch.take(fft_block_spectrum_bytes(t, P) * size_t(t.batch), &data);
    if (e == cudaSuccess) {
        e = scratch.take(size_t(t.batch) * sizeof(unsigned), &flags);
    }
    if (e != cudaSuccess) {
        *what = "allocating the tile buffers";
        return e;
    }
    const int64_t pitch = fft_spectrum_pitch(t, P);
    const Spectra spectra{data, pitch, pitch * t.tile_y};
    const int columns = t.tile_x / 2 + 1;
    const auto *w = static_cast<const float2 *>(p.spectrum);
    const float limit = float(std::min(p.limit, double(std::numeric_limits<float>::max())));
    // Shared memory beyond 48 KiB must be allowed for the column kernel: once per call.
    with_line_size(t.tile_y, [&](auto n) {
        constexpr int N = decltype(n)::value;
        if (column_shared_bytes<N>() > (size_t(48) << 10)) {
            e = cudaFuncSetAttribute(columns_product<N>, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                     int(column_shared_bytes<N>()));
        }
    });
    if (e != cudaSuccess) {
        *what = "allowing the column kernel's shared memory";
        return e;
    }
    for (int first = 0; first < t.tiles() && e == cudaSuccess; first += t.batch) {
        const unsigned count = unsigned(std::min(t.batch, t.tiles() - first));
        if ((e = cudaMemsetAsync(flags, 0, count * sizeof(unsigned), stream)) != cudaSuccess) {
            *what = "clearing the tile flags";
            return e;
        }
        with_line_size(t.tile_x / 2, [&](auto n) {
            constexpr int N = decltype(n)::value;
            constexpr int L = row_lines<N>();
            rows_forward<Storage, N><<<dim3(unsigned((t.tile_y + L - 1) / L), count), row_threads<N>(), 0, stream>>>(
                image, t, first, spectra, flags, limit, p.twiddles, {p.row_tables});
        });
        with_line_size(t.tile_y, [&](auto n) {
            constexpr int N = decltype(n)::value;
            constexpr int C = column_group<N>();
            columns_product<N><<<dim3(unsigned((columns + C - 1) / C), count), column_threads<N>(),
                                 column_shared_bytes<N>(), stream>>>(spectra, columns, w, {p.column_tables});
        });
        with_line_size(t.tile_x / 2, [&](auto n) {
            constexpr int N = decltype(n)::value;
            constexpr int L = row_lines<N>();
            rows_inverse<Storage, Out, N>
                <<<dim3(unsigned((t.step_y + L - 1) / L), count), row_threads<N>(), 0, stream>>>(
                    spectra, flags, t, first, image, kernel, p.flip, static_cast<Out *>(out), out_width, out_height,
                    out_stride, p.twiddles, {p.row_tables});
        });
        if ((e = cudaGetLastError()) != cudaSuccess) {
            *what = "launching the tile kernels";
        }
    }
    if (e == cudaSuccess && (e = scratch.release()) != cudaSuccess) {
        *what = "releasing the tile buffers";
    }
    return e;
}

// Every batch of tiles (float64): gather, forward transform, product, inverse, crop.
template <FftPrecision P>
cudaError_t run_batches(PreparedFft &p, const Strided &image, const Strided &kernel, void *out, int out_width,
                        int out_height, int64_t out_stride, cudaStream_t stream, std::string *what) {
    using Ty = FftTypes<P>;
    const FftTiling &t = p.tiling;
    Scratch scratch(stream);
    typename Ty::Real *blocks = nullptr;
    typename Ty::Complex *spectra = nullptr;
    unsigned *flags = nullptr;
    void *work = nullptr;
    cudaError_t e = scratch.take(fft_block_bytes(t, P) * size_t(t.batch), &blocks);
    if (e == cudaSuccess) {
        e = scratch.take(fft_block_spectrum_bytes(t, P) * size_t(t.batch), &spectra);
    }
    if (e == cudaSuccess) {
        e = scratch.take(size_t(t.batch) * sizeof(unsigned), &flags);
    }
    if (e == cudaSuccess) {
        e = scratch.take(p.work_bytes, &work);
    }
    if (e != cudaSuccess) {
        *what = "allocating the tile buffers";
        return e;
    }
    std::lock_guard<std::mutex> lock(p.mutex);
    // Its plans were made: cuFFT was opened.
    const CufftFunctions &api = cufft_library().functions;
    const auto fail_cufft = [&](cufftResult r, const char *step) {
        *what = cufft_message(r, step);
        return cudaErrorUnknown;
    };
    for (cufftHandle h : {p.forward, p.inverse}) {
        if (cufftResult r = api.set_stream(h, stream); r != CUFFT_SUCCESS) {
            return fail_cufft(r, "cufftSetStream");
        }
        if (cufftResult r = api.set_work_area(h, work); r != CUFFT_SUCCESS) {
            return fail_cufft(r, "cufftSetWorkArea");
        }
    }
    const auto *w = static_cast<const typename Ty::Complex *>(p.spectrum);
    const size_t per_tile = spectrum_elements(t);
    const typename Ty::Real limit = typename Ty::Real(p.limit);
    const dim3 threads(32, 8);
    for (int first = 0; first < t.tiles(); first += t.batch) {
        // The last batch may hold fewer tiles: its plan still transforms `batch` blocks,
        // the ones past the last tile zero (gathered past the image) and never cropped.
        const int count = std::min(t.batch, t.tiles() - first);
        if ((e = cudaMemsetAsync(flags, 0, size_t(t.batch) * sizeof(unsigned), stream)) != cudaSuccess) {
            *what = "clearing the tile flags";
            return e;
        }
        gather_tiles<typename Ty::Storage, typename Ty::Real>
            <<<tile_grid(t.tile_x, t.tile_y, t.batch), threads, 0, stream>>>(image, t, first, blocks, flags, limit);
        cufftResult r;
        if constexpr (P == FftPrecision::f64) {
            r = api.exec_d2z(p.forward, blocks, spectra);
        } else {
            r = api.exec_r2c(p.forward, blocks, spectra);
        }
        if (r != CUFFT_SUCCESS) {
            return fail_cufft(r, "the forward transform");
        }
        const size_t total = per_tile * size_t(t.batch);
        multiply_spectra<<<unsigned(std::min<size_t>((total + 255) / 256, 65535)), 256, 0, stream>>>(spectra, w,
                                                                                                     per_tile, total);
        if constexpr (P == FftPrecision::f64) {
            r = api.exec_z2d(p.inverse, spectra, blocks);
        } else {
            r = api.exec_c2r(p.inverse, spectra, blocks);
        }
        if (r != CUFFT_SUCCESS) {
            return fail_cufft(r, "the inverse transform");
        }
        crop_tiles<typename Ty::Storage, typename Ty::Real, typename Ty::Out>
            <<<tile_grid(t.step_x, t.step_y, count), threads, 0, stream>>>(blocks, flags, t, first, image, kernel,
                                                                           p.flip, static_cast<typename Ty::Out *>(out),
                                                                           out_width, out_height, out_stride);
        if ((e = cudaGetLastError()) != cudaSuccess) {
            *what = "launching the tile kernels";
            return e;
        }
    }
    if ((e = scratch.release()) != cudaSuccess) {
        *what = "releasing the tile buffers";
    }
    return e;
}

bool has_type(const halide_buffer_t *b, FftPrecision p, bool output) {
    const bool half = p == FftPrecision::f16 || (p == FftPrecision::f16f32 && !output);
    const int bits = half ? 16 : is_f64(p) ? 64 : 32;
    return b->type.code == halide_type_float && b->type.bits == bits && b->type.lanes == 1;
}

template <FftPrecision P>
int run_stage(void *user_context, halide_buffer_t *in, halide_buffer_t *kernel, bool flip, halide_buffer_t *out,
              const char *name) {
    using rk::fail;
    if (rk::answer_bounds_query(in, kernel, out)) {
        return 0;
    }
    if (in->dimensions != 2 || kernel->dimensions != 2 || out->dimensions != 2) {
        return fail(user_context, name, "image, kernel and output must be 2D");
    }
    if (!has_type(in, P, false) || !has_type(kernel, P, false) || !has_type(out, P, true)) {
        return fail(user_context, name, "the image, kernel and output types do not match the entry's precision");
    }
    const int kw = kernel->dim[0].extent, kh = kernel->dim[1].extent;
    int x0 = 0, y0 = 0;
    cudaStream_t stream = nullptr;
    if (int e = rk::place_on_device(user_context, name, in, kernel, out, &x0, &y0, &stream); e != 0) {
        return e;
    }
    using Storage = typename FftTypes<P>::Storage;
    const Strided image{reinterpret_cast<const Storage *>(in->device) + int64_t(y0) * in->dim[1].stride + x0,
                        out->dim[0].extent + kw - 1, out->dim[1].extent + kh - 1, in->dim[1].stride};
    const Strided ker{reinterpret_cast<const void *>(kernel->device), kw, kh, kernel->dim[1].stride};
    // The plan's prepared spectrum when it is this call's, else one of this call's own.
    PreparedFft *prepared = current_workspace().fft;
    PreparedFftPtr own;
    if (prepared == nullptr || prepared->precision != P || !prepared->has_kernel || prepared->flip != flip ||
        prepared->kernel_width != kw || prepared->kernel_height != kh ||
        prepared->tiling.tiles_x * prepared->tiling.step_x < out->dim[0].extent ||
        prepared->tiling.tiles_y * prepared->tiling.step_y < out->dim[1].extent) {
        try {
            own = prepare_fft(P, out->dim[0].extent, out->dim[1].extent, kw, kh);
            set_fft_kernel(*own, ker.data, int(ker.stride), flip, stream);
        } catch (const std::exception &ex) {
            return fail(user_context, name, ex.what());
        }
        prepared = own.get();
    }
    std::string what;
    cudaError_t e;
    if constexpr (P == FftPrecision::f64) {
        e = run_batches<P>(*prepared, image, ker, reinterpret_cast<void *>(out->device), out->dim[0].extent,
                           out->dim[1].extent, out->dim[1].stride, stream, &what);
    } else {
        e = run_fused_batches<P>(*prepared, image, ker, reinterpret_cast<void *>(out->device), out->dim[0].extent,
                                 out->dim[1].extent, out->dim[1].stride, stream, &what);
    }
    if (e == cudaSuccess && own) {
        e = cudaStreamSynchronize(stream);  // its plans and spectrum are freed on return
        what = "the transforms";
    }
    return rk::finish_extern_call(user_context, name, what.c_str(), e, out);
}

}  // namespace

}  // namespace halconv::rk

extern "C" int halconv_fft_overlap_save_f64(halide_buffer_t *in, halide_buffer_t *kernel, bool flip,
                                            halide_buffer_t *out) {
    using namespace halconv::rk;
    return run_stage<FftPrecision::f64>(nullptr, in, kernel, flip, out, "halconv_fft_overlap_save_f64");
}

extern "C" int halconv_fft_overlap_save_f32(halide_buffer_t *in, halide_buffer_t *kernel, bool flip,
                                            halide_buffer_t *out) {
    using namespace halconv::rk;
    return run_stage<FftPrecision::f32>(nullptr, in, kernel, flip, out, "halconv_fft_overlap_save_f32");
}

extern "C" int halconv_fft_overlap_save_f16(halide_buffer_t *in, halide_buffer_t *kernel, bool flip,
                                            halide_buffer_t *out) {
    using namespace halconv::rk;
    return run_stage<FftPrecision::f16>(nullptr, in, kernel, flip, out, "halconv_fft_overlap_save_f16");
}

extern "C" int halconv_fft_overlap_save_f16f32(halide_buffer_t *in, halide_buffer_t *kernel, bool flip,
                                               halide_buffer_t *out) {
    using namespace halconv::rk;
    return run_stage<FftPrecision::f16f32>(nullptr, in, kernel, flip, out, "halconv_fft_overlap_save_f16f32");
}
