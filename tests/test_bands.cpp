// Row bands (halconv.h, "Bands"): the layout, the slab's boundary rule against the
// reference's, and banded CPU plans against one-shot ones (bit for bit for the direct
// sums, within the FFT bound for fft). The CUDA runs are in test_plan_gpu.cpp.
#include <gmock/gmock.h>
#include <sys/mman.h>

#include <algorithm>
#include <thread>

#include "bands.h"
#include "test_support.h"

namespace halconv::test {
namespace {

using internal::band_layout;
using internal::BandLayout;

constexpr Boundary all_boundaries[] = {Boundary::constant, Boundary::nearest, Boundary::reflect, Boundary::mirror,
                                       Boundary::wrap};
constexpr Mode all_modes[] = {Mode::valid, Mode::same, Mode::full};

TEST(BandLayout, CutsTheOutputIntoBandsWithAShorterLast) {
    const BandLayout l = band_layout({100, 50}, {5, 7}, {100, 50}, 2, 3, 4, 4, 12);
    EXPECT_EQ(l.band_rows, 12);
    EXPECT_EQ(l.bands, 5);
    EXPECT_EQ(l.first_row(4), 48);
    EXPECT_EQ(l.rows_of(4), 2);
    EXPECT_EQ(l.rows_of(3), 12);
    // The slab: the band's rows plus the kernel's halo, the output's width plus its pads.
    EXPECT_EQ(l.slab(12).width, 104);
    EXPECT_EQ(l.slab(12).height, 18);
    EXPECT_EQ(l.slab(2).height, 8);
}

TEST(BandLayout, BandsOfOneRowAndKernelsTallerThanABand) {
    const BandLayout one = band_layout({9, 5}, {3, 3}, {9, 5}, 1, 1, 4, 4, 1);
    EXPECT_EQ(one.bands, 5);
    EXPECT_EQ(one.slab(1).height, 3);
    const BandLayout tall = band_layout({9, 40}, {3, 31}, {9, 40}, 1, 15, 4, 4, 2);
    EXPECT_EQ(tall.bands, 20);
    EXPECT_EQ(tall.slab(2).height, 32);  // a slab far taller than its band: the halo
    // More rows asked than the output has: one band.
    const BandLayout whole = band_layout({9, 5}, {3, 3}, {9, 5}, 1, 1, 4, 4, 1000);
    EXPECT_EQ(whole.bands, 1);
    EXPECT_EQ(whole.rows_of(0), 5);
}

// Tensor-core bands start at multiples of halconv_tc_row_phase (17 asked: 20), and slab
// rows lie as the image the one-shot call's extern stage reads: 16-byte multiples apart
// (219 halfs: 224), or, mirroring a caller's valid-mode image TMA cannot read, not.
TEST(BandLayout, TensorCoreBandsKeepTheRowPhaseAndTheImagesPitchKind) {
    BandLayout l = band_layout({203, 99}, {17, 31}, {203, 99}, 8, 15, 2, 4, 17, 4);
    EXPECT_EQ(l.band_rows, 20);
    EXPECT_EQ(l.bands, 5);
    EXPECT_EQ(l.rows_of(4), 19);
    EXPECT_EQ(l.slab(20).width, 219);
    EXPECT_EQ(l.slab_pitch(), 224);
    l.tma_rows = false;
    EXPECT_EQ(l.slab_pitch(), 219);
    BandLayout even = band_layout({200, 50}, {9, 9}, {200, 50}, 4, 4, 2, 4, 0, 4);
    EXPECT_EQ(even.band_rows % 4, 2);  // all 50 rows in one band: the output's own height
    EXPECT_EQ(even.slab_pitch(), 208);
    even.tma_rows = false;
    EXPECT_EQ(even.slab_pitch(), 209);  // 208 halfs would be readable: one more
    // Rows asked near INT_MAX round without overflowing: one band.
    EXPECT_EQ(band_layout({200, 50}, {9, 9}, {200, 50}, 4, 4, 2, 4, 2147483647, 4).bands, 1);
    // f32 storage: four elements per 16 bytes.
    EXPECT_EQ(band_layout({201, 50}, {3, 3}, {201, 50}, 1, 1, 4, 4, 8).slab_pitch(), 204);
}

TEST(BandLayout, ChosenRowsKeepABandWithinItsTarget) {
    const BandLayout l = band_layout({32768, 32768}, {31, 31}, {32768, 32768}, 15, 15, 4, 4, 0);
    const size_t bytes =
        size_t(l.slab(l.band_rows).width) * l.slab(l.band_rows).height * 4 + size_t(l.output.width) * l.band_rows * 4;
    EXPECT_LE(bytes, internal::band_target_bytes);
    EXPECT_GT(bytes, internal::band_target_bytes / 2);
    EXPECT_EQ(l.bands, (32768 + l.band_rows - 1) / l.band_rows);
    // A kernel taller than what fits: at least its halo's rows (the halo kept between
    // neighbouring bands); with a halo ratio (device-resident calls) that many times the
    // halo, so it adds at most that fraction to a band's work; never more rows than the
    // output has.
    const BandLayout tall = band_layout({1 << 20, 8192}, {3, 511}, {1 << 20, 8192}, 1, 255, 4, 4, 0);
    EXPECT_EQ(tall.band_rows, 510);
    EXPECT_EQ(band_layout({1 << 20, 8192}, {3, 511}, {1 << 20, 8192}, 1, 255, 4, 4, 0, 1, 8).band_rows, 8 * 510);
    EXPECT_EQ(band_layout({1 << 20, 4096}, {3, 1023}, {1 << 20, 4096}, 1, 511, 4, 4, 0, 1, 8).band_rows, 4096);
}

TEST(BandLayout, SourceRowsFollowTheBoundaryOfTheWholeImage) {
    // Every boundary on axes of 1 to 7 samples, far past both ends: the reference's rule.
    for (Boundary b : all_boundaries) {
        for (int n = 1; n <= 7; n++) {
            for (int i = -40; i < 47; i++) {
                EXPECT_EQ(rk::band_source_index(i, n, int(b)), boundary_index(i, n, b))
                    << to_string(b) << " n " << n << " i " << i;
            }
        }
    }
    // The first band of a same-mode call reads the rows above the image.
    const BandLayout l = band_layout({10, 20}, {3, 5}, {10, 20}, 1, 2, 4, 4, 4);
    EXPECT_EQ(l.source_row(0, 0, Boundary::wrap), 18);
    EXPECT_EQ(l.source_row(0, 1, Boundary::reflect), 0);
    EXPECT_EQ(l.source_row(0, 0, Boundary::constant), -1);
    EXPECT_EQ(l.source_row(1, 0, Boundary::constant), 2);
    EXPECT_EQ(l.source_row(4, 7, Boundary::mirror), 17);  // last band (rows 16..19): row 21 mirrors to 17
}

TEST(BandLayout, ConsecutiveBandsKeepTheHaloTheyShare) {
    const BandLayout l = band_layout({30, 40}, {3, 7}, {30, 40}, 1, 3, 4, 4, 6);
    EXPECT_EQ(l.kept_rows(2, 3), 6);   // the band above: its slab's last 6 rows are this one's first
    EXPECT_EQ(l.kept_rows(-1, 0), 0);  // a lane's first band
    EXPECT_EQ(l.kept_rows(1, 3), 0);   // not the band above
    EXPECT_EQ(l.kept_rows(4, 3), 0);
    // The kept rows are those the two slabs share: same source rows under every boundary.
    for (Boundary b : all_boundaries) {
        for (int band = 1; band < l.bands; band++) {
            for (int r = 0; r < l.kept_rows(band - 1, band); r++) {
                EXPECT_EQ(l.source_row(band, r, b), l.source_row(band - 1, l.band_rows + r, b));
            }
        }
    }
    // Rows that would land on themselves (halo taller than the band): none kept.
    EXPECT_EQ(band_layout({30, 40}, {3, 7}, {30, 40}, 1, 3, 4, 4, 5).kept_rows(2, 3), 0);
    EXPECT_EQ(band_layout({30, 40}, {3, 1}, {30, 40}, 1, 0, 4, 4, 5).kept_rows(2, 3), 0);  // no halo
}

// Every band handed out exactly once, in contiguous shares, the idle taking the back half
// of the largest share.
TEST(BandQueue, ContiguousSharesThenTheBackHalfOfTheLargest) {
    internal::BandQueue one(5, 1);
    for (int b = 0; b < 5; b++) {
        EXPECT_EQ(one.next(0), b);
    }
    EXPECT_EQ(one.next(0), -1);

    internal::BandQueue q(10, 3);  // shares [0, 3), [3, 6), [6, 10)
    EXPECT_EQ(q.next(0), 0);
    EXPECT_EQ(q.next(1), 3);
    EXPECT_EQ(q.next(2), 6);
    EXPECT_EQ(q.next(0), 1);
    EXPECT_EQ(q.next(0), 2);
    EXPECT_EQ(q.next(0), 8);  // lane 2 has 7, 8, 9 left: lane 0 takes 8 and 9
    EXPECT_EQ(q.next(2), 7);
    EXPECT_EQ(q.next(2), 5);  // lane 1 has 4, 5 left: lane 2 takes the back one
    EXPECT_EQ(q.next(1), 4);
    EXPECT_EQ(q.next(0), 9);
    EXPECT_EQ(q.next(1), -1);
    EXPECT_EQ(q.next(0), -1);
    EXPECT_EQ(q.next(2), -1);
}

TEST(BandQueue, EveryBandOnceUnderContention) {
    for (int lanes : {1, 2, 3, 8, 40}) {
        for (int bands : {1, 2, 7, 64, 1000}) {
            internal::BandQueue q(bands, lanes);
            std::vector<std::vector<int>> got(static_cast<size_t>(lanes));
            std::vector<std::thread> threads;
            for (int lane = 0; lane < lanes; lane++) {
                threads.emplace_back([&, lane] {
                    for (int b = q.next(lane); b >= 0; b = q.next(lane)) {
                        got[size_t(lane)].push_back(b);
                    }
                });
            }
            for (std::thread &t : threads) {
                t.join();
            }
            std::vector<int> all;
            for (const std::vector<int> &g : got) {
                all.insert(all.end(), g.begin(), g.end());
            }
            std::sort(all.begin(), all.end());
            ASSERT_EQ(all.size(), size_t(bands)) << lanes << " lanes, " << bands << " bands";
            for (int b = 0; b < bands; b++) {
                ASSERT_EQ(all[size_t(b)], b);
            }
        }
    }
}

TEST(BandLayout, OneShotCallsBeyondThePipelinesBufferLimit) {
    EXPECT_FALSE(internal::exceeds_one_shot({32768, 32768}, {127, 127}, {32768, 32768}));
    EXPECT_FALSE(internal::exceeds_one_shot({40000, 40000}, {31, 31}, {40000, 40000}));
    EXPECT_TRUE(internal::exceeds_one_shot({65536, 65536}, {3, 3}, {65536, 65536}));
    EXPECT_TRUE(internal::exceeds_one_shot({1 << 30, 2}, {3, 3}, {1 << 30, 2}));
    EXPECT_TRUE(internal::exceeds_one_shot({44000, 44000}, {3, 3}, {44000, 44000}));  // the transforms' margin
    // The kernel's halo and a full-mode output count.
    EXPECT_FALSE(internal::exceeds_one_shot({40000, 45000}, {3, 3}, {40000, 45000}));
    EXPECT_TRUE(internal::exceeds_one_shot({40000, 45000}, {3, 3001}, {40000, 48000}));
}

// A 65536^2 call (2^32 samples in address space reserved without access: a read would
// fault) runs in bands under Banding::automatic and is refused, before anything is read,
// under Banding::never.
TEST(BandLayout, TooLargeCallsBandOrAreRefused) {
    const size_t bytes = size_t(65536) * 65536 * sizeof(float);
    void *reserved = mmap(nullptr, 2 * bytes, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    ASSERT_NE(reserved, MAP_FAILED);
    halide_dimension_t dims[2] = {{0, 65536, 1, 0}, {0, 65536, 65536, 0}};
    halide_buffer_t image{}, output{};
    image.host = static_cast<uint8_t *>(reserved);
    output.host = static_cast<uint8_t *>(reserved) + bytes;
    for (halide_buffer_t *b : {&image, &output}) {
        b->type = halide_type_of<float>();
        b->dimensions = 2;
        b->dim = dims;
    }
    Options o;
    o.device = Device::cpu;
    EXPECT_TRUE(internal::wants_bands(o, Device::cpu, &image, &output, 0, true));
    EXPECT_FALSE(internal::wants_bands(o, Device::cpu, &image, &output, 0, false));
    o.bands.banding = Banding::never;
    EXPECT_FALSE(internal::wants_bands(o, Device::cpu, &image, &output, 0, true));

    Halide::Runtime::Buffer<float> kernel(3, 3);
    kernel.fill(1.0f);
    o.algorithm = Algorithm::shared_tiled;
    const Plan plan({65536, 65536}, kernel, o);
    try {
        plan.run(&image, &output, nullptr);
        ADD_FAILURE() << "a one-shot call of 2^32 samples ran";
    } catch (const Error &e) {
        EXPECT_EQ(e.code(), ErrorCode::unsupported);
        EXPECT_THAT(e.what(), ::testing::HasSubstr("65536 x 65536 image with a 3 x 3 kernel"));
        EXPECT_THAT(e.what(), ::testing::HasSubstr("Banding::automatic or always runs it in row bands"));
    }
    munmap(reserved, 2 * bytes);
}

// A banded CPU plan's output, made with `rows` output rows per band.
Halide::Runtime::Buffer<> banded(Extent2d image_extent, Halide::Runtime::Buffer<> &kernel, Options o,
                                 Operation operation, Halide::Runtime::Buffer<> &image, int rows) {
    o.bands.banding = Banding::always;
    o.bands.band_rows = rows;
    const Plan plan(image_extent, kernel, o, operation);
    Halide::Runtime::Buffer<> out = plan.allocate_output();
    poison(out);
    plan.apply(image, out);
    return out;
}

Halide::Runtime::Buffer<> one_shot(Extent2d image_extent, Halide::Runtime::Buffer<> &kernel, Options o,
                                   Operation operation, Halide::Runtime::Buffer<> &image) {
    o.bands.banding = Banding::never;
    const Plan plan(image_extent, kernel, o, operation);
    Halide::Runtime::Buffer<> out = plan.allocate_output();
    poison(out);
    plan.apply(image, out);
    return out;
}

struct Shape {
    int width, height, kw, kh, rows;
};

// Odd, even, non-square and tiny shapes; bands of one row, kernels taller than a band,
// kernels larger than the image (same and full modes only).
// Bands that keep the halo of the band above (29x47, 33x50, 64x33) and bands that cannot.
constexpr Shape shapes[] = {{37, 23, 5, 7, 4}, {40, 13, 9, 3, 1},  {11, 30, 3, 11, 2}, {1, 1, 3, 3, 1},
                            {6, 5, 8, 9, 2},   {64, 33, 4, 6, 32}, {17, 9, 1, 1, 3},   {25, 40, 7, 31, 5},
                            {29, 47, 5, 7, 6}, {33, 50, 6, 4, 7}};

TEST(BandsCpu, DirectSumsAreBitIdenticalToTheOneShotCall) {
    for (Algorithm a : {Algorithm::naive, Algorithm::shared_tiled}) {
        for (Precision p : {Precision::f64, Precision::f32, Precision::f16, Precision::f16f32}) {
            for (const Shape &sh : shapes) {
                for (Mode mode : all_modes) {
                    if (mode == Mode::valid && (sh.kw > sh.width || sh.kh > sh.height)) {
                        continue;
                    }
                    for (Boundary b : all_boundaries) {
                        for (Operation op : {Operation::correlate, Operation::convolve}) {
                            SCOPED_TRACE(::testing::Message()
                                         << to_string(a) << " " << to_string(p) << " " << sh.width << "x" << sh.height
                                         << " k " << sh.kw << "x" << sh.kh << " rows " << sh.rows << " "
                                         << to_string(mode) << " " << to_string(b) << " op " << int(op));
                            Image ignore;
                            Halide::Runtime::Buffer<> kernel = random_buffer(storage_type(p), sh.kw, sh.kh, ignore);
                            Halide::Runtime::Buffer<> image =
                                random_buffer(storage_type(p), sh.width, sh.height, ignore);
                            Options o;
                            o.algorithm = a;
                            o.precision = p;
                            o.mode = mode;
                            o.boundary = b;
                            o.fill_value = 0.375;
                            o.device = Device::cpu;
                            const Halide::Runtime::Buffer<> want =
                                one_shot({sh.width, sh.height}, kernel, o, op, image);
                            const Halide::Runtime::Buffer<> got =
                                banded({sh.width, sh.height}, kernel, o, op, image, sh.rows);
                            ASSERT_TRUE(same_bits(got, want));
                        }
                    }
                }
            }
        }
    }
}

TEST(BandsCpu, SeparableAndAutoscheduledAreBitIdenticalToo) {
    for (Boundary b : all_boundaries) {
        SCOPED_TRACE(to_string(b));
        Image ignore;
        Halide::Runtime::Buffer<> kernel = random_rank1_kernel(storage_type(Precision::f32), 7, 5, ignore);
        Halide::Runtime::Buffer<> image = random_buffer(storage_type(Precision::f32), 45, 38, ignore);
        Options o;
        o.boundary = b;
        o.fill_value = -2.0;
        o.device = Device::cpu;
        for (Algorithm a : {Algorithm::separable, Algorithm::autoscheduled}) {
            o.algorithm = a;
            const Halide::Runtime::Buffer<> want = one_shot({45, 38}, kernel, o, Operation::convolve, image);
            EXPECT_TRUE(same_bits(banded({45, 38}, kernel, o, Operation::convolve, image, 6), want)) << to_string(a);
        }
        // Plan::gaussian goes through the separable signature.
        o.algorithm = Algorithm::automatic;
        const Plan g = Plan::gaussian({45, 38}, 1.5, o);
        Halide::Runtime::Buffer<> want = g.apply(image);
        Options banded_options = o;
        banded_options.bands.banding = Banding::always;
        banded_options.bands.band_rows = 5;
        Halide::Runtime::Buffer<> got = Plan::gaussian({45, 38}, 1.5, banded_options).apply(image);
        EXPECT_TRUE(same_bits(got, want));
    }
}

TEST(BandsCpu, FftBandsStayWithinTheFftBound) {
    // Bands change the output's extent and so maybe the transform size: the result is
    // the FFT's, within its bound for the bands' transforms, not the one-shot call's bits.
    // f64, whose bound a misplaced tap exceeds by orders of magnitude.
    const Precision p = Precision::f64;
    for (Boundary b : all_boundaries) {
        for (Mode mode : all_modes) {
            SCOPED_TRACE(std::string(to_string(b)) + " " + to_string(mode));
            Image kernel_exact, image_exact;
            Halide::Runtime::Buffer<> kernel = random_buffer(storage_type(p), 21, 17, kernel_exact);
            Halide::Runtime::Buffer<> image = random_buffer(storage_type(p), 150, 97, image_exact);
            Options o;
            o.algorithm = Algorithm::fft;
            o.precision = p;
            o.mode = mode;
            o.boundary = b;
            o.fill_value = 0.5;
            o.device = Device::cpu;
            o.bands.banding = Banding::always;
            o.bands.band_rows = 30;
            const Plan plan({150, 97}, kernel, o);
            Halide::Runtime::Buffer<> out = plan.allocate_output();
            poison(out);
            plan.apply(image, out);
            // The transform size of a band's plan (a valid-mode plan of its slab).
            Options band = o;
            band.mode = Mode::valid;
            const Plan probe({plan.output_extent().width + 20, 30 + 16}, kernel, band);
            const Reference ref = correlate_reference(image_exact, kernel_exact, mode, b, 0.5, false);
            EXPECT_TRUE(matches_reference_within(
                out, ref, p, fft_error_bound(p, fft_cpu_tile_of(probe.dispatch()), kernel_exact, 1.0)));
        }
    }
}

TEST(BandsCpu, CroppedOutputsAndNonFiniteValues) {
    // An output that is a crop of a wider buffer: only its rows' own samples are written.
    Image ignore;
    Halide::Runtime::Buffer<> kernel = random_buffer(storage_type(Precision::f32), 3, 5, ignore);
    Halide::Runtime::Buffer<> image = random_buffer(storage_type(Precision::f32), 30, 21, ignore);
    store(image, 10 * 30 + 4, std::nan(""));
    store(image, 20, INFINITY);
    Options o;
    o.algorithm = Algorithm::shared_tiled;
    o.boundary = Boundary::reflect;
    o.device = Device::cpu;
    const Halide::Runtime::Buffer<> want = one_shot({30, 21}, kernel, o, Operation::correlate, image);
    Halide::Runtime::Buffer<float> wide(40, 21);
    wide.fill(7.0f);
    Halide::Runtime::Buffer<float> crop = wide.cropped(0, 5, 30);
    o.bands.banding = Banding::always;
    o.bands.band_rows = 4;
    const Plan plan({30, 21}, kernel, o);
    plan.apply(image, crop);
    for (int y = 0; y < 21; y++) {
        for (int x = 0; x < 40; x++) {
            if (x < 5 || x >= 35) {
                ASSERT_EQ(wide(x, y), 7.0f) << x << " " << y;
            } else {
                const float w = static_cast<const float *>(want.data())[y * 30 + x - 5];
                ASSERT_TRUE(std::isnan(w) ? std::isnan(wide(x, y)) : wide(x, y) == w) << x << " " << y;
            }
        }
    }
}

TEST(BandsErrors, BadBandOptionsAreRefused) {
    Image ignore;
    Halide::Runtime::Buffer<> kernel = random_buffer(storage_type(Precision::f32), 3, 3, ignore);
    const auto refusal = [&](const std::function<void(BandOptions &)> &edit, const char *says) {
        Options o;
        o.device = Device::cpu;
        edit(o.bands);
        try {
            const Plan plan({10, 10}, kernel, o);
            ADD_FAILURE() << "no error for " << says;
        } catch (const Error &e) {
            EXPECT_EQ(e.code(), ErrorCode::invalid_argument);
            EXPECT_THAT(e.what(), ::testing::HasSubstr(says));
        }
    };
    refusal([](BandOptions &b) { b.band_rows = -1; }, "bands.band_rows is -1");
    refusal([](BandOptions &b) { b.streams_per_device = 33; }, "bands.streams_per_device is 33");
    refusal([](BandOptions &b) { b.devices = {0, -2}; }, "bands.devices names CUDA device -2");
    refusal([](BandOptions &b) { b.banding = static_cast<Banding>(7); }, "unknown banding 7");
}

}  // namespace
}  // namespace halconv::test
