// gaussian_blur with GaussianMethod::recursive against the float64 reference of what it
// approximates: correlation with the untruncated sampled Gaussian along each axis, the
// image extended by the boundary rule to any distance. Every boundary, sigmas from the
// smallest allowed to far beyond the image, tiny, odd and non-square shapes, fresh random
// data, poisoned outputs; and the errors it owes.
#include <gmock/gmock.h>

#include <algorithm>
#include <cmath>
#include <optional>
#include <random>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "recursive/recursive_layout.h"
#include "test_support.h"

namespace halconv::test {
namespace {

using ::testing::HasSubstr;

void skip_without_cuda(Device device) {
    if (device == Device::cuda && !cuda_available()) {
        GTEST_SKIP() << "no CUDA device on this machine: GPU variants are tested on a GPU machine (scripts/gpu-check)";
    }
}

// The normalized sampled Gaussian out to where it vanishes in float64 (below 1e-30 of
// its peak), index 0 at the centre.
std::vector<double> untruncated_taps(double sigma, int *reach) {
    *reach = int(std::ceil(12.0 * sigma)) + 2;
    std::vector<double> g(size_t(2 * *reach + 1));
    double sum = 0.0;
    for (int i = -*reach; i <= *reach; i++) {
        g[size_t(i + *reach)] = std::exp(-double(i) * i / (2.0 * sigma * sigma));
        sum += g[size_t(i + *reach)];
    }
    for (double &v : g) {
        v /= sum;
    }
    return g;
}

// The image filtered along y, then x, each sample read through the boundary rule.
Image reference_blur(const Image &img, double sigma, Boundary b, double fill) {
    int reach = 0;
    const std::vector<double> g = untruncated_taps(sigma, &reach);
    const int w = img.width, h = img.height;
    // Columns first: an extended column pass is needed for the rows' reads outside the
    // image, which the rule maps back into it (constant: fill, whose blur is fill).
    Image columns{w, h, std::vector<double>(size_t(w) * h)};
    for (int y = 0; y < h; y++) {
        for (int x = 0; x < w; x++) {
            double s = 0.0;
            for (int j = -reach; j <= reach; j++) {
                s += g[size_t(j + reach)] * sample(img, x, y + j, b, fill);
            }
            columns.data[size_t(y) * w + x] = s;
        }
    }
    Image out{w, h, std::vector<double>(size_t(w) * h)};
    for (int y = 0; y < h; y++) {
        for (int x = 0; x < w; x++) {
            double s = 0.0;
            for (int i = -reach; i <= reach; i++) {
                s += g[size_t(i + reach)] * sample(columns, x + i, y, b, fill);
            }
            out.data[size_t(y) * w + x] = s;
        }
    }
    return out;
}

// Tolerance: the approximation's stated bound (halconv.h) times max |x|, plus the
// recursions' rounding. A first-order recursion with |p| = 1 - d rounds each step by at
// most 2u |state| with |state| <= M / d, and each error decays by |p| per step: at most
// 2uM / d^2 in all, weighted by |a| ~ |alpha| / (sqrt(2 pi) sigma). With d >= 2.04 / sigma
// and sum |alpha| < 5 that is about u M sigma per direction and axis: 4 u M sigma for
// the two directions and axes, doubled, plus 64 u M for small sigma and the final sums.
double tolerance(double sigma, Precision p, double max_abs) {
    const double u = unit_roundoff(p);
    return (recursive_gaussian_error(sigma) + (8.0 * sigma + 64.0) * u) * max_abs;
}

// Runs fn, expects halconv::Error of `code` whose message holds every fragment.
template <typename Fn>
void expect_error(Fn fn, ErrorCode code, std::initializer_list<const char *> fragments) {
    try {
        fn();
        ADD_FAILURE() << "expected halconv::Error";
    } catch (const Error &e) {
        EXPECT_EQ(e.code(), code) << e.what();
        for (const char *f : fragments) {
            EXPECT_THAT(e.what(), HasSubstr(f));
        }
    }
}

using Param = std::tuple<Device, Precision>;

class RecursiveGaussian : public ::testing::TestWithParam<Param> {
protected:
    void SetUp() override { skip_without_cuda(std::get<0>(GetParam())); }
};

struct BlurCase {
    int width, height;
    double sigma;
};

// Each case on every boundary, fresh data, poisoned output, against the reference.
void expect_blurs_match(Device device, Precision precision, const std::vector<BlurCase> &cases, double fill) {
    for (const BlurCase &c : cases) {
        for (Boundary b :
             {Boundary::constant, Boundary::nearest, Boundary::reflect, Boundary::mirror, Boundary::wrap}) {
            SCOPED_TRACE(std::to_string(c.width) + "x" + std::to_string(c.height) + " sigma " +
                         std::to_string(c.sigma) + " boundary " + to_string(b));
            Image img;
            Halide::Runtime::Buffer<> image = random_buffer(storage_type(precision), c.width, c.height, img);
            Options o;
            o.device = device;
            o.precision = precision;
            o.boundary = b;
            o.fill_value = fill;
            Halide::Runtime::Buffer<> out(output_type(precision), c.width, c.height);
            poison(out);
            const Dispatch d = gaussian_blur(image, out, c.sigma, o, GaussianMethod::recursive);
            out.copy_to_host();
            EXPECT_EQ(d.device, device);
            EXPECT_THAT(d.variant, HasSubstr("recursive_gaussian"));
            Reference ref;
            ref.value = reference_blur(img, c.sigma, b, fill);
            EXPECT_TRUE(matches_reference_within(out, ref, precision, tolerance(c.sigma, precision, 1.0)));
        }
    }
}

// Shapes from one sample to more than two segments of the CUDA stage per line; sigmas
// from the smallest allowed to 20 times the image.
TEST_P(RecursiveGaussian, MatchesUntruncatedGaussianOnEveryBoundary) {
    const auto [device, precision] = GetParam();
    expect_blurs_match(device, precision,
                       {{67, 45, 0.5},
                        {67, 45, 3.0},
                        {1, 1, 2.0},
                        {1, 7, 1.5},
                        {9, 1, 1.0},
                        {2, 2, 4.0},
                        {130, 97, 12.0},
                        {5, 3, 100.0},
                        {150, 2, 30.0},
                        {31, 200, 1000.0}},
                       0.25);
}

// Lines longer than a CUDA block's chunk (1024 samples), whose states cross blocks: up
// to the eight of a cluster (8192), past it (by segments), and last chunks of one or two
// samples; with each axis whole or by segments, and sigmas reaching across the chunks.
TEST_P(RecursiveGaussian, LinesAcrossBlocks) {
    const auto [device, precision] = GetParam();
    expect_blurs_match(device, precision,
                       {{2500, 3, 4.0},
                        {3, 2500, 25.0},
                        {8192, 2, 2.0},
                        {8193, 2, 2.0},
                        {3, 8200, 3.0},
                        {1025, 9, 10.0},
                        {2, 1026, 0.7},
                        {33, 2049, 5.0},
                        {1030, 2, 400.0}},
                       -0.5);
}

// A plan made once runs many images, and an image placed at non-zero mins is read from its own.
TEST_P(RecursiveGaussian, PlanAppliesToManyImages) {
    const auto [device, precision] = GetParam();
    Options o;
    o.device = device;
    o.precision = precision;
    o.boundary = Boundary::reflect;
    const Plan plan = Plan::gaussian({70, 33}, 5.0, o, GaussianMethod::recursive);
    for (int run = 0; run < 3; run++) {
        Image img;
        Halide::Runtime::Buffer<> image = random_buffer(storage_type(precision), 70, 33, img);
        image.set_min(run * 5, -run);
        Halide::Runtime::Buffer<> out(output_type(precision), 70, 33);
        out.set_min(-run, 3 * run);
        poison(out);
        plan.apply(image, out);
        out.copy_to_host();
        Reference ref;
        ref.value = reference_blur(img, 5.0, Boundary::reflect, 0.0);
        EXPECT_TRUE(matches_reference_within(out, ref, precision, tolerance(5.0, precision, 1.0))) << run;
    }
}

// Lines of 10^5 samples along either axis: thousands of segments per line on CUDA (the
// carry kernel's runs), one line the other way.
TEST_P(RecursiveGaussian, LongLines) {
    const auto [device, precision] = GetParam();
    for (const Extent2d e : {Extent2d{100000, 1}, Extent2d{1, 100000}}) {
        for (Boundary b : {Boundary::mirror, Boundary::wrap}) {
            SCOPED_TRACE(std::to_string(e.width) + "x" + std::to_string(e.height) + " " + to_string(b));
            Image img;
            Halide::Runtime::Buffer<> image = random_buffer(storage_type(precision), e.width, e.height, img);
            Options o;
            o.device = device;
            o.precision = precision;
            o.boundary = b;
            Halide::Runtime::Buffer<> out(output_type(precision), e.width, e.height);
            poison(out);
            gaussian_blur(image, out, 40.0, o, GaussianMethod::recursive);
            out.copy_to_host();
            Reference ref;
            ref.value = reference_blur(img, 40.0, b, 0.0);
            EXPECT_TRUE(matches_reference_within(out, ref, precision, tolerance(40.0, precision, 1.0)));
        }
    }
    if (device == Device::cuda) {
        // Past the stage's longest line (its segments' blocks on the grid's y axis): refused.
        Options o;
        o.device = device;
        o.precision = precision;
        const int64_t longest = rk::rg::max_line(precision == Precision::f64 ? 8 : 4);
        expect_error(
            [&] {
                (void)Plan::gaussian({1, int(longest + 1)}, 2.0, o, GaussianMethod::recursive);
            },
            ErrorCode::unsupported, {"a line of", "device cpu takes any"});
        EXPECT_NO_THROW((void)Plan::gaussian({int(longest), 1}, 2.0, o, GaussianMethod::recursive));
    }
}

// Very tall and very wide images on CUDA (CudaGridLimits' sizes): whole lines in more
// groups of lines than a grid's y extent holds, and the long axis by segments. Outputs
// at 4096 positions, the corners among them, against the untruncated Gaussian there.
TEST(RecursiveGaussianCuda, TallAndWideImages) {
    if (!cuda_available()) {
        GTEST_SKIP() << "no CUDA device on this machine: GPU variants are tested on a GPU machine (scripts/gpu-check)";
    }
    const double sigma = 2.0;
    int reach = 0;
    const std::vector<double> g = untruncated_taps(sigma, &reach);
    for (const auto &[w, h] : {std::pair{1, 1000000}, {1000000, 1}, {65536, 2048}, {2048, 200000}}) {
        SCOPED_TRACE(std::to_string(w) + "x" + std::to_string(h));
        Halide::Runtime::Buffer<> input(halide_type_t(halide_type_float, 32), w, h);
        for (int64_t y = 0; y < h; y++) {
            for (int64_t x = 0; x < w; x++) {
                store(input, size_t(y) * size_t(w) + size_t(x), hash_sample(x, y));
            }
        }
        Options o;
        o.device = Device::cuda;
        o.precision = Precision::f32;
        o.boundary = Boundary::reflect;
        Halide::Runtime::Buffer<> out(halide_type_t(halide_type_float, 32), w, h);
        poison(out);
        gaussian_blur(input, out, sigma, o, GaussianMethod::recursive);
        ASSERT_EQ(out.copy_to_host(), 0);
        std::uniform_int_distribution<int> px(0, w - 1), py(0, h - 1);
        double worst = 0.0;
        for (int n = 0; n < 4096; n++) {
            const int x = n < 4 ? (n & 1) * (w - 1) : px(rng()), y = n < 4 ? (n >> 1) * (h - 1) : py(rng());
            double want = 0.0;
            for (int j = -reach; j <= reach; j++) {
                double row = 0.0;
                for (int i = -reach; i <= reach; i++) {
                    row += g[size_t(i + reach)] * hash_sample(boundary_index(x + i, w, Boundary::reflect),
                                                              boundary_index(y + j, h, Boundary::reflect));
                }
                want += g[size_t(j + reach)] * row;
            }
            worst = std::max(worst, std::fabs(load(out, size_t(y) * size_t(w) + size_t(x)) - want));
        }
        EXPECT_LE(worst, tolerance(sigma, Precision::f32, 1.0));
    }
}

std::string param_name(const ::testing::TestParamInfo<Param> &info) {
    return to_string(std::get<1>(info.param));
}

INSTANTIATE_TEST_SUITE_P(Cpu, RecursiveGaussian,
                         ::testing::Combine(::testing::Values(Device::cpu),
                                            ::testing::Values(Precision::f64, Precision::f32, Precision::f16f32)),
                         param_name);
INSTANTIATE_TEST_SUITE_P(Cuda, RecursiveGaussian,
                         ::testing::Combine(::testing::Values(Device::cuda),
                                            ::testing::Values(Precision::f64, Precision::f32, Precision::f16f32)),
                         param_name);

// The approximation's bound over the whole range: the fit's 1.9e-6 of the peak makes
// about 1.6e-5 of the 2D blur, whatever sigma.
TEST(RecursiveGaussianError, BoundedForEverySigma) {
    for (double sigma : {0.5, 0.7, 1.0, 2.0, 5.0, 20.0, 100.0, 1000.0, 10000.0}) {
        const double e = recursive_gaussian_error(sigma);
        EXPECT_GT(e, 0.0) << sigma;
        EXPECT_LT(e, 3e-5) << sigma;
    }
}

TEST(RecursiveGaussianErrors, RefusesWhatItCannotCompute) {
    Options o;
    o.device = Device::cpu;
    const Extent2d e{16, 12};
    const auto plan = [&](double sigma, const Options &opt) {
        (void)Plan::gaussian(e, sigma, opt, GaussianMethod::recursive);
    };
    for (double sigma : {0.0, -1.0, 0.49, 10000.5, std::nan(""), double(INFINITY)}) {
        expect_error([&] { plan(sigma, o); }, ErrorCode::invalid_argument,
                     {"recursive Gaussian sigma", "allowed from"});
        expect_error([&] { (void)recursive_gaussian_error(sigma); }, ErrorCode::invalid_argument, {"allowed from"});
    }
    for (Mode m : {Mode::valid, Mode::full}) {
        Options v = o;
        v.mode = m;
        expect_error([&] { plan(2.0, v); }, ErrorCode::unsupported, {"recursive Gaussian", "mode"});
    }
    Options half = o;
    half.precision = Precision::f16;
    expect_error([&] { plan(2.0, half); }, ErrorCode::unsupported, {"recursive Gaussian", "f16"});
    Options banded = o;
    banded.bands.banding = Banding::always;
    expect_error([&] { plan(2.0, banded); }, ErrorCode::unsupported, {"row bands"});
    expect_error([&] { (void)Plan::gaussian(e, 2.0, o, static_cast<GaussianMethod>(7)); }, ErrorCode::invalid_argument,
                 {"unknown Gaussian method", "exact, recursive"});
    // The image of a recursive plan is checked as any plan's.
    const Plan p = Plan::gaussian(e, 2.0, o, GaussianMethod::recursive);
    Halide::Runtime::Buffer<float> wrong(15, 12), out(16, 12);
    expect_error([&] { p.apply(wrong, out); }, ErrorCode::invalid_argument, {"image is 15 x 12"});
    // GaussianMethod::exact is the taps' path, as gaussian_blur without a method.
    EXPECT_EQ(Plan::gaussian(e, 2.0, o, GaussianMethod::exact).dispatch().variant,
              Plan::gaussian(e, 2.0, o).dispatch().variant);
}

}  // namespace
}  // namespace halconv::test
