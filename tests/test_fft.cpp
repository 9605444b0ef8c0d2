// Algorithm::fft beyond the matrix of test_conv_matrix.cpp: images of many tiles with
// every transform size, non-square kernels (different tile steps per axis), the choice
// of the transform size, the kernels it refuses, and calls that must not go through a
// transform (NaN, Inf, values near the type's range), which run a direct sum instead
// (on the CPU the whole call, on CUDA the tiles holding them); on CUDA also several
// batches of tiles, plans applied to many images and the workspace's bound.
#include <cmath>
#include <iterator>
#include <limits>
#include <set>
#include <string>
#include <vector>

#include "test_support.h"

namespace halconv::test {
namespace {

Options fft_options(Precision p, Device device = Device::cpu) {
    Options o;
    o.algorithm = Algorithm::fft;
    o.device = device;
    o.precision = p;
    return o;
}

void to_host(Halide::Runtime::Buffer<> &b) {
    ASSERT_EQ(b.copy_to_host(), 0);
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
int check(Precision p, int width, int height, int kw, int kh, Mode mode, Boundary boundary, bool flip,
          Device device = Device::cpu) {
    Image img, ker;
    Halide::Runtime::Buffer<> input = random_buffer(storage_type(p), width, height, img);
    Halide::Runtime::Buffer<> kernel = random_buffer(storage_type(p), kw, kh, ker);
    Options o = fft_options(p, device);
    o.mode = mode;
    o.boundary = boundary;
    o.fill_value = 0.5;
    const Extent2d e = output_extent({width, height}, {kw, kh}, mode);
    Halide::Runtime::Buffer<> out(output_type(p), e.width, e.height);
    poison(out);
    const Dispatch d = flip ? convolve2d(input, kernel, out, o) : correlate2d(input, kernel, out, o);
    EXPECT_EQ(d.algorithm, Algorithm::fft);
    EXPECT_EQ(d.device, device);
    to_host(out);
    const Reference ref = correlate_reference(img, ker, mode, boundary, o.fill_value, flip);
    const int tile = fft_tile_of(d, p, e, {kw, kh});
    EXPECT_TRUE(matches_reference_within(out, ref, p, fft_error_bound(p, tile, ker, max_abs(img, o.fill_value))))
        << d.variant;
    return tile;
}

struct FftCase {
    int width, height, kw, kh;
    Mode mode;
    Boundary boundary;
};

// Shapes of many tiles, kernels from 3 to 600 (every CPU transform size), square and not.
constexpr FftCase many_tile_cases[] = {
    {301, 203, 3, 3, Mode::same, Boundary::reflect},   {257, 130, 15, 9, Mode::valid, Boundary::constant},
    {500, 300, 25, 25, Mode::same, Boundary::reflect}, {400, 333, 31, 31, Mode::full, Boundary::mirror},
    {700, 200, 63, 17, Mode::same, Boundary::wrap},    {513, 129, 127, 5, Mode::same, Boundary::nearest},
    {900, 60, 250, 7, Mode::same, Boundary::reflect},  {2000, 40, 600, 3, Mode::same, Boundary::constant},
};

// Several tile pairs per axis, an odd number of tiles (the last pair's second tile lies
// beyond the output), kernels of every transform size, square and not (the reference is
// a direct float64 sum: images and kernels sized to keep it to ~10^8 products).
TEST(Fft, ManyTilesEveryTransformSize) {
    std::set<int> tiles;
    for (const FftCase &c : many_tile_cases) {
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

// Kernels as wide as the transform, or nearly: a tile pair then holds fewer outputs per
// row than one vector (2 at T = kw), in every precision. Valid mode keeps the outputs,
// and so the T x T transforms, few.
TEST(Fft, KernelsAsWideAsTheTransform) {
    for (Precision p : {Precision::f64, Precision::f32, Precision::f16f32, Precision::f16}) {
        const int largest = p == Precision::f32 ? 1024 : 256;
        for (int kw : {largest - 3, largest}) {
            SCOPED_TRACE(std::string(to_string(p)) + " kernel width " + std::to_string(kw));
            EXPECT_EQ(check(p, kw + 9, 4, kw, 2, Mode::valid, Boundary::constant, false), largest);
        }
    }
}

// The transform size is the cheapest for the kernel and the output (limit fft_tile):
// small for small kernels, growing with the kernel, always larger than it.
TEST(Fft, TransformSizeGrowsWithTheKernel) {
    Options o = fft_options(Precision::f32);
    const auto tile_for = [&](int width, int height, int k) {
        Halide::Runtime::Buffer<float> kernel(k, k);
        kernel.fill(1.0f / float(k * k));
        return fft_cpu_tile_of(Plan({width, height}, kernel, o).dispatch());
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
            fft_error_bound(Precision::f32, fft_cpu_tile_of(plan.dispatch()), ker, max_abs(clean, 0.0))));
    }
}

// An infinite fill (constant boundary), f64, width x height: exact outside its reach,
// SciPy's Inf / NaN inside.
void check_non_finite_fill(Device device, int width, int height) {
    Image img, ker;
    Halide::Runtime::Buffer<> input = random_buffer(halide_type_of<double>(), width, height, img);
    Halide::Runtime::Buffer<> kernel = random_buffer(halide_type_of<double>(), 3, 3, ker);
    Options o = fft_options(Precision::f64, device);
    o.fill_value = double(INFINITY);
    Halide::Runtime::Buffer<> out = correlate2d(input, kernel, o);
    to_host(out);
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

// Samples whose transforms would overflow float32 (|x| T^2 sum|k| beyond its range): the
// result stays what float32 direct sums give.
void check_values_near_the_range(Device device) {
    Image img, ker;
    Halide::Runtime::Buffer<> input = random_buffer(halide_type_of<float>(), 64, 64, img, 1e35, 2e35);
    Halide::Runtime::Buffer<> kernel = random_buffer(halide_type_of<float>(), 3, 3, ker, 0.0, 0.1);
    Halide::Runtime::Buffer<> out = correlate2d(input, kernel, fft_options(Precision::f32, device));
    to_host(out);
    const Reference ref = correlate_reference(img, ker, Mode::same, Boundary::constant, 0.0, false);
    EXPECT_TRUE(matches_reference(out, ref, Precision::f32, 9));
}

// A non-finite fill (constant boundary) would reach every tile at the border: direct sum.
TEST(Fft, NonFiniteFillRunsADirectSum) {
    check_non_finite_fill(Device::cpu, 70, 50);
}

// Values whose transforms would overflow float32 run a direct sum too.
TEST(Fft, ValuesNearTheRangeRunADirectSum) {
    check_values_near_the_range(Device::cpu);
}

// ---- CUDA: the cuFFT stage ----

class FftCuda : public ::testing::Test {
protected:
    void SetUp() override {
        if (!cuda_available()) {
            GTEST_SKIP() << "no CUDA device on this machine: the cuFFT stage is tested on a GPU machine";
        }
    }
};

// Every precision, many tiles, tile shapes from small to large kernels, square and not,
// and outputs of several batches of tiles.
TEST_F(FftCuda, ManyTilesEveryPrecision) {
    // Beyond the CPU's shapes: a kernel over 1000 wide, tiny images, several batches.
    const FftCase more[] = {
        {1100, 30, 1023, 2, Mode::full, Boundary::mirror},
        {1, 1, 1, 1, Mode::same, Boundary::wrap},
        {7, 5, 9, 3, Mode::full, Boundary::reflect},
        {3000, 2600, 3, 3, Mode::same, Boundary::nearest},
    };
    std::vector<FftCase> cases(std::begin(many_tile_cases), std::end(many_tile_cases));
    cases.insert(cases.end(), std::begin(more), std::end(more));
    for (const FftCase &c : cases) {
        SCOPED_TRACE(std::to_string(c.width) + "x" + std::to_string(c.height) + " kernel " + std::to_string(c.kw) +
                     "x" + std::to_string(c.kh));
        for (Precision p : {Precision::f32, Precision::f64, Precision::f16f32, Precision::f16}) {
            SCOPED_TRACE(to_string(p));
            check(p, c.width, c.height, c.kw, c.kh, c.mode, c.boundary, c.kw % 2 == 0, Device::cuda);
        }
    }
    // The last case's premise: its tiles take more than one batch.
    const rk::FftTiling t = rk::fft_tiling(3000, 2600, 3, 3, rk::FftPrecision::f32);
    EXPECT_GT(t.tiles(), t.batch);
}

// A tile holding NaN or Inf is summed directly: they reach only the outputs whose window
// holds them, as in SciPy, and every other output stays within the FFT's bound.
TEST_F(FftCuda, NonFiniteTilesAreSummedDirectly) {
    for (double bad : {std::nan(""), double(INFINITY), -double(INFINITY)}) {
        Image img, ker;
        Halide::Runtime::Buffer<> input = random_buffer(halide_type_of<float>(), 450, 290, img);
        Halide::Runtime::Buffer<> kernel = random_buffer(halide_type_of<float>(), 5, 5, ker, 0.1, 1.0);
        store(input, 40 * 450 + 70, bad);
        img.data[40 * 450 + 70] = bad;
        Options o = fft_options(Precision::f32, Device::cuda);
        o.boundary = Boundary::nearest;
        const Plan plan({450, 290}, kernel, o);
        Halide::Runtime::Buffer<> out = plan.apply(input);
        to_host(out);
        const Reference ref = correlate_reference(img, ker, Mode::same, Boundary::nearest, 0.0, false);
        double finite_max = 0.0;
        for (double v : img.data) {
            finite_max = std::isfinite(v) ? std::max(finite_max, std::fabs(v)) : finite_max;
        }
        const int tile = fft_tile_of(plan.dispatch(), Precision::f32, {450, 290}, {5, 5});
        const double bound = fft_error_bound(Precision::f32, tile, ker, finite_max);
        int non_finite = 0;
        for (size_t i = 0; i < ref.value.data.size(); i++) {
            const double got = load(out, i), want = ref.value.data[i];
            if (!std::isfinite(want)) {
                EXPECT_TRUE(std::isnan(want) ? std::isnan(got) : got == want) << i;
                non_finite++;
            } else {
                EXPECT_NEAR(got, want, bound + 1e-6 * std::fabs(want)) << i;
            }
        }
        EXPECT_EQ(non_finite, 25);
    }
}

// Infinite fill (constant boundary): the border tiles are summed directly.
TEST_F(FftCuda, NonFiniteFill) {
    check_non_finite_fill(Device::cuda, 170, 150);
}

// Values whose transforms could overflow float32 are summed directly too.
TEST_F(FftCuda, ValuesNearTheRangeAreSummedDirectly) {
    check_values_near_the_range(Device::cuda);
}

// One plan (one spectrum), many images, correlation and convolution.
TEST_F(FftCuda, PlanAppliesToManyImages) {
    for (Operation op : {Operation::correlate, Operation::convolve}) {
        Image ker;
        Halide::Runtime::Buffer<> kernel = random_buffer(halide_type_of<float>(), 21, 14, ker);
        Options o = fft_options(Precision::f32, Device::cuda);
        o.boundary = Boundary::mirror;
        const Plan plan({640, 480}, kernel, o, op);
        EXPECT_EQ(plan.dispatch().device, Device::cuda);
        for (int i = 0; i < 3; i++) {
            Image img;
            Halide::Runtime::Buffer<> input = random_buffer(halide_type_of<float>(), 640, 480, img);
            Halide::Runtime::Buffer<> out = plan.apply(input);
            to_host(out);
            const Reference ref =
                correlate_reference(img, ker, Mode::same, Boundary::mirror, 0.0, op == Operation::convolve);
            EXPECT_TRUE(matches_reference_within(
                out, ref, Precision::f32,
                fft_error_bound(Precision::f32, fft_tile_of(plan.dispatch(), Precision::f32, {640, 480}, {21, 14}), ker,
                                max_abs(img, 0.0))));
        }
    }
}

// The device memory a plan holds: the extended image, the spectrum, the batch buffers
// (fft_batch_budget) and cuFFT's work area, which halconv.h states as at most the batch
// budget again.
TEST_F(FftCuda, WorkspaceWithinTheStatedBound) {
    for (int k : {3, 31, 127, 1023}) {
        SCOPED_TRACE("K=" + std::to_string(k));
        Halide::Runtime::Buffer<float> kernel(k, k);
        kernel.fill(1.0f);
        const Plan plan({4096, 4096}, kernel, fft_options(Precision::f32, Device::cuda));
        const size_t extended = size_t(4096 + k - 1) * size_t(4096 + k - 1) * 4;
        const rk::FftTiling t = rk::fft_tiling(4096, 4096, k, k, rk::FftPrecision::f32);
        const size_t spectrum = rk::fft_block_spectrum_bytes(t, rk::FftPrecision::f32);
        const size_t one_tile = rk::fft_block_bytes(t, rk::FftPrecision::f32) + spectrum;
        EXPECT_LE(plan.workspace_bytes(),
                  extended + spectrum + 2 * std::max(rk::fft_batch_budget, one_tile) + (size_t(1) << 20))
            << plan.dispatch().reason;
    }
}

TEST_F(FftCuda, KernelsBeyondTheLargestTransformAreRefused) {
    Halide::Runtime::Buffer<float> kernel(rk::fft_max_kernel + 1, 1);
    kernel.fill(1.0f);
    try {
        (void)Plan({5000, 10}, kernel, fft_options(Precision::f32, Device::cuda));
        ADD_FAILURE() << "no error";
    } catch (const Error &e) {
        EXPECT_EQ(e.code(), ErrorCode::unsupported);
        EXPECT_NE(std::string(e.what()).find("kernel 4096 x 1 is too large for algorithm fft on CUDA"),
                  std::string::npos)
            << e.what();
    }
}

}  // namespace
}  // namespace halconv::test
