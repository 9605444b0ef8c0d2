// Helpers for the halconv tests: fresh random data in each precision's storage type,
// poisoned outputs, and comparison against the float64 reference.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <random>
#include <string>
#include <vector>

#include "fft/halconv_fft.h"
#include "halconv/float16.h"
#include "halconv/halconv.h"
#include "reference.h"
#include "separable/separable_fft.h"

namespace halconv::test {

// A file of the repository (e.g. "data/cameraman.png"): from the working directory when
// the tests run at the repository root (the GPU machine's working copy), else from the
// source tree the tests were built from.
inline std::string repository_file(const std::string &relative) {
    if (FILE *f = std::fopen(relative.c_str(), "rb")) {
        std::fclose(f);
        return relative;
    }
    return std::string(HALCONV_SOURCE_DIR) + "/" + relative;
}

inline std::mt19937_64 &rng() {
    static std::mt19937_64 engine{std::random_device{}()};
    return engine;
}

inline halide_type_t storage_type(Precision p) {
    switch (p) {
        case Precision::f64:
            return halide_type_of<double>();
        case Precision::f32:
            return halide_type_of<float>();
        default:
            return halide_type_t(halide_type_float, 16);
    }
}

inline halide_type_t output_type(Precision p) {
    switch (p) {
        case Precision::f64:
            return halide_type_of<double>();
        case Precision::f16:
            return halide_type_t(halide_type_float, 16);
        default:
            return halide_type_of<float>();
    }
}

// Value stored at element i of a dense buffer of any of the float types, as double.
inline double load(const Halide::Runtime::Buffer<> &b, size_t i) {
    const uint8_t *p = b.raw_buffer()->host + i * b.type().bytes();
    switch (b.type().bits) {
        case 64:
            return *reinterpret_cast<const double *>(p);
        case 32:
            return *reinterpret_cast<const float *>(p);
        default:
            return double_from_float16_bits(*reinterpret_cast<const uint16_t *>(p));
    }
}

inline void store(Halide::Runtime::Buffer<> &b, size_t i, double v) {
    uint8_t *p = b.raw_buffer()->host + i * b.type().bytes();
    switch (b.type().bits) {
        case 64:
            *reinterpret_cast<double *>(p) = v;
            break;
        case 32:
            *reinterpret_cast<float *>(p) = static_cast<float>(v);
            break;
        default:
            *reinterpret_cast<uint16_t *>(p) = float16_bits_from_double(v);
    }
}

// A width x height buffer of `type` with values uniform in [lo, hi); `exact` receives
// the values as stored (after rounding to the type), which is what the reference uses.
inline Halide::Runtime::Buffer<> random_buffer(halide_type_t type, int width, int height, Image &exact,
                                               double lo = -1.0, double hi = 1.0) {
    Halide::Runtime::Buffer<> b(type, width, height);
    std::uniform_real_distribution<double> dist(lo, hi);
    exact = Image{width, height, std::vector<double>(static_cast<size_t>(width) * height)};
    for (size_t i = 0; i < exact.data.size(); i++) {
        store(b, i, dist(rng()));
        exact.data[i] = load(b, i);
    }
    return b;
}

// A rank-1 kernel col * row^T as stored (values rounded to the type).
inline Halide::Runtime::Buffer<> random_rank1_kernel(halide_type_t type, int width, int height, Image &exact) {
    std::uniform_real_distribution<double> dist(-1.0, 1.0);
    std::vector<double> row(width), col(height);
    for (double &v : row) {
        v = dist(rng());
    }
    for (double &v : col) {
        v = dist(rng());
    }
    Halide::Runtime::Buffer<> b(type, width, height);
    exact = Image{width, height, std::vector<double>(static_cast<size_t>(width) * height)};
    for (int j = 0; j < height; j++) {
        for (int i = 0; i < width; i++) {
            const size_t at = static_cast<size_t>(j) * width + i;
            store(b, at, row[i] * col[j]);
            exact.data[at] = load(b, at);
        }
    }
    return b;
}

// Fills with NaN so that any sample the pipeline fails to write fails the comparison.
// Equal types, sizes and bytes.
inline bool same_bits(const Halide::Runtime::Buffer<> &a, const Halide::Runtime::Buffer<> &b) {
    if (a.number_of_elements() != b.number_of_elements() || !(a.type() == b.type())) {
        return false;
    }
    const size_t bytes = a.number_of_elements() * a.type().bytes();
    return std::equal(a.raw_buffer()->host, a.raw_buffer()->host + bytes, b.raw_buffer()->host);
}

// A sample in [-1, 1) from a hash of its position, 24 bits (exact in float32): cheap to
// make and to look up again for images too large to keep a float64 copy of.
inline double hash_sample(int64_t x, int64_t y) {
    uint64_t v = uint64_t(x) * 0x9E3779B97F4A7C15ull ^ uint64_t(y) * 0xC2B2AE3D27D4EB4Full;
    v ^= v >> 29;
    v *= 0xBF58476D1CE4E5B9ull;
    v ^= v >> 32;
    return double(v >> 40) / double(1ull << 23) - 1.0;
}

inline void poison(Halide::Runtime::Buffer<> &b) {
    for (size_t i = 0; i < b.number_of_elements(); i++) {
        store(b, i, std::nan(""));
    }
    b.set_host_dirty();
}

// Unit roundoff of the arithmetic (f16f32 stores f16 but accumulates in f32).
inline double unit_roundoff(Precision p) {
    switch (p) {
        case Precision::f64:
            return 0x1p-53;
        case Precision::f32:
        case Precision::f16f32:
            return 0x1p-24;
        default:
            return 0x1p-11;
    }
}

// Half the smallest subnormal of the arithmetic type (absolute error of one rounding near zero).
inline double underflow_step(Precision p) {
    return p == Precision::f16 ? 0x1p-25 : (p == Precision::f64 ? 0x1p-1074 : 0x1p-150);
}

inline double output_roundoff(Precision p) {
    return p == Precision::f16 ? 0x1p-11 : (p == Precision::f64 ? 0x1p-53 : 0x1p-24);
}

// Compares every sample of `out` with the reference: |out - ref| <= tolerance(i, want).
template <typename Tolerance>
::testing::AssertionResult compare_samples(const Halide::Runtime::Buffer<> &out, const Reference &ref,
                                           Tolerance tolerance) {
    if (out.dim(0).extent() != ref.value.width || out.dim(1).extent() != ref.value.height) {
        return ::testing::AssertionFailure() << "output extent " << out.dim(0).extent() << "x" << out.dim(1).extent()
                                             << " != " << ref.value.width << "x" << ref.value.height;
    }
    int bad = 0;
    std::string first;
    for (size_t i = 0; i < ref.value.data.size(); i++) {
        const double got = load(out, i), want = ref.value.data[i];
        const double tol = tolerance(i, want);
        if (!(std::fabs(got - want) <= tol) && bad++ == 0) {
            first = "(" + std::to_string(i % ref.value.width) + "," + std::to_string(i / ref.value.width) + "): got " +
                    std::to_string(got) + " want " + std::to_string(want) + " tol " + std::to_string(tol);
        }
    }
    if (bad != 0) {
        return ::testing::AssertionFailure()
               << bad << " of " << ref.value.data.size() << " samples off; first " << first;
    }
    return ::testing::AssertionSuccess();
}

// Tolerance: inputs are compared as stored, so only arithmetic rounds. A sum of n
// products in working precision with unit roundoff u is off by at most
// gamma_n = n*u/(1-n*u) times sum |k||x| (Higham, Accuracy and Stability, eq. 3.5),
// whatever the summation order; we allow (n + 4) u, and one final rounding to the
// output type. When a 2D kernel was factored for the separable path (factored),
// each factor is rounded to the storage type: 3 storage roundoffs more per product.
// A kernel that is rank-1 only within a tolerance also loses its residual
// |k - r c| <= factor_error (a Frobenius norm) per tap, times sum |x| over the window
// (window_abs_sum, required when factor_error > 0).
// Any missed tap or misplaced sample is O(|k||x|), far above this.
inline ::testing::AssertionResult matches_reference(const Halide::Runtime::Buffer<> &out, const Reference &ref,
                                                    Precision p, int taps, bool factored = false,
                                                    double factor_error = 0.0, const Image *window_abs_sum = nullptr) {
    const double u = unit_roundoff(p);
    const double n = taps + 4;
    const double storage_u = (p == Precision::f16 || p == Precision::f16f32) ? 0x1p-11 : u;
    const double gamma = n * u / (1.0 - n * u) + (factored ? 3.0 * storage_u : 0.0);
    return compare_samples(out, ref, [&](size_t i, double want) {
        // Gradual underflow: each rounding may also lose half a subnormal step absolutely.
        const double residual = factor_error > 0.0 ? factor_error * window_abs_sum->data[i] : 0.0;
        return gamma * ref.magnitude.data[i] + residual + output_roundoff(p) * std::fabs(want) +
               (n + 1) * underflow_step(p);
    });
}

// The low-rank pipelines' bound (halconv.h): each output sums r (kw + kh) products
// c_t(j) r_t(i) x, the factors rounded to the storage type, plus the rank's residual.
// With M(i, j) = sum_t |c_t(j)| |r_t(i)| (the factors the plan computes: the same
// deterministic factorization of the same stored kernel), the rounding is at most
// ((kw + kh + r + 4) u + 3 u_storage) (M * |x|), as the separable bound argues per term,
// and the residual at most rel ||K||_F times the window's sum |x|.
inline ::testing::AssertionResult matches_low_rank(const Halide::Runtime::Buffer<> &out, const Image &img,
                                                   const Image &kernel, Precision p, Mode mode, Boundary b, double fill,
                                                   bool flip) {
    Halide::Runtime::Buffer<const double, 2> k64(kernel.data.data(), kernel.width, kernel.height);
    const LowRankFactors f = low_rank_factors(k64, p);
    if (f.rank == 0) {
        return ::testing::AssertionFailure() << "the test kernel is not low-rank";
    }
    Image m{kernel.width, kernel.height, std::vector<double>(kernel.data.size(), 0.0)};
    double norm2 = 0.0;
    for (int y = 0; y < kernel.height; y++) {
        for (int x = 0; x < kernel.width; x++) {
            for (int t = 0; t < f.rank; t++) {
                m.data[size_t(y) * kernel.width + x] += std::fabs(f.row_factors[size_t(t) * kernel.width + x]) *
                                                        std::fabs(f.col_factors[size_t(t) * kernel.height + y]);
            }
            norm2 += kernel.at(x, y) * kernel.at(x, y);
        }
    }
    Image ones = kernel;
    std::fill(ones.data.begin(), ones.data.end(), 1.0);
    const Reference ref = correlate_reference(img, kernel, mode, b, fill, flip);
    const Reference terms = correlate_reference(img, m, mode, b, fill, flip);
    const Reference window = correlate_reference(img, ones, mode, b, fill, flip);
    const double u = unit_roundoff(p);
    const double storage_u = (p == Precision::f16 || p == Precision::f16f32) ? 0x1p-11 : u;
    const double n = kernel.width + kernel.height + f.rank + 4;
    const double gamma = n * u / (1.0 - n * u) + 3.0 * storage_u;
    const double residual = f.relative_residual * std::sqrt(norm2);
    return compare_samples(out, ref, [&](size_t i, double want) {
        return gamma * terms.magnitude.data[i] + residual * window.magnitude.data[i] +
               output_roundoff(p) * std::fabs(want) + (n + 1) * underflow_step(p);
    });
}

// The FFT algorithm's stated bound (halconv.h): every output of a T x T tile is within
// 8 u log2(T) (sum|k| + T ||k||_2) ||z||_2 of the exact value, z the tile's complex block
// (two T x T blocks of the extended image), so ||z||_2 <= sqrt(2) T max|x| with max|x|
// over the image and the fill. It is the transforms' normwise bound (Higham, Thm 24.2:
// a relative 2-norm error of a few u per stage, log2 T stages each way) applied to one
// output; a missed or misplaced tap costs |k x|, which exceeds it at f64 by many orders
// of magnitude and at f32 for the kernels tested.
// The transform size of a CPU fft call: its variant's name is fft_<T>.
inline int fft_cpu_tile_of(const Dispatch &d) {
    return std::stoi(d.variant.substr(d.variant.rfind('_') + 1));
}

// The transform size an fft call ran with: the CPU variant's, or the larger edge of the
// cuFFT stage's tiling.
inline int fft_tile_of(const Dispatch &d, Precision p, Extent2d output, Extent2d kernel) {
    if (d.device == Device::cpu) {
        return fft_cpu_tile_of(d);
    }
    const rk::FftTiling t =
        rk::fft_tiling(output.width, output.height, kernel.width, kernel.height, static_cast<rk::FftPrecision>(p));
    return std::max(t.tile_x, t.tile_y);
}

inline double fft_error_bound(Precision p, int tile, const Image &kernel, double max_abs_x) {
    double sum_abs = 0.0, sum_sq = 0.0;
    for (double k : kernel.data) {
        sum_abs += std::fabs(k);
        sum_sq += k * k;
    }
    const double u = p == Precision::f64 ? 0x1p-53 : 0x1p-24;  // the transforms' arithmetic
    return 8.0 * u * std::log2(double(tile)) * (sum_abs + tile * std::sqrt(sum_sq)) * std::sqrt(2.0) * tile * max_abs_x;
}

// sum |v|.
inline double abs_sum(const std::vector<double> &v) {
    double sum = 0.0;
    for (double x : v) {
        sum += std::fabs(x);
    }
    return sum;
}

// max |v|.
inline double max_abs(const std::vector<double> &v) {
    double m = 0.0;
    for (double x : v) {
        m = std::max(m, std::fabs(x));
    }
    return m;
}

// The largest |sample| a transform can meet: over the image, and the fill under the
// constant boundary.
inline double max_abs_sample(const Image &img, Boundary boundary, double fill) {
    double m = boundary == Boundary::constant ? std::fabs(fill) : 0.0;
    for (double v : img.data) {
        m = std::max(m, std::fabs(v));
    }
    return m;
}

// The separable fft_lines passes' stated bound (halconv_sep.h) for the whole call: each pass
// within 8 u log2(M) sqrt(2 M) sum|taps| of its input's largest magnitude (u = 2^-24: float32
// transforms in every precision), the row pass's error summed by the column taps:
//   8 u sqrt(2) (log2(Mr) sqrt(Mr) + log2(Mc) sqrt(Mc)) sum|row| sum|col| max|x|,
// taps_abs = sum|row| sum|col| (a rank-1 kernel's sum |k|). It is the transforms' normwise
// bound (Higham, Thm 24.2) through a product with the taps' spectrum, whose largest value is
// at most sum|taps|.
inline double fft_lines_bound(const rk::sep::FftLinesLayout &l, double taps_abs, double max_abs_x) {
    const auto pass = [](int m) { return std::log2(double(m)) * std::sqrt(double(m)); };
    return 8.0 * 0x1p-24 * std::sqrt(2.0) * (pass(l.row_length) + pass(l.column_length)) * taps_abs * max_abs_x;
}

// |out - ref| <= absolute plus one rounding to the output type, per sample.
inline ::testing::AssertionResult matches_reference_within(const Halide::Runtime::Buffer<> &out, const Reference &ref,
                                                           Precision p, double absolute) {
    return compare_samples(out, ref, [&](size_t, double want) {
        return absolute + output_roundoff(p) * std::fabs(want) + 2 * underflow_step(p);
    });
}

}  // namespace halconv::test
