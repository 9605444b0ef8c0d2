// The composed pipelines and the Gaussian blur against the float64 reference: edge
// detection (fused and stage by stage), the unsharp mask (tensor-core extern stage on
// CUDA, Halide on the CPU) and gaussian_blur at sigmas whose kernels fit the one-pass
// tiles and sigmas that need the two-pass schedules.
#include <algorithm>
#include <cmath>
#include <tuple>

#include "test_support.h"

namespace halconv::test {
namespace {

void skip_without_cuda(Device device) {
    if (device == Device::cuda && !cuda_available()) {
        GTEST_SKIP() << "no CUDA device on this machine: GPU variants are tested on a GPU machine (scripts/gpu-check)";
    }
}

// A float32 image uniform in [0, 1) and its values as float64.
Halide::Runtime::Buffer<float> random_image(int width, int height, Image &exact) {
    Halide::Runtime::Buffer<float> b(width, height);
    std::uniform_real_distribution<float> dist(0.0f, 1.0f);
    exact = Image{width, height, std::vector<double>(static_cast<size_t>(width) * height)};
    b.for_each_element([&](int x, int y) {
        b(x, y) = dist(rng());
        exact.data[static_cast<size_t>(y) * width + x] = b(x, y);
    });
    return b;
}

Image outer(const std::vector<double> &col, const std::vector<double> &row) {
    Image k{static_cast<int>(row.size()), static_cast<int>(col.size()), {}};
    for (double c : col) {
        for (double r : row) {
            k.data.push_back(c * r);
        }
    }
    return k;
}

const std::vector<Boundary> all_boundaries = {Boundary::constant, Boundary::nearest, Boundary::reflect,
                                              Boundary::mirror, Boundary::wrap};

// ---- Gaussian blur ----

TEST(GaussianTaps, NormalizedSymmetricAndSized) {
    for (double sigma : {0.3, 1.4, 7.5, 40.0}) {
        const std::vector<double> g = gaussian_taps(sigma);
        EXPECT_EQ(static_cast<int>(g.size()), 2 * static_cast<int>(std::ceil(3 * sigma)) + 1);
        double sum = 0.0;
        for (size_t i = 0; i < g.size(); i++) {
            sum += g[i];
            EXPECT_DOUBLE_EQ(g[i], g[g.size() - 1 - i]);
        }
        EXPECT_NEAR(sum, 1.0, 1e-12);
        const size_t c = g.size() / 2;
        EXPECT_NEAR(g[c + 1] / g[c], std::exp(-1.0 / (2 * sigma * sigma)), 1e-12);
    }
    EXPECT_EQ(gaussian_taps(2.0, 5).size(), 5u);
}

TEST(GaussianTaps, BadArgumentsThrow) {
    for (double sigma : {0.0, -1.0, std::nan(""), HUGE_VAL, 2000.0}) {
        EXPECT_THROW(gaussian_taps(sigma), Error) << sigma;
    }
    for (int size : {-1, 4, max_gaussian_taps + 2}) {
        EXPECT_THROW(gaussian_taps(1.0, size), Error) << size;
    }
}

using GaussianParam = std::tuple<Device, Precision>;

class GaussianBlur : public ::testing::TestWithParam<GaussianParam> {
protected:
    void SetUp() override { skip_without_cuda(std::get<0>(GetParam())); }
};

// Sigmas 0.5 (3 taps) and 3 (19) run the one-pass schedules on the CPU; 12 (73 taps: apron
// over a CPU strip) and 30 (181 taps, far beyond the image) the two-pass ones. On CUDA the
// sliding pass runs up to sigma 12 (f64 to 3, the Halide schedules beyond), the fft_lines
// passes sigma 30 (f32, f16f32), within their own bound.
TEST_P(GaussianBlur, AnySigmaMatchesReference) {
    const auto [device, precision] = GetParam();
    struct Case {
        int width, height;
        double sigma;
        Mode mode;
        Boundary boundary;
    };
    const std::vector<Case> cases = {
        {67, 45, 0.5, Mode::same, Boundary::reflect},   {67, 45, 3.0, Mode::same, Boundary::constant},
        {80, 77, 3.0, Mode::valid, Boundary::constant}, {97, 130, 12.0, Mode::same, Boundary::mirror},
        {90, 81, 12.0, Mode::valid, Boundary::wrap},    {23, 17, 30.0, Mode::same, Boundary::reflect},
        {5, 3, 30.0, Mode::full, Boundary::nearest},
    };
    for (const Case &c : cases) {
        SCOPED_TRACE(std::to_string(c.width) + "x" + std::to_string(c.height) + " sigma " + std::to_string(c.sigma));
        Image img;
        Halide::Runtime::Buffer<> image = random_buffer(storage_type(precision), c.width, c.height, img);
        std::vector<double> g = gaussian_taps(c.sigma);
        const int k = static_cast<int>(g.size());
        // The pipeline gets the taps rounded to the storage type: so does the reference.
        Halide::Runtime::Buffer<> rounded(storage_type(precision), k);
        for (int i = 0; i < k; i++) {
            store(rounded, static_cast<size_t>(i), g[static_cast<size_t>(i)]);
            g[static_cast<size_t>(i)] = load(rounded, static_cast<size_t>(i));
        }
        Options o;
        o.device = device;
        o.precision = precision;
        o.mode = c.mode;
        o.boundary = c.boundary;
        o.fill_value = 0.25;
        const Extent2d e = output_extent({c.width, c.height}, {k, k}, c.mode);
        Halide::Runtime::Buffer<> out(output_type(precision), e.width, e.height);
        poison(out);
        const Dispatch d = gaussian_blur(image, out, c.sigma, o);
        out.copy_to_host();
        EXPECT_EQ(d.algorithm, Algorithm::separable);
        EXPECT_EQ(d.device, device);
        const Reference ref = correlate_reference(img, outer(g, g), c.mode, c.boundary, 0.25, false);
        const bool fft_lines = device == Device::cuda && precision != Precision::f64 &&
                               rk::sep::fft_lines_preferred(k, k, e.width, e.height, storage_type(precision).bytes());
        EXPECT_EQ(d.variant == "separable_cuda_fft_lines", fft_lines) << d.variant;
        if (fft_lines) {
            // The transforms' bound on the rounded taps; samples and fill are within [0, 1).
            const rk::sep::FftLinesLayout l = rk::sep::fft_lines_layout(e.width, e.height, c.height, k, k);
            EXPECT_TRUE(
                matches_reference_within(out, ref, precision, fft_lines_bound(l, abs_sum(g) * abs_sum(g), 1.0)));
            continue;
        }
        // The reference's kernel is the rounded outer product: a factored kernel. In
        // f64 the reference's own k^2-term sum rounds as much as the pipeline: its
        // gamma_{k^2} joins the bound.
        const int taps = 2 * k + (precision == Precision::f64 ? k * k : 0);
        EXPECT_TRUE(matches_reference(out, ref, precision, taps, true));
    }
}

std::string precision_name(const ::testing::TestParamInfo<GaussianParam> &info) {
    return to_string(std::get<1>(info.param));
}

INSTANTIATE_TEST_SUITE_P(Cpu, GaussianBlur,
                         ::testing::Combine(::testing::Values(Device::cpu),
                                            ::testing::Values(Precision::f64, Precision::f32, Precision::f16f32)),
                         precision_name);
INSTANTIATE_TEST_SUITE_P(Cuda, GaussianBlur,
                         ::testing::Combine(::testing::Values(Device::cuda),
                                            ::testing::Values(Precision::f64, Precision::f32, Precision::f16f32)),
                         precision_name);

// A 2D Gaussian through correlate2d's automatic choice takes the separable path even when
// the kernel outgrows the one-pass tile.
TEST(GaussianBlurRouting, LargeRankOneKernelIsSeparable) {
    Image img;
    Halide::Runtime::Buffer<> image = random_buffer(halide_type_of<float>(), 61, 40, img);
    const std::vector<double> g = gaussian_taps(15.0);
    const Image k2 = outer(g, g);
    Halide::Runtime::Buffer<float> kernel(k2.width, k2.height);
    kernel.for_each_element([&](int x, int y) { kernel(x, y) = static_cast<float>(k2.at(x, y)); });
    Options o;
    o.device = Device::cpu;
    o.boundary = Boundary::reflect;
    Halide::Runtime::Buffer<> out(halide_type_of<float>(), 61, 40);
    poison(out);
    EXPECT_EQ(correlate2d(image, kernel, out, o).algorithm, Algorithm::separable);
}

// ---- Edge detection ----

// The Laplacian of the blurred image in float64, as two library calls define it.
Reference edge_laplacian(const Image &img, Boundary b, double fill) {
    const std::vector<double> g = {2.0 / 17, 4.0 / 17, 5.0 / 17, 4.0 / 17, 2.0 / 17};
    const Image laplacian{3, 3, {0, 1, 0, 1, -4, 1, 0, 1, 0}};
    const Reference blur = correlate_reference(img, outer(g, g), Mode::same, b, fill, false);
    return correlate_reference(blur.value, laplacian, Mode::same, b, fill, false);
}

using EdgesParam = std::tuple<Device, Staging>;

class Edges : public ::testing::TestWithParam<EdgesParam> {
protected:
    void SetUp() override { skip_without_cuda(std::get<0>(GetParam())); }
};

// A pixel must be classified as the float64 Laplacian says unless |Laplacian| lies within
// the float32 error of the threshold: 5 + 5 sums of at most 8 rounded terms each, on values
// of magnitude <= 8 (|Laplacian| <= 8 max|image|, image in [0, 1)): 64 ulps of 8 bound it.
TEST_P(Edges, MatchFloat64Laplacian) {
    const auto [device, staging] = GetParam();
    // Tiny ones, one CUDA tile (128 x 32) exactly, partial tiles with rows of a multiple of 4
    // samples (word stores) and not, thin lines of many tiles.
    const std::vector<std::pair<int, int>> shapes = {{67, 45}, {32, 32},  {130, 97}, {3, 3},    {2, 5},     {1, 1},
                                                     {40, 1},  {128, 32}, {300, 70}, {257, 33}, {1, 70000}, {70000, 1}};
    const double band = 64 * 8 * 0x1p-24;
    for (const auto &[w, h] : shapes) {
        for (Boundary b : all_boundaries) {
            SCOPED_TRACE(std::to_string(w) + "x" + std::to_string(h) + " " + to_string(b));
            Image img;
            Halide::Runtime::Buffer<float> image = random_image(w, h, img);
            const Reference lap = edge_laplacian(img, b, 0.5);
            // Threshold in the widest gap between consecutive |Laplacian| values of the
            // middle half (all of them for tiny images): pixels on both sides, none on it.
            std::vector<double> mags = {0.0};
            for (double v : lap.value.data) {
                mags.push_back(std::fabs(v));
            }
            std::sort(mags.begin(), mags.end());
            const size_t n = mags.size(), lo = n < 8 ? 1 : n / 4, hi = n < 8 ? n : 3 * n / 4;
            size_t widest = lo;
            for (size_t i = lo; i < hi; i++) {
                widest = mags[i] - mags[i - 1] > mags[widest] - mags[widest - 1] ? i : widest;
            }
            const double threshold = (mags[widest] + mags[widest - 1]) / 2;
            Halide::Runtime::Buffer<uint8_t> edges(w, h);
            edges.fill(77);
            PipelineOptions o;
            o.device = device;
            o.staging = staging;
            o.boundary = b;
            o.fill_value = 0.5;
            EXPECT_EQ(detect_edges(image, edges, threshold, o), device);
            edges.copy_to_host();
            int wrong = 0, near_threshold = 0;
            edges.for_each_element([&](int x, int y) {
                const double m = std::fabs(lap.value.at(x, y));
                if (std::fabs(m - static_cast<double>(static_cast<float>(threshold))) <= band) {
                    near_threshold++;
                    EXPECT_TRUE(edges(x, y) == 0 || edges(x, y) == 1) << int(edges(x, y));
                } else if (edges(x, y) != (m > static_cast<float>(threshold) ? 1 : 0)) {
                    wrong++;
                }
            });
            EXPECT_EQ(wrong, 0);
            EXPECT_LE(near_threshold, 1 + w * h / 20);
        }
    }
}

TEST_P(Edges, NonZeroMinsAndSchedulesAgree) {
    const auto [device, staging] = GetParam();
    Image img;
    Halide::Runtime::Buffer<float> image = random_image(53, 38, img);
    image.translate({-7, 11});
    Halide::Runtime::Buffer<uint8_t> edges(53, 38), other(53, 38);
    edges.translate({100, -3});
    edges.fill(77);
    PipelineOptions o;
    o.device = device;
    o.staging = staging;
    detect_edges(image, edges, 0.1, o);
    edges.copy_to_host();
    const Reference lap = edge_laplacian(img, o.boundary, 0.0);
    int wrong = 0;
    for (int y = 0; y < 38; y++) {
        for (int x = 0; x < 53; x++) {
            const double m = std::fabs(lap.value.at(x, y));
            if (std::fabs(m - 0.1) > 1e-5 && edges(100 + x, y - 3) != (m > 0.1f ? 1 : 0)) {
                wrong++;
            }
        }
    }
    EXPECT_EQ(wrong, 0);
    // The other staging (and the CPU) give the same edges.
    o.staging = staging == Staging::fused ? Staging::staged : Staging::fused;
    o.device = Device::cpu;
    image.set_host_dirty();
    detect_edges(image, other, 0.1, o);
    int differ = 0;
    other.for_each_element([&](int x, int y) { differ += other(x, y) != edges(100 + x, y - 3); });
    EXPECT_LE(differ, 2);  // only pixels within float32 rounding of the threshold may differ
}

std::string staging_name(const ::testing::TestParamInfo<EdgesParam> &info) {
    return to_string(std::get<1>(info.param));
}

INSTANTIATE_TEST_SUITE_P(Cpu, Edges,
                         ::testing::Combine(::testing::Values(Device::cpu),
                                            ::testing::Values(Staging::fused, Staging::staged)),
                         staging_name);
INSTANTIATE_TEST_SUITE_P(Cuda, Edges,
                         ::testing::Combine(::testing::Values(Device::cuda),
                                            ::testing::Values(Staging::fused, Staging::staged)),
                         staging_name);

TEST(EdgesErrors, BadArgumentsThrow) {
    Halide::Runtime::Buffer<float> image(10, 8);
    image.fill(0.0f);
    Halide::Runtime::Buffer<uint8_t> edges(10, 8), small(9, 8);
    Halide::Runtime::Buffer<float> float_edges(10, 8);
    PipelineOptions cpu;
    cpu.device = Device::cpu;
    EXPECT_THROW(detect_edges(image, small, 0.1, cpu), Error);
    EXPECT_THROW(detect_edges(image, float_edges, 0.1, cpu), Error);
    EXPECT_THROW(detect_edges(image, edges, -1.0, cpu), Error);
    EXPECT_THROW(detect_edges(image, edges, std::nan(""), cpu), Error);
    Halide::Runtime::Buffer<double> f64(10, 8);
    EXPECT_THROW(detect_edges(f64, edges, 0.1, cpu), Error);
    PipelineOptions bad = cpu;
    bad.boundary = static_cast<Boundary>(9);
    EXPECT_THROW(detect_edges(image, edges, 0.1, bad), Error);
    bad = cpu;
    bad.staging = static_cast<Staging>(5);
    EXPECT_THROW(detect_edges(image, edges, 0.1, bad), Error);
}

// ---- Unsharp mask ----

double f16_round(double v) {
    return double_from_float16_bits(float16_bits_from_double(v));
}

using UnsharpParam = std::tuple<Device, Boundary>;

class Unsharp : public ::testing::TestWithParam<UnsharpParam> {
protected:
    void SetUp() override { skip_without_cuda(std::get<0>(GetParam())); }
};

// Reference: the blur of the float16-rounded image by the float16-rounded kernel in
// float64. The blur sums in float32 (error <= (n + 4) u32 sum |k||x|); the output
// adds |amount| times that plus a few float32 roundings of the result's terms.
TEST_P(Unsharp, MatchesReference) {
    const auto [device, boundary] = GetParam();
    struct Case {
        int width, height, kernel_width, kernel_height;
        double sigma1, sigma2;  // Gaussian, or a difference of Gaussians when sigma2 > 0
        double amount;
    };
    const std::vector<Case> cases = {
        {67, 45, 31, 31, 5.0, 0.0, 1.5}, {40, 33, 49, 49, 3.0, 8.0, 0.7}, {130, 97, 8, 6, 2.0, 0.0, -0.5},
        {1, 1, 5, 5, 1.0, 0.0, 2.0},     {16, 16, 1, 1, 1.0, 0.0, 1.0},
    };
    for (const Case &c : cases) {
        SCOPED_TRACE(std::to_string(c.width) + "x" + std::to_string(c.height) + " kernel " +
                     std::to_string(c.kernel_width) + "x" + std::to_string(c.kernel_height));
        Image img;
        Halide::Runtime::Buffer<float> image = random_image(c.width, c.height, img);
        Halide::Runtime::Buffer<float> kernel(c.kernel_width, c.kernel_height);
        Image k16{c.kernel_width, c.kernel_height, {}};
        const auto gauss = [](double d2, double s) { return std::exp(-d2 / (2 * s * s)) / (2 * M_PI * s * s); };
        for (int y = 0; y < c.kernel_height; y++) {
            for (int x = 0; x < c.kernel_width; x++) {
                const double dx = x - (c.kernel_width - 1) / 2.0, dy = y - (c.kernel_height - 1) / 2.0;
                const double v =
                    gauss(dx * dx + dy * dy, c.sigma1) - (c.sigma2 > 0 ? gauss(dx * dx + dy * dy, c.sigma2) : 0);
                kernel(x, y) = static_cast<float>(v);
                k16.data.push_back(f16_round(kernel(x, y)));
            }
        }
        Image img16 = img;
        for (double &v : img16.data) {
            v = f16_round(v);
        }
        const double fill = 0.375;  // exact in float16
        const Reference blur = correlate_reference(img16, k16, Mode::same, boundary, fill, false);
        Halide::Runtime::Buffer<float> out(c.width, c.height);
        out.fill(std::nanf(""));
        PipelineOptions o;
        o.device = device;
        o.boundary = boundary;
        o.fill_value = fill;
        EXPECT_EQ(unsharp_mask(image, kernel, out, c.amount, o), device);
        out.copy_to_host();
        const double u = 0x1p-24, n = c.kernel_width * c.kernel_height + 4;
        int bad = 0;
        std::string first;
        out.for_each_element([&](int x, int y) {
            const double in = img.at(x, y), b = blur.value.at(x, y);
            const double want = in + c.amount * (in - b);
            const double tol = std::fabs(c.amount) * n * u * blur.magnitude.at(x, y) +
                               4 * u * (std::fabs(in) + std::fabs(c.amount) * (std::fabs(in) + std::fabs(b))) +
                               0x1p-140;
            if (!(std::fabs(out(x, y) - want) <= tol) && bad++ == 0) {
                first = "(" + std::to_string(x) + "," + std::to_string(y) + ") got " + std::to_string(out(x, y)) +
                        " want " + std::to_string(want);
            }
        });
        EXPECT_EQ(bad, 0) << first;
    }
}

std::string boundary_name(const ::testing::TestParamInfo<UnsharpParam> &info) {
    return to_string(std::get<1>(info.param));
}

INSTANTIATE_TEST_SUITE_P(Cpu, Unsharp,
                         ::testing::Combine(::testing::Values(Device::cpu), ::testing::ValuesIn(all_boundaries)),
                         boundary_name);
INSTANTIATE_TEST_SUITE_P(Cuda, Unsharp,
                         ::testing::Combine(::testing::Values(Device::cuda), ::testing::ValuesIn(all_boundaries)),
                         boundary_name);

TEST(UnsharpErrors, BadArgumentsThrow) {
    Halide::Runtime::Buffer<float> image(12, 9), kernel(5, 5), out(12, 9), small(12, 8);
    image.fill(0.5f);
    kernel.fill(0.04f);
    PipelineOptions cpu;
    cpu.device = Device::cpu;
    EXPECT_THROW(unsharp_mask(image, kernel, small, 1.0, cpu), Error);
    EXPECT_THROW(unsharp_mask(image, kernel, out, std::nan(""), cpu), Error);
    Halide::Runtime::Buffer<float> nan_kernel(3, 3);
    nan_kernel.fill(std::nanf(""));
    EXPECT_THROW(unsharp_mask(image, nan_kernel, out, 1.0, cpu), Error);
    Halide::Runtime::Buffer<float> huge(3, 3);
    huge.fill(1e6f);
    EXPECT_THROW(unsharp_mask(image, huge, out, 1.0, cpu), Error);
    Halide::Runtime::Buffer<double> f64(12, 9);
    EXPECT_THROW(unsharp_mask(f64, kernel, out, 1.0, cpu), Error);
    if (cuda_available()) {
        Halide::Runtime::Buffer<float> too_large(tensor_core_max_kernel + 1, 3);
        too_large.fill(0.0f);
        PipelineOptions gpu;
        gpu.device = Device::cuda;
        EXPECT_THROW(unsharp_mask(image, too_large, out, 1.0, gpu), Error);
    }
}

}  // namespace
}  // namespace halconv::test
