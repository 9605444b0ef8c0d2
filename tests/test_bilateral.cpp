// bilateral_filter against a float64 reference of seed 003's definition (eq. 3) on random
// and photo data, every boundary, tiny, odd and non-square shapes, each precision and
// device; the radius rule and the errors it owes.
#include <gmock/gmock.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <tuple>

#include "image_io.h"
#include "registry.h"
#include "test_support.h"

namespace halconv::test {
namespace {

using ::testing::HasSubstr;

// The definition in float64: the (2 radius + 1)^2 window of the image extended by the
// rule, spatial and range Gaussian weights, normalized.
Image reference_bilateral(const Image &img, double sigma_s, double sigma_r, int radius, Boundary b, double fill) {
    Image out{img.width, img.height, std::vector<double>(img.data.size())};
    for (int y = 0; y < img.height; y++) {
        for (int x = 0; x < img.width; x++) {
            const double centre = img.at(x, y);
            double num = 0.0, den = 0.0;
            for (int j = -radius; j <= radius; j++) {
                for (int i = -radius; i <= radius; i++) {
                    const double q = sample(img, x + i, y + j, b, fill);
                    const double w = std::exp(-double(i * i + j * j) / (2 * sigma_s * sigma_s)) *
                                     std::exp(-(q - centre) * (q - centre) / (2 * sigma_r * sigma_r));
                    num += w * q;
                    den += w;
                }
            }
            out.data[size_t(y) * img.width + x] = num / den;
        }
    }
    return out;
}

// Tolerance per precision, relative to the image's largest |I| (m), as halconv.h states it:
// the output is a convex combination of the window's samples; the two sums of n =
// (2r + 1)^2 terms cost n u each (Higham 3.5), and the weights' exponentials (on CUDA in
// float32 the fast one, relative error (2 + 1.16 |x|) u for exp(x), and w |x| <= 1/e)
// at most (2 + n / e) u twice over: (3 n + 12) u m in all. A wrong weight, a missed sample or a wrong boundary moves
// outputs by a sizeable fraction of m. f16f32 stores the image in float16, which the reference uses too (the values as
// stored), so only the float32 arithmetic counts.
double tolerance(Precision p, int radius, double m) {
    const double u = p == Precision::f64 ? 0x1p-53 : 0x1p-24;
    const double n = double(2 * radius + 1) * (2 * radius + 1);
    return (3 * n + 12) * u * m + (p == Precision::f64 ? 0.0 : 0x1p-24 * m);
}

::testing::AssertionResult matches(const Halide::Runtime::Buffer<> &out, const Image &img, const Image &want,
                                   Precision p, int radius, Boundary b, double fill) {
    double m = b == Boundary::constant ? std::fabs(fill) : 0.0;
    for (double v : img.data) {
        m = std::max(m, std::fabs(v));
    }
    const double tol = tolerance(p, radius, m);
    int bad = 0;
    std::string first;
    for (size_t i = 0; i < want.data.size(); i++) {
        const double got = load(out, i);
        if (!(std::fabs(got - want.data[i]) <= tol) && bad++ == 0) {
            first = "(" + std::to_string(i % want.width) + "," + std::to_string(i / want.width) + "): got " +
                    std::to_string(got) + " want " + std::to_string(want.data[i]) + " tol " + std::to_string(tol);
        }
    }
    if (bad != 0) {
        return ::testing::AssertionFailure() << bad << " of " << want.data.size() << " samples off; first " << first;
    }
    return ::testing::AssertionSuccess();
}

class Bilateral : public ::testing::TestWithParam<std::tuple<Device, Precision>> {
protected:
    void SetUp() override {
        if (std::get<0>(GetParam()) == Device::cuda && !cuda_available()) {
            GTEST_SKIP() << "no CUDA device on this machine: GPU variants are tested on a GPU machine "
                            "(scripts/gpu-check)";
        }
    }
    BilateralOptions options(Boundary b) const {
        BilateralOptions o;
        o.device = std::get<0>(GetParam());
        o.precision = std::get<1>(GetParam());
        o.boundary = b;
        o.fill_value = 0.375;  // exact in every storage type
        return o;
    }
};

TEST_P(Bilateral, RandomImagesEveryBoundaryAndShape) {
    const Precision p = std::get<1>(GetParam());
    for (Extent2d shape : {Extent2d{1, 1}, Extent2d{2, 5}, Extent2d{7, 3}, Extent2d{33, 17}, Extent2d{70, 41}}) {
        Image img;
        Halide::Runtime::Buffer<> image = random_buffer(storage_type(p), shape.width, shape.height, img, 0.0, 1.0);
        for (const auto &[sigma_s, sigma_r, radius] :
             {std::tuple{1.0, 0.1, 1}, std::tuple{2.0, 0.2, 3}, std::tuple{3.0, 0.05, 7}, std::tuple{1.5, 10.0, 2}}) {
            const int r = std::min(radius, std::max(shape.width, shape.height) - 1);
            if (r < 1) {
                continue;
            }
            for (Boundary b :
                 {Boundary::constant, Boundary::nearest, Boundary::reflect, Boundary::mirror, Boundary::wrap}) {
                SCOPED_TRACE(std::to_string(shape.width) + "x" + std::to_string(shape.height) + " sigma " +
                             std::to_string(sigma_s) + "/" + std::to_string(sigma_r) + " radius " + std::to_string(r) +
                             " " + to_string(b));
                const BilateralOptions o = options(b);
                Halide::Runtime::Buffer<> out(output_type(p), shape.width, shape.height);
                poison(out);
                const BilateralDispatch d = bilateral_filter(image, out, sigma_s, sigma_r, r, o);
                EXPECT_EQ(d.radius, r);
                EXPECT_EQ(d.device, o.device);
                EXPECT_EQ(d.algorithm, BilateralAlgorithm::direct);
                out.copy_to_host();
                EXPECT_TRUE(matches(out, img, reference_bilateral(img, sigma_s, sigma_r, r, b, o.fill_value), p, r, b,
                                    o.fill_value));
            }
        }
    }
}

// The photo (a crop, so the float64 reference stays quick): edges survive a small
// sigma_range, and the result is the definition's.
TEST_P(Bilateral, PhotoMatchesTheReference) {
    const Precision p = std::get<1>(GetParam());
    const io::Image png = io::read_png(repository_file("data/cameraman.png"));
    const int w = 96, h = 80, x0 = 200, y0 = 120;
    Image crop{w, h, std::vector<double>(size_t(w) * h)};
    for (int y = 0; y < h; y++) {
        for (int x = 0; x < w; x++) {
            crop.data[size_t(y) * w + x] = png.channels.at(0)[size_t(y0 + y) * png.width + x0 + x];
        }
    }
    Halide::Runtime::Buffer<> image(storage_type(p), w, h);
    Image stored = crop;
    for (size_t i = 0; i < crop.data.size(); i++) {
        store(image, i, crop.data[i]);
        stored.data[i] = load(image, i);
    }
    for (Boundary b : {Boundary::reflect, Boundary::constant}) {
        SCOPED_TRACE(to_string(b));
        const BilateralOptions o = options(b);
        Halide::Runtime::Buffer<> out(output_type(p), w, h);
        poison(out);
        const BilateralDispatch d = bilateral_filter(image, out, 3.0, 0.1, 0, o);
        EXPECT_EQ(d.radius, 9);  // ceil(3 sigma_spatial)
        out.copy_to_host();
        EXPECT_TRUE(
            matches(out, stored, reference_bilateral(stored, 3.0, 0.1, 9, b, o.fill_value), p, 9, b, o.fill_value));
    }
}

// A NaN or an infinity makes exactly the outputs whose window holds it NaN (constant
// boundary: no sample is read twice through a reflection).
TEST_P(Bilateral, NonFiniteSamplesPoisonTheirWindowsOnly) {
    const Precision p = std::get<1>(GetParam());
    const int w = 30, h = 20, radius = 2;
    for (double bad : {std::nan(""), double(INFINITY)}) {
        Image img;
        Halide::Runtime::Buffer<> image = random_buffer(storage_type(p), w, h, img, 0.0, 1.0);
        store(image, size_t(9) * w + 13, bad);
        image.set_host_dirty();
        Halide::Runtime::Buffer<> out(output_type(p), w, h);
        poison(out);
        bilateral_filter(image, out, 1.0, 0.1, radius, options(Boundary::constant));
        out.copy_to_host();
        for (int y = 0; y < h; y++) {
            for (int x = 0; x < w; x++) {
                const bool near = std::abs(x - 13) <= radius && std::abs(y - 9) <= radius;
                EXPECT_EQ(std::isnan(load(out, size_t(y) * w + x)), near) << x << "," << y << " around " << bad;
            }
        }
    }
}

TEST_P(Bilateral, ErrorsAreTyped) {
    const Precision p = std::get<1>(GetParam());
    Image img;
    Halide::Runtime::Buffer<> image = random_buffer(storage_type(p), 20, 12, img, 0.0, 1.0);
    Halide::Runtime::Buffer<> out(output_type(p), 20, 12);
    const BilateralOptions o = options(Boundary::reflect);
    const auto code_of = [&](double ss, double sr, int radius, const BilateralOptions &opts,
                             Halide::Runtime::Buffer<> &target) {
        try {
            bilateral_filter(image, target, ss, sr, radius, opts);
        } catch (const Error &e) {
            return std::pair{e.code(), std::string(e.what())};
        }
        return std::pair{ErrorCode::internal, std::string("no error")};
    };
    for (double bad : {0.0, -1.0, std::nan(""), double(INFINITY)}) {
        EXPECT_EQ(code_of(bad, 0.1, 2, o, out).first, ErrorCode::invalid_argument);
        EXPECT_EQ(code_of(1.0, bad, 2, o, out).first, ErrorCode::invalid_argument);
    }
    // Radius: at most max(width, height) - 1; a chosen one is capped there.
    EXPECT_THAT(code_of(1.0, 0.1, 20, o, out).second, HasSubstr("allowed: 0 (chosen from sigma_spatial) to 19"));
    EXPECT_EQ(code_of(1.0, 0.1, -1, o, out).first, ErrorCode::invalid_argument);
    EXPECT_EQ(bilateral_filter(image, out, 100.0, 0.1, 0, o).radius, 19);
    Halide::Runtime::Buffer<> wrong(output_type(p), 19, 12);
    EXPECT_EQ(code_of(1.0, 0.1, 2, o, wrong).first, ErrorCode::invalid_argument);
    BilateralOptions f16 = o;
    f16.precision = Precision::f16;
    EXPECT_EQ(code_of(1.0, 0.1, 2, f16, out).first, ErrorCode::invalid_argument);  // the image is not float16 storage
    BilateralOptions unknown = o;
    unknown.algorithm = static_cast<BilateralAlgorithm>(7);
    EXPECT_EQ(code_of(1.0, 0.1, 2, unknown, out).first, ErrorCode::invalid_argument);
    if (o.device == Device::cuda) {
        // Windows larger than the shared tile are refused on CUDA, saying the largest.
        Halide::Runtime::Buffer<> big = random_buffer(storage_type(p), 400, 300, img, 0.0, 1.0);
        Halide::Runtime::Buffer<> big_out(output_type(p), 400, 300);
        try {
            bilateral_filter(big, big_out, 10.0, 0.1, 120, o);
            FAIL() << "radius 120 ran on CUDA";
        } catch (const Error &e) {
            EXPECT_EQ(e.code(), ErrorCode::unsupported);
            EXPECT_THAT(e.what(), HasSubstr("allowed up to radius"));
        }
    }
}

// The CUDA tile's radius limit (halconv.h states these figures): the (8 + 2r) x (32 + 2r)
// tile of the storage type within the shared-memory budget.
TEST(BilateralLimits, GpuTileRadiusPerPrecision) {
    internal::VariantRow row{};
    for (const auto &[p, largest] :
         {std::pair{Precision::f64, 28}, std::pair{Precision::f32, 44}, std::pair{Precision::f16f32, 66}}) {
        SCOPED_TRACE(to_string(p));
        internal::Request r;
        r.precision = p;
        r.kernel_width = r.kernel_height = 2 * largest + 1;
        EXPECT_EQ(internal::limit_gpu_bilateral_tile(r, row), "");
        r.kernel_width = r.kernel_height = 2 * largest + 3;
        EXPECT_THAT(internal::limit_gpu_bilateral_tile(r, row),
                    HasSubstr("allowed up to radius " + std::to_string(largest)));
    }
}

// The tensor-core variant (seed 003's kernel-image-loop unrolling, f16f32): its operands
// are float16, so each of the products ws wr I and ws wr is rounded once more (relative
// 2^-11 each, and the spatial weight too): the numerator and the denominator are each
// within 2 2^-11 of theirs, the quotient within 2^-9 max|I|, beside the CUDA-core bound.
TEST(BilateralTensorCore, MatchesTheReferenceOnEveryBoundary) {
    if (!cuda_available()) {
        GTEST_SKIP() << "no CUDA device on this machine: GPU variants are tested on a GPU machine (scripts/gpu-check)";
    }
    for (Extent2d shape : {Extent2d{1, 1}, Extent2d{7, 3}, Extent2d{33, 17}, Extent2d{70, 41}}) {
        Image img;
        Halide::Runtime::Buffer<> image =
            random_buffer(storage_type(Precision::f16f32), shape.width, shape.height, img, 0.0, 1.0);
        // Radius 9 spans two products of 16 window columns per row.
        for (const auto &[sigma_s, sigma_r, radius] :
             {std::tuple{1.0, 0.1, 1}, std::tuple{2.0, 0.2, 3}, std::tuple{4.0, 0.1, 9}}) {
            const int r = std::min(radius, std::max(shape.width, shape.height) - 1);
            if (r < 1) {
                continue;
            }
            for (Boundary b :
                 {Boundary::constant, Boundary::nearest, Boundary::reflect, Boundary::mirror, Boundary::wrap}) {
                SCOPED_TRACE(std::to_string(shape.width) + "x" + std::to_string(shape.height) + " radius " +
                             std::to_string(r) + " " + to_string(b));
                BilateralOptions o;
                o.algorithm = BilateralAlgorithm::kernel_image_unroll;
                o.precision = Precision::f16f32;
                o.device = Device::cuda;
                o.boundary = b;
                o.fill_value = 0.375;
                Halide::Runtime::Buffer<> out(output_type(Precision::f16f32), shape.width, shape.height);
                poison(out);
                const BilateralDispatch d = bilateral_filter(image, out, sigma_s, sigma_r, r, o);
                EXPECT_EQ(d.algorithm, BilateralAlgorithm::kernel_image_unroll);
                out.copy_to_host();
                const Image want = reference_bilateral(img, sigma_s, sigma_r, r, b, o.fill_value);
                double m = 0.375;
                for (double v : img.data) {
                    m = std::max(m, std::fabs(v));
                }
                const double tol = 0x1p-9 * m + tolerance(Precision::f16f32, r, m);
                for (size_t i = 0; i < want.data.size(); i++) {
                    ASSERT_NEAR(load(out, i), want.data[i], tol) << i;
                }
            }
        }
    }
    // float16 operands only: f32 is refused, naming the precision.
    Image img;
    Halide::Runtime::Buffer<> image = random_buffer(storage_type(Precision::f32), 9, 9, img, 0.0, 1.0);
    Halide::Runtime::Buffer<> out(output_type(Precision::f32), 9, 9);
    BilateralOptions o;
    o.algorithm = BilateralAlgorithm::kernel_image_unroll;
    o.device = Device::cuda;
    try {
        bilateral_filter(image, out, 1.0, 0.1, 2, o);
        FAIL() << "f32 ran on the tensor cores";
    } catch (const Error &e) {
        EXPECT_EQ(e.code(), ErrorCode::unsupported);
        EXPECT_THAT(e.what(), HasSubstr("f32"));
    }
}

// Where there is no CUDA, the tensor-core variant is refused saying so.
TEST(BilateralTensorCore, RefusedOnTheCpu) {
    Image img;
    Halide::Runtime::Buffer<> image = random_buffer(storage_type(Precision::f16f32), 9, 9, img, 0.0, 1.0);
    Halide::Runtime::Buffer<> out(output_type(Precision::f16f32), 9, 9);
    BilateralOptions o;
    o.algorithm = BilateralAlgorithm::kernel_image_unroll;
    o.precision = Precision::f16f32;
    o.device = Device::cpu;
    try {
        bilateral_filter(image, out, 1.0, 0.1, 2, o);
        FAIL() << "the tensor-core variant ran on the CPU";
    } catch (const Error &e) {
        EXPECT_EQ(e.code(), ErrorCode::unsupported);
        EXPECT_THAT(e.what(), HasSubstr("no variant on device cpu"));
    }
}

TEST(BilateralPrecision, Float16ArithmeticIsRefused) {
    Image img;
    Halide::Runtime::Buffer<> image = random_buffer(storage_type(Precision::f16), 9, 9, img, 0.0, 1.0);
    Halide::Runtime::Buffer<> out(output_type(Precision::f16), 9, 9);
    BilateralOptions o;
    o.device = Device::cpu;
    o.precision = Precision::f16;
    try {
        bilateral_filter(image, out, 1.0, 0.1, 2, o);
        FAIL() << "f16 ran";
    } catch (const Error &e) {
        EXPECT_EQ(e.code(), ErrorCode::unsupported);
        EXPECT_THAT(e.what(), HasSubstr("f16"));
    }
}

INSTANTIATE_TEST_SUITE_P(Cpu, Bilateral,
                         ::testing::Combine(::testing::Values(Device::cpu),
                                            ::testing::Values(Precision::f64, Precision::f32, Precision::f16f32)));
INSTANTIATE_TEST_SUITE_P(Cuda, Bilateral,
                         ::testing::Combine(::testing::Values(Device::cuda),
                                            ::testing::Values(Precision::f64, Precision::f32, Precision::f16f32)));

}  // namespace
}  // namespace halconv::test
