// Algorithm::fft beyond the matrix of test_conv_matrix.cpp: images of many tiles with
// every transform size, non-square kernels (different tile steps per axis), the choice
// of the transform size, the kernels it refuses, and calls that must not go through a
// transform (NaN, Inf, values near the type's range), which run a direct sum instead.
#include <cmath>
#include <limits>
#include <set>
#include <string>

#include "test_support.h"

namespace halconv::test {
namespace {

Options fft_options(Precision p) {
    Options o;
    o.algorithm = Algorithm::fft;
    o.device = Device::cpu;
    o.precision = p;
    return o;
}

int tile_of(const Dispatch &d) {
    return std::stoi(d.variant.substr(d.variant.rfind('_') + 1));
}

double max_abs(const Image &img, double fill) {
    double m = std::fabs(fill);
    for (double v : img.data) {
        m = std::max(m, std::fabs(v));
    }
    return m;
}

// One call against the float64 reference within the FFT's stated bound; returns the
// transform size that ran.
int check(Precision p, int width, int height, int kw, int kh, Mode mode, Boundary boundary, bool flip) {
    Image img, ker;
    Halide::Runtime::Buffer<> input = random_buffer(storage_type(p), width, height, img);
    Halide::Runtime::Buffer<> kernel = random_buffer(storage_type(p), kw, kh, ker);
    Options o = fft_options(p);
    o.mode = mode;
    o.boundary = boundary;
    o.fill_value = 0.5;
    const Extent2d e = output_extent({width, height}, {kw, kh}, mode);
    Halide::Runtime::Buffer<> out(output_type(p), e.width, e.height);
    poison(out);
    const Dispatch d = flip ? convolve2d(input, kernel, out, o) : correlate2d(input, kernel, out, o);
    EXPECT_EQ(d.algorithm, Algorithm::fft);
    const Reference ref = correlate_reference(img, ker, mode, boundary, o.fill_value, flip);
    const int tile = tile_of(d);
    EXPECT_TRUE(matches_reference_within(out, ref, p, fft_error_bound(p, tile, ker, max_abs(img, o.fill_value))))
        << d.variant;
    return tile;
}

// Several tile pairs per axis, an odd number of tiles (the last pair's second tile lies
// beyond the output), kernels of every transform size, square and not (the reference is
// a direct float64 sum: images and kernels sized to keep it to ~10^8 products).
TEST(Fft, ManyTilesEveryTransformSize) {
    struct Case {
        int width, height, kw, kh;
        Mode mode;
        Boundary boundary;
    };
    const Case cases[] = {
        {301, 203, 3, 3, Mode::same, Boundary::reflect},   {257, 130, 15, 9, Mode::valid, Boundary::constant},
        {500, 300, 25, 25, Mode::same, Boundary::reflect}, {400, 333, 31, 31, Mode::full, Boundary::mirror},
        {700, 200, 63, 17, Mode::same, Boundary::wrap},    {513, 129, 127, 5, Mode::same, Boundary::nearest},
        {900, 60, 250, 7, Mode::same, Boundary::reflect},  {2000, 40, 600, 3, Mode::same, Boundary::constant},
    };
    std::set<int> tiles;
    for (const Case &c : cases) {
        SCOPED_TRACE(std::to_string(c.width) + "x" + std::to_string(c.height) + " kernel " + std::to_string(c.kw) +
                     "x" + std::to_string(c.kh));
        tiles.insert(check(Precision::f32, c.width, c.height, c.kw, c.kh, c.mode, c.boundary, c.kw % 2 == 0));
        if (c.kw <= 256 && c.kh <= 256) {
            for (Precision p : {Precision::f64, Precision::f16f32, Precision::f16}) {
                check(p, c.width, c.height, c.kw, c.kh, c.mode, c.boundary, true);
            }
        }
    }
    EXPECT_EQ(tiles, (std::set<int>{64, 128, 256, 512, 1024}));
}

// The transform size is the cheapest for the kernel and the output (limit fft_tile):
// small for small kernels, growing with the kernel, always larger than it.
TEST(Fft, TransformSizeGrowsWithTheKernel) {
    Options o = fft_options(Precision::f32);
    const auto tile_for = [&](int width, int height, int k) {
        Halide::Runtime::Buffer<float> kernel(k, k);
        kernel.fill(1.0f / float(k * k));
        return tile_of(Plan({width, height}, kernel, o).dispatch());
    };
    int previous = 0;
    for (int k : {3, 15, 31, 63, 127, 255, 500, 1000}) {
        SCOPED_TRACE("K=" + std::to_string(k));
        const int tile = tile_for(4000, 3000, k);
        EXPECT_GE(tile, previous);
        EXPECT_GT(tile, k);
        previous = tile;
    }
    EXPECT_EQ(tile_for(4000, 3000, 3), 64);
    EXPECT_EQ(tile_for(4000, 3000, 1000), 1024);
    // A small output takes no transform larger than it needs.
    EXPECT_EQ(tile_for(40, 30, 25), 64);
}

TEST(Fft, KernelsBeyondTheLargestTransformAreRefused) {
    Image ignore;
    Halide::Runtime::Buffer<> img = random_buffer(halide_type_of<double>(), 400, 400, ignore);
    Halide::Runtime::Buffer<> k = random_buffer(halide_type_of<double>(), 257, 3, ignore);
    try {
        (void)correlate2d(img, k, fft_options(Precision::f64));
        ADD_FAILURE() << "no error";
    } catch (const Error &e) {
        EXPECT_EQ(e.code(), ErrorCode::unsupported);
        EXPECT_NE(std::string(e.what()).find("kernel 257 x 3 is too large for algorithm fft: its largest transform "
                                             "is 256 x 256 (kernels up to 256 per axis)"),
                  std::string::npos)
            << e.what();
    }
}

// NaN and Inf in the image spread over a whole tile in a transform: such calls run a
// direct sum, which propagates them as SciPy does (only into the windows holding them).
TEST(Fft, NonFiniteImagesRunADirectSum) {
    for (double bad : {std::nan(""), double(INFINITY), -double(INFINITY)}) {
        Image img, ker;
        Halide::Runtime::Buffer<> input = random_buffer(halide_type_of<float>(), 150, 90, img);
        Halide::Runtime::Buffer<> kernel = random_buffer(halide_type_of<float>(), 5, 5, ker, 0.1, 1.0);
        store(input, 40 * 150 + 70, bad);
        img.data[40 * 150 + 70] = bad;
        Options o = fft_options(Precision::f32);
        o.boundary = Boundary::nearest;
        const Plan plan({150, 90}, kernel, o);
        EXPECT_NE(plan.dispatch().reason.find("a call whose image holds NaN or Inf runs conv2d_"), std::string::npos)
            << plan.dispatch().reason;
        Halide::Runtime::Buffer<> out = plan.apply(input);
        const Reference ref = correlate_reference(img, ker, Mode::same, Boundary::nearest, 0.0, false);
        int non_finite = 0;
        for (size_t i = 0; i < ref.value.data.size(); i++) {
            const double got = load(out, i), want = ref.value.data[i];
            if (!std::isfinite(want)) {
                EXPECT_TRUE(std::isnan(want) ? std::isnan(got) : got == want) << i;
                non_finite++;
            } else {
                EXPECT_TRUE(std::isfinite(got)) << i;
            }
        }
        EXPECT_EQ(non_finite, 25);
        // The same plan on a finite image runs the transform again, within its bound.
        Image clean;
        Halide::Runtime::Buffer<> finite = random_buffer(halide_type_of<float>(), 150, 90, clean);
        Halide::Runtime::Buffer<> out2 = plan.apply(finite);
        EXPECT_TRUE(matches_reference_within(
            out2, correlate_reference(clean, ker, Mode::same, Boundary::nearest, 0.0, false), Precision::f32,
            fft_error_bound(Precision::f32, tile_of(plan.dispatch()), ker, max_abs(clean, 0.0))));
    }
}

// A non-finite fill (constant boundary) would reach every tile at the border: direct sum.
TEST(Fft, NonFiniteFillRunsADirectSum) {
    Image img, ker;
    Halide::Runtime::Buffer<> input = random_buffer(halide_type_of<double>(), 70, 50, img);
    Halide::Runtime::Buffer<> kernel = random_buffer(halide_type_of<double>(), 3, 3, ker);
    Options o = fft_options(Precision::f64);
    o.fill_value = double(INFINITY);
    Halide::Runtime::Buffer<> out = correlate2d(input, kernel, o);
    const Reference ref = correlate_reference(img, ker, Mode::same, Boundary::constant, o.fill_value, false);
    for (size_t i = 0; i < ref.value.data.size(); i++) {
        const double got = load(out, i), want = ref.value.data[i];
        if (std::isfinite(want)) {
            EXPECT_NEAR(got, want, 1e-12) << i;
        } else {
            EXPECT_TRUE(std::isnan(want) ? std::isnan(got) : got == want) << i;
        }
    }
}

// Values whose transforms would overflow float32 (|x| T^2 sum|k| beyond its range) run a
// direct sum too: the result stays what float32 sums give.
TEST(Fft, ValuesNearTheRangeRunADirectSum) {
    Image img, ker;
    Halide::Runtime::Buffer<> input = random_buffer(halide_type_of<float>(), 64, 64, img, 1e35, 2e35);
    Halide::Runtime::Buffer<> kernel = random_buffer(halide_type_of<float>(), 3, 3, ker, 0.0, 0.1);
    Halide::Runtime::Buffer<> out = correlate2d(input, kernel, fft_options(Precision::f32));
    const Reference ref = correlate_reference(img, ker, Mode::same, Boundary::constant, 0.0, false);
    EXPECT_TRUE(matches_reference(out, ref, Precision::f32, 9));
}

}  // namespace
}  // namespace halconv::test
