// Multi-channel convolution (C input channels, N kernels) against the float64 reference:
// the direct Halide pipelines on the CPU (always) and the GPU, the im2col extern stage
// (f16 / f16f32 on tensor cores, f32 through cuBLAS) and the implicit GEMM (f16 / f16f32)
// on the GPU, for C in {1,3,4,5,16,64},
// N in {1,8,64}, K in {1,3,5,7}, odd and non-square images, every mode and boundary,
// tiles of the column buffer, strided outputs, device-resident inputs and the errors.
//
// Exactness: most cases draw integer data (image in -2..2, kernels in -1..1). Products
// and partial sums are then integers no larger than sum |k||x|, exact in any arithmetic
// whose significand holds that sum (2^11 for f16, 2^24 for f32 and f16f32): there the
// result must equal the reference exactly, rounded once to the output type; a missed,
// misplaced or doubled tap, channel or kernel changes it by at least 1. Beyond that
// (f16 arithmetic with large sums) and for real-valued data, the error bound of
// tests/test_support.h applies: (n + 4) u sum |k||x| for n taps, plus the output rounding.
#include <algorithm>
#include <cmath>
#include <functional>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "multichannel_reference.h"
#include "test_support.h"

namespace halconv::test {
namespace {

struct Shape {
    int channels, filters, k;
};

// The issue's matrix: C x N x K.
std::vector<Shape> issue_shapes() {
    std::vector<Shape> shapes;
    for (const int c : {1, 3, 4, 5, 16, 64}) {
        for (const int n : {1, 8, 64}) {
            for (const int k : {1, 3, 5, 7}) {
                shapes.push_back({c, n, k});
            }
        }
    }
    return shapes;
}

// Odd, non-square images, smaller where the work per pixel is large.
int image_width(const Shape &s) {
    return s.channels * s.filters >= 512 ? 17 : 23;
}
int image_height(const Shape &s) {
    return s.channels * s.filters >= 512 ? 13 : 19;
}

double draw(bool integers, double integer_bound) {
    if (integers) {
        std::uniform_int_distribution<int> d(-static_cast<int>(integer_bound), static_cast<int>(integer_bound));
        return d(rng());
    }
    return std::uniform_real_distribution<double>(-1.0, 1.0)(rng());
}

Halide::Runtime::Buffer<> random_image(Precision p, int channels, int width, int height, bool integers, Tensor &exact) {
    Halide::Runtime::Buffer<> b(storage_type(p), {channels, width, height});
    exact = Tensor{channels, width, height, std::vector<double>(b.number_of_elements())};
    for (size_t i = 0; i < exact.data.size(); i++) {
        store(b, i, draw(integers, 2));
        exact.data[i] = load(b, i);
    }
    return b;
}

Halide::Runtime::Buffer<> random_kernels(Precision p, const Shape &s, bool integers, KernelBank &exact) {
    Halide::Runtime::Buffer<> b(storage_type(p), {s.channels, s.k, s.k, s.filters});
    exact = KernelBank{s.channels, s.k, s.k, s.filters, std::vector<double>(b.number_of_elements())};
    for (size_t i = 0; i < exact.data.size(); i++) {
        store(b, i, draw(integers, 1));
        exact.data[i] = load(b, i);
    }
    return b;
}

double round_to_output(double v, Precision p) {
    if (p == Precision::f16) {
        return double_from_float16_bits(float16_bits_from_double(v));
    }
    return p == Precision::f64 ? v : static_cast<double>(static_cast<float>(v));
}

// Largest |sum| an arithmetic adds integers in exactly.
double exact_integer_limit(Precision p, bool tensor_cores) {
    if (p == Precision::f16 && !tensor_cores) {
        return 0x1p11;
    }
    return p == Precision::f64 ? 0x1p53 : 0x1p24;
}

// out (n, x, y), read through its own strides (it may be a crop of a larger buffer).
::testing::AssertionResult matches(const Halide::Runtime::Buffer<> &out, const MultichannelReference &ref, Precision p,
                                   int taps, bool integers, bool tensor_cores) {
    const Tensor &want = ref.value;
    if (out.dim(0).extent() != want.channels || out.dim(1).extent() != want.width ||
        out.dim(2).extent() != want.height) {
        return ::testing::AssertionFailure()
               << "output is " << out.dim(0).extent() << " x " << out.dim(1).extent() << " x " << out.dim(2).extent()
               << ", reference " << want.channels << " x " << want.width << " x " << want.height;
    }
    // Tensor cores may truncate their f32 additions (unit 2^-23, see test_tensor_core.cpp).
    const double u = tensor_cores ? 0x1p-23 : unit_roundoff(p);
    const double limit = exact_integer_limit(p, tensor_cores);
    int bad = 0;
    std::string first;
    for (int y = 0; y < want.height; y++) {
        for (int x = 0; x < want.width; x++) {
            for (int n = 0; n < want.channels; n++) {
                const size_t at = (static_cast<size_t>(y) * want.width + x) * want.channels + n;
                const double w = want.data[at], m = ref.magnitude.data[at];
                const int pos[3] = {out.dim(0).min() + n, out.dim(1).min() + x, out.dim(2).min() + y};
                const uint8_t *ptr = static_cast<const uint8_t *>(out.raw_buffer()->address_of(pos));
                const double got = out.type().bits == 64 ? *reinterpret_cast<const double *>(ptr)
                                   : out.type().bits == 32
                                       ? *reinterpret_cast<const float *>(ptr)
                                       : double_from_float16_bits(*reinterpret_cast<const uint16_t *>(ptr));
                double tol = 0.0;
                bool ok = false;
                if (integers && m <= limit) {
                    ok = got == round_to_output(w, p);
                } else {
                    tol = (taps + 4) * u * m + output_roundoff(p) * std::fabs(w) + underflow_step(p);
                    ok = std::fabs(got - w) <= tol;
                }
                if (!ok && bad++ == 0) {
                    first = "(n " + std::to_string(n) + ", x " + std::to_string(x) + ", y " + std::to_string(y) +
                            "): got " + std::to_string(got) + " want " + std::to_string(w) + " tol " +
                            std::to_string(tol);
                }
            }
        }
    }
    if (bad != 0) {
        return ::testing::AssertionFailure() << bad << " of " << want.data.size() << " samples off; first " << first;
    }
    return ::testing::AssertionSuccess();
}

// Whether the algorithm adds on tensor cores (f32 accumulation that may truncate).
bool on_tensor_cores(MultichannelAlgorithm a, Precision p) {
    return (a == MultichannelAlgorithm::im2col && p != Precision::f32) || a == MultichannelAlgorithm::implicit_gemm;
}

struct Case {
    Shape shape;
    Mode mode = Mode::same;
    Boundary boundary = Boundary::constant;
    double fill = 0.0;
    bool flip = false;
    int width = 0, height = 0;
    bool integers = true;
    int output_pad = 0;  // > 0: the output is a crop of filters + output_pad per pixel
};

std::string describe(const Case &c, const MultichannelOptions &o) {
    return std::string(to_string(o.algorithm)) + " " + to_string(o.precision) + " on " + to_string(o.device) + ": C " +
           std::to_string(c.shape.channels) + " N " + std::to_string(c.shape.filters) + " K " +
           std::to_string(c.shape.k) + " image " + std::to_string(c.width) + "x" + std::to_string(c.height) + " " +
           to_string(c.mode) + " " + to_string(c.boundary) + (c.flip ? " convolve" : " correlate") +
           (c.integers ? " integers" : " reals") +
           (c.output_pad > 0 ? " output pixels " + std::to_string(c.shape.filters + c.output_pad) + " apart" : "");
}

// Runs one case through the public API and compares it with the reference.
void check_case(const Case &c, const MultichannelOptions &o) {
    SCOPED_TRACE(describe(c, o));
    Tensor img_exact;
    KernelBank ker_exact;
    Halide::Runtime::Buffer<> img =
        random_image(o.precision, c.shape.channels, c.width, c.height, c.integers, img_exact);
    Halide::Runtime::Buffer<> ker = random_kernels(o.precision, c.shape, c.integers, ker_exact);
    MultichannelOptions opts = o;
    opts.mode = c.mode;
    opts.boundary = c.boundary;
    opts.fill_value = c.fill;
    Halide::Runtime::Buffer<> out = detail::allocate_multichannel_output(img.raw_buffer(), ker.raw_buffer(), opts);
    Halide::Runtime::Buffer<> wide;
    if (c.output_pad > 0) {
        wide = Halide::Runtime::Buffer<>(out.type(),
                                         {c.shape.filters + c.output_pad, out.dim(1).extent(), out.dim(2).extent()});
        wide.set_min({out.dim(0).min(), out.dim(1).min(), out.dim(2).min()});
        out = wide.cropped(0, out.dim(0).min(), c.shape.filters);
    }
    poison(out);
    const MultichannelDispatch d =
        c.flip ? multichannel_convolve2d(img, ker, out, opts) : multichannel_correlate2d(img, ker, out, opts);
    EXPECT_EQ(d.device, o.device);
    if (d.device == Device::cuda) {
        out.copy_to_host();
    }
    const MultichannelReference ref = multichannel_reference(img_exact, ker_exact, c.mode, c.boundary, c.fill, c.flip);
    EXPECT_TRUE(matches(out, ref, o.precision, c.shape.channels * c.shape.k * c.shape.k, c.integers,
                        on_tensor_cores(d.algorithm, o.precision)));
}

// The issue's matrix, alternating mode, boundary and correlation / convolution.
void check_matrix(const MultichannelOptions &o, bool both_modes) {
    const Boundary boundaries[] = {Boundary::constant, Boundary::nearest, Boundary::reflect, Boundary::mirror,
                                   Boundary::wrap};
    int i = 0;
    for (const Shape &s : issue_shapes()) {
        for (const Mode mode : {Mode::valid, Mode::same}) {
            if (!both_modes && (mode == Mode::valid) != (i % 2 == 0)) {
                continue;
            }
            Case c;
            c.shape = s;
            c.mode = mode;
            c.boundary = boundaries[i % 5];
            c.fill = c.boundary == Boundary::constant ? 1.0 : 0.0;
            c.flip = i % 3 == 1;
            c.width = image_width(s);
            c.height = image_height(s);
            check_case(c, o);
        }
        i++;
    }
}

MultichannelOptions options(MultichannelAlgorithm a, Precision p, Device d) {
    MultichannelOptions o;
    o.algorithm = a;
    o.precision = p;
    o.device = d;
    return o;
}

// ---- CPU: the direct pipeline, every precision ----

class MultichannelCpu : public ::testing::TestWithParam<Precision> {};

TEST_P(MultichannelCpu, IssueMatrixMatchesReference) {
    check_matrix(options(MultichannelAlgorithm::direct, GetParam(), Device::cpu), false);
}

TEST_P(MultichannelCpu, RealValuedDataWithinTheErrorBound) {
    for (const Shape s : {Shape{3, 8, 5}, Shape{64, 8, 3}, Shape{5, 1, 7}}) {
        Case c;
        c.shape = s;
        c.mode = Mode::same;
        c.boundary = Boundary::reflect;
        c.width = 21;
        c.height = 15;
        c.integers = false;
        check_case(c, options(MultichannelAlgorithm::direct, GetParam(), Device::cpu));
    }
}

INSTANTIATE_TEST_SUITE_P(Precisions, MultichannelCpu,
                         ::testing::Values(Precision::f64, Precision::f32, Precision::f16, Precision::f16f32),
                         [](const auto &param_info) { return std::string(to_string(param_info.param)); });

TEST(MultichannelCpuShapes, TinyEvenFullAndKernelLargerThanImage) {
    const MultichannelOptions o = options(MultichannelAlgorithm::direct, Precision::f32, Device::cpu);
    for (const auto &[w, h, k, mode] : std::vector<std::tuple<int, int, int, Mode>>{{1, 1, 1, Mode::valid},
                                                                                    {1, 1, 3, Mode::same},
                                                                                    {2, 3, 5, Mode::same},
                                                                                    {4, 6, 2, Mode::valid},
                                                                                    {8, 6, 4, Mode::same},
                                                                                    {5, 3, 3, Mode::full},
                                                                                    {3, 2, 7, Mode::full}}) {
        for (const Boundary b : {Boundary::constant, Boundary::mirror, Boundary::wrap}) {
            Case c;
            c.shape = {3, 4, k};
            c.mode = mode;
            c.boundary = b;
            c.fill = -2.0;
            c.flip = w % 2 == 0;
            c.width = w;
            c.height = h;
            check_case(c, o);
        }
    }
}

// Channels count from each buffer's first channel, kernel n feeds output channel n, and
// the spatial mins are ignored, whatever the buffers' mins.
TEST(MultichannelCpuShapes, BuffersWithNonZeroMins) {
    const Shape s{5, 3, 3};
    Tensor img_exact;
    KernelBank ker_exact;
    Halide::Runtime::Buffer<> img = random_image(Precision::f32, s.channels, 15, 11, true, img_exact);
    Halide::Runtime::Buffer<> ker = random_kernels(Precision::f32, s, true, ker_exact);
    img.translate({7, -3, 40});
    ker.translate({2, 1, -1, 9});
    Halide::Runtime::Buffer<> out(halide_type_of<float>(), {s.filters, 15, 11});
    out.translate({9, 5, 5});
    poison(out);
    MultichannelOptions o = options(MultichannelAlgorithm::direct, Precision::f32, Device::cpu);
    o.boundary = Boundary::nearest;
    multichannel_correlate2d(img, ker, out, o);
    const MultichannelReference ref = multichannel_reference(img_exact, ker_exact, Mode::same, o.boundary, 0.0, false);
    EXPECT_TRUE(matches(out, ref, Precision::f32, 45, true, false));
}

// ---- Errors: typed, with what was wrong and what is allowed ----

TEST(MultichannelErrors, RejectedWithAReason) {
    const auto expect_error = [](const std::function<void()> &f, const std::string &needle) {
        try {
            f();
            ADD_FAILURE() << "no error; expected one mentioning '" << needle << "'";
        } catch (const Error &e) {
            EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what();
        }
    };
    Halide::Runtime::Buffer<float> img(3, 9, 7), ker(3, 3, 3, 2), ker4(4, 3, 3, 2), out(2, 9, 7);
    Halide::Runtime::Buffer<float> flat(9, 7), wrong_out(2, 8, 7);
    Halide::Runtime::Buffer<double> img64(3, 9, 7);
    img.fill(0.5f);
    ker.fill(0.25f);
    ker4.fill(0.25f);
    img64.fill(0.5);
    MultichannelOptions cpu = options(MultichannelAlgorithm::direct, Precision::f32, Device::cpu);
    expect_error([&] { multichannel_correlate2d(img, ker4, out, cpu); }, "3 channels but the kernels have 4");
    expect_error([&] { multichannel_correlate2d(flat, ker, out, cpu); }, "must have 3");
    expect_error([&] { multichannel_correlate2d(img64, ker, out, cpu); }, "needs float32");
    expect_error([&] { multichannel_correlate2d(img, ker, wrong_out, cpu); }, "need 2 x 9 x 7");
    MultichannelOptions valid = cpu;
    valid.mode = Mode::valid;
    Halide::Runtime::Buffer<float> small(3, 2, 2);
    small.fill(0.f);
    expect_error([&] { multichannel_correlate2d(small, ker, valid); }, "valid needs the kernel to fit");
    MultichannelOptions im2col_f64 = options(MultichannelAlgorithm::im2col, Precision::f64, Device::automatic);
    Halide::Runtime::Buffer<double> ker64(3, 3, 3, 2), out64(2, 9, 7);
    ker64.fill(0.25);
    if (cuda_available()) {
        expect_error([&] { multichannel_correlate2d(img64, ker64, out64, im2col_f64); }, "no f64 GEMM");
    }
    MultichannelOptions im2col_cpu = options(MultichannelAlgorithm::im2col, Precision::f32, Device::cpu);
    expect_error([&] { multichannel_correlate2d(img, ker, out, im2col_cpu); }, "CUDA only");
    MultichannelOptions bad_algorithm = cpu;
    bad_algorithm.algorithm = static_cast<MultichannelAlgorithm>(7);
    expect_error([&] { multichannel_correlate2d(img, ker, out, bad_algorithm); },
                 "allowed: auto, direct, im2col, implicit_gemm");
    MultichannelOptions implicit_f32 = options(MultichannelAlgorithm::implicit_gemm, Precision::f32, Device::automatic);
    expect_error([&] { multichannel_correlate2d(img, ker, out, implicit_f32); }, "use precision f16 or f16f32");
    MultichannelOptions implicit_cpu = options(MultichannelAlgorithm::implicit_gemm, Precision::f16, Device::cpu);
    Tensor img16_exact;
    KernelBank ker16_exact;
    Halide::Runtime::Buffer<> img16 = random_image(Precision::f16, 3, 9, 7, true, img16_exact);
    Halide::Runtime::Buffer<> ker16 = random_kernels(Precision::f16, {3, 2, 3}, true, ker16_exact);
    Halide::Runtime::Buffer<> out16(output_type(Precision::f16), {2, 9, 7});
    expect_error([&] { multichannel_correlate2d(img16, ker16, out16, implicit_cpu); }, "CUDA only");
    ker(1, 2, 0, 1) = std::nanf("");
    expect_error([&] { multichannel_correlate2d(img, ker, out, cpu); }, "non-finite coefficient (nan) at (1, 2, 0, 1)");
    ker.fill(0.25f);
    // Channels not innermost: x fastest in memory.
    Halide::Runtime::Buffer<float> planar({3, 9, 7}, {1, 0, 2});
    planar.fill(0.5f);
    expect_error([&] { multichannel_correlate2d(planar, ker, out, cpu); }, "dimension 0 stride 1");
    // An output sharing the image's memory (2 of its 3 channels, read as n x, y): no
    // in-place filtering.
    const halide_dimension_t shape[3] = {{0, 2, 1, 0}, {0, 9, 3, 0}, {0, 7, 27, 0}};
    Halide::Runtime::Buffer<float> aliased(img.data(), 3, shape);
    expect_error([&] { multichannel_correlate2d(img, ker, aliased, cpu); }, "output overlaps the image in host memory");
}

// ---- GPU: the direct pipeline, im2col and the implicit GEMM ----

#define HALCONV_REQUIRE_GPU()                                                                             \
    if (!cuda_available()) {                                                                              \
        GTEST_SKIP() << "no CUDA device on this machine: the GPU multichannel paths are tested on a GPU " \
                        "machine (scripts/gpu-check)";                                                    \
    }

struct GpuRun {
    MultichannelAlgorithm algorithm;
    Precision precision;
};

class MultichannelGpu : public ::testing::TestWithParam<GpuRun> {
protected:
    MultichannelOptions gpu() const { return options(GetParam().algorithm, GetParam().precision, Device::cuda); }
};

TEST_P(MultichannelGpu, IssueMatrixMatchesReference) {
    HALCONV_REQUIRE_GPU();
    check_matrix(gpu(), true);
}

// Depth pitches the matrix does not reach (the 12-channel class, a general kernel with a
// narrower last group) and real-valued data against the error bound.
TEST_P(MultichannelGpu, OtherChannelCountsAndRealData) {
    HALCONV_REQUIRE_GPU();
    for (const int channels : {2, 9, 12, 20, 33}) {
        for (const Mode mode : {Mode::valid, Mode::same}) {
            Case c;
            c.shape = {channels, 24, 3};
            c.mode = mode;
            c.boundary = Boundary::mirror;
            c.width = 29;
            c.height = 9;
            check_case(c, gpu());
            c.integers = false;
            check_case(c, gpu());
        }
    }
}

// Enough pixels x (C kh kw) that the column buffer is filled in several tiles.
TEST_P(MultichannelGpu, ManyTilesOfTheColumnBuffer) {
    HALCONV_REQUIRE_GPU();
    for (const Mode mode : {Mode::valid, Mode::same}) {
        Case c;
        c.shape = {64, 8, 7};
        c.mode = mode;
        c.boundary = Boundary::reflect;
        c.flip = true;
        c.width = 101;
        c.height = 77;
        check_case(c, gpu());
    }
}

// An output that is a crop of a larger buffer (rows further apart than W' x N), kernels
// and image with non-zero mins, the image resident on the device only.
TEST_P(MultichannelGpu, StridedOutputAndDeviceResidentImage) {
    HALCONV_REQUIRE_GPU();
    const MultichannelOptions o = gpu();
    const Shape s{4, 8, 3};
    Tensor img_exact;
    KernelBank ker_exact;
    Halide::Runtime::Buffer<> img = random_image(o.precision, s.channels, 37, 21, true, img_exact);
    Halide::Runtime::Buffer<> ker = random_kernels(o.precision, s, true, ker_exact);
    img.translate({0, 3, -2});
    ker.translate({1, 0, 0, 4});
    ASSERT_EQ(img.copy_to_device(cuda_device_interface()), 0);
    img.set_host_dirty(false);
    for (const Mode mode : {Mode::valid, Mode::same}) {
        MultichannelOptions m = o;
        m.mode = mode;
        const int w = mode == Mode::valid ? 35 : 37, h = mode == Mode::valid ? 19 : 21;
        Halide::Runtime::Buffer<> big(output_type(o.precision), {s.filters, w + 5, h});
        poison(big);
        Halide::Runtime::Buffer<> out = big.cropped(1, 2, w);
        out.translate({4, 0, 0});
        multichannel_correlate2d(img, ker, out, m);
        out.copy_to_host();
        const MultichannelReference ref = multichannel_reference(img_exact, ker_exact, mode, m.boundary, 0.0, false);
        EXPECT_TRUE(matches(out, ref, o.precision, 36, true, on_tensor_cores(o.algorithm, o.precision)))
            << to_string(mode);
    }
}

// The implicit GEMM cuts the k dimension into steps (kernel rows x columns x channel
// chunk) when a block's patch and weights do not fit shared memory: a 31 x 31 kernel on 8
// channels (dense pixels, k rows split), 15 x 15 on 16 channels with 80 filters (two
// filter blocks, the second partial), 7 x 7 on 3 channels (seed 002's C = 3 case).
TEST_P(MultichannelGpu, LargeKernelsAndManyFilters) {
    HALCONV_REQUIRE_GPU();
    for (const auto &[shape, w, h] : std::vector<std::tuple<Shape, int, int>>{
             {{8, 64, 31}, 45, 36}, {{16, 80, 15}, 70, 23}, {{3, 16, 7}, 131, 9}}) {
        for (const Mode mode : {Mode::valid, Mode::same}) {
            Case c;
            c.shape = shape;
            c.mode = mode;
            c.boundary = Boundary::nearest;
            c.flip = mode == Mode::same;
            c.width = w;
            c.height = h;
            check_case(c, gpu());
        }
    }
}

// Shapes for the Hopper wgmma implicit GEMM (C > 8, more than 32 filters; other GPUs and
// algorithms run them too): images of several 128 x 4 output tiles with partial ones
// right and below, channel counts the TMA reads past C as zeros (12, 20, 33; 33 also
// needs the aligned copy), one partial filter block, a full one and a partial one, and
// three blocks; then the same into an output whose pixels are filters + 1 apart, which
// rules out 16-byte stores.
TEST_P(MultichannelGpu, WideFilterBanksOverManyTiles) {
    HALCONV_REQUIRE_GPU();
    for (const auto &[shape, w, h] : std::vector<std::tuple<Shape, int, int>>{
             {{12, 40, 3}, 261, 11}, {{20, 72, 5}, 133, 10}, {{33, 64, 3}, 130, 9}, {{64, 130, 1}, 257, 6}}) {
        for (const int pad : {0, 1}) {
            Case c;
            c.shape = shape;
            c.mode = pad == 0 ? Mode::valid : Mode::same;
            c.boundary = Boundary::reflect;
            c.flip = pad == 1;
            c.width = w;
            c.height = h;
            c.output_pad = pad;
            check_case(c, gpu());
        }
    }
}

// One infinite image sample: the outputs whose window holds it are not finite, every
// other output is exact. A kernel that multiplied samples outside an output's window by
// zero weights (padding taps or channels) would spread NaN (Inf * 0) beyond the window.
TEST_P(MultichannelGpu, InfiniteSampleStaysInsideItsWindows) {
    HALCONV_REQUIRE_GPU();
    const MultichannelOptions o = gpu();
    for (const auto &[channels, filters] : std::vector<std::pair<int, int>>{{3, 8}, {16, 8}, {16, 40}, {12, 40}}) {
        const Shape s{channels, filters, 5};
        Tensor img_exact;
        KernelBank ker_exact;
        Halide::Runtime::Buffer<> img = random_image(o.precision, channels, 40, 12, true, img_exact);
        Halide::Runtime::Buffer<> ker = random_kernels(o.precision, s, true, ker_exact);
        const int ix = 20, iy = 5;
        const size_t at = (static_cast<size_t>(iy) * 40 + ix) * channels + channels - 1;
        store(img, at, INFINITY);
        img_exact.data[at] = 0.0;
        MultichannelOptions m = o;
        m.mode = Mode::valid;
        Halide::Runtime::Buffer<> out = detail::allocate_multichannel_output(img.raw_buffer(), ker.raw_buffer(), m);
        poison(out);
        multichannel_correlate2d(img, ker, out, m);
        out.copy_to_host();
        const MultichannelReference ref = multichannel_reference(img_exact, ker_exact, m.mode, m.boundary, 0.0, false);
        // Valid output (x, y) reads x .. x + 4, y .. y + 4.
        int inside_finite = 0;
        for (int y = iy - 4; y <= iy; y++) {
            for (int x = ix - 4; x <= ix; x++) {
                for (int n = 0; n < s.filters; n++) {
                    const size_t o_at = (static_cast<size_t>(y) * out.dim(1).extent() + x) * s.filters + n;
                    inside_finite += std::isfinite(load(out, o_at)) ? 1 : 0;
                    store(out, o_at, ref.value.data[o_at]);  // then compared like the rest
                }
            }
        }
        EXPECT_EQ(inside_finite, 0) << channels << " channels, " << filters << " filters";
        EXPECT_TRUE(matches(out, ref, o.precision, channels * 25, true, on_tensor_cores(o.algorithm, o.precision)))
            << channels << " channels, " << filters << " filters";
    }
}

INSTANTIATE_TEST_SUITE_P(Runs, MultichannelGpu,
                         ::testing::Values(GpuRun{MultichannelAlgorithm::implicit_gemm, Precision::f16f32},
                                           GpuRun{MultichannelAlgorithm::implicit_gemm, Precision::f16},
                                           GpuRun{MultichannelAlgorithm::im2col, Precision::f16f32},
                                           GpuRun{MultichannelAlgorithm::im2col, Precision::f16},
                                           GpuRun{MultichannelAlgorithm::im2col, Precision::f32},
                                           GpuRun{MultichannelAlgorithm::direct, Precision::f64},
                                           GpuRun{MultichannelAlgorithm::direct, Precision::f32},
                                           GpuRun{MultichannelAlgorithm::direct, Precision::f16},
                                           GpuRun{MultichannelAlgorithm::direct, Precision::f16f32}),
                         [](const auto &param_info) {
                             return std::string(to_string(param_info.param.algorithm)) + "_" +
                                    to_string(param_info.param.precision);
                         });

// Algorithm::automatic picks the implicit GEMM on a GPU for f16 operands, im2col for f32
// and direct for f64.
TEST(MultichannelGpuDispatch, AutomaticChoosesTheGemmsOnTheGpu) {
    HALCONV_REQUIRE_GPU();
    for (const Precision p : {Precision::f32, Precision::f16f32, Precision::f64}) {
        const MultichannelOptions o = options(MultichannelAlgorithm::automatic, p, Device::cuda);
        Tensor img_exact;
        KernelBank ker_exact;
        Halide::Runtime::Buffer<> img = random_image(p, 3, 15, 9, true, img_exact);
        Halide::Runtime::Buffer<> ker = random_kernels(p, {3, 8, 3}, true, ker_exact);
        Halide::Runtime::Buffer<> out = detail::allocate_multichannel_output(img.raw_buffer(), ker.raw_buffer(), o);
        poison(out);
        const MultichannelDispatch d = multichannel_correlate2d(img, ker, out, o);
        EXPECT_EQ(d.algorithm, p == Precision::f64   ? MultichannelAlgorithm::direct
                               : p == Precision::f32 ? MultichannelAlgorithm::im2col
                                                     : MultichannelAlgorithm::implicit_gemm);
        out.copy_to_host();
        const MultichannelReference ref = multichannel_reference(img_exact, ker_exact, o.mode, o.boundary, 0.0, false);
        EXPECT_TRUE(matches(out, ref, p, 27, true, on_tensor_cores(d.algorithm, p))) << to_string(p);
    }
}

}  // namespace
}  // namespace halconv::test
