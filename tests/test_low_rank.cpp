// Algorithm::low_rank: the numerical-rank test (low_rank_factors), the pipelines against
// the float64 reference on every mode, boundary and precision, Auto's choice, and the
// kernels it must not split (just above the tolerance, or above max_low_rank).
#include <gmock/gmock.h>

#include <Eigen/Dense>
#include <algorithm>
#include <cmath>
#include <numeric>
#include <string>

#include "test_support.h"

namespace halconv::test {
namespace {

using ::testing::HasSubstr;

// A kernel as float64 values (x fastest), with its extents.
struct Kernel {
    int width = 0, height = 0;
    std::vector<double> values;
    Halide::Runtime::Buffer<const double, 2> buffer() const {
        return Halide::Runtime::Buffer<const double, 2>(values.data(), width, height);
    }
};

double gaussian(double t, double sigma) {
    return std::exp(-t * t / (2.0 * sigma * sigma));
}

// The Laplacian of Gaussian sampled on a width x height grid (centred): (x^2 + y^2 -
// 2 s^2) / s^4 g(x) g(y) = [x^2/s^4 - 1/s^2] g(x) g(y) + g(x) [y^2/s^4 - 1/s^2] g(y),
// rank 2 exactly.
Kernel laplacian_of_gaussian(int width, int height, double sigma) {
    Kernel k{width, height, {}};
    for (int y = 0; y < height; y++) {
        for (int x = 0; x < width; x++) {
            const double dx = x - (width - 1) / 2.0, dy = y - (height - 1) / 2.0;
            const double s2 = sigma * sigma;
            k.values.push_back((dx * dx + dy * dy - 2 * s2) / (s2 * s2) * gaussian(dx, sigma) * gaussian(dy, sigma));
        }
    }
    return k;
}

// A difference of two Gaussians (rank 2).
Kernel difference_of_gaussians(int width, int height, double sigma1, double sigma2) {
    Kernel k{width, height, {}};
    for (int y = 0; y < height; y++) {
        for (int x = 0; x < width; x++) {
            const double dx = x - (width - 1) / 2.0, dy = y - (height - 1) / 2.0;
            k.values.push_back(gaussian(dx, sigma1) * gaussian(dy, sigma1) -
                               gaussian(dx, sigma2) * gaussian(dy, sigma2));
        }
    }
    return k;
}

// A sum of `terms` random outer products (rank `terms` where it fits).
Kernel sum_of_outer_products(int width, int height, int terms) {
    std::uniform_real_distribution<double> u(-1.0, 1.0);
    Kernel k{width, height, std::vector<double>(size_t(width) * height, 0.0)};
    for (int t = 0; t < terms; t++) {
        std::vector<double> row(static_cast<size_t>(width)), col(static_cast<size_t>(height));
        for (double &v : row) {
            v = u(rng());
        }
        for (double &v : col) {
            v = u(rng());
        }
        for (int y = 0; y < height; y++) {
            for (int x = 0; x < width; x++) {
                k.values[size_t(y) * width + x] += row[size_t(x)] * col[size_t(y)];
            }
        }
    }
    return k;
}

// A kernel with the given singular values (descending) and random singular vectors, so
// its best rank-r residual is known exactly: sqrt(sum_{i > r} s_i^2).
Kernel with_singular_values(int width, int height, const std::vector<double> &sigma) {
    std::normal_distribution<double> n;
    const auto random_orthonormal = [&](int rows, int cols) {
        Eigen::MatrixXd m(rows, cols);
        for (Eigen::Index i = 0; i < m.size(); i++) {
            m.data()[i] = n(rng());
        }
        const Eigen::HouseholderQR<Eigen::MatrixXd> qr(m);
        return Eigen::MatrixXd(qr.householderQ() * Eigen::MatrixXd::Identity(rows, cols));
    };
    const int r = int(sigma.size());
    const Eigen::MatrixXd u = random_orthonormal(height, r), v = random_orthonormal(width, r);
    const Eigen::MatrixXd k = u * Eigen::Map<const Eigen::VectorXd>(sigma.data(), r).asDiagonal() * v.transpose();
    Kernel out{width, height, std::vector<double>(size_t(width) * height)};
    for (int y = 0; y < height; y++) {
        for (int x = 0; x < width; x++) {
            out.values[size_t(y) * width + x] = k(y, x);
        }
    }
    return out;
}

// Singular values: `leading` of them from 1 down to 0.1, then one more whose share of the
// norm is `tail` (relative to the whole kernel's norm).
std::vector<double> spectrum(int leading, double tail) {
    std::vector<double> s;
    for (int i = 0; i < leading; i++) {
        s.push_back(1.0 - 0.9 * i / std::max(leading - 1, 1));
    }
    const double head2 = std::inner_product(s.begin(), s.end(), s.begin(), 0.0);
    // tail^2 = t^2 / (head2 + t^2)
    s.push_back(std::sqrt(head2 * tail * tail / (1.0 - tail * tail)));
    return s;
}

// ---- The rank test ----

TEST(LowRankFactors, FindsTheRankOfLaplacianDifferenceAndSumsOfOuterProducts) {
    for (Precision p : {Precision::f64, Precision::f32, Precision::f16}) {
        SCOPED_TRACE(to_string(p));
        EXPECT_EQ(low_rank_factors(laplacian_of_gaussian(15, 15, 2.0).buffer(), p).rank, 2);
        EXPECT_EQ(low_rank_factors(laplacian_of_gaussian(31, 9, 3.0).buffer(), p).rank, 2);
        EXPECT_EQ(low_rank_factors(difference_of_gaussians(21, 17, 1.5, 3.0).buffer(), p).rank, 2);
        EXPECT_EQ(low_rank_factors(sum_of_outer_products(12, 30, 3).buffer(), p).rank, 3);
        EXPECT_EQ(low_rank_factors(sum_of_outer_products(40, 40, max_low_rank).buffer(), p).rank, max_low_rank);
        EXPECT_EQ(low_rank_factors(sum_of_outer_products(7, 5, 1).buffer(), p).rank, 1);
        // Above max_low_rank: refused, the residual of the max_low_rank factors reported.
        const LowRankFactors above = low_rank_factors(sum_of_outer_products(40, 40, max_low_rank + 1).buffer(), p);
        EXPECT_EQ(above.rank, 0);
        EXPECT_GT(above.relative_residual, low_rank_tolerance(p, max_low_rank));
        EXPECT_TRUE(above.row_factors.empty());
    }
    // A kernel no larger than max_low_rank on one side is at most that rank.
    EXPECT_EQ(low_rank_factors(sum_of_outer_products(5, 100, 5).buffer(), Precision::f64).rank, 5);
    // The zero kernel runs as one zero term.
    const Kernel zero{6, 4, std::vector<double>(24, 0.0)};
    const LowRankFactors z = low_rank_factors(zero.buffer(), Precision::f32);
    EXPECT_EQ(z.rank, 1);
    EXPECT_EQ(z.row_factors.size(), 6u);
    EXPECT_EQ(z.col_factors.size(), 4u);
}

TEST(LowRankFactors, FactorsReproduceTheKernelWithinTheStatedResidual) {
    for (const Kernel &k : {laplacian_of_gaussian(15, 11, 2.0), difference_of_gaussians(9, 9, 1.0, 2.0),
                            sum_of_outer_products(20, 13, 5)}) {
        const LowRankFactors f = low_rank_factors(k.buffer(), Precision::f64);
        ASSERT_GT(f.rank, 0);
        ASSERT_EQ(f.row_factors.size(), size_t(f.rank) * k.width);
        ASSERT_EQ(f.col_factors.size(), size_t(f.rank) * k.height);
        double residual2 = 0.0, norm2 = 0.0;
        for (int y = 0; y < k.height; y++) {
            for (int x = 0; x < k.width; x++) {
                double sum = 0.0;
                for (int t = 0; t < f.rank; t++) {
                    sum += f.row_factors[size_t(t) * k.width + x] * f.col_factors[size_t(t) * k.height + y];
                }
                const double want = k.values[size_t(y) * k.width + x];
                residual2 += (sum - want) * (sum - want);
                norm2 += want * want;
            }
        }
        EXPECT_LE(std::sqrt(residual2 / norm2), low_rank_tolerance(Precision::f64, f.rank));
        // The stated residual is the factors' own (to float64 rounding of the check).
        EXPECT_NEAR(std::sqrt(residual2 / norm2), f.relative_residual, 1e-15);
    }
}

// The tolerance is a sharp line: a kernel whose best rank-r approximation misses
// low_rank_tolerance(p, r) by 5 % is not rank r, one that meets it with 5 % to spare is
// (float64 included: its floor of 64 ulps per term stands above the factors' own rounding).
TEST(LowRankFactors, KernelsJustAboveTheToleranceAreNotSplit) {
    for (Precision p : {Precision::f64, Precision::f32, Precision::f16}) {
        SCOPED_TRACE(to_string(p));
        for (int leading : {1, 2, 3, max_low_rank}) {
            SCOPED_TRACE(leading);
            const double tol = low_rank_tolerance(p, leading);
            const Kernel above = with_singular_values(24, 20, spectrum(leading, 1.05 * tol));
            const LowRankFactors fa = low_rank_factors(above.buffer(), p);
            EXPECT_TRUE(fa.rank == 0 || fa.rank > leading) << fa.rank;
            const Kernel below = with_singular_values(24, 20, spectrum(leading, 0.95 * tol));
            EXPECT_EQ(low_rank_factors(below.buffer(), p).rank, leading);
        }
        // Just above at max_low_rank: nothing up to max_low_rank is close enough.
        const double tol = low_rank_tolerance(p, max_low_rank);
        EXPECT_EQ(low_rank_factors(with_singular_values(24, 20, spectrum(max_low_rank, 1.05 * tol)).buffer(), p).rank,
                  0);
    }
    EXPECT_EQ(low_rank_tolerance(Precision::f32, 1), rank1_tolerance(Precision::f32));
    EXPECT_GT(low_rank_tolerance(Precision::f64, max_low_rank), low_rank_tolerance(Precision::f64, 1));
}

TEST(LowRankFactors, BadKernelsAreTypedErrors) {
    const Kernel nan_kernel{2, 2, {1.0, std::nan(""), 0.0, 1.0}};
    try {
        low_rank_factors(nan_kernel.buffer(), Precision::f32);
        FAIL() << "a NaN kernel was accepted";
    } catch (const Error &e) {
        EXPECT_EQ(e.code(), ErrorCode::invalid_argument);
    }
    const Kernel ok{2, 2, {1.0, 0.0, 0.0, 1.0}};
    EXPECT_THROW(low_rank_factors(ok.buffer(), static_cast<Precision>(9)), Error);
}

// ---- The pipelines ----

// The kernel as stored in the precision, as a buffer and as the reference sees it.
Halide::Runtime::Buffer<> stored_kernel(const Kernel &k, Precision p, Image &exact) {
    Halide::Runtime::Buffer<> b(storage_type(p), k.width, k.height);
    exact = Image{k.width, k.height, std::vector<double>(k.values.size())};
    for (size_t i = 0; i < k.values.size(); i++) {
        store(b, i, k.values[i]);
        exact.data[i] = load(b, i);
    }
    return b;
}

struct Case {
    const char *name;
    Kernel kernel;
    int rank;
};

std::vector<Case> cases() {
    return {{"log_9x9", laplacian_of_gaussian(9, 9, 1.4), 2},
            {"dog_7x4", difference_of_gaussians(7, 4, 0.8, 1.6), 2},
            {"three_terms_5x8", sum_of_outer_products(5, 8, 3), 3},
            // Taller than the CPU strip (the two-pass schedule), and many ranks (the GPU's
            // tile does not hold them: two-pass there too).
            {"log_5x41", laplacian_of_gaussian(5, 41, 6.0), 2},
            {"sixteen_terms_20x18", sum_of_outer_products(20, 18, max_low_rank), max_low_rank},
            // On CUDA in f32 a wide kernel runs the sliding stage, in f64 (whose stage it
            // outgrows past about 360 taps) the shared tile; a tall one the two-pass schedule.
            {"two_terms_400x3", sum_of_outer_products(400, 3, 2), 2},
            {"two_terms_3x300", sum_of_outer_products(3, 300, 2), 2}};
}

class LowRank : public ::testing::TestWithParam<Device> {
protected:
    void SetUp() override {
        if (GetParam() == Device::cuda && !cuda_available()) {
            GTEST_SKIP() << "no CUDA device on this machine: GPU variants are tested on a GPU machine "
                            "(scripts/gpu-check)";
        }
    }
};

TEST_P(LowRank, EveryModeBoundaryAndPrecisionMatchesTheReference) {
    const std::vector<Case> all = cases();
    for (Precision p : {Precision::f64, Precision::f32, Precision::f16f32, Precision::f16}) {
        for (const Case &c : all) {
            Image ker;
            Halide::Runtime::Buffer<> kernel = stored_kernel(c.kernel, p, ker);
            for (Extent2d shape : {Extent2d{1, 1}, Extent2d{2, 7}, Extent2d{13, 5}, Extent2d{67, 45}}) {
                if (shape.width * shape.height > 1000 && c.kernel.width * c.kernel.height > 400) {
                    continue;  // the reference's cost: the small shapes reach every edge of these kernels
                }
                Image img;
                Halide::Runtime::Buffer<> image = random_buffer(storage_type(p), shape.width, shape.height, img);
                for (Mode mode : {Mode::valid, Mode::same, Mode::full}) {
                    if (mode == Mode::valid && (shape.width < c.kernel.width || shape.height < c.kernel.height)) {
                        continue;
                    }
                    for (Boundary b :
                         {Boundary::constant, Boundary::nearest, Boundary::reflect, Boundary::mirror, Boundary::wrap}) {
                        for (Operation op : {Operation::correlate, Operation::convolve}) {
                            SCOPED_TRACE(std::string(c.name) + " " + to_string(p) + " " + std::to_string(shape.width) +
                                         "x" + std::to_string(shape.height) + " " + to_string(mode) + " " +
                                         to_string(b) + " " + to_string(op));
                            Options o;
                            o.algorithm = Algorithm::low_rank;
                            o.device = GetParam();
                            o.precision = p;
                            o.mode = mode;
                            o.boundary = b;
                            o.fill_value = 0.75;  // exact in every storage type
                            const Plan plan(shape, kernel, o, op);
                            EXPECT_EQ(plan.dispatch().algorithm, Algorithm::low_rank);
                            EXPECT_THAT(plan.dispatch().reason, HasSubstr("rank " + std::to_string(c.rank)));
                            Halide::Runtime::Buffer<> out = plan.allocate_output();
                            poison(out);
                            plan.apply(image, out);
                            out.copy_to_host();
                            EXPECT_TRUE(
                                matches_low_rank(out, img, ker, p, mode, b, o.fill_value, op == Operation::convolve));
                        }
                    }
                }
            }
        }
    }
}

// Thin, tall and wide images through every variant of the device (CPU: strips, two
// passes; CUDA: the sliding stage, the shared tile, two passes), every boundary, f64 and f32.
TEST_P(LowRank, ThinTallAndWideImages) {
    const std::vector<Case> all = cases();
    struct Run {
        const char *name;
        Precision p;
        const char *cpu_variant, *cuda_variant;
    };
    const Run runs[] = {
        {"log_9x9", Precision::f32, "low_rank_cpu_low_rank", "low_rank_cuda_sliding"},
        {"log_5x41", Precision::f32, "low_rank_cpu_low_rank_two_pass", "low_rank_cuda_sliding"},
        {"sixteen_terms_20x18", Precision::f32, "low_rank_cpu_low_rank", "low_rank_cuda_sliding"},
        {"two_terms_400x3", Precision::f64, "low_rank_cpu_low_rank", "low_rank_gpu_low_rank"},
        {"two_terms_3x300", Precision::f32, "low_rank_cpu_low_rank_two_pass", "low_rank_gpu_low_rank_two_pass"}};
    for (const auto &[name, p, cpu_variant, cuda_variant] : runs) {
        const Case &c =
            *std::find_if(all.begin(), all.end(), [&](const Case &k) { return k.name == std::string(name); });
        Image ker;
        Halide::Runtime::Buffer<> kernel = stored_kernel(c.kernel, p, ker);
        for (Extent2d shape : {Extent2d{1, 1000}, Extent2d{1000, 1}, Extent2d{3, 517}, Extent2d{301, 2}}) {
            Image img;
            Halide::Runtime::Buffer<> image = random_buffer(storage_type(p), shape.width, shape.height, img);
            for (Boundary b :
                 {Boundary::constant, Boundary::nearest, Boundary::reflect, Boundary::mirror, Boundary::wrap}) {
                SCOPED_TRACE(std::string(c.name) + " " + to_string(p) + " " + std::to_string(shape.width) + "x" +
                             std::to_string(shape.height) + " " + to_string(b));
                Options o;
                o.algorithm = Algorithm::low_rank;
                o.device = GetParam();
                o.precision = p;
                o.boundary = b;
                o.fill_value = -0.5;
                const Plan plan(shape, kernel, o);
                EXPECT_EQ(plan.dispatch().variant, GetParam() == Device::cpu ? cpu_variant : cuda_variant);
                Halide::Runtime::Buffer<> out = plan.allocate_output();
                poison(out);
                plan.apply(image, out);
                out.copy_to_host();
                EXPECT_TRUE(matches_low_rank(out, img, ker, p, Mode::same, b, o.fill_value, false));
            }
        }
    }
}

// Row bands (the plan's band path) give the one-shot result bit for bit.
TEST_P(LowRank, RowBandsEqualTheOneShotCall) {
    Image ker, img;
    Halide::Runtime::Buffer<> kernel = stored_kernel(laplacian_of_gaussian(11, 11, 1.6), Precision::f32, ker);
    Halide::Runtime::Buffer<> image = random_buffer(storage_type(Precision::f32), 90, 77, img);
    Options o;
    o.algorithm = Algorithm::low_rank;
    o.device = GetParam();
    o.boundary = Boundary::reflect;
    const Plan whole({90, 77}, kernel, o);
    o.bands.banding = Banding::always;
    o.bands.band_rows = 9;
    const Plan banded({90, 77}, kernel, o);
    Halide::Runtime::Buffer<> a = whole.apply(image), b = banded.allocate_output();
    poison(b);
    banded.apply(image, b);
    a.copy_to_host();
    b.copy_to_host();
    EXPECT_TRUE(same_bits(a, b));
}

TEST_P(LowRank, KernelsAboveTheRankLimitAreRefusedAndAutoRunsThemDirect) {
    for (const Kernel &k :
         {sum_of_outer_products(24, 24, max_low_rank + 1),
          with_singular_values(24, 20,
                               spectrum(max_low_rank, 1.2 * low_rank_tolerance(Precision::f32, max_low_rank)))}) {
        Image ker, img;
        Halide::Runtime::Buffer<> kernel = stored_kernel(k, Precision::f32, ker);
        Halide::Runtime::Buffer<> image = random_buffer(storage_type(Precision::f32), 40, 30, img);
        Options o;
        o.algorithm = Algorithm::low_rank;
        o.device = GetParam();
        try {
            const Plan plan({40, 30}, kernel, o);
            FAIL() << "a kernel above rank " << max_low_rank << " ran as " << plan.dispatch().variant;
        } catch (const Error &e) {
            EXPECT_EQ(e.code(), ErrorCode::unsupported);
            EXPECT_THAT(e.what(), HasSubstr("numerical rank at most " + std::to_string(max_low_rank)));
        }
        o.algorithm = Algorithm::automatic;
        const Plan plan({40, 30}, kernel, o);
        EXPECT_NE(plan.dispatch().algorithm, Algorithm::low_rank);
        EXPECT_NE(plan.dispatch().algorithm, Algorithm::separable);
    }
}

INSTANTIATE_TEST_SUITE_P(Cpu, LowRank, ::testing::Values(Device::cpu));
INSTANTIATE_TEST_SUITE_P(Cuda, LowRank, ::testing::Values(Device::cuda));

// ---- Auto ----

class ScopedWisdom {
public:
    explicit ScopedWisdom(const std::vector<Measurement> &measurements) {
        Wisdom w;
        w.build_id = build_info().build_id;
        w.created = "2026-11-26T00:00:00Z";
        w.command = "test";
        w.sections.push_back({identify_device(Device::cpu), measurements});
        use_wisdom(w);
    }
    ~ScopedWisdom() { reload_wisdom(); }
};

// low_rank measured with rank-2 kernels at half shared_tiled's time: Auto takes it for a
// rank-2 kernel, and not for a rank-8 one (4 times the measured work: twice
// shared_tiled's time).
TEST(LowRankAuto, PicksLowRankWhenItsRankScaledCostWins) {
    const auto at = [](Algorithm a, int k, double ms, int rank = 1) {
        return Measurement{a, Precision::f32, Mode::same, 64, 64, k, k, ms, rank};
    };
    const ScopedWisdom wisdom({at(Algorithm::shared_tiled, 9, 2.0), at(Algorithm::shared_tiled, 21, 2.0),
                               at(Algorithm::low_rank, 9, 1.0, 2), at(Algorithm::low_rank, 21, 1.0, 2)});
    Options o;
    o.device = Device::cpu;
    for (const auto &[kernel, rank, want] :
         {std::tuple{laplacian_of_gaussian(15, 15, 2.0), 2, Algorithm::low_rank},
          std::tuple{sum_of_outer_products(15, 15, 8), 8, Algorithm::shared_tiled}}) {
        Image ker;
        Halide::Runtime::Buffer<> k = stored_kernel(kernel, Precision::f32, ker);
        const Plan plan({64, 64}, k, o);
        EXPECT_EQ(plan.dispatch().algorithm, want) << plan.dispatch().reason;
        EXPECT_THAT(plan.dispatch().reason, HasSubstr("auto: fastest predicted"));
        if (want == Algorithm::low_rank) {
            EXPECT_THAT(plan.dispatch().reason, HasSubstr("kernel of rank " + std::to_string(rank)));
        }
    }
}

// With the built-in tables (the suite reads no wisdom file), Auto runs a Laplacian of
// Gaussian as low_rank where the measurements say it is fastest: on the CPU at 1024^2 K = 31
// (cpu-reference.json: 8.1 ms against fft's 9.9), on CUDA at 4096^2 K = 31 (h100.json: 0.27
// ms against fft's 0.45); a kernel of rank 1 never (separable's, or whatever beats it).
TEST(LowRankAuto, BuiltInTablesPickItForALaplacianOfGaussian) {
    for (Device device : {Device::cpu, Device::cuda}) {
        if (device == Device::cuda && !cuda_available()) {
            continue;
        }
        SCOPED_TRACE(to_string(device));
        Image ker;
        Halide::Runtime::Buffer<> kernel = stored_kernel(laplacian_of_gaussian(31, 31, 31 / 8.0), Precision::f32, ker);
        Options o;
        o.device = device;
        const int n = device == Device::cpu ? 1024 : 4096;
        const Plan plan({n, n}, kernel, o);
        EXPECT_EQ(plan.dispatch().algorithm, Algorithm::low_rank) << plan.dispatch().reason;
        Halide::Runtime::Buffer<> rank1 = stored_kernel(sum_of_outer_products(31, 31, 1), Precision::f32, ker);
        EXPECT_NE(Plan({n, n}, rank1, o).dispatch().algorithm, Algorithm::low_rank);
    }
}

TEST(LowRankAuto, WisdomKeepsTheMeasuredRank) {
    Wisdom w;
    w.build_id = "b";
    w.created = "2026-11-26T00:00:00Z";
    w.command = "test";
    w.sections.push_back({identify_device(Device::cpu),
                          {Measurement{Algorithm::low_rank, Precision::f32, Mode::same, 64, 64, 9, 9, 1.5, 2},
                           Measurement{Algorithm::naive, Precision::f32, Mode::same, 64, 64, 9, 9, 2.5}}});
    const std::string text = format_wisdom(w);
    const Wisdom back = parse_wisdom(text, "test");
    ASSERT_EQ(back.sections.at(0).measurements.size(), 2u);
    EXPECT_EQ(back.sections[0].measurements[0].kernel_rank, 2);
    EXPECT_EQ(back.sections[0].measurements[1].kernel_rank, 1);
    EXPECT_THAT(text, HasSubstr("\"rank\":2"));
    std::string bad = text;
    bad.replace(bad.find("\"rank\":2"), 8, "\"rank\":0");
    EXPECT_THROW(parse_wisdom(bad, "test"), Error);
}

}  // namespace
}  // namespace halconv::test
