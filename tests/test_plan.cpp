// The registry, Plan and Auto (issue 18): every registry row built and reachable through
// the API; plans reused and applied from several threads at once, bit-identical to the
// one-shot calls; typed error codes; wisdom files (valid, another device, another
// build, truncated, garbage, missing); Auto's choice from given measurements; tune.
#include <gmock/gmock.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <set>
#include <thread>

#include "cost_model.h"
#include "test_support.h"

namespace halconv::test {
namespace {

using ::testing::HasSubstr;
namespace fs = std::filesystem;

// Runs fn, expects halconv::Error with `code` whose message contains `fragment`.
template <typename Fn>
void expect_error(Fn fn, ErrorCode code, const char *fragment) {
    try {
        fn();
        ADD_FAILURE() << "expected halconv::Error (" << to_string(code) << ")";
    } catch (const Error &e) {
        EXPECT_EQ(e.code(), code) << e.what();
        EXPECT_THAT(e.what(), HasSubstr(fragment));
    }
}

// Wisdom and warnings are process-wide: each test that sets them restores the default
// (the file at HALCONV_WISDOM, which ctest points at a file that does not exist).
class WisdomScope {
public:
    WisdomScope() {
        previous_ = set_warning_handler([this](const std::string &m) { warnings.push_back(m); });
    }
    ~WisdomScope() {
        set_warning_handler(previous_);
        reload_wisdom();
    }
    std::vector<std::string> warnings;

private:
    WarningHandler previous_;
};

Measurement point(Algorithm a, int image, int k, double ms, Precision p = Precision::f32, Mode m = Mode::same) {
    return {a, p, m, image, image, k, k, ms};
}

Wisdom wisdom_of(const DeviceIdentity &device, std::vector<Measurement> measurements) {
    Wisdom w;
    w.build_id = build_info().build_id;
    w.created = "2026-11-23T00:00:00Z";
    w.command = "test";
    w.sections.push_back({device, std::move(measurements)});
    return w;
}

// ---- The registry ----

TEST(Registry, NamesRoundTripAndValuesAreContiguous) {
    const std::vector<AlgorithmInfo> &all = algorithms();
    ASSERT_FALSE(all.empty());
    EXPECT_EQ(algorithm_named("auto"), Algorithm::automatic);
    EXPECT_STREQ(to_string(Algorithm::automatic), "auto");
    for (size_t i = 0; i < all.size(); i++) {
        EXPECT_EQ(static_cast<size_t>(all[i].algorithm), i + 1);
        EXPECT_EQ(to_string(all[i].algorithm), all[i].name);
        EXPECT_EQ(algorithm_named(all[i].name), all[i].algorithm);
        EXPECT_FALSE(all[i].description.empty()) << all[i].name;
        // Only a CUDA algorithm in a build without CUDA has no variants, and then none at all.
        if (cuda_info().built || !all[i].devices.empty()) {
            EXPECT_FALSE(all[i].devices.empty()) << all[i].name;
            EXPECT_FALSE(all[i].precisions.empty()) << all[i].name;
            EXPECT_FALSE(all[i].variants.empty()) << all[i].name;
        } else {
            EXPECT_TRUE(all[i].precisions.empty() && all[i].variants.empty()) << all[i].name;
        }
    }
    const auto on_cpu = [&](Algorithm a) {
        const std::vector<Device> &d = all[size_t(a) - 1].devices;
        return std::find(d.begin(), d.end(), Device::cpu) != d.end();
    };
    EXPECT_TRUE(on_cpu(Algorithm::naive) && on_cpu(Algorithm::shared_tiled) && on_cpu(Algorithm::separable) &&
                on_cpu(Algorithm::autoscheduled));
    EXPECT_EQ(all[size_t(Algorithm::im2tensor_fused) - 1].devices.empty(), !cuda_info().built);
    EXPECT_EQ(algorithm_named("frobnicate"), std::nullopt);
    EXPECT_STREQ(to_string(static_cast<Algorithm>(all.size() + 1)), "?");
    EXPECT_STREQ(to_string(Staging::staged), "staged");
    EXPECT_STREQ(to_string(MultichannelAlgorithm::implicit_gemm), "implicit_gemm");
}

TEST(Registry, EveryPipelineIsBuiltOnceAndNamesItsRow) {
    const BuildInfo info = build_info();
    const std::set<std::string> unique(info.pipelines.begin(), info.pipelines.end());
    EXPECT_EQ(unique.size(), info.pipelines.size());
    EXPECT_FALSE(info.build_id.empty());
    for (const AlgorithmInfo &a : algorithms()) {
        for (const std::string &variant : a.variants) {
            // halconv_<generator>_<schedule>[_<precision>][_valid]
            const bool found = std::any_of(info.pipelines.begin(), info.pipelines.end(),
                                           [&](const std::string &p) { return p.rfind("halconv_" + variant, 0) == 0; });
            EXPECT_TRUE(found) << a.name << ": no pipeline of variant " << variant;
        }
    }
    for (const char *composed : {"halconv_edges_cpu_fused", "halconv_multichannel_cpu_direct_f64"}) {
        EXPECT_TRUE(unique.count(composed)) << composed;
    }
    // CUDA pipelines exactly when the build has CUDA.
    for (const char *composed :
         {"halconv_unsharp_gpu_tensor_core", "halconv_multichannel_gemm_implicit_gemm_f16_valid"}) {
        EXPECT_EQ(unique.count(composed), cuda_info().built ? 1u : 0u) << composed;
    }
    EXPECT_EQ(uses_tensor_cores(Algorithm::im2tensor_fused), cuda_info().built);
    EXPECT_FALSE(uses_tensor_cores(Algorithm::shared_tiled));
}

// Every algorithm runs through the API on each device it has (CUDA where present), at
// each of its precisions, and matches the float64 reference.
TEST(Registry, EveryAlgorithmIsReachableThroughTheApi) {
    for (const AlgorithmInfo &a : algorithms()) {
        for (Device device : a.devices) {
            if (device == Device::cuda && !cuda_available()) {
                continue;
            }
            for (Precision p : a.precisions) {
                SCOPED_TRACE(a.name + " " + to_string(device) + " " + to_string(p));
                Image img, ker;
                Halide::Runtime::Buffer<> image = random_buffer(storage_type(p), 37, 23, img);
                // A random 5 x 3 kernel is rank 3: low_rank takes it as it is.
                Halide::Runtime::Buffer<> kernel = a.max_kernel_rank == 1
                                                       ? random_rank1_kernel(storage_type(p), 5, 3, ker)
                                                       : random_buffer(storage_type(p), 5, 3, ker);
                Options o;
                o.algorithm = a.algorithm;
                o.precision = p;
                o.device = device;
                o.boundary = Boundary::reflect;
                const Plan plan({37, 23}, kernel, o);
                EXPECT_EQ(plan.dispatch().algorithm, a.algorithm);
                EXPECT_EQ(plan.dispatch().device, device);
                EXPECT_TRUE(std::find(a.variants.begin(), a.variants.end(), plan.dispatch().variant) !=
                            a.variants.end())
                    << plan.dispatch().variant;
                Halide::Runtime::Buffer<> out = plan.allocate_output();
                poison(out);
                plan.apply(image, out);
                out.copy_to_host();
                const Reference ref = correlate_reference(img, ker, Mode::same, Boundary::reflect, 0.0, false);
                if (a.tensor_cores) {
                    // float32 sums of float16 products (test_tensor_core.cpp derives the bound); atomic
                    // f16 rounds its strip-boundary partial sums to f16 once more, and f16 the result.
                    const bool f16 = p == Precision::f16;
                    const double gamma =
                        19 * 0x1p-23 + (f16 && a.algorithm == Algorithm::im2tensor_atomic ? 0x1p-11 : 0.0);
                    for (size_t i = 0; i < ref.value.data.size(); i++) {
                        const double want = ref.value.data[i];
                        ASSERT_NEAR(load(out, i), want,
                                    gamma * ref.magnitude.data[i] + (f16 ? 0x1p-11 * std::fabs(want) + 0x1p-25 : 0.0))
                            << i;
                    }
                } else if (a.algorithm == Algorithm::low_rank) {
                    EXPECT_TRUE(matches_low_rank(out, img, ker, p, Mode::same, Boundary::reflect, 0.0, false));
                } else if (a.max_kernel_rank == 1) {
                    // The stored kernel is rank-1 within rounding: add what the factorization drops.
                    Halide::Runtime::Buffer<double, 2> k64(ker.width, ker.height);
                    double norm = 0.0;
                    k64.for_each_element([&](int x, int y) {
                        k64(x, y) = ker.at(x, y);
                        norm += ker.at(x, y) * ker.at(x, y);
                    });
                    Image ones = ker;
                    std::fill(ones.data.begin(), ones.data.end(), 1.0);
                    const Reference window = correlate_reference(img, ones, Mode::same, Boundary::reflect, 0.0, false);
                    EXPECT_TRUE(matches_reference(out, ref, p, 15, true, rank1_relative_residual(k64) * std::sqrt(norm),
                                                  &window.magnitude));
                } else {
                    EXPECT_TRUE(matches_reference(out, ref, p, 15));
                }
            }
        }
    }
}

// ---- Plans ----

TEST(Plan, AppliedTwiceAndOnFreshImagesEqualsTheOneShotCall) {
    for (Algorithm a : {Algorithm::automatic, Algorithm::naive, Algorithm::shared_tiled, Algorithm::autoscheduled}) {
        for (Mode mode : {Mode::valid, Mode::same, Mode::full}) {
            SCOPED_TRACE(std::string(to_string(a)) + " " + to_string(mode));
            Image ignore;
            Halide::Runtime::Buffer<> kernel = random_buffer(halide_type_of<float>(), 4, 7, ignore);
            Options o;
            o.algorithm = a;
            o.mode = mode;
            o.device = Device::cpu;
            o.boundary = Boundary::mirror;
            const Plan plan({41, 30}, kernel, o, Operation::convolve);
            EXPECT_EQ(plan.output_extent().width, output_extent({41, 30}, {4, 7}, mode).width);
            for (int image_index = 0; image_index < 2; image_index++) {
                Halide::Runtime::Buffer<> image = random_buffer(halide_type_of<float>(), 41, 30, ignore);
                Halide::Runtime::Buffer<> first = plan.apply(image);
                Halide::Runtime::Buffer<> second = plan.allocate_output();
                poison(second);
                plan.apply(image, second);
                Halide::Runtime::Buffer<> once = convolve2d(image, kernel, o);
                EXPECT_TRUE(same_bits(first, second));
                EXPECT_TRUE(same_bits(first, once));
            }
        }
    }
}

// A batch of images of one extent, dense (x, y, n), uniform in [-1, 1).
Halide::Runtime::Buffer<> random_batch(halide_type_t type, int width, int height, int n) {
    Halide::Runtime::Buffer<> b(type, width, height, n);
    std::uniform_real_distribution<double> dist(-1.0, 1.0);
    for (size_t i = 0; i < b.number_of_elements(); i++) {
        store(b, i, dist(rng()));
    }
    return b;
}

// A batch (x, y, n) through a plan and the one-shot functions: every image filtered as its
// own 2D call would, bit for bit; batches of one and of several, odd extents, and a batch
// cropped out of a larger one (its images neither adjacent nor counted from 0).
TEST(Batch, EveryImageAsItsOwnCall) {
    for (Algorithm a : {Algorithm::automatic, Algorithm::naive, Algorithm::shared_tiled}) {
        for (Mode mode : {Mode::valid, Mode::same, Mode::full}) {
            SCOPED_TRACE(std::string(to_string(a)) + " " + to_string(mode));
            Image ignore;
            Halide::Runtime::Buffer<> kernel = random_buffer(halide_type_of<float>(), 5, 4, ignore);
            Options o;
            o.algorithm = a;
            o.mode = mode;
            o.device = Device::cpu;
            o.boundary = Boundary::reflect;
            const Plan plan({23, 17}, kernel, o);
            Halide::Runtime::Buffer<> larger = random_batch(halide_type_of<float>(), 30, 20, 5);
            Halide::Runtime::Buffer<> cropped = larger.cropped(0, 3, 23).cropped(1, 2, 17).cropped(2, 1, 3);
            for (Halide::Runtime::Buffer<> batch : {random_batch(halide_type_of<float>(), 23, 17, 1),
                                                    random_batch(halide_type_of<float>(), 23, 17, 4), cropped}) {
                Halide::Runtime::Buffer<> once = correlate2d(batch, kernel, o);
                ASSERT_EQ(once.dimensions(), 3);
                ASSERT_EQ(once.dim(2).extent(), batch.dim(2).extent());
                const Extent2d e = plan.output_extent();
                Halide::Runtime::Buffer<> planned(halide_type_of<float>(), e.width, e.height, batch.dim(2).extent());
                poison(planned);
                plan.apply(batch, planned);
                EXPECT_TRUE(same_bits(plan.apply(batch), planned)) << "the allocating form";
                for (int i = 0; i < batch.dim(2).extent(); i++) {
                    Halide::Runtime::Buffer<> image = batch.sliced(2, batch.dim(2).min() + i);
                    Halide::Runtime::Buffer<> alone = correlate2d(image, kernel, o);
                    EXPECT_TRUE(same_bits(once.sliced(2, i), alone)) << "image " << i;
                    EXPECT_TRUE(same_bits(planned.sliced(2, i), alone)) << "image " << i;
                }
            }
        }
    }
}

TEST(Batch, SeparableAndGaussianBatches) {
    Options o;
    o.device = Device::cpu;
    o.boundary = Boundary::wrap;
    Halide::Runtime::Buffer<> batch = random_batch(halide_type_of<float>(), 19, 26, 3);
    Halide::Runtime::Buffer<float> row(7), column(3);
    row.fill(0.25f);
    column.fill(-0.5f);
    Halide::Runtime::Buffer<float> separable(19, 26, 3), gaussian(19, 26, 3);
    separable_correlate2d(batch, row, column, separable, o);
    gaussian_blur(batch, gaussian, 2.5, o);
    for (int i = 0; i < 3; i++) {
        Halide::Runtime::Buffer<> image = batch.sliced(2, i);
        Halide::Runtime::Buffer<float> s(19, 26), g(19, 26);
        separable_correlate2d(image, row, column, s, o);
        gaussian_blur(image, g, 2.5, o);
        EXPECT_TRUE(same_bits(separable.sliced(2, i), s));
        EXPECT_TRUE(same_bits(gaussian.sliced(2, i), g));
    }
}

TEST(Batch, MismatchedBatchesAreRefused) {
    Halide::Runtime::Buffer<float> kernel(3, 3);
    kernel.fill(1.0f);
    Options o;
    o.device = Device::cpu;
    const Plan plan({16, 12}, kernel, o);
    Halide::Runtime::Buffer<> batch = random_batch(halide_type_of<float>(), 16, 12, 3);
    Halide::Runtime::Buffer<float> two(16, 12, 2), flat(16, 12), wrong(15, 12, 3);
    expect_error([&] { plan.apply(batch, two); }, ErrorCode::invalid_argument, "holds 2 images");
    expect_error([&] { plan.apply(batch, flat); }, ErrorCode::invalid_argument, "is one image");
    expect_error([&] { plan.apply(batch, wrong); }, ErrorCode::invalid_argument, "each output of the batch");
    expect_error([&] { correlate2d(batch, kernel, two, o); }, ErrorCode::invalid_argument, "holds 2");
    Halide::Runtime::Buffer<float> four(16, 12, 2, 2);
    expect_error([&] { correlate2d(four, kernel, o); }, ErrorCode::invalid_argument, "or 3 (x, y, n");
    Options always = o;
    always.bands.banding = Banding::always;
    Halide::Runtime::Buffer<float> out(16, 12, 3);
    expect_error([&] { correlate2d(batch, kernel, out, always); }, ErrorCode::unsupported, "row bands");
    Halide::Runtime::Buffer<> overlapping = batch.cropped(2, 0, 3);
    expect_error([&] { plan.apply(batch, overlapping); }, ErrorCode::invalid_argument, "overlaps");
}

// The plan copies the kernel: changing the caller's afterwards changes nothing.
TEST(Plan, OwnsItsKernel) {
    Image img, ker;
    Halide::Runtime::Buffer<> image = random_buffer(halide_type_of<double>(), 16, 16, img);
    Halide::Runtime::Buffer<> kernel = random_buffer(halide_type_of<double>(), 3, 3, ker);
    Options o;
    o.device = Device::cpu;
    o.precision = Precision::f64;
    const Plan plan({16, 16}, kernel, o);
    store(kernel, 4, 1e6);
    Halide::Runtime::Buffer<> out = plan.apply(image);
    EXPECT_TRUE(matches_reference(out, correlate_reference(img, ker, Mode::same, Boundary::constant, 0.0, false),
                                  Precision::f64, 9));
}

// Several threads apply one plan at once, each to its own images: every result is
// bit-identical to the same apply made alone.
TEST(Plan, ConcurrentAppliesFromManyThreads) {
    Image ignore;
    Halide::Runtime::Buffer<> kernel = random_buffer(halide_type_of<float>(), 9, 9, ignore);
    // Autoscheduled on a small output runs into the plan's scratch: one per concurrent apply.
    for (Algorithm a : {Algorithm::shared_tiled, Algorithm::autoscheduled}) {
        Options o;
        o.algorithm = a;
        o.device = Device::cpu;
        const Plan plan({70, 50}, kernel, o);
        constexpr int threads = 8, rounds = 6;
        std::vector<Halide::Runtime::Buffer<>> images, expected;
        for (int t = 0; t < threads; t++) {
            images.push_back(random_buffer(halide_type_of<float>(), 70, 50, ignore));
            expected.push_back(plan.apply(images.back()));
        }
        std::vector<int> mismatches(threads, 0);
        std::vector<std::thread> pool;
        for (int t = 0; t < threads; t++) {
            pool.emplace_back([&, t] {
                for (int r = 0; r < rounds; r++) {
                    Halide::Runtime::Buffer<> out = plan.apply(images[size_t(t)]);
                    mismatches[size_t(t)] += !same_bits(out, expected[size_t(t)]);
                }
            });
        }
        for (std::thread &th : pool) {
            th.join();
        }
        for (int t = 0; t < threads; t++) {
            EXPECT_EQ(mismatches[size_t(t)], 0) << to_string(a) << " thread " << t;
        }
    }
}

TEST(Plan, RefusesBuffersOfAnotherShapeOrType) {
    Image ignore;
    Halide::Runtime::Buffer<> kernel = random_buffer(halide_type_of<float>(), 3, 3, ignore);
    Options o;
    o.device = Device::cpu;
    const Plan plan({20, 10}, kernel, o);
    Halide::Runtime::Buffer<> wrong = random_buffer(halide_type_of<float>(), 10, 20, ignore);
    Halide::Runtime::Buffer<> image = random_buffer(halide_type_of<float>(), 20, 10, ignore);
    Halide::Runtime::Buffer<> f64 = random_buffer(halide_type_of<double>(), 20, 10, ignore);
    Halide::Runtime::Buffer<> out(halide_type_of<float>(), 20, 10), small(halide_type_of<float>(), 19, 10);
    poison(small);
    expect_error([&] { plan.apply(wrong, out); }, ErrorCode::invalid_argument, "this plan was made for 20 x 10");
    expect_error([&] { plan.apply(f64, out); }, ErrorCode::invalid_argument, "image holds float64");
    expect_error([&] { plan.apply(image, small); }, ErrorCode::invalid_argument, "this mode needs 20 x 10");
    for (size_t i = 0; i < small.number_of_elements(); i++) {
        ASSERT_TRUE(std::isnan(load(small, i)));
    }
}

TEST(Plan, ErrorsCarryTheirCode) {
    Image ignore;
    Halide::Runtime::Buffer<> k32 = random_buffer(halide_type_of<float>(), 3, 3, ignore);
    Halide::Runtime::Buffer<> k16 = random_buffer(storage_type(Precision::f16), 3, 3, ignore);
    Options o;
    o.device = Device::cpu;
    o.algorithm = Algorithm::im2tensor;  // no f32 entry point (runtime_kernels/contract.h)
    if (cuda_info().built) {
        expect_error([&] { (void)Plan({8, 8}, k32, o); }, ErrorCode::unsupported, "f16 or f16f32");
        o.algorithm = Algorithm::im2tensor_fused;
        o.precision = Precision::f16;
        expect_error([&] { (void)Plan({8, 8}, k16, o); }, ErrorCode::unsupported, "runs on CUDA only");
    } else {
        o.precision = Precision::f16;
        expect_error(
            [&] {
                (void)Plan({8, 8}, k16, o);
            },
            ErrorCode::unsupported, "runs on CUDA, and this halconv was built without CUDA (HALCONV_WITH_CUDA=OFF)");
    }
    o = Options{};
    o.algorithm = Algorithm::separable;
    o.device = Device::cpu;
    expect_error([&] { (void)Plan({8, 8}, k32, o); }, ErrorCode::unsupported, "needs a rank-1 kernel");
    o.algorithm = static_cast<Algorithm>(99);
    expect_error([&] { (void)Plan({8, 8}, k32, o); }, ErrorCode::invalid_argument, "unknown algorithm 99");
    o.algorithm = Algorithm::naive;
    expect_error([&] { (void)Plan({0, 8}, k32, o); }, ErrorCode::invalid_argument, "must both be non-empty");
    expect_error([&] { (void)Plan::gaussian({8, 8}, -1.0, o); }, ErrorCode::invalid_argument, "sigma");
    if (!cuda_available()) {
        o.device = Device::cuda;
        expect_error(
            [&] {
                (void)Plan({8, 8}, k32, o);
            },
            ErrorCode::device, cuda_info().built ? "no CUDA device is usable" : "built without CUDA");
    }
    EXPECT_STREQ(to_string(ErrorCode::out_of_memory), "out_of_memory");
}

TEST(Plan, SeparableAndGaussianPlans) {
    Image img, row, col;
    Halide::Runtime::Buffer<> image = random_buffer(halide_type_of<double>(), 30, 21, img);
    Halide::Runtime::Buffer<> r2 = random_buffer(halide_type_of<double>(), 5, 1, row);
    Halide::Runtime::Buffer<> c2 = random_buffer(halide_type_of<double>(), 3, 1, col);
    Halide::Runtime::Buffer<> r = r2.sliced(1, 0), c = c2.sliced(1, 0);
    Options o;
    o.device = Device::cpu;
    o.precision = Precision::f64;
    o.mode = Mode::full;
    const Plan plan = Plan::separable({30, 21}, r, c, o);
    EXPECT_EQ(plan.dispatch().algorithm, Algorithm::separable);
    EXPECT_EQ(plan.dispatch().reason, "the separable entry point");
    Halide::Runtime::Buffer<> out = plan.apply(image);
    Halide::Runtime::Buffer<> once(halide_type_of<double>(), 34, 23);
    separable_correlate2d(image, r, c, once, o);
    EXPECT_TRUE(same_bits(out, once));

    o.mode = Mode::same;
    const Plan g = Plan::gaussian({30, 21}, 2.0, o);
    Halide::Runtime::Buffer<> blurred = g.apply(image), via_free(halide_type_of<double>(), 30, 21);
    gaussian_blur(image, via_free, 2.0, o);
    EXPECT_TRUE(same_bits(blurred, via_free));
    EXPECT_EQ(g.workspace_bytes(), 0u);  // CPU plans keep no device workspace
}

// ---- Plans on the GPU ----

class PlanGpu : public ::testing::Test {
protected:
    void SetUp() override {
        if (!cuda_available()) {
            GTEST_SKIP() << "no CUDA device on this machine: GPU plans are tested on a GPU machine (scripts/gpu-check)";
        }
    }
};

// The default call (no algorithm named) reaches the tensor cores where the built-in H100
// table has them fastest at 4096² in same mode: f16 at K = 15 ... 63, f32 (the
// error-compensated split) at K = 7 ... 15.
TEST_F(PlanGpu, DefaultCallReachesTheTensorCoresWhereTheyWin) {
    Image ignore;
    for (const auto &[precision, k] : {std::pair{Precision::f16, 15},
                                       {Precision::f16, 31},
                                       {Precision::f16, 63},
                                       {Precision::f32, 9},
                                       {Precision::f32, 15}}) {
        Halide::Runtime::Buffer<> kernel = random_buffer(storage_type(precision), k, k, ignore);
        Options o;
        o.precision = precision;
        const Plan plan({4096, 4096}, kernel, o);
        EXPECT_EQ(plan.dispatch().device, Device::cuda);
        EXPECT_TRUE(uses_tensor_cores(plan.dispatch().algorithm))
            << to_string(precision) << " K " << k << ": " << to_string(plan.dispatch().algorithm) << " ("
            << plan.dispatch().reason << ")";
    }
}

// Long rank-1 kernels: the default call takes the separable entry (its fft_lines passes),
// which the built-in H100 table has at 0.31 / 0.39 ms for 255 / 511 taps at 4096^2 f32
// against the 2D FFT's 0.45 at 127. Before those rows were measured Auto extrapolated the
// sliding pass's slope past 193 taps (about 1.5 ms at 511) and chose the 2D FFT.
TEST_F(PlanGpu, DefaultCallTakesTheSeparablePassesForLongRank1Kernels) {
    for (const int k : {255, 511}) {
        Image ignore;
        Halide::Runtime::Buffer<> kernel = random_rank1_kernel(halide_type_of<float>(), k, k, ignore);
        const Plan plan({4096, 4096}, kernel, Options{});
        EXPECT_EQ(plan.dispatch().algorithm, Algorithm::separable) << k << ": " << plan.dispatch().reason;
        EXPECT_EQ(plan.dispatch().variant, "separable_cuda_fft_lines");
    }
}

// ---- Auto ----

TEST(Auto, PicksTheFastestMeasuredAlgorithm) {
    WisdomScope scope;
    const DeviceIdentity cpu = identify_device(Device::cpu);
    // naive fastest at small K, shared_tiled at large K; interpolated in log-log between.
    use_wisdom(wisdom_of(cpu, {point(Algorithm::naive, 64, 3, 1.0), point(Algorithm::naive, 64, 31, 10.0),
                               point(Algorithm::shared_tiled, 64, 3, 5.0), point(Algorithm::shared_tiled, 64, 31, 5.0),
                               point(Algorithm::autoscheduled, 64, 3, 50.0)}));
    Image ignore;
    Options o;
    o.device = Device::cpu;
    const auto chosen = [&](int k) {
        Halide::Runtime::Buffer<> kernel = random_buffer(halide_type_of<float>(), k, k, ignore);
        return Plan({64, 64}, kernel, o).dispatch();
    };
    EXPECT_EQ(chosen(3).algorithm, Algorithm::naive);
    EXPECT_EQ(chosen(7).algorithm, Algorithm::naive);          // naive predicted 2.3 ms < 5
    EXPECT_EQ(chosen(21).algorithm, Algorithm::shared_tiled);  // naive predicted 6.8 ms > 5
    const Dispatch d = chosen(31);
    EXPECT_THAT(d.reason, HasSubstr("shared_tiled 5 ms"));
    EXPECT_THAT(d.reason, HasSubstr("wisdom given to use_wisdom"));
    EXPECT_TRUE(scope.warnings.empty());
}

// Auto for a call of n images (Options::batch_images, or a call on an (x, y, n) image):
// a row that runs a batch in one launch is predicted as one image of n times the pixels,
// another at n times one image's time. Here naive leads on one 64^2 image and
// shared_tiled at 512^2 (64 times the pixels).
TEST(Auto, BatchesWeighTheirImages) {
    const DeviceIdentity cpu = identify_device(Device::cpu);
    CostTable table;
    table.source = "test";
    table.measured_on = cpu;
    table.measurements = {point(Algorithm::naive, 64, 3, 1.0), point(Algorithm::naive, 512, 3, 100.0),
                          point(Algorithm::shared_tiled, 64, 3, 2.0), point(Algorithm::shared_tiled, 512, 3, 20.0)};
    internal::AutoRequest r;
    r.image = {64, 64};
    r.kernel = {3, 3};
    const auto chosen = [&](bool naive_together, bool tiled_together) {
        const std::vector<internal::AutoCandidate> candidates = {{Algorithm::naive, nullptr, naive_together},
                                                                 {Algorithm::shared_tiled, nullptr, tiled_together}};
        const internal::AutoChoice c = internal::choose_fastest(candidates, r, table);
        return std::pair{candidates[c.index].algorithm, c.reason};
    };
    EXPECT_EQ(chosen(true, true).first, Algorithm::naive);
    r.images = 64;
    const auto [algorithm, reason] = chosen(true, true);  // 100 ms against 20
    EXPECT_EQ(algorithm, Algorithm::shared_tiled);
    EXPECT_THAT(reason, HasSubstr("64 x 64 x 64 images"));
    EXPECT_THAT(reason, HasSubstr("shared_tiled 20.0 ms, naive 100.0 ms"));
    EXPECT_EQ(chosen(false, false).first, Algorithm::naive);        // 64 x 1 ms against 64 x 2
    EXPECT_EQ(chosen(false, true).first, Algorithm::shared_tiled);  // 64 ms against 20
}

// Options::batch_images: 1 or more; a plan for batches runs single images and batches
// alike, and the one-shot call on an (x, y, n) image plans for its n images (the CPU runs
// a batch image by image: Auto's choice is the one image's there).
TEST(Auto, BatchImagesOption) {
    Image ignore;
    Halide::Runtime::Buffer<> kernel = random_buffer(halide_type_of<float>(), 3, 3, ignore);
    Options o;
    o.device = Device::cpu;
    o.batch_images = 8;
    const Plan plan({20, 10}, kernel, o);
    EXPECT_THAT(plan.dispatch().reason, HasSubstr("20 x 10 x 8 images"));
    Halide::Runtime::Buffer<float> batch(20, 10, 3), out(20, 10, 3), one_out(20, 10);
    batch.fill(0.5f);
    plan.apply(batch, out);
    Halide::Runtime::Buffer<float> first = batch.sliced(2, 0);
    plan.apply(first, one_out);
    EXPECT_EQ(out(4, 5, 2), one_out(4, 5));
    o.batch_images = 1;
    EXPECT_THAT(correlate2d(batch, kernel, out, o).reason, HasSubstr("20 x 10 x 3 images"));
    for (const int bad : {0, -3}) {
        o.batch_images = bad;
        try {
            Plan({64, 64}, kernel, o);
            ADD_FAILURE() << "batch_images " << bad << " accepted";
        } catch (const Error &e) {
            EXPECT_EQ(e.code(), ErrorCode::invalid_argument);
            EXPECT_THAT(e.what(), HasSubstr("batch_images is " + std::to_string(bad)));
        }
    }
}

TEST(Auto, SeparableOnlyForRankOneKernels) {
    WisdomScope scope;
    const DeviceIdentity cpu = identify_device(Device::cpu);
    use_wisdom(wisdom_of(cpu, {point(Algorithm::separable, 64, 5, 0.5), point(Algorithm::shared_tiled, 64, 5, 2.0),
                               point(Algorithm::naive, 64, 5, 9.0)}));
    Image img, ker;
    Options o;
    o.device = Device::cpu;
    Halide::Runtime::Buffer<> rank1 = random_rank1_kernel(halide_type_of<float>(), 5, 5, ker);
    Halide::Runtime::Buffer<> general = random_buffer(halide_type_of<float>(), 5, 5, ker);
    EXPECT_EQ(Plan({64, 64}, rank1, o).dispatch().algorithm, Algorithm::separable);
    EXPECT_EQ(Plan({64, 64}, general, o).dispatch().algorithm, Algorithm::shared_tiled);
    // Measurements of another precision do not count: f64 falls back to the static order.
    o.precision = Precision::f64;
    Halide::Runtime::Buffer<> general64 = random_buffer(halide_type_of<double>(), 5, 5, ker);
    const Dispatch d = Plan({64, 64}, general64, o).dispatch();
    EXPECT_EQ(d.algorithm, Algorithm::shared_tiled);
    EXPECT_THAT(d.reason, HasSubstr("no measurements of f64"));
}

TEST(Auto, OtherModesAndSizesScale) {
    WisdomScope scope;
    const DeviceIdentity cpu = identify_device(Device::cpu);
    // Valid-mode measurements only: a same-mode request scales them by output pixels.
    use_wisdom(wisdom_of(cpu, {point(Algorithm::naive, 100, 51, 1.0, Precision::f32, Mode::valid),
                               point(Algorithm::shared_tiled, 100, 51, 3.0, Precision::f32, Mode::valid)}));
    Image ignore;
    Halide::Runtime::Buffer<> kernel = random_buffer(halide_type_of<float>(), 51, 51, ignore);
    Options o;
    o.device = Device::cpu;
    const Dispatch d = Plan({200, 200}, kernel, o).dispatch();
    EXPECT_EQ(d.algorithm, Algorithm::naive);
    // 2500 valid outputs -> 10000 same ones at 100^2 (x4), then 4x the pixels (x4).
    EXPECT_THAT(d.reason, HasSubstr("naive 16.0 ms"));
}

// Past the largest image measured, a curve flattened by fixed costs between small
// images does not stay flat: time grows at least with the pixel count.
TEST(Auto, LargerImagesThanMeasuredGrowWithThePixels) {
    WisdomScope scope;
    const DeviceIdentity cpu = identify_device(Device::cpu);
    use_wisdom(
        wisdom_of(cpu, {point(Algorithm::autoscheduled, 256, 3, 0.68), point(Algorithm::autoscheduled, 1024, 3, 0.92),
                        point(Algorithm::shared_tiled, 256, 3, 0.04), point(Algorithm::shared_tiled, 1024, 3, 0.64)}));
    Image ignore;
    Halide::Runtime::Buffer<> kernel = random_buffer(halide_type_of<float>(), 3, 3, ignore);
    Options o;
    o.device = Device::cpu;
    // 4096² is 16x 1024²: autoscheduled at least 0.92 x 16, shared_tiled 0.64 x 16.
    const Dispatch d = Plan({4096, 4096}, kernel, o).dispatch();
    EXPECT_EQ(d.algorithm, Algorithm::shared_tiled) << d.reason;
    EXPECT_THAT(d.reason, HasSubstr("autoscheduled 14.7 ms"));
    EXPECT_THAT(d.reason, HasSubstr("shared_tiled 10.2 ms"));
    // Between the measured sizes the curve is followed as measured.
    EXPECT_EQ(Plan({512, 512}, kernel, o).dispatch().algorithm, Algorithm::shared_tiled);
}

// ---- Wisdom files ----

TEST(Wisdom, FormatAndParseRoundTrip) {
    const DeviceIdentity cpu = identify_device(Device::cpu);
    const Wisdom w = wisdom_of(cpu, {point(Algorithm::naive, 64, 3, 1.25),
                                     point(Algorithm::separable, 32, 7, 0.5, Precision::f16, Mode::full)});
    const Wisdom back = parse_wisdom(format_wisdom(w), "test");
    ASSERT_EQ(back.sections.size(), 1u);
    EXPECT_EQ(back.build_id, w.build_id);
    EXPECT_EQ(back.sections[0].device, cpu);
    ASSERT_EQ(back.sections[0].measurements.size(), 2u);
    const Measurement &m = back.sections[0].measurements[1];
    EXPECT_EQ(m.algorithm, Algorithm::separable);
    EXPECT_EQ(m.precision, Precision::f16);
    EXPECT_EQ(m.mode, Mode::full);
    EXPECT_EQ(m.image_width, 32);
    EXPECT_EQ(m.kernel_height, 7);
    EXPECT_DOUBLE_EQ(m.ms, 0.5);
}

TEST(Wisdom, MalformedContentsAreRefused) {
    const std::string good = format_wisdom(wisdom_of(identify_device(Device::cpu), {point(Algorithm::naive, 8, 3, 1)}));
    expect_error([&] { parse_wisdom(good.substr(0, good.size() / 2), "half"); }, ErrorCode::io, "unreadable wisdom");
    expect_error([&] { parse_wisdom("\x01\xff garbage", "garbage"); }, ErrorCode::io, "unreadable wisdom");
    expect_error([&] { parse_wisdom("[1, 2]", "array"); }, ErrorCode::invalid_argument, "not an object");
    std::string negative = good;
    negative.replace(negative.find("\"ms\":1"), 6, "\"ms\":-1");
    expect_error([&] { parse_wisdom(negative, "negative"); }, ErrorCode::invalid_argument, "ms must be");
    std::string version = good;
    version.replace(version.find("\"version\": 1"), 12, "\"version\": 7");
    expect_error([&] { parse_wisdom(version, "version"); }, ErrorCode::invalid_argument, "version is not 1");
    expect_error([] { read_wisdom("/nonexistent/halconv/wisdom.json"); }, ErrorCode::io, "cannot read");
}

class WisdomFile : public ::testing::Test {
protected:
    void SetUp() override {
        dir_ = fs::temp_directory_path() / ("halconv-wisdom-" + std::to_string(rng()()));
        fs::create_directories(dir_);
        path_ = (dir_ / "wisdom.json").string();
        const char *old = std::getenv("HALCONV_WISDOM");
        previous_ = old != nullptr ? old : "";
        setenv("HALCONV_WISDOM", path_.c_str(), 1);
    }
    void TearDown() override {
        if (previous_.empty()) {
            unsetenv("HALCONV_WISDOM");
        } else {
            setenv("HALCONV_WISDOM", previous_.c_str(), 1);
        }
        fs::remove_all(dir_);
        reload_wisdom();
    }
    void write(const std::string &text) {
        std::ofstream(path_, std::ios::binary) << text;
        reload_wisdom();
    }
    // What auto reports for a 3 x 3 kernel on the CPU.
    std::string reason() {
        Image ignore;
        Halide::Runtime::Buffer<> kernel = random_buffer(halide_type_of<float>(), 3, 3, ignore);
        Options o;
        o.device = Device::cpu;
        return Plan({32, 32}, kernel, o).dispatch().reason;
    }
    std::string path_, previous_;
    fs::path dir_;
};

TEST_F(WisdomFile, ValidFileIsUsed) {
    WisdomScope scope;
    EXPECT_EQ(default_wisdom_path(), path_);
    write_wisdom(path_, wisdom_of(identify_device(Device::cpu), {point(Algorithm::autoscheduled, 32, 3, 0.001)}));
    reload_wisdom();
    EXPECT_THAT(reason(), HasSubstr("wisdom file " + path_));
    EXPECT_TRUE(scope.warnings.empty());
}

TEST_F(WisdomFile, MissingFileIsSilent) {
    WisdomScope scope;
    reload_wisdom();
    EXPECT_THAT(reason(), ::testing::Not(HasSubstr("wisdom file")));
    EXPECT_TRUE(scope.warnings.empty());
}

TEST_F(WisdomFile, AnotherDeviceIsIgnoredWithAWarning) {
    WisdomScope scope;
    DeviceIdentity other{Device::cpu, "Some Other CPU", "512 threads"};
    write_wisdom(path_, wisdom_of(other, {point(Algorithm::autoscheduled, 32, 3, 0.001)}));
    reload_wisdom();
    EXPECT_THAT(reason(), ::testing::Not(HasSubstr("wisdom file")));
    ASSERT_EQ(scope.warnings.size(), 1u);
    EXPECT_THAT(scope.warnings[0], HasSubstr("measurements of other devices only (Some Other CPU"));
    reason();
    EXPECT_EQ(scope.warnings.size(), 1u);  // once per file and process
}

TEST_F(WisdomFile, AnotherBuildIsIgnoredWithAWarning) {
    WisdomScope scope;
    Wisdom w = wisdom_of(identify_device(Device::cpu), {point(Algorithm::autoscheduled, 32, 3, 0.001)});
    w.build_id = "0123456789abcdef";
    write_wisdom(path_, w);
    reload_wisdom();
    EXPECT_THAT(reason(), ::testing::Not(HasSubstr("wisdom file")));
    ASSERT_EQ(scope.warnings.size(), 1u);
    EXPECT_THAT(scope.warnings[0], HasSubstr("made by another build of halconv (build 0123456789abcdef"));
}

TEST_F(WisdomFile, TruncatedAndGarbageFilesAreIgnoredWithAWarning) {
    const std::string good =
        format_wisdom(wisdom_of(identify_device(Device::cpu), {point(Algorithm::autoscheduled, 32, 3, 0.001)}));
    for (const std::string &text : {good.substr(0, good.size() - 20), std::string("\x89PNG\r\n garbage"), std::string(),
                                    std::string("{\"format\": \"something-else\"}")}) {
        WisdomScope scope;
        write(text);
        EXPECT_THAT(reason(), ::testing::Not(HasSubstr("wisdom file")));
        ASSERT_EQ(scope.warnings.size(), 1u) << text;
        EXPECT_THAT(scope.warnings[0], HasSubstr("ignoring"));
        EXPECT_THAT(scope.warnings[0], HasSubstr(path_));
    }
}

TEST(Wisdom, MergeReplacesTheMeasuredDevicesOnly) {
    const DeviceIdentity a{Device::cpu, "A", "1 threads"}, b{Device::cuda, "B", "sm_90, 1 SMs"};
    Wisdom into = wisdom_of(a, {point(Algorithm::naive, 8, 3, 1)});
    into.sections.push_back({b, {point(Algorithm::naive, 8, 3, 2)}});
    const Wisdom update = wisdom_of(a, {point(Algorithm::naive, 8, 3, 3)});
    const Wisdom merged = merge_wisdom(into, update);
    ASSERT_EQ(merged.sections.size(), 2u);
    EXPECT_EQ(merged.sections[0].device, a);
    EXPECT_DOUBLE_EQ(merged.sections[0].measurements[0].ms, 3);
    EXPECT_EQ(merged.sections[1].device, b);
    Wisdom old = into;
    old.build_id = "elsewhere";
    EXPECT_EQ(merge_wisdom(old, update).sections.size(), 1u);  // another build's is replaced whole
}

// ---- tune ----

TEST(Tune, MeasuresEveryCpuAlgorithmThatSupportsEachPoint) {
    TuneOptions o;
    o.device = Device::cpu;
    o.sizes = {{40, 30}};
    o.kernels = {1, 5};
    o.precisions = {Precision::f32};
    o.modes = {Mode::same};
    o.reps = 1;
    std::vector<std::string> lines;
    o.progress = [&](const std::string &l) { lines.push_back(l); };
    const Wisdom w = tune(o);
    EXPECT_EQ(w.build_id, build_info().build_id);
    ASSERT_EQ(w.sections.size(), 1u);
    EXPECT_EQ(w.sections[0].device, identify_device(Device::cpu));
    std::set<Algorithm> measured;
    for (const Measurement &m : w.sections[0].measurements) {
        measured.insert(m.algorithm);
        EXPECT_GT(m.ms, 0.0);
        EXPECT_EQ(m.image_width, 40);
        EXPECT_EQ(m.precision, Precision::f32);
    }
    for (const AlgorithmInfo &a : algorithms()) {
        const bool on_cpu = std::find(a.devices.begin(), a.devices.end(), Device::cpu) != a.devices.end();
        EXPECT_EQ(measured.count(a.algorithm), on_cpu ? 1u : 0u) << a.name;
    }
    EXPECT_EQ(lines.size(), w.sections[0].measurements.size());
    o.algorithms = {Algorithm::automatic};
    expect_error([&] { tune(o); }, ErrorCode::invalid_argument, "not auto");
}

}  // namespace
}  // namespace halconv::test
