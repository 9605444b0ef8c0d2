// API behaviour beyond the numeric matrix: validation errors (typed, with a message
// saying what is allowed, output untouched), the separable entry point, rank-1
// routing, buffers with non-zero mins, and allocating overloads.
#include <gmock/gmock.h>

#include <algorithm>
#include <optional>

#include "internal.h"
#include "test_support.h"

#ifdef __SANITIZE_ADDRESS__
// The allocation-failure test needs malloc to return null under ASan too.
extern "C" const char *__asan_default_options() {
    return "allocator_may_return_null=1";
}
#endif

namespace halconv::test {
namespace {

using ::testing::HasSubstr;

Options cpu_options(Precision p = Precision::f32) {
    Options o;
    o.precision = p;
    o.device = Device::cpu;
    return o;
}

// Runs fn, expects halconv::Error whose message contains every fragment (and whose
// code is `code`, when given).
template <typename Fn>
void expect_error(Fn fn, std::initializer_list<const char *> fragments, std::optional<ErrorCode> code = {}) {
    try {
        fn();
        ADD_FAILURE() << "expected halconv::Error";
    } catch (const Error &e) {
        for (const char *f : fragments) {
            EXPECT_THAT(e.what(), HasSubstr(f));
        }
        if (code) {
            EXPECT_EQ(e.code(), *code) << e.what();
        }
    }
}

bool all_nan(const Halide::Runtime::Buffer<> &b) {
    for (size_t i = 0; i < b.number_of_elements(); i++) {
        if (!std::isnan(load(b, i))) {
            return false;
        }
    }
    return true;
}

TEST(ApiErrors, EmptyImageOrKernel) {
    Image ignore;
    Halide::Runtime::Buffer<> img = random_buffer(halide_type_of<float>(), 8, 8, ignore);
    Halide::Runtime::Buffer<> k = random_buffer(halide_type_of<float>(), 3, 3, ignore);
    Halide::Runtime::Buffer<float> empty_img(0, 8), empty_k(3, 0);
    Halide::Runtime::Buffer<> out(halide_type_of<float>(), 8, 8);
    expect_error([&] { correlate2d(empty_img, k, out, cpu_options()); }, {"image is empty", "at least 1"});
    expect_error([&] { correlate2d(img, empty_k, out, cpu_options()); }, {"kernel is empty", "at least 1"});
    expect_error([&] { (void)correlate2d(img, empty_k, cpu_options()); }, {"non-empty"});
}

TEST(ApiErrors, KernelLargerThanImageInValidMode) {
    Image ignore;
    Halide::Runtime::Buffer<> img = random_buffer(halide_type_of<float>(), 5, 9, ignore);
    Halide::Runtime::Buffer<> k = random_buffer(halide_type_of<float>(), 6, 3, ignore);
    Options o = cpu_options();
    o.mode = Mode::valid;
    expect_error([&] { (void)correlate2d(img, k, o); }, {"larger than image", "valid", "use same or full"});
}

TEST(ApiErrors, WrongOutputShapeLeavesOutputUntouched) {
    Image ignore;
    Halide::Runtime::Buffer<> img = random_buffer(halide_type_of<float>(), 10, 7, ignore);
    Halide::Runtime::Buffer<> k = random_buffer(halide_type_of<float>(), 3, 3, ignore);
    Halide::Runtime::Buffer<> out(halide_type_of<float>(), 7, 10);  // transposed
    poison(out);
    expect_error([&] { correlate2d(img, k, out, cpu_options()); }, {"output is 7 x 10", "needs 10 x 7"});
    EXPECT_TRUE(all_nan(out));
}

TEST(ApiErrors, WrongDimensionality) {
    Image ignore;
    Halide::Runtime::Buffer<float> img3(8, 8, 3), img4(8, 8, 3, 2);
    Halide::Runtime::Buffer<float> k1(3);
    Halide::Runtime::Buffer<> img = random_buffer(halide_type_of<float>(), 8, 8, ignore);
    Halide::Runtime::Buffer<> k = random_buffer(halide_type_of<float>(), 3, 3, ignore);
    Halide::Runtime::Buffer<> out(halide_type_of<float>(), 8, 8);
    expect_error([&] { correlate2d(img4, k, out, cpu_options()); },
                 {"image has 4 dimensions", "must have 2 (x = width, y = height) or 3"});
    expect_error([&] { correlate2d(img3, k, out, cpu_options()); }, {"batch of 3", "output has 2 dimensions"});
    expect_error([&] { correlate2d(img, k1, out, cpu_options()); }, {"kernel has 1 dimensions", "must have 2"});
    expect_error([&] { separable_correlate2d(img, k, k1, out, cpu_options()); }, {"row kernel has 2 dimensions"});
}

// Halide's host allocations (internal::scratch_malloc): 128-byte aligned, writable to the
// size asked, a freed block given back for the same size, the oldest of the cached blocks
// freed past scratch_cached_blocks, and a block of Halide's default allocator freed by it.
TEST(RuntimeHooks, ScratchBlocksAreAlignedReusedAndBounded) {
    constexpr size_t size = 12345;
    constexpr int n = internal::scratch_cached_blocks + 1;
    std::vector<void *> blocks;
    for (int i = 0; i < n; i++) {
        void *p = internal::scratch_malloc(nullptr, size);
        ASSERT_NE(p, nullptr);
        EXPECT_EQ(reinterpret_cast<uintptr_t>(p) % 128, 0u);
        std::fill_n(static_cast<unsigned char *>(p), size, static_cast<unsigned char>(i));
        blocks.push_back(p);
    }
    for (void *p : blocks) {
        internal::scratch_free(nullptr, p);
    }
    // The first block freed was evicted; the other n - 1 come back, newest first.
    std::vector<void *> again;
    for (int i = 1; i < n; i++) {
        void *p = internal::scratch_malloc(nullptr, size);
        EXPECT_NE(std::find(blocks.begin() + 1, blocks.end(), p), blocks.end());
        EXPECT_EQ(std::find(again.begin(), again.end(), p), again.end());
        again.push_back(p);
    }
    // A cached block is given for its own size only.
    void *cached = again.back();
    again.pop_back();
    internal::scratch_free(nullptr, cached);
    void *other = internal::scratch_malloc(nullptr, 2 * size);
    EXPECT_NE(other, cached);
    EXPECT_EQ(internal::scratch_malloc(nullptr, size), cached);
    again.push_back(other);
    again.push_back(cached);
    for (void *p : again) {
        internal::scratch_free(nullptr, p);
    }
    internal::scratch_free(nullptr, halide_default_malloc(nullptr, 1000));
    internal::scratch_free(nullptr, nullptr);
}

// The CPU thread count (process-wide): set, read back, reset to the default; results do
// not depend on it; out-of-range counts are refused.
TEST(CpuThreads, SetReadBackAndReset) {
    const int initial = cpu_threads();
    EXPECT_GE(initial, 1);
    Image ignore;
    Halide::Runtime::Buffer<> img = random_buffer(halide_type_of<float>(), 301, 203, ignore);
    Halide::Runtime::Buffer<> k = random_buffer(halide_type_of<float>(), 7, 5, ignore);
    Halide::Runtime::Buffer<> many = correlate2d(img, k, cpu_options());
    EXPECT_EQ(set_cpu_threads(1), initial);
    EXPECT_EQ(cpu_threads(), 1);
    Halide::Runtime::Buffer<> one = correlate2d(img, k, cpu_options());
    EXPECT_EQ(set_cpu_threads(0), 1);
    EXPECT_EQ(cpu_threads(), initial);
    EXPECT_TRUE(same_bits(many, one));
    expect_error([] { set_cpu_threads(-1); }, {"CPU threads -1 out of range", "or 0 for the default"},
                 ErrorCode::invalid_argument);
    expect_error([] { set_cpu_threads(max_cpu_threads + 1); }, {"out of range"}, ErrorCode::invalid_argument);
    EXPECT_EQ(cpu_threads(), initial);
}

// The origin (mode same): output(x, y) is the same-mode result at (x - origin) of the
// boundary-extended image, i.e. the full-mode output at (x + k - 1 - centre - origin), for
// several CPU algorithms and both operations; out-of-range origins and other modes are refused.
TEST(Origin, ShiftsTheSameModeResult) {
    Image ignore;
    Halide::Runtime::Buffer<> img = random_buffer(halide_type_of<double>(), 37, 29, ignore);
    Halide::Runtime::Buffer<> k = random_buffer(halide_type_of<double>(), 6, 5, ignore);
    for (Operation operation : {Operation::correlate, Operation::convolve}) {
        Options full = cpu_options(Precision::f64);
        full.mode = Mode::full;
        full.boundary = Boundary::mirror;
        full.algorithm = Algorithm::naive;
        const Plan full_plan({37, 29}, k, full, operation);
        Halide::Runtime::Buffer<double> f(full_plan.apply(img));
        for (Algorithm a : {Algorithm::naive, Algorithm::shared_tiled, Algorithm::autoscheduled, Algorithm::fft}) {
            for (auto [origin_x, origin_y] : {std::pair{0, 0}, std::pair{-2, 1}, std::pair{2, -2}, std::pair{-3, 2}}) {
                SCOPED_TRACE(std::string(to_string(operation)) + " " + to_string(a) + " origin " +
                             std::to_string(origin_x) + "," + std::to_string(origin_y));
                Options o = full;
                o.mode = Mode::same;
                o.algorithm = a;
                o.origin_x = origin_x;
                o.origin_y = origin_y;
                // The same mode's centre: (k - 1) / 2 taps for correlation, k / 2 for convolution.
                const bool flip = operation == Operation::convolve;
                const int cx = flip ? 6 / 2 : 5 / 2, cy = flip ? 5 / 2 : 4 / 2;
                if (origin_x < -cx || origin_x > 5 - cx || origin_y < -cy || origin_y > 4 - cy) {
                    expect_error(
                        [&] {
                            const Plan p({37, 29}, k, o, operation);
                        },
                        {"origin_", "allowed"}, ErrorCode::invalid_argument);
                    continue;
                }
                Halide::Runtime::Buffer<double> out(Plan({37, 29}, k, o, operation).apply(img));
                double worst = 0.0;
                out.for_each_element([&](int x, int y) {
                    const double e = f(x + 5 - cx - origin_x, y + 4 - cy - origin_y);
                    worst = std::max(worst, std::abs(out(x, y) - e));
                });
                EXPECT_LT(worst, 1e-11);
            }
        }
    }
    // In row bands too: each band's slab follows the shifted placement.
    Options shifted = cpu_options(Precision::f64);
    shifted.boundary = Boundary::wrap;
    shifted.origin_x = -2;
    shifted.origin_y = 2;
    Options banded = shifted;
    banded.bands.banding = Banding::always;
    banded.bands.band_rows = 7;
    EXPECT_TRUE(same_bits(Plan({37, 29}, k, banded).apply(img), Plan({37, 29}, k, shifted).apply(img)));
    Options valid = cpu_options();
    valid.mode = Mode::valid;
    valid.origin_x = 1;
    Halide::Runtime::Buffer<> k32 = random_buffer(halide_type_of<float>(), 3, 3, ignore);
    expect_error([&] { const Plan p({16, 16}, k32, valid); }, {"origin", "mode same"}, ErrorCode::invalid_argument);
}

TEST(ApiErrors, TypeDoesNotMatchPrecision) {
    Image ignore;
    Halide::Runtime::Buffer<> img = random_buffer(halide_type_of<double>(), 8, 8, ignore);
    Halide::Runtime::Buffer<> k = random_buffer(halide_type_of<float>(), 3, 3, ignore);
    Halide::Runtime::Buffer<> out(halide_type_of<float>(), 8, 8);
    expect_error([&] { correlate2d(img, k, out, cpu_options(Precision::f32)); },
                 {"image holds float64", "precision f32 needs float32"});
    Halide::Runtime::Buffer<> img16 = random_buffer(storage_type(Precision::f16), 8, 8, ignore);
    Halide::Runtime::Buffer<> k16 = random_buffer(storage_type(Precision::f16), 3, 3, ignore);
    Halide::Runtime::Buffer<> out16(storage_type(Precision::f16), 8, 8);
    // f16f32 writes float32 results.
    expect_error([&] { correlate2d(img16, k16, out16, cpu_options(Precision::f16f32)); },
                 {"output holds float16", "needs float32"});
}

TEST(ApiErrors, UnknownEnumValues) {
    Image ignore;
    Halide::Runtime::Buffer<> img = random_buffer(halide_type_of<float>(), 8, 8, ignore);
    Halide::Runtime::Buffer<> k = random_buffer(halide_type_of<float>(), 3, 3, ignore);
    Options o = cpu_options();
    o.algorithm = static_cast<Algorithm>(42);
    expect_error([&] { (void)correlate2d(img, k, o); }, {"unknown algorithm 42", "allowed: auto, naive"});
    o = cpu_options();
    o.boundary = static_cast<Boundary>(-1);
    expect_error([&] { (void)correlate2d(img, k, o); }, {"unknown boundary", "reflect, mirror, wrap"});
    o = cpu_options();
    o.precision = static_cast<Precision>(9);
    expect_error([&] { (void)correlate2d(img, k, o); }, {"unknown precision 9", "f16f32"});
}

TEST(ApiErrors, CudaRequestedWithoutDevice) {
    if (cuda_available()) {
        GTEST_SKIP() << "a CUDA device is present, so requesting cuda is not an error here";
    }
    Image ignore;
    Halide::Runtime::Buffer<> img = random_buffer(halide_type_of<float>(), 8, 8, ignore);
    Halide::Runtime::Buffer<> k = random_buffer(halide_type_of<float>(), 3, 3, ignore);
    Halide::Runtime::Buffer<> out(halide_type_of<float>(), 8, 8);
    poison(out);
    Options o = cpu_options();
    o.device = Device::cuda;
    expect_error([&] { correlate2d(img, k, out, o); }, {"device cuda was requested", "use device cpu"});
    EXPECT_TRUE(all_nan(out));
}

// float16 conversions against a reference that knows nothing of _Float16: the nearest
// of all finite binary16 values (exact as doubles), ties to the even bit pattern,
// beyond 65520 infinity; the way back exact for every pattern.
TEST(Float16, RoundsOnceToNearestEvenAndReadsBackExactly) {
    std::vector<std::pair<double, uint16_t>> finite;  // ascending, positive
    for (uint32_t b = 0; b < 0x7c00u; b++) {
        finite.emplace_back(double_from_float16_bits(uint16_t(b)), uint16_t(b));
    }
    for (size_t i = 1; i < finite.size(); i++) {
        ASSERT_LT(finite[i - 1].first, finite[i].first) << i;  // exact decode: strictly increasing
        ASSERT_EQ(float16_bits_from_double(finite[i].first), finite[i].second);
        ASSERT_EQ(float16_bits_from_double(-finite[i].first), finite[i].second | 0x8000u);
    }
    const auto reference = [&](double v) -> uint16_t {
        const uint16_t sign = std::signbit(v) ? 0x8000u : 0u;
        const double m = std::fabs(v);
        if (m >= 65520.0) {
            return sign | 0x7c00u;
        }
        auto hi = std::lower_bound(finite.begin(), finite.end(), m,
                                   [](const std::pair<double, uint16_t> &f, double x) { return f.first < x; });
        if (hi->first == m) {
            return sign | hi->second;
        }
        const auto lo = hi - 1;
        const double dlo = m - lo->first, dhi = hi == finite.end() ? INFINITY : hi->first - m;
        if (dlo != dhi) {
            return sign | (dlo < dhi ? lo->second : hi->second);
        }
        return sign | ((lo->second & 1u) == 0 ? lo->second : hi->second);
    };
    std::uniform_real_distribution<double> exponent(-30.0, 17.0), fraction(1.0, 2.0);
    for (int i = 0; i < 200000; i++) {
        const double v = std::ldexp(fraction(rng()), int(std::floor(exponent(rng())))) * (i % 2 ? -1 : 1);
        ASSERT_EQ(float16_bits_from_double(v), reference(v)) << v;
    }
    for (double v : {1.0 + 0x1p-11, 1.0 + 3 * 0x1p-11, 1.0 + 0x1p-11 + 0x1p-40, 0x1p-25, 3 * 0x1p-25, 65504.0, 65519.99,
                     65520.0, 1e300, 0.0, -0.0}) {
        EXPECT_EQ(float16_bits_from_double(v), reference(v)) << v;
    }
    EXPECT_EQ(float16_bits_from_double(1.0 + 0x1p-11 + 0x1p-40), 0x3c01u);  // float32 would round to the tie
    EXPECT_EQ(float16_bits_from_double(INFINITY), 0x7c00u);
    EXPECT_TRUE(std::isnan(double_from_float16_bits(float16_bits_from_double(std::nan("")))));
    EXPECT_EQ(double_from_float16_bits(0xfc00u), -INFINITY);
}

// What a build says of its CUDA side, and a build without CUDA (HALCONV_WITH_CUDA=OFF)
// running every entry point on the CPU and refusing CUDA requests saying why.
TEST(Build, CudaSideMatchesTheBuild) {
    const CudaInfo cuda = cuda_info();
    EXPECT_EQ(cuda.unavailable_reason.empty(), cuda_available());
    EXPECT_EQ(cuda.devices.empty(), !cuda_available());
    if (cuda.built) {
        EXPECT_GT(cuda.runtime_version, 0);
        EXPECT_NE(cuda_device_interface(), nullptr);
        EXPECT_FALSE(build_info().cuda_target.empty());
        return;
    }
    EXPECT_EQ(cuda_device_interface(), nullptr);
    EXPECT_TRUE(build_info().cuda_target.empty());
    EXPECT_THAT(cuda.unavailable_reason, HasSubstr("built without CUDA (HALCONV_WITH_CUDA=OFF)"));
    Image ignore;
    Halide::Runtime::Buffer<> img = random_buffer(halide_type_of<float>(), 12, 9, ignore);
    Halide::Runtime::Buffer<> k = random_buffer(halide_type_of<float>(), 3, 3, ignore);
    Options o;  // every default: automatic algorithm and device
    EXPECT_EQ(Plan({12, 9}, k, o).dispatch().device, Device::cpu);
    Halide::Runtime::Buffer<uint8_t> edges(12, 9);
    EXPECT_EQ(detect_edges(img, edges, 0.1, PipelineOptions{}), Device::cpu);
    Halide::Runtime::Buffer<float> stack(2, 12, 9), filters(2, 3, 3, 4);
    MultichannelOptions mo;
    mo.algorithm = MultichannelAlgorithm::im2col;
    expect_error([&] { (void)multichannel_correlate2d(stack, filters, mo); },
                 {"runs on CUDA only", "HALCONV_WITH_CUDA"}, ErrorCode::unsupported);
    o.algorithm = Algorithm::im2tensor_fused;
    o.precision = Precision::f16;
    Halide::Runtime::Buffer<> k16 = random_buffer(storage_type(Precision::f16), 3, 3, ignore);
    expect_error(
        [&] {
            (void)Plan({12, 9}, k16, o);
        },
        {"im2tensor_fused runs on CUDA", "use naive"}, ErrorCode::unsupported);
    PipelineOptions po;
    po.device = Device::cuda;
    expect_error([&] { (void)detect_edges(img, edges, 0.1, po); }, {"device cuda was requested", "built without CUDA"},
                 ErrorCode::device);
}

TEST(ApiErrors, NonFiniteKernelRejected) {
    Image ignore;
    Halide::Runtime::Buffer<> img = random_buffer(halide_type_of<float>(), 8, 8, ignore);
    Halide::Runtime::Buffer<> out(halide_type_of<float>(), 8, 8);
    for (double bad : {std::nan(""), double(INFINITY), -double(INFINITY)}) {
        Halide::Runtime::Buffer<> k = random_buffer(halide_type_of<float>(), 3, 2, ignore);
        store(k, 4, bad);  // (1, 1)
        poison(out);
        expect_error([&] { correlate2d(img, k, out, cpu_options()); }, {"non-finite coefficient", "at (1, 1)"});
        EXPECT_TRUE(all_nan(out));
    }
}

TEST(ApiErrors, SeparableNeedsRankOneKernel) {
    Image ignore;
    Halide::Runtime::Buffer<> img = random_buffer(halide_type_of<float>(), 8, 8, ignore);
    Halide::Runtime::Buffer<> k = random_buffer(halide_type_of<float>(), 3, 3, ignore);
    Options o = cpu_options();
    o.algorithm = Algorithm::separable;
    expect_error([&] { (void)correlate2d(img, k, o); }, {"needs a rank-1 kernel", "relative residual"});
}

// An output that shares memory with the image (the same buffer, a crop of it, or a
// view that overlaps it) is refused before anything is written: the pipelines read the
// image while they write the output. A separate buffer beside it in one allocation is fine.
TEST(ApiErrors, OutputOverlappingTheImageIsRefused) {
    Image ignore;
    Halide::Runtime::Buffer<> k = random_buffer(halide_type_of<float>(), 3, 3, ignore);
    Halide::Runtime::Buffer<float> storage(12, 20);  // two 12 x 10 halves
    storage.for_each_value([](float &v) { v = 0.5f; });
    Halide::Runtime::Buffer<float> top = storage.cropped(1, 0, 10), bottom = storage.cropped(1, 10, 10);
    Halide::Runtime::Buffer<float> shifted = storage.cropped(1, 5, 10);
    for (Algorithm a : {Algorithm::automatic, Algorithm::naive, Algorithm::shared_tiled, Algorithm::autoscheduled}) {
        Options o = cpu_options();
        o.algorithm = a;
        expect_error([&] { correlate2d(top, k, top, o); }, {"output overlaps the image in host memory", "in place"});
        expect_error([&] { correlate2d(top, k, shifted, o); }, {"output overlaps the image"});
        expect_error([&] { convolve2d(shifted, k, bottom, o); }, {"output overlaps the image"});
        const Plan plan({12, 10}, k, o);
        expect_error([&] { plan.apply(bottom, shifted); }, {"output overlaps the image"});
    }
    EXPECT_TRUE(std::all_of(storage.begin(), storage.end(), [](float v) { return v == 0.5f; }));
    correlate2d(top, k, bottom, cpu_options());  // adjacent, not overlapping
    EXPECT_NE(bottom(6, 15), 0.5f);
    Halide::Runtime::Buffer<float> edges_in(8, 8);
    edges_in.fill(0.25f);
    Halide::Runtime::Buffer<uint8_t> aliased(reinterpret_cast<uint8_t *>(edges_in.data()), 8, 8);
    PipelineOptions po;
    po.device = Device::cpu;
    expect_error([&] { detect_edges(edges_in, aliased, default_edge_threshold, po); }, {"edges overlaps the image"});
    expect_error([&] { unsharp_mask(edges_in, k, edges_in, 1.0, po); }, {"output overlaps the image"});
}

// A view whose elements are not adjacent along x (transposed, subsampled) is refused
// with a message that says so, not Halide's constraint text.
TEST(ApiErrors, TransposedViewsAreRefusedSayingWhy) {
    Image ignore;
    Halide::Runtime::Buffer<> k = random_buffer(halide_type_of<float>(), 3, 3, ignore);
    Halide::Runtime::Buffer<float> img(9, 7);
    img.fill(1.0f);
    Halide::Runtime::Buffer<float> transposed = img.transposed(0, 1);
    Halide::Runtime::Buffer<float> out(7, 9);
    expect_error([&] { correlate2d(transposed, k, out, cpu_options()); },
                 {"image has stride 9 along x", "copy a transposed or subsampled view"});
    Halide::Runtime::Buffer<float> out_storage(7, 9);
    Halide::Runtime::Buffer<float> out_transposed = out_storage.transposed(0, 1);
    expect_error([&] { correlate2d(img, k, out_transposed, cpu_options()); }, {"output has stride 7 along x"});
    PipelineOptions po;
    po.device = Device::cpu;
    Halide::Runtime::Buffer<uint8_t> edges(7, 9);
    expect_error([&] { detect_edges(transposed, edges, default_edge_threshold, po); }, {"image has stride 9 along x"});
}

// autoscheduled runs small outputs in a 512-per-axis scratch: on a thin image that
// would be hundreds of times the image, so it is refused and Auto passes it over.
TEST(ApiErrors, AutoscheduledOnThinImagesIsRefusedAndAutoAvoidsIt) {
    Image ignore;
    Halide::Runtime::Buffer<> thin = random_buffer(halide_type_of<float>(), 1, 100000, ignore);
    Halide::Runtime::Buffer<> k = random_buffer(halide_type_of<float>(), 3, 3, ignore);
    Options o = cpu_options();
    o.algorithm = Algorithm::autoscheduled;
    expect_error([&] { (void)correlate2d(thin, k, o); }, {"1 x 100000 output would need a scratch of 195 MiB"},
                 ErrorCode::unsupported);
    o.algorithm = Algorithm::automatic;
    const Plan plan({1, 100000}, k, o);
    EXPECT_NE(plan.dispatch().algorithm, Algorithm::autoscheduled);
    o.algorithm = Algorithm::autoscheduled;
    const Plan small({40, 30}, k, o);  // a 1 MiB scratch: fine
    EXPECT_EQ(small.dispatch().algorithm, Algorithm::autoscheduled);
}

// Host memory that cannot be had is ErrorCode::out_of_memory, not a crash: Halide's own
// buffer allocation does not check (a 2^30 x 2^30 output, 4 EiB).
TEST(ApiErrors, AllocationFailuresAreErrors) {
    Image ignore;
    Halide::Runtime::Buffer<> k = random_buffer(halide_type_of<float>(), 3, 3, ignore);
    float dummy = 0.0f;
    Halide::Runtime::Buffer<float> huge(&dummy, 1 << 30, 1 << 30);  // never read: the output comes first
    expect_error([&] { (void)correlate2d(huge, k, cpu_options()); }, {"out of host memory"}, ErrorCode::out_of_memory);
}

TEST(ApiErrors, NanInImagePropagatesLikeScipy) {
    Image img_exact, ker;
    Halide::Runtime::Buffer<> img = random_buffer(halide_type_of<double>(), 9, 9, img_exact);
    Halide::Runtime::Buffer<> k = random_buffer(halide_type_of<double>(), 3, 3, ker);
    store(img, 4 * 9 + 4, std::nan(""));
    Options o = cpu_options(Precision::f64);
    Halide::Runtime::Buffer<> out = correlate2d(img, k, o);
    for (int y = 0; y < 9; y++) {
        for (int x = 0; x < 9; x++) {
            const bool near = std::abs(x - 4) <= 1 && std::abs(y - 4) <= 1;
            EXPECT_EQ(std::isnan(load(out, y * 9 + x)), near) << x << "," << y;
        }
    }
}

TEST(Api, SeparableEntryMatchesOuterProduct) {
    for (Precision p : {Precision::f64, Precision::f32, Precision::f16, Precision::f16f32}) {
        for (Mode mode : {Mode::valid, Mode::same, Mode::full}) {
            Image img, row, col;
            Halide::Runtime::Buffer<> input = random_buffer(storage_type(p), 23, 17, img);
            Halide::Runtime::Buffer<> row2 = random_buffer(storage_type(p), 4, 1, row);
            Halide::Runtime::Buffer<> col2 = random_buffer(storage_type(p), 7, 1, col);
            Halide::Runtime::Buffer<> r = row2.sliced(1, 0), c = col2.sliced(1, 0);
            Image ker{4, 7, std::vector<double>(28)};
            for (int j = 0; j < 7; j++) {
                for (int i = 0; i < 4; i++) {
                    ker.data[j * 4 + i] = row.data[i] * col.data[j];
                }
            }
            Options o = cpu_options(p);
            o.mode = mode;
            o.boundary = Boundary::mirror;
            const Extent2d e = output_extent({23, 17}, {4, 7}, mode);
            for (bool flip : {false, true}) {
                Halide::Runtime::Buffer<> out(output_type(p), e.width, e.height);
                poison(out);
                if (flip) {
                    separable_convolve2d(input, r, c, out, o);
                } else {
                    separable_correlate2d(input, r, c, out, o);
                }
                EXPECT_TRUE(matches_reference(out, correlate_reference(img, ker, mode, o.boundary, 0.0, flip), p, 28))
                    << to_string(p) << " " << to_string(mode) << (flip ? " convolve" : " correlate");
            }
        }
    }
}

// Auto may route a rank-1 kernel to separable (when its costs say so, test_plan.cpp), a
// general one never.
TEST(Api, AutoRoutesOnlyRankOneKernelsToSeparable) {
    Image img, ker;
    Halide::Runtime::Buffer<> input = random_buffer(halide_type_of<float>(), 20, 20, img);
    Halide::Runtime::Buffer<> out(halide_type_of<float>(), 20, 20);
    for (int k : {3, 5, 9, 15}) {
        Halide::Runtime::Buffer<> g = random_buffer(halide_type_of<float>(), k, k, ker);
        EXPECT_NE(correlate2d(input, g, out, cpu_options()).algorithm, Algorithm::separable) << k;
    }
    Halide::Runtime::Buffer<const double, 2> general_values(ker.data.data(), 15, 15);
    EXPECT_GT(rank1_relative_residual(general_values), rank1_tolerance(Precision::f32));
}

TEST(Api, BuffersWithNonZeroMins) {
    Image img, ker;
    Halide::Runtime::Buffer<> input = random_buffer(halide_type_of<double>(), 15, 12, img);
    Halide::Runtime::Buffer<> kernel = random_buffer(halide_type_of<double>(), 4, 3, ker);
    input.translate({100, -7});
    kernel.translate({-3, 5});
    Halide::Runtime::Buffer<> out(halide_type_of<double>(), 15, 12);
    out.translate({-20, 40});
    poison(out);
    Options o = cpu_options(Precision::f64);
    o.boundary = Boundary::wrap;
    correlate2d(input, kernel, out, o);
    EXPECT_TRUE(matches_reference(out, correlate_reference(img, ker, Mode::same, Boundary::wrap, 0.0, false),
                                  Precision::f64, 12));
}

TEST(Api, OutputExtentFollowsScipy) {
    EXPECT_EQ(output_extent({10, 7}, {3, 4}, Mode::valid).width, 8);
    EXPECT_EQ(output_extent({10, 7}, {3, 4}, Mode::valid).height, 4);
    EXPECT_EQ(output_extent({10, 7}, {3, 4}, Mode::full).width, 12);
    EXPECT_EQ(output_extent({10, 7}, {3, 4}, Mode::full).height, 10);
    EXPECT_EQ(output_extent({10, 7}, {3, 4}, Mode::same).width, 10);
}

}  // namespace
}  // namespace halconv::test
