// Every algorithm x precision x mode x boundary (x correlate/convolve) against the
// float64 reference, on odd, even, non-square and tiny shapes, on the CPU and, where a
// CUDA device exists, on the GPU.
#include <algorithm>
#include <cmath>
#include <tuple>
#include <vector>

#include "conv2d/conv2d_sliding.h"
#include "fft/fft_line_plan.h"
#include "geometry.h"
#include "internal.h"
#include "registry.h"
#include "separable/separable_fft.h"
#include "separable/separable_sliding.h"
#include "separable/separable_tensor_core.h"
#include "test_support.h"

namespace halconv::test {
namespace {

struct Shape {
    int image_width, image_height, kernel_width, kernel_height;
};

// (width, height) pairs; kernel shapes from the issue: 1x1, 1xK, Kx1, 2x2, 4x6, 31x7
// (7 wide, 31 tall) and 6x4, a kernel as large as the image, and kernels larger than it;
// a 1x1 kernel on an image of more than one GPU register tile (its own code there).
const std::vector<Shape> matrix_shapes = {
    {1, 1, 1, 1},    {1, 1, 2, 2}, {37, 29, 5, 1}, {29, 37, 1, 5}, {37, 29, 2, 2}, {45, 33, 6, 4}, {33, 45, 4, 6},
    {70, 41, 7, 31}, {9, 9, 9, 9}, {11, 6, 11, 6}, {3, 2, 5, 4},   {40, 1, 3, 1},  {1, 40, 1, 3},  {75, 70, 1, 1},
};

using MatrixParam = std::tuple<Device, Algorithm, Precision>;

class ConvMatrix : public ::testing::TestWithParam<MatrixParam> {
protected:
    void SetUp() override {
        if (std::get<0>(GetParam()) == Device::cuda && !cuda_available()) {
            GTEST_SKIP() << "no CUDA device on this machine: GPU variants are tested on a GPU machine "
                            "(scripts/gpu-check)";
        }
    }
};

// What a factored (separable) result loses beyond rounding: the stored kernel is rank-1
// only within rounding (or, under auto, within rank1_tolerance), so the factorization
// drops its residual (a Frobenius norm, factor_error) per tap, times the window's sum |x|
// (window.magnitude).
struct FactoredBound {
    double factor_error = 0.0;
    Reference window;
};

FactoredBound factored_bound(const Image &img, const Image &ker, Mode mode, Boundary boundary, double fill, bool flip) {
    Halide::Runtime::Buffer<double, 2> k64(ker.width, ker.height);
    double norm = 0.0;
    for (int j = 0; j < ker.height; j++) {
        for (int i = 0; i < ker.width; i++) {
            k64(i, j) = ker.at(i, j);
            norm += ker.at(i, j) * ker.at(i, j);
        }
    }
    Image ones = ker;
    std::fill(ones.data.begin(), ones.data.end(), 1.0);
    return {rank1_relative_residual(k64) * std::sqrt(norm), correlate_reference(img, ones, mode, boundary, fill, flip)};
}

// Runs one case and checks it against the float64 reference; returns what ran.
Dispatch run_case(Device device, Algorithm algorithm, Precision precision, const Shape &s, Mode mode, Boundary boundary,
                  bool flip, bool rank1_kernel) {
    std::uniform_real_distribution<double> fill_dist(-2.0, 2.0);
    Image img, ker;
    Halide::Runtime::Buffer<> input = random_buffer(storage_type(precision), s.image_width, s.image_height, img);
    Halide::Runtime::Buffer<> kernel =
        rank1_kernel ? random_rank1_kernel(storage_type(precision), s.kernel_width, s.kernel_height, ker)
                     : random_buffer(storage_type(precision), s.kernel_width, s.kernel_height, ker);
    Options o;
    o.algorithm = algorithm;
    o.precision = precision;
    o.mode = mode;
    o.boundary = boundary;
    // The fill stands for image samples, so it is stored in the image's type.
    Halide::Runtime::Buffer<> fill(storage_type(precision), 1);
    store(fill, 0, fill_dist(rng()));
    o.fill_value = load(fill, 0);
    o.device = device;
    const Extent2d e = output_extent({s.image_width, s.image_height}, {s.kernel_width, s.kernel_height}, mode);
    Halide::Runtime::Buffer<> out(output_type(precision), e.width, e.height);
    poison(out);
    if (device == Device::cuda) {
        EXPECT_EQ(out.copy_to_device(cuda_device_interface()), 0);
    }
    const Dispatch d = flip ? convolve2d(input, kernel, out, o) : correlate2d(input, kernel, out, o);
    if (device == Device::cuda) {
        EXPECT_EQ(out.copy_to_host(), 0);
    }
    const Reference ref = correlate_reference(img, ker, mode, boundary, o.fill_value, flip);
    const bool factored = d.algorithm == Algorithm::separable;
    const FactoredBound fb = factored ? factored_bound(img, ker, mode, boundary, o.fill_value, flip) : FactoredBound{};
    const double factor_error = fb.factor_error;
    const Reference &window = fb.window;
    if (d.algorithm == Algorithm::fft) {
        const int tile = fft_tile_of(d, precision, e, {s.kernel_width, s.kernel_height});
        const double max_abs_x = max_abs_sample(img, boundary, o.fill_value);
        EXPECT_TRUE(matches_reference_within(out, ref, precision, fft_error_bound(precision, tile, ker, max_abs_x)));
        return d;
    }
    if (d.algorithm == Algorithm::low_rank) {
        EXPECT_TRUE(matches_low_rank(out, img, ker, precision, mode, boundary, o.fill_value, flip));
        return d;
    }
    EXPECT_TRUE(matches_reference(out, ref, precision, s.kernel_width * s.kernel_height, factored, factor_error,
                                  &window.magnitude));
    return d;
}

TEST_P(ConvMatrix, MatchesFloat64Reference) {
    const auto [device, algorithm, precision] = GetParam();
    int case_index = 0;
    for (const Shape &s : matrix_shapes) {
        for (Mode mode : {Mode::valid, Mode::same, Mode::full}) {
            if (mode == Mode::valid && (s.kernel_width > s.image_width || s.kernel_height > s.image_height)) {
                continue;
            }
            for (Boundary b :
                 {Boundary::constant, Boundary::nearest, Boundary::reflect, Boundary::mirror, Boundary::wrap}) {
                for (bool flip : {false, true}) {
                    // separable needs rank-1 kernels; auto sees both kinds.
                    const bool rank1 =
                        algorithm == Algorithm::separable || (algorithm == Algorithm::automatic && case_index % 2 == 0);
                    ++case_index;
                    SCOPED_TRACE(std::string("image ") + std::to_string(s.image_width) + "x" +
                                 std::to_string(s.image_height) + " kernel " + std::to_string(s.kernel_width) + "x" +
                                 std::to_string(s.kernel_height) + " mode " + to_string(mode) + " boundary " +
                                 to_string(b) + (flip ? " convolve" : " correlate") + (rank1 ? " rank-1" : ""));
                    run_case(device, algorithm, precision, s, mode, b, flip, rank1);
                }
            }
        }
    }
}

std::string param_name(const ::testing::TestParamInfo<MatrixParam> &info) {
    return std::string(to_string(std::get<1>(info.param))) + "_" + to_string(std::get<2>(info.param));
}

const auto all_algorithms = ::testing::Values(Algorithm::automatic, Algorithm::naive, Algorithm::shared_tiled,
                                              Algorithm::separable, Algorithm::autoscheduled, Algorithm::fft);
const auto all_precisions = ::testing::Values(Precision::f64, Precision::f32, Precision::f16, Precision::f16f32);

INSTANTIATE_TEST_SUITE_P(Cpu, ConvMatrix,
                         ::testing::Combine(::testing::Values(Device::cpu), all_algorithms, all_precisions),
                         param_name);
INSTANTIATE_TEST_SUITE_P(Cuda, ConvMatrix,
                         ::testing::Combine(::testing::Values(Device::cuda), all_algorithms, all_precisions),
                         param_name);

// The CPU direct sums' whole-block code: outputs of at least one block (4 vectors, so
// 32 or 64 columns by the target's vector width) and one strip (32 rows) shift their last
// block and strip inwards; 1x1, 3x3 and 5x5 kernels have their taps unrolled. Outputs of
// exactly one block and strip, one row or column past it, and one row short of it.
TEST(CpuTiles, MatchesFloat64Reference) {
    for (Precision precision : {Precision::f64, Precision::f32, Precision::f16, Precision::f16f32}) {
        for (const Shape &s : {Shape{32, 32, 3, 3}, Shape{65, 33, 5, 5}, Shape{33, 65, 3, 3}, Shape{64, 31, 5, 5},
                               Shape{97, 70, 1, 1}, Shape{66, 34, 7, 3}}) {
            for (Boundary b :
                 {Boundary::constant, Boundary::nearest, Boundary::reflect, Boundary::mirror, Boundary::wrap}) {
                SCOPED_TRACE(std::string(to_string(precision)) + " " + std::to_string(s.image_width) + "x" +
                             std::to_string(s.image_height) + " K " + std::to_string(s.kernel_width) + "x" +
                             std::to_string(s.kernel_height) + " " + to_string(b));
                run_case(Device::cpu, Algorithm::shared_tiled, precision, s, Mode::same, b, b == Boundary::reflect,
                         false);
            }
            run_case(Device::cpu, Algorithm::shared_tiled, precision, s, Mode::full, Boundary::constant, true, false);
            run_case(Device::cpu, Algorithm::shared_tiled, precision, s, Mode::valid, Boundary::constant, false, false);
        }
    }
}

// The documented limit of the GPU tiled schedules: a 32 x 8 tile plus apron, each row
// of (32 + kw - 1) staged samples plus `extra` bytes, within 46 KB of shared memory.
bool shared_tile_fits(int kw, int kh, int storage_bytes, int extra) {
    return (8 + kh - 1) * ((32 + kw - 1) * storage_bytes + extra) <= 46 * 1024;
}

// Larger images and kernels: several blocks per axis with partial tiles, T > 1, and
// kernels up to the shared-memory budget.
class CudaLarge : public ::testing::TestWithParam<std::tuple<Algorithm, Precision>> {
protected:
    void SetUp() override {
        if (!cuda_available()) {
            GTEST_SKIP() << "no CUDA device on this machine: GPU variants are tested on a GPU machine";
        }
    }
};

TEST_P(CudaLarge, MatchesFloat64Reference) {
    const auto [algorithm, precision] = GetParam();
    const int storage_bytes = storage_type(precision).bytes();
    for (int k : {3, 5, 15, 31, 40, 63}) {
        const bool rank1 = algorithm == Algorithm::separable;
        // Explicit tiled algorithms refuse kernels whose tile plus apron exceed shared
        // memory (ErrorsOnGpu covers that); pure f16 accumulation of more than ~250
        // products has no meaningful error bound (n*u approaches 1).
        if ((algorithm == Algorithm::shared_tiled && !shared_tile_fits(k, k, storage_bytes, 0)) ||
            (precision == Precision::f16 && k > 15)) {
            continue;
        }
        SCOPED_TRACE("K=" + std::to_string(k));
        run_case(Device::cuda, algorithm, precision, {301, 203, k, k}, Mode::same, Boundary::reflect, false, rank1);
        run_case(Device::cuda, algorithm, precision, {257, 130, k, k / 2 + 1}, Mode::valid, Boundary::constant, true,
                 rank1);
    }
}

INSTANTIATE_TEST_SUITE_P(Cuda, CudaLarge, ::testing::Combine(all_algorithms, all_precisions), [](const auto &p) {
    return std::string(to_string(std::get<0>(p.param))) + "_" + to_string(std::get<1>(p.param));
});

// Outputs of exactly one tile and one row or column past it, for the register-blocked
// 3x3 and 5x5 code (tiles of 32 x 64 outputs) and the 4-rows-per-thread code (32 x 32),
// whose last tiles shift inwards.
class CudaTiles : public CudaLarge {};

TEST_P(CudaTiles, MatchesFloat64Reference) {
    const auto [algorithm, precision] = GetParam();
    for (const Shape &s : {Shape{32, 64, 3, 3}, Shape{33, 65, 5, 5}, Shape{32, 32, 7, 7}, Shape{64, 33, 9, 9}}) {
        SCOPED_TRACE(std::to_string(s.image_width) + "x" + std::to_string(s.image_height));
        run_case(Device::cuda, algorithm, precision, s, Mode::same, Boundary::mirror, true,
                 algorithm == Algorithm::separable);
    }
}

INSTANTIATE_TEST_SUITE_P(Cuda, CudaTiles, ::testing::Combine(all_algorithms, all_precisions), [](const auto &p) {
    return std::string(to_string(std::get<0>(p.param))) + "_" + to_string(std::get<1>(p.param));
});

// The sliding pass's plan (runtime_kernels/separable/separable_sliding.h), which the
// registry's limit and the kernel's launcher share: within the shared-memory budget, the
// stage holding every sample a window loads, a ring of whole chunks holding every row
// sum a chunk of outputs reads, rows an odd multiple of 16 bytes apart; the widest strip
// where it fits; the largest kernels the budget takes at each precision.
TEST(SeparableSlidingLayout, FitsTheBudgetAndCoversEveryRead) {
    for (const int bytes : {8, 4, 2}) {
        const int acc = rk::sep::sliding_accumulator_bytes(bytes);
        for (const int kw : {1, 2, 7, 8, 9, 31, 63, 64, 65, 127, 151, 193, 200}) {
            for (const int kh : {1, 2, 16, 17, 31, 63, 127, 151, 193, 250}) {
                SCOPED_TRACE(std::to_string(bytes) + " bytes, K " + std::to_string(kw) + "x" + std::to_string(kh));
                const rk::sep::SlidingLayout l = rk::sep::sliding_layout(kw, kh, bytes);
                if (l.tile_columns == 0) {
                    for (const int tile : rk::sep::sliding_tile_widths) {
                        EXPECT_GT(rk::sep::sliding_layout_for(tile, kw, kh, bytes).total_bytes,
                                  rk::sep::sliding_shared_budget);
                    }
                    continue;
                }
                EXPECT_LE(l.total_bytes, rk::sep::sliding_shared_budget);
                EXPECT_EQ(l.tile_columns * l.chunk_rows, rk::sep::sliding_chunk_outputs);
                if (l.tile_columns != rk::sep::sliding_tile_widths[0]) {
                    EXPECT_GT(rk::sep::sliding_layout_for(rk::sep::sliding_tile_widths[0], kw, kh, bytes).total_bytes,
                              rk::sep::sliding_shared_budget);
                }
                // A thread's window reads whole blocks of 8 up to the block after its last tap's.
                EXPECT_GE(l.stage_width, l.tile_columns + (kw + 7) / 8 * 8);
                EXPECT_GE(l.stage_pitch, l.stage_width);
                EXPECT_EQ(l.ring_rows % l.chunk_rows, 0);
                EXPECT_GE(l.ring_rows, l.chunk_rows + kh - 1);
                EXPECT_EQ(l.ring_rows, (l.lag + 1) * l.chunk_rows);
                // The ring by columns: a column's run of ring_rows sums, each run 16-byte aligned.
                EXPECT_GE(l.ring_pitch, l.ring_rows);
                for (const int64_t row_bytes : {int64_t(l.stage_pitch) * bytes, int64_t(l.ring_pitch) * acc}) {
                    EXPECT_EQ(row_bytes % 16, 0);
                    EXPECT_EQ(row_bytes / 16 % 2, 1);
                }
                EXPECT_GE(l.stage_bytes, size_t(l.chunk_rows) * size_t(l.stage_pitch) * size_t(bytes));
                EXPECT_GE(l.ring_bytes, size_t(l.tile_columns) * size_t(l.ring_pitch) * size_t(acc));
                EXPECT_EQ(l.total_bytes, l.taps_bytes + l.ring_bytes + l.stage_bytes);
            }
        }
    }
    // 128-column strips up to 129 taps in float32, 64 from there to 193 (gaussian_blur's
    // exact taps to sigma 32); float64 to 65, float16 storage to 257.
    EXPECT_EQ(rk::sep::sliding_layout(3, 3, 4).tile_columns, rk::sep::sliding_tile_widths[0]);
    EXPECT_EQ(rk::sep::sliding_layout(129, 129, 4).tile_columns, rk::sep::sliding_tile_widths[0]);
    EXPECT_EQ(rk::sep::sliding_layout(131, 131, 4).tile_columns, rk::sep::sliding_tile_widths[1]);
    EXPECT_TRUE(rk::sep::sliding_fits(193, 193, 4));
    EXPECT_FALSE(rk::sep::sliding_fits(195, 195, 4));
    EXPECT_TRUE(rk::sep::sliding_fits(65, 65, 8));
    EXPECT_FALSE(rk::sep::sliding_fits(67, 67, 8));
    EXPECT_TRUE(rk::sep::sliding_fits(257, 257, 2));
    EXPECT_FALSE(rk::sep::sliding_fits(259, 259, 2));
    EXPECT_FALSE(rk::sep::sliding_fits(250, 250, 4));
}

// The sliding pass's split (sliding_split, checked without a GPU): a band count the grid
// can take (1 to 65535, at most the strip's chunks) that is itself the count its band
// height gives, for tiny, tall, wide and large outputs on small and large GPUs; and on the
// H100 (132 SMs, the residency each layout had there), the splits the 2026-11-27 sweeps
// measured fastest where the rule before lost 29 and 39 %, and the strip width that was
// faster (bench/results/h100/separable/bands-2026-11-27/).
TEST(SeparableSlidingLayout, SplitsFitTheGridAndSmallImages) {
    for (const int bytes : {8, 4, 2}) {
        for (const int k : {1, 3, 31, 63, 127, 193}) {
            for (const int tile : rk::sep::sliding_tile_widths) {
                const rk::sep::SlidingLayout l = rk::sep::sliding_layout_for(tile, k, k, bytes);
                if (l.total_bytes > rk::sep::sliding_shared_budget) {
                    continue;
                }
                for (const int64_t width : {int64_t(1), int64_t(1000), int64_t(4096), int64_t(200000)}) {
                    for (const int64_t height : {int64_t(1), int64_t(17), int64_t(1080), int64_t(8192),
                                                 int64_t(1000000), int64_t(2000000000)}) {
                        for (const auto &[per_sm, sms] : {std::pair{1, 1}, std::pair{2, 132}, std::pair{5, 132}}) {
                            SCOPED_TRACE(std::to_string(bytes) + " bytes, K " + std::to_string(k) + ", strip " +
                                         std::to_string(tile) + ", " + std::to_string(width) + " x " +
                                         std::to_string(height));
                            const int64_t strips = (width + l.tile_columns - 1) / l.tile_columns;
                            const int64_t chunks = (height + l.chunk_rows - 1) / l.chunk_rows;
                            const rk::sep::SlidingSplit split =
                                rk::sep::sliding_split(strips, height, l, k, k, per_sm, sms);
                            ASSERT_GE(split.bands, 1);
                            EXPECT_LE(split.bands, std::min<int64_t>(chunks, 65535));
                            const int64_t per_band = (chunks + split.bands - 1) / split.bands;
                            EXPECT_EQ((chunks + per_band - 1) / per_band, split.bands);
                            EXPECT_GT(split.cost, 0.0);
                        }
                    }
                }
            }
        }
    }
    const auto h100 = [](int64_t size, int k, int bytes, int tile, int per_sm) {
        const rk::sep::SlidingLayout l = rk::sep::sliding_layout_for(tile, k, k, bytes);
        return rk::sep::sliding_split((size + tile - 1) / tile, size, l, k, k, per_sm, 132);
    };
    EXPECT_EQ(h100(1024, 63, 4, 128, 4).bands, 32);  // 0.031 ms; the rule before took 64 bands (0.040)
    EXPECT_GE(h100(8192, 3, 2, 128, 5).bands, 43);   // 0.263-0.277 from 43 to 74 bands; before 10 (0.367)
    // 1024^2 f32 K = 127: 64-column strips 0.058 ms, 128: 0.065; 4096^2 K = 63: 128 columns.
    EXPECT_LT(h100(1024, 127, 4, 64, 3).cost, h100(1024, 127, 4, 128, 2).cost);
    EXPECT_LT(h100(4096, 63, 4, 128, 4).cost, h100(4096, 63, 4, 64, 5).cost);
}

// The CUDA rows' limits from CUDA's grid and the sliding pass's shared memory, as the
// registry applies them (checked without a GPU): a row one sample wider than
// gpu_max_width (with the kernel's halo) is refused by every row built on the Halide GPU
// schedules, with a message naming the limit, and run by the sliding separable pass; the
// sliding pass refuses kernels its layout does not fit, saying how much they would need.
TEST(RegistryLimits, GpuGridWidthAndSlidingPass) {
    internal::Request r;
    r.device = Device::cuda;
    r.mode = Mode::same;
    r.boundary = Boundary::reflect;
    r.kernel_width = r.kernel_height = 3;
    r.output_height = 1024;
    internal::VariantRow naive{};
    naive.algorithm = "naive";
    r.output_width = int(gpu_max_width) - 2;
    EXPECT_EQ(internal::limit_gpu_grid_width(r, naive), "");
    r.output_width++;
    const std::string why = internal::limit_gpu_grid_width(r, naive);
    EXPECT_NE(why.find("naive on CUDA takes outputs up to " + std::to_string(gpu_max_width - 2)), std::string::npos)
        << why;
    for (const Precision p : {Precision::f64, Precision::f32, Precision::f16, Precision::f16f32}) {
        r.precision = p;
        r.kernel_width = r.kernel_height = p == Precision::f64 ? 31 : 127;
        EXPECT_EQ(internal::limit_separable_sliding_fits(r, naive), "") << to_string(p);
        r.kernel_width = r.kernel_height = 260;  // past every precision's largest (257 with float16 storage)
        EXPECT_NE(internal::limit_separable_sliding_fits(r, naive).find("KiB of shared memory"), std::string::npos)
            << to_string(p);
    }
    if (!cuda_info().built) {
        return;  // no CUDA rows in this build
    }
    r.kernel_width = r.kernel_height = 3;
    r.kernel_rank = 1;
    int refused = 0;
    for (const AlgorithmInfo &a : algorithms()) {
        for (const internal::VariantRow *row :
             internal::rows_of(internal::Api::correlate2d, static_cast<int>(a.algorithm), Device::cuda)) {
            r.precision = row->supports(Precision::f32) ? Precision::f32 : Precision::f16f32;
            const std::string refusal = row->refusal(r);
            // Anderson2021 writes the autoscheduled row's schedule (its tall outputs run in
            // bands, plan.cpp); the sliding passes (separable, low_rank, conv2d) and the
            // fft_lines pass (one-dimensional grids of blocks) and the tensor-core passes (blocks
            // along lines in x, tiles of lines in y) have grids of their own.
            const bool own_grid = row->autoscheduled || row->name() == "separable_cuda_sliding" ||
                                  row->name() == "separable_cuda_fft_lines" ||
                                  row->name() == "separable_cuda_tensor_core" ||
                                  row->name() == "low_rank_cuda_sliding" || row->name() == "conv2d_cuda_sliding";
            EXPECT_EQ(refusal.find("CUDA's grid limit") != std::string::npos, !own_grid)
                << row->name() << ": " << refusal;
            refused += own_grid ? 0 : 1;
        }
    }
    EXPECT_GE(refused, 10);  // naive, shared_tiled, two separable schedules, five tensor-core rows, fft
}

// fft_line's pass tables (fft_line_plan.h) hold, at each pass's entry (k, r), the 4096-entry
// table's index of w^(k r) that the Stockham pass multiplies by, every entry once, for every
// transform the line kernels build.
TEST(FftLinePlan, PassTablesHoldEachPassTwiddle) {
    namespace fl = rk::fft_line;
    for (int n = 2; n <= fl::kTableSize; n *= 2) {
        for (int s : {2, 4, 8, 16}) {
            std::vector<int> seen(size_t(fl::pass_table_size(n, s)), 0);
            int radix_product = 1;
            for (int p = 0; p < fl::passes_of(n, s); p++) {
                const int ns = fl::span_of(n, s, p), r = fl::radix_of(n, s, p);
                EXPECT_EQ(ns, radix_product) << n << " " << s << " " << p;
                radix_product *= r;
                for (int k = 0; p > 0 && k < ns; k++) {
                    for (int q = 1; q < r; q++) {
                        const int i = fl::pass_table_offset(n, s, p) + (q - 1) * ns + k;
                        ASSERT_GE(i, 0);
                        ASSERT_LT(i, fl::pass_table_size(n, s));
                        seen[size_t(i)]++;
                        EXPECT_EQ(fl::pass_table_source(n, s, i), k * q * (fl::kTableSize / (ns * r)))
                            << n << " " << s << " pass " << p << " k " << k << " r " << q;
                    }
                }
            }
            EXPECT_EQ(radix_product, n);
            for (size_t i = 0; i < seen.size(); i++) {
                EXPECT_EQ(seen[i], 1) << n << " " << s << " entry " << i;
            }
        }
    }
}

// The fft_lines pass's plan (checked without a GPU): each axis's line length minimizes
// blocks x M x the length's measured cost per point (fft_point_cost), holds the kernel, and
// is the shortest that does on a tie; the scratch's parts are aligned and apart; the
// registry refuses kernels past the longest line, saying so.
TEST(SeparableFftLayout, LineLengthsScratchAndLimit) {
    using rk::sep::fft_line_length;
    constexpr auto rows = rk::sep::FftAxis::rows, columns = rk::sep::FftAxis::columns;
    EXPECT_EQ(fft_line_length(4096, 15, rows), 256);      // 17 x 256 x 1 < 9 x 512 x 1.01
    EXPECT_EQ(fft_line_length(4096, 193, rows), 512);     // 13 x 512 x 1.01 < 5 x 1024 x 2.04 < 64 x 256
    EXPECT_EQ(fft_line_length(4096, 127, columns), 512);  // 11 x 512 x 1.38 < 32 x 256 < 5 x 1024 x 1.8
    EXPECT_EQ(fft_line_length(4096, 63, columns), 256);   // 22 x 256 < 10 x 512 x 1.38
    EXPECT_EQ(fft_line_length(4096, 255, rows), 512);     // 16 x 512 x 1.01 < 6 x 1024 x 2.04
    // One block of 4096 points for 4002 outputs would transform the fewest points; 25 blocks
    // of 256 take less time.
    EXPECT_EQ(fft_line_length(4002, 95, columns), 256);
    EXPECT_EQ(fft_line_length(5, 301, rows), 512);
    EXPECT_EQ(fft_line_length(1, 4095, columns), 4096);
    EXPECT_EQ(fft_line_length(10, 4097, rows), 0);
    for (const auto &[w, h, image_h, kw, kh] :
         {std::tuple{301, 7, 9, 3, 3}, std::tuple{4096, 4096, 4096, 255, 255}, std::tuple{1, 1000, 1000, 1, 4095}}) {
        const rk::sep::FftLinesLayout l = rk::sep::fft_lines_layout(w, h, image_h, kw, kh);
        EXPECT_EQ(l.mid_pitch % 2, 0);
        EXPECT_GE(l.mid_pitch, w);
        const size_t parts[] = {l.mid_offset,      l.row_spectrum_offset,    l.column_spectrum_offset,
                                l.twiddles_offset, l.row_pass_tables_offset, l.column_pass_tables_offset,
                                l.taps_offset,     l.constants_offset};
        for (size_t i = 0; i < std::size(parts); i++) {
            EXPECT_EQ(parts[i] % 256, 0u);
        }
        EXPECT_GE(l.row_spectrum_offset, l.mid_offset + size_t(l.mid_pitch) * image_h * sizeof(float));
        EXPECT_GE(l.column_spectrum_offset, l.row_spectrum_offset + size_t(l.row_length) * 8);
        EXPECT_GE(l.twiddles_offset, l.column_spectrum_offset + size_t(l.column_length) * 8);
        EXPECT_GE(l.row_pass_tables_offset, l.twiddles_offset + size_t(rk::fft_line::kTableSize) * 8);
        EXPECT_GE(l.column_pass_tables_offset,
                  l.row_pass_tables_offset +
                      size_t(rk::fft_line::pass_table_size(l.row_length, rk::sep::fft_points(rows))) * 8);
        EXPECT_GE(l.taps_offset,
                  l.column_pass_tables_offset +
                      size_t(rk::fft_line::pass_table_size(l.column_length, rk::sep::fft_points(columns))) * 8);
        EXPECT_GE(l.constants_offset, l.taps_offset + size_t(kw + kh) * sizeof(float));
        EXPECT_GE(l.total_bytes, l.constants_offset + sizeof(rk::sep::FftLinesConstants));
        // The tables after the intermediate, the same whatever the image's height (a plan prepares them once).
        EXPECT_EQ(l.tables_offset, l.row_spectrum_offset);
        EXPECT_EQ(rk::sep::fft_lines_tables_bytes(kw, kh, w, h), l.total_bytes - l.tables_offset);
        const rk::sep::FftLinesLayout taller = rk::sep::fft_lines_layout(w, h, image_h + 100, kw, kh);
        EXPECT_EQ(taller.total_bytes - taller.tables_offset, l.total_bytes - l.tables_offset);
    }
    internal::Request r;
    r.device = Device::cuda;
    internal::VariantRow row{};
    r.kernel_width = 4095;
    r.kernel_height = 3;
    EXPECT_EQ(internal::limit_separable_fft_lines_fits(r, row), "");
    r.kernel_height = 4096;
    EXPECT_NE(internal::limit_separable_fft_lines_fits(r, row).find("past the fft_lines pass's 4095 taps per axis"),
              std::string::npos);
    // The separable entry takes these passes over the sliding pass from 140 taps together
    // (kw + kh) on outputs under 2^19 samples or of unknown size, from 80 on those of 2^19 to
    // 2^21 - 1, from 150 on larger ones, in every precision they have; the refusal names the
    // threshold and the range.
    for (const Precision p : {Precision::f32, Precision::f16, Precision::f16f32}) {
        r.precision = p;
        for (const auto &[ow, oh, crossover, range] :
             {std::tuple{4096, 4096, 150, "of 2097152 samples and more"},
              std::tuple{1 << 21, 1, 150, "of 2097152 samples and more"},
              std::tuple{1449, 1449, 150, "of 2097152 samples and more"},
              std::tuple{1448, 1448, 80, "of 524288 to 2097151 samples"},
              std::tuple{1024, 1024, 80, "of 524288 to 2097151 samples"},
              std::tuple{725, 725, 80, "of 524288 to 2097151 samples"},
              std::tuple{724, 724, 140, "under 524288 samples (or of unknown size)"},
              std::tuple{512, 512, 140, "under 524288 samples (or of unknown size)"},
              std::tuple{0, 0, 140, "under 524288 samples (or of unknown size)"}}) {
            r.output_width = ow;
            r.output_height = oh;
            for (const auto &[kw, kh] : {std::pair{100, 100}, std::pair{3, 197}, std::pair{4095, 1}, std::pair{99, 100},
                                         std::pair{75, 75}, std::pair{75, 74}, std::pair{70, 70}, std::pair{70, 69},
                                         std::pair{40, 40}, std::pair{40, 39}, std::pair{193, 3}, std::pair{1, 1}}) {
                r.kernel_width = kw;
                r.kernel_height = kh;
                const bool pays = kw + kh >= crossover;
                const std::string why = internal::limit_separable_fft_lines_pays(r, row);
                EXPECT_EQ(why.empty(), pays) << kw << "x" << kh << " on " << ow << "x" << oh;
                if (!pays) {
                    EXPECT_NE(why.find("fewer than " + std::to_string(crossover) + " taps together"), std::string::npos)
                        << why;
                    EXPECT_NE(why.find(std::string("faster on outputs ") + range), std::string::npos) << why;
                }
            }
        }
    }
}

// Batch forms (cmake/halconv_registry.cmake, BATCH_FORM): every CUDA row of the direct sums
// and the tensor cores that is not autoscheduled has one for each precision it takes (and
// the tensor cores a valid one too); no CPU row and no other generator's row has any.
TEST(Registry, BatchFormsOnTheCudaRowsThatHaveThem) {
    int with_forms = 0;
    for (const internal::VariantRow &row : internal::variant_rows()) {
        const std::string generator = row.generator;
        const bool expected = row.device == Device::cuda && !row.autoscheduled &&
                              (generator == "conv2d" || generator == "conv2d_cuda" || generator == "tensor_core");
        for (const Precision p : {Precision::f64, Precision::f32, Precision::f16, Precision::f16f32}) {
            if (!row.supports(p)) {
                continue;
            }
            const internal::PipelineFns &fn = row.fns(p);
            const bool has = fn.kernel2d_batch != nullptr || fn.kernel2d_extended_batch != nullptr;
            EXPECT_EQ(has, expected) << row.name() << " " << to_string(p);
            EXPECT_EQ(fn.valid_batch != nullptr, expected && fn.valid != nullptr) << row.name() << " " << to_string(p);
            with_forms += has ? 1 : 0;
        }
    }
    // naive, shared_tiled and sliding in 4 precisions each, the 5 tensor-core variants in 2
    // or 3 (24 today); none in a build without CUDA.
    if (cuda_info().built) {
        EXPECT_GE(with_forms, 19);
    } else {
        EXPECT_EQ(with_forms, 0);
    }
}

// The separable algorithm on CUDA: the sliding extern stage wherever its shared memory
// suffices (runtime_kernels/separable/separable_sliding.h), over several strips, chunks
// and bands, with kernels of every residue modulo its 8-sample window, tall, wide and up
// to its limit (through low_rank where the separable entry takes the fft_lines passes);
// the Halide schedules beyond it. Cases whose float64 reference would take more than
// max_reference_taps multiply-adds are left out (the reference is a direct 2D sum): the
// largest kernels run on small images and in same mode.
class CudaSeparable : public ::testing::TestWithParam<Precision> {
protected:
    void SetUp() override {
        if (!cuda_available()) {
            GTEST_SKIP() << "no CUDA device on this machine: GPU variants are tested on a GPU machine";
        }
    }
};

TEST_P(CudaSeparable, SlidingPassMatchesFloat64Reference) {
    constexpr int64_t max_reference_taps = 25'000'000;
    const Precision precision = GetParam();
    // 145 x 220 to 13 x 12 are past what the layout held with two stage buffers: float32 past
    // 129 taps (several chunks through the ring) and at its largest square kernel, float16
    // storage at its largest; the last a row kernel of 301 taps (a stage 309 columns wide).
    const std::vector<Shape> shapes = {{333, 517, 1, 1},   {333, 517, 3, 3},  {260, 90, 8, 8},      {131, 97, 9, 17},
                                       {257, 60, 31, 7},   {90, 50, 63, 63},  {64, 32, 16, 16},     {40, 33, 127, 127},
                                       {300, 60, 127, 3},  {60, 300, 3, 127}, {24, 300, 13, 250},   {45, 40, 100, 90},
                                       {1, 70, 5, 9},      {70, 1, 9, 5},     {300, 150, 21, 19},   {1000, 60, 33, 9},
                                       {70, 1, 41, 1},     {1, 70, 1, 41},    {145, 220, 131, 131}, {27, 24, 193, 193},
                                       {13, 12, 257, 257}, {200, 40, 301, 5}};
    int index = 0;
    for (const Shape &s : shapes) {
        // float16 sums of more than ~250 products have no useful bound; the sliding pass
        // sums in float32, but the reference's tolerance is float16's.
        if (precision == Precision::f16 && s.kernel_width + s.kernel_height > 40) {
            continue;
        }
        for (Mode mode : {Mode::same, Mode::valid, Mode::full}) {
            if (mode == Mode::valid && (s.kernel_width > s.image_width || s.kernel_height > s.image_height)) {
                continue;
            }
            const Extent2d e = output_extent({s.image_width, s.image_height}, {s.kernel_width, s.kernel_height}, mode);
            if (int64_t(e.width) * e.height * s.kernel_width * s.kernel_height > max_reference_taps) {
                continue;
            }
            const auto boundary = Boundary(index % 5);
            const bool flip = index % 2 == 1;
            ++index;
            SCOPED_TRACE(std::to_string(s.image_width) + "x" + std::to_string(s.image_height) + " K " +
                         std::to_string(s.kernel_width) + "x" + std::to_string(s.kernel_height) + " " +
                         to_string(mode) + " " + to_string(boundary) + (flip ? " convolve" : " correlate"));
            // Kernels the separable entry gives the fft_lines passes (float32 transforms; from
            // fft_lines_crossover taps together) reach the sliding pass as a low_rank kernel of
            // one term.
            const int bytes = storage_type(precision).bytes();
            const bool fits = rk::sep::sliding_fits(s.kernel_width, s.kernel_height, bytes);
            const bool to_fft = precision != Precision::f64 &&
                                rk::sep::fft_lines_preferred(s.kernel_width, s.kernel_height, e.width, e.height, bytes);
            const Algorithm algorithm = fits && to_fft ? Algorithm::low_rank : Algorithm::separable;
            const Dispatch d = run_case(Device::cuda, algorithm, precision, s, mode, boundary, flip, true);
            if (algorithm == Algorithm::low_rank) {
                EXPECT_EQ(d.variant, "low_rank_cuda_sliding");
            } else {
                EXPECT_EQ(d.variant == "separable_cuda_sliding", fits) << d.variant;
            }
        }
    }
}

// Non-finite samples reach exactly the outputs whose window holds them, as in the
// definition (the pass never multiplies a sample by a tap it does not meet); every other
// output keeps the bound.
TEST_P(CudaSeparable, SlidingPassKeepsNonFiniteSamplesInTheirWindows) {
    const Precision precision = GetParam();
    if (precision == Precision::f16 || precision == Precision::f16f32) {
        GTEST_SKIP() << "float16 sums of 56 products have no useful bound (as above)";
    }
    const halide_type_t type = storage_type(precision);
    constexpr int width = 300, height = 200, kw = 31, kh = 25;
    for (double bad : {std::nan(""), double(INFINITY), -double(INFINITY)}) {
        SCOPED_TRACE(bad);
        Image img, ker;
        Halide::Runtime::Buffer<> input = random_buffer(type, width, height, img);
        Halide::Runtime::Buffer<> kernel = random_rank1_kernel(type, kw, kh, ker);
        const size_t at = size_t(90) * width + 140;
        store(input, at, bad);
        img.data[at] = bad;
        Options o;
        o.algorithm = Algorithm::separable;
        o.precision = precision;
        o.boundary = Boundary::reflect;
        o.device = Device::cuda;
        Halide::Runtime::Buffer<> out(output_type(precision), width, height);
        poison(out);
        ASSERT_EQ(out.copy_to_device(cuda_device_interface()), 0);
        const Dispatch d = correlate2d(input, kernel, out, o);
        EXPECT_EQ(d.variant, "separable_cuda_sliding");
        ASSERT_EQ(out.copy_to_host(), 0);
        const Reference ref = correlate_reference(img, ker, Mode::same, Boundary::reflect, 0.0, false);
        int non_finite = 0;
        for (size_t i = 0; i < ref.value.data.size(); i++) {
            const double want = ref.value.data[i];
            if (!std::isfinite(want)) {
                const double got = load(out, i);
                EXPECT_TRUE(std::isnan(want) ? std::isnan(got) : got == want) << i << ": " << got << " for " << want;
                non_finite++;
            }
        }
        EXPECT_EQ(non_finite, kw * kh);
        // The finite outputs alone, within the factored bound run_case states.
        const FactoredBound fb = factored_bound(img, ker, Mode::same, Boundary::reflect, 0.0, false);
        Halide::Runtime::Buffer<> finite(output_type(precision), width, height);
        Reference want = ref;
        Image window_abs = fb.window.magnitude;
        for (size_t i = 0; i < ref.value.data.size(); i++) {
            const bool keep = std::isfinite(ref.value.data[i]);
            store(finite, i, keep ? load(out, i) : 0.0);
            want.value.data[i] = keep ? ref.value.data[i] : 0.0;
            want.magnitude.data[i] = keep ? ref.magnitude.data[i] : 0.0;
            window_abs.data[i] = keep ? window_abs.data[i] : 0.0;
        }
        EXPECT_TRUE(matches_reference(finite, want, precision, kw * kh, true, fb.factor_error, &window_abs));
    }
}

// ---- The fft_lines pass (runtime_kernels/separable/separable_fft.h) ----

// The separable correlation in float64, row pass then column pass (SciPy's placement of a
// kh x kw kernel): the value, and sum |col| sum |row| |x| per output (the direct sums'
// magnitude). O(outputs (kw + kh)): fit for kernels of thousands of taps.
Reference separable_reference(const Image &img, const std::vector<double> &row, const std::vector<double> &col,
                              Mode mode, Boundary b, double fill, bool flip) {
    const int kw = int(row.size()), kh = int(col.size());
    const auto [ow, oh, ox, oy] = reference_placement(img.width, img.height, kw, kh, mode, flip);
    const int rows = oh + kh - 1;  // extended rows the column pass reads, from y = -oy
    std::vector<double> sums(size_t(ow) * rows), magnitudes(size_t(ow) * rows);
    for (int r = 0; r < rows; r++) {
        for (int x = 0; x < ow; x++) {
            double s = 0.0, m = 0.0;
            for (int i = 0; i < kw; i++) {
                const double k = flip ? row[size_t(kw - 1 - i)] : row[size_t(i)];
                const double v = sample(img, x + i - ox, r - oy, b, fill);
                s += k * v;
                m += std::fabs(k) * std::fabs(v);
            }
            sums[size_t(r) * ow + x] = s;
            magnitudes[size_t(r) * ow + x] = m;
        }
    }
    Reference ref{{ow, oh, std::vector<double>(size_t(ow) * oh)}, {ow, oh, std::vector<double>(size_t(ow) * oh)}};
    for (int y = 0; y < oh; y++) {
        for (int x = 0; x < ow; x++) {
            double s = 0.0, m = 0.0;
            for (int j = 0; j < kh; j++) {
                const double k = flip ? col[size_t(kh - 1 - j)] : col[size_t(j)];
                s += k * sums[size_t(y + j) * ow + x];
                m += std::fabs(k) * magnitudes[size_t(y + j) * ow + x];
            }
            ref.value.data[size_t(y) * ow + x] = s;
            ref.magnitude.data[size_t(y) * ow + x] = m;
        }
    }
    return ref;
}

// Taps as stored: random in [-1, 1), or (`ends`) 1 at both ends and 0 between, whose small
// sum keeps the bound tight enough to see a tap or sample out of place.
Halide::Runtime::Buffer<> taps_buffer(halide_type_t type, int n, bool ends, std::vector<double> &exact) {
    std::uniform_real_distribution<double> dist(-1.0, 1.0);
    Halide::Runtime::Buffer<> b(type, n);
    exact.assign(size_t(n), 0.0);
    for (int i = 0; i < n; i++) {
        store(b, size_t(i), ends ? (i == 0 || i == n - 1 ? 1.0 : 0.0) : dist(rng()));
        exact[size_t(i)] = load(b, size_t(i));
    }
    return b;
}

// Long kernels through the separable entry: the fft_lines passes (float32 transforms: f32,
// f16f32, f16) from fft_lines_crossover taps together (80 to 150 by output size), within their
// bound, whether or not the sliding pass's shared memory would hold the kernel (a long row
// kernel with a short column one).
// Every mode, boundary, correlation and convolution; kernels longer than the image along
// an axis, lines of one sample, partial last blocks, every line length (256 ... 4096). f64
// keeps the Halide schedules past the sliding pass (tested above).
TEST_P(CudaSeparable, FftLinesPassMatchesFloat64Reference) {
    const Precision precision = GetParam();
    if (precision == Precision::f64) {
        GTEST_SKIP() << "fft_lines has float32 transforms; f64 kernels past the sliding pass run the Halide schedules";
    }
    const halide_type_t type = storage_type(precision);
    const std::vector<Shape> shapes = {
        {300, 200, 301, 5}, {200, 300, 5, 301},  {97, 61, 257, 257}, {5, 7, 301, 301},
        {1, 400, 1, 301},   {400, 1, 301, 1},    {1000, 3, 1201, 3}, {3, 1000, 3, 1201},
        {9, 8, 4095, 1},    {8, 9, 1, 4095},     {2, 3, 1025, 257},  {520, 33, 260, 2},
        {33, 520, 2, 260},  {1500, 40, 2047, 1}, {40, 700, 1, 700},  {1200, 1100, 81, 75}};
    int index = 0, cases = 0;
    for (const Shape &s : shapes) {
        for (Mode mode : {Mode::same, Mode::valid, Mode::full}) {
            if (mode == Mode::valid && (s.kernel_width > s.image_width || s.kernel_height > s.image_height)) {
                continue;
            }
            const auto boundary = Boundary(index % 5);
            const bool flip = index % 2 == 1, ends = index % 3 == 2;
            ++index;
            SCOPED_TRACE(std::to_string(s.image_width) + "x" + std::to_string(s.image_height) + " K " +
                         std::to_string(s.kernel_width) + "x" + std::to_string(s.kernel_height) + " " +
                         to_string(mode) + " " + to_string(boundary) + (flip ? " convolve" : " correlate") +
                         (ends ? " end taps" : ""));
            Image img;
            std::vector<double> row, col;
            Halide::Runtime::Buffer<> input = random_buffer(type, s.image_width, s.image_height, img);
            Halide::Runtime::Buffer<> row_taps = taps_buffer(type, s.kernel_width, ends, row);
            Halide::Runtime::Buffer<> col_taps = taps_buffer(type, s.kernel_height, ends, col);
            Options o;
            o.precision = precision;
            o.mode = mode;
            o.boundary = boundary;
            o.device = Device::cuda;
            Halide::Runtime::Buffer<> fill(type, 1);
            store(fill, 0, std::uniform_real_distribution<double>(-2.0, 2.0)(rng()));
            o.fill_value = load(fill, 0);
            const Extent2d e = output_extent({s.image_width, s.image_height}, {s.kernel_width, s.kernel_height}, mode);
            Halide::Runtime::Buffer<> out(output_type(precision), e.width, e.height);
            poison(out);
            ASSERT_EQ(out.copy_to_device(cuda_device_interface()), 0);
            const Dispatch d = flip ? separable_convolve2d(input, row_taps, col_taps, out, o)
                                    : separable_correlate2d(input, row_taps, col_taps, out, o);
            ASSERT_TRUE(rk::sep::fft_lines_preferred(s.kernel_width, s.kernel_height, e.width, e.height, type.bytes()));
            EXPECT_EQ(d.variant, "separable_cuda_fft_lines");
            ASSERT_EQ(out.copy_to_host(), 0);
            const Reference ref = separable_reference(img, row, col, mode, boundary, o.fill_value, flip);
            ++cases;
            const double max_abs_x = max_abs_sample(img, boundary, o.fill_value);
            const rk::sep::FftLinesLayout l =
                rk::sep::fft_lines_layout(e.width, e.height, s.image_height, s.kernel_width, s.kernel_height);
            EXPECT_TRUE(matches_reference_within(out, ref, precision,
                                                 fft_lines_bound(l, abs_sum(row) * abs_sum(col), max_abs_x)));
        }
    }
    EXPECT_EQ(cases, 38);
}

// NaN and Inf reach exactly the outputs whose window holds them (the blocks holding them
// are summed directly), and every other output keeps the bound of the image without them.
// A finite sample large enough to overflow a transform (1e35: past the row pass's limit
// for most random taps) leaves every output finite and within the bound of the image
// holding it: blocks are summed directly where a sample passes their pass's limit.
TEST_P(CudaSeparable, FftLinesPassKeepsNonFiniteSamplesInTheirWindows) {
    const Precision precision = GetParam();
    if (precision != Precision::f32) {
        GTEST_SKIP() << "the same path in every storage type; float16 holds no sample past a transform's range";
    }
    const halide_type_t type = storage_type(precision);
    constexpr int width = 300, height = 200, kw = 9, kh = 301;
    ASSERT_FALSE(rk::sep::sliding_fits(kw, kh, type.bytes()));
    for (double bad : {std::nan(""), double(INFINITY), -double(INFINITY), 1e35}) {
        SCOPED_TRACE(bad);
        Image img;
        std::vector<double> row, col;
        Halide::Runtime::Buffer<> input = random_buffer(type, width, height, img);
        Halide::Runtime::Buffer<> row_taps = taps_buffer(type, kw, false, row);
        Halide::Runtime::Buffer<> col_taps = taps_buffer(type, kh, false, col);
        const size_t at = size_t(90) * width + 140;
        Image marked = img;  // NaN at the sample: NaN where the windows hold it
        marked.data[at] = std::nan("");
        store(input, at, bad);
        img.data[at] = bad;
        Options o;
        o.precision = precision;
        o.boundary = Boundary::reflect;
        o.device = Device::cuda;
        Halide::Runtime::Buffer<> out(output_type(precision), width, height);
        poison(out);
        ASSERT_EQ(out.copy_to_device(cuda_device_interface()), 0);
        const Dispatch d = separable_correlate2d(input, row_taps, col_taps, out, o);
        EXPECT_EQ(d.variant, "separable_cuda_fft_lines");
        ASSERT_EQ(out.copy_to_host(), 0);
        const Reference ref = separable_reference(img, row, col, Mode::same, Boundary::reflect, 0.0, false);
        const Reference windows = separable_reference(marked, row, col, Mode::same, Boundary::reflect, 0.0, false);
        const bool finite = std::isfinite(bad);
        double max_abs_x = 0.0;
        for (size_t i = 0; i < img.data.size(); i++) {
            max_abs_x = std::max(max_abs_x, i == at && !finite ? 0.0 : std::fabs(img.data[i]));
        }
        const double bound = fft_lines_bound(rk::sep::fft_lines_layout(width, height, height, kw, kh),
                                             abs_sum(row) * abs_sum(col), max_abs_x);
        int held = 0, off = 0;
        for (size_t i = 0; i < ref.value.data.size(); i++) {
            const double got = load(out, i), want = ref.value.data[i];
            const bool in_window = std::isnan(windows.value.data[i]);
            held += in_window ? 1 : 0;
            bool ok = std::fabs(got - want) <= bound + 0x1p-24 * std::fabs(want);
            if (!finite && in_window) {
                ok = std::isnan(want) ? std::isnan(got) : got == want;
            }
            if (!ok && off++ == 0) {
                ADD_FAILURE() << "output " << i % width << "," << i / width << ": got " << got << " want " << want
                              << (in_window ? " (its window holds the sample)" : "") << ", bound " << bound;
            }
        }
        EXPECT_EQ(off, 0);
        EXPECT_EQ(held, kw * height);  // 9 columns, and every row (the column taps outreach the image)
    }
}

// ---- The tensor-core passes (runtime_kernels/separable/separable_tensor_core.h) ----

// The registry's tensor-core row, run directly (the separable entry gives it only large
// outputs: these are small, so that the float64 reference stays quick), on sm_90 devices.
class CudaSeparableTensorCore : public ::testing::Test {
protected:
    void SetUp() override {
        if (!cuda_available()) {
            GTEST_SKIP() << "no CUDA device on this machine: GPU variants are tested on a GPU machine";
        }
        if (const auto [major, minor] = internal::current_compute_capability(); major != 9 || minor != 0) {
            GTEST_SKIP() << "the tensor-core passes are sm_90a code; this device is sm_" << major << minor;
        }
        for (const internal::VariantRow &row : internal::variant_rows()) {
            if (row.name() == "separable_cuda_tensor_core") {
                run_ = row.fns(Precision::f32).separable;
            }
        }
        ASSERT_NE(run_, nullptr);
    }

    // out = the passes over `input` (row taps then column taps) in `mode`, as the plan calls them;
    // input and taps as written on the host, out as it lies on the device.
    void run(Halide::Runtime::Buffer<float> &input, Halide::Runtime::Buffer<> &row, Halide::Runtime::Buffer<> &col,
             Mode mode, Boundary b, double fill, bool flip, Halide::Runtime::Buffer<float> &out) {
        const int ox = internal::mode_offset(row.width(), mode, flip);
        const int oy = internal::mode_offset(col.width(), mode, flip);
        for (Halide::Runtime::Buffer<> *taps : {&row, &col}) {
            taps->set_host_dirty();
        }
        input.set_host_dirty();
        // As the plan runs a row: halconv's runtime hooks and stream, the buffers on the device.
        internal::run_pipeline(Device::cuda, {input.raw_buffer(), row.raw_buffer(), col.raw_buffer()}, out.raw_buffer(),
                               Stream{}, "tensor-core passes", [&] {
                                   return run_(input.raw_buffer(), row.raw_buffer(), col.raw_buffer(), int32_t(b), fill,
                                               ox, oy, flip, out.raw_buffer());
                               });
        ASSERT_EQ(out.copy_to_host(), 0);
    }

    // A w x h float32 buffer `pad` samples into rows of w + pad (misaligned rows where pad is
    // odd), poisoned with `poison` on the device.
    static Halide::Runtime::Buffer<float> poisoned_output(int w, int h, int pad, float poison) {
        Halide::Runtime::Buffer<float> whole(w + pad, h);
        whole.fill(poison);
        whole.set_host_dirty();
        EXPECT_EQ(whole.copy_to_device(cuda_device_interface()), 0);
        Halide::Runtime::Buffer<float> out = whole.cropped(0, pad, w);
        out.translate(0, -pad);
        return out;
    }

    internal::SeparableFn run_ = nullptr;
};

// The passes' bound (runtime_kernels/separable/halconv_sep.h): each pass sums a line's K
// products of float16 parts, so a sum is within (K + 8) u sum|tap x| (the float32 sums' and
// the parts' rounding) plus 2^-38 K max|tap| max|x| (a part below float16's normal range
// keeps 2^-25 absolutely at a scale that puts the line's largest at 2^14: values 2^28 and
// more below it lose their relative precision). Through both passes: (kw + kh + 16) u
// sum|col| sum|row| |x| plus 2^-38 max|x| (kw max|row| sum|col| + kh max|col| sum|row|),
// max|x| over the image and the fill. A misplaced tap or sample costs |tap x|.
::testing::AssertionResult matches_passes(const Halide::Runtime::Buffer<float> &out, const Reference &ref,
                                          const std::vector<double> &row, const std::vector<double> &col,
                                          double max_abs_x) {
    Halide::Runtime::Buffer<> dense(halide_type_t(halide_type_float, 32), out.width(), out.height());
    for (int y = 0; y < out.height(); y++) {
        for (int x = 0; x < out.width(); x++) {
            store(dense, size_t(y) * out.width() + x, out(out.dim(0).min() + x, out.dim(1).min() + y));
        }
    }
    const double n = double(row.size() + col.size()) + 16, u = 0x1p-24;
    const double absolute =
        0x1p-38 * max_abs_x *
        (double(row.size()) * max_abs(row) * abs_sum(col) + double(col.size()) * max_abs(col) * abs_sum(row));
    return compare_samples(dense, ref, [&](size_t i, double want) {
        return n * u * ref.magnitude.data[i] + absolute + output_roundoff(Precision::f32) * std::fabs(want) +
               (n + 1) * underflow_step(Precision::f32);
    });
}

// Every mode, boundary, correlation and convolution; kernels of each depth the kernel is built
// for (96 ... 256: 1 to tensor_core_max_taps = 193 taps) and at their edges; lines of one
// sample, partial tiles along both axes, kernels longer than the image; images whose rows are
// not 16-byte aligned (copied by cp.async) and outputs whose rows are not 8-byte aligned
// (stored one sum at a time); lines at scales 2^-20 ... 2^20 apart; very tall and very wide
// images (200000 lines of 3 samples: 6250 tiles of lines in the row pass, lines of 200000 in
// the column pass, and the transpose).
TEST_F(CudaSeparableTensorCore, MatchesFloat64Reference) {
    constexpr int most = rk::sep::tensor_core_max_taps;
    const std::vector<Shape> shapes = {
        {300, 200, 64, 64},   {333, 517, most, 1}, {517, 333, 1, most},  {97, 61, 65, 66},  {1, 70, 17, 33},
        {70, 1, 33, 17},      {5, 7, 129, 129},    {260, 90, 96, 31},    {64, 32, 2, 3},    {1000, 40, 97, 98},
        {40, 1000, 98, 97},   {131, 97, 34, 35},   {200, 130, 113, 114}, {193, 67, 128, 2}, {250, 170, 130, 161},
        {170, 250, 162, 130}, {3, 200000, 65, 66}, {200000, 3, 66, 65}};
    int index = 0;
    for (const Shape &s : shapes) {
        for (Mode mode : {Mode::same, Mode::valid, Mode::full}) {
            if (mode == Mode::valid && (s.kernel_width > s.image_width || s.kernel_height > s.image_height)) {
                continue;
            }
            const auto boundary = Boundary(index % 5);
            const bool flip = index % 2 == 1, ends = index % 3 == 2, misaligned = index % 4 == 1,
                       scaled = index % 7 == 3;
            ++index;
            SCOPED_TRACE(std::to_string(s.image_width) + "x" + std::to_string(s.image_height) + " K " +
                         std::to_string(s.kernel_width) + "x" + std::to_string(s.kernel_height) + " " +
                         to_string(mode) + " " + to_string(boundary) + (flip ? " convolve" : " correlate") +
                         (ends ? " end taps" : "") + (misaligned ? " misaligned" : "") +
                         (scaled ? " scaled lines" : ""));
            const halide_type_t f32(halide_type_float, 32);
            Image img;
            std::vector<double> row, col;
            random_buffer(f32, s.image_width, s.image_height, img);
            if (scaled) {
                for (int y = 0; y < img.height; y++) {
                    const double scale = std::ldexp(1.0, (y * 7) % 41 - 20);
                    for (int x = 0; x < img.width; x++) {
                        img.data[size_t(y) * img.width + x] *= scale;
                    }
                }
            }
            // Misaligned: the image one sample into rows of width + 1, the output likewise.
            const int pad = misaligned ? 1 : 0;
            Halide::Runtime::Buffer<float> image_store(s.image_width + pad, s.image_height);
            Halide::Runtime::Buffer<float> input = image_store.cropped(0, pad, s.image_width);
            input.translate(0, -pad);
            for (int y = 0; y < s.image_height; y++) {
                for (int x = 0; x < s.image_width; x++) {
                    input(x, y) = float(img.data[size_t(y) * img.width + x]);
                    img.data[size_t(y) * img.width + x] = input(x, y);
                }
            }
            Halide::Runtime::Buffer<> row_taps = taps_buffer(f32, s.kernel_width, ends, row);
            Halide::Runtime::Buffer<> col_taps = taps_buffer(f32, s.kernel_height, ends, col);
            const double fill = double(float(std::uniform_real_distribution<double>(-2.0, 2.0)(rng())));
            const Extent2d e = output_extent({s.image_width, s.image_height}, {s.kernel_width, s.kernel_height}, mode);
            Halide::Runtime::Buffer<float> out = poisoned_output(e.width, e.height, pad, std::nanf(""));
            run(input, row_taps, col_taps, mode, boundary, fill, flip, out);
            const Reference ref = separable_reference(img, row, col, mode, boundary, fill, flip);
            EXPECT_TRUE(matches_passes(out, ref, row, col, max_abs_sample(img, boundary, fill)));
        }
    }
    EXPECT_EQ(index, 46);
}

// NaN and Inf reach exactly the outputs whose window holds them (their lines are summed
// directly in each pass), and every other output keeps the bound.
TEST_F(CudaSeparableTensorCore, KeepsNonFiniteSamplesInTheirWindows) {
    constexpr int width = 300, height = 200, kw = 41, kh = 77;
    const halide_type_t f32(halide_type_float, 32);
    for (double bad : {std::nan(""), double(INFINITY), -double(INFINITY)}) {
        SCOPED_TRACE(bad);
        Image img;
        std::vector<double> row, col;
        random_buffer(f32, width, height, img);
        Halide::Runtime::Buffer<float> input(width, height);
        const size_t at = size_t(90) * width + 140;
        img.data[at] = bad;
        for (int y = 0; y < height; y++) {
            for (int x = 0; x < width; x++) {
                input(x, y) = float(img.data[size_t(y) * width + x]);
            }
        }
        Image marked = img;
        marked.data[at] = std::nan("");
        Halide::Runtime::Buffer<> row_taps = taps_buffer(f32, kw, false, row);
        Halide::Runtime::Buffer<> col_taps = taps_buffer(f32, kh, false, col);
        Halide::Runtime::Buffer<float> out = poisoned_output(width, height, 0, 12345.0f);
        run(input, row_taps, col_taps, Mode::same, Boundary::reflect, 0.0, false, out);
        const Reference ref = separable_reference(img, row, col, Mode::same, Boundary::reflect, 0.0, false);
        const Reference windows = separable_reference(marked, row, col, Mode::same, Boundary::reflect, 0.0, false);
        Halide::Runtime::Buffer<> finite(f32, width, height);
        Reference want = ref;
        int held = 0;
        for (int y = 0; y < height; y++) {
            for (int x = 0; x < width; x++) {
                const size_t i = size_t(y) * width + x;
                const bool in_window = std::isnan(windows.value.data[i]);
                held += in_window ? 1 : 0;
                if (in_window) {
                    const double got = out(x, y), w = ref.value.data[i];
                    EXPECT_TRUE(std::isnan(w) ? std::isnan(got) : got == w)
                        << x << "," << y << ": " << got << " for " << w;
                }
                store(finite, i, in_window ? 0.0 : double(out(x, y)));
                want.value.data[i] = in_window ? 0.0 : ref.value.data[i];
                want.magnitude.data[i] = in_window ? 0.0 : ref.magnitude.data[i];
            }
        }
        EXPECT_EQ(held, kw * kh);
        EXPECT_TRUE(matches_reference(finite, want, Precision::f32, kw + kh + 12));
    }
}

// The separable entry takes the tensor-core passes from 66 taps together (kw + kh) on outputs
// of 2^22 samples and more (measured: bench/results/h200/separable/crossover-2026-11-29/); a
// refusal names both thresholds.
TEST(SeparableTensorCoreRule, PaysFromSixtySixTapsOnLargeOutputs) {
    internal::Request r;
    r.device = Device::cuda;
    r.precision = Precision::f32;
    const internal::VariantRow row{};
    struct Case {
        int kw, kh, width, height;
        bool pays;
    };
    for (const Case &c :
         {Case{33, 33, 2048, 2048, true}, Case{32, 33, 2048, 2048, false}, Case{33, 33, 2048, 2047, false},
          Case{3, 63, 4096, 4096, true}, Case{193, 1, 8192, 8192, true}, Case{31, 31, 8192, 8192, false},
          Case{33, 33, 1 << 22, 1, true}, Case{99, 99, 0, 0, false}}) {
        r.kernel_width = c.kw;
        r.kernel_height = c.kh;
        r.output_width = c.width;
        r.output_height = c.height;
        const std::string why = internal::limit_separable_tensor_core_pays(r, row);
        EXPECT_EQ(why.empty(), c.pays) << c.kw << "x" << c.kh << " on " << c.width << "x" << c.height;
        if (!c.pays) {
            EXPECT_NE(why.find("pay from 66 taps together (kw + kh) on outputs of 4194304 samples or more"),
                      std::string::npos)
                << why;
        }
    }
}

// Only on images whose rows TMA can copy (a multiple of tensor_core_row_samples samples wide):
// elsewhere they run 1.5-1.8x slower (bench/results/h200/separable/row-copies-2026-11-29/).
// The image's width follows from the output's and the mode; the refusal says why.
TEST(SeparableTensorCoreRule, PaysOnlyOnImagesOfRowsTmaCopies) {
    internal::Request r;
    r.device = Device::cuda;
    r.precision = Precision::f32;
    r.kernel_width = r.kernel_height = 63;
    const internal::VariantRow row{};
    struct Case {
        Mode mode;
        int width;  // the output's; its height 4096
        bool pays;
    };
    for (const Case &c : {Case{Mode::same, 4096, true}, Case{Mode::same, 4094, false}, Case{Mode::same, 4095, false},
                          Case{Mode::valid, 4096 - 62, true}, Case{Mode::valid, 4094 - 62, false},
                          Case{Mode::full, 4096 + 62, true}, Case{Mode::full, 4093 + 62, false}}) {
        r.mode = c.mode;
        r.output_width = c.width;
        r.output_height = 4096;
        const std::string why = internal::limit_separable_tensor_core_pays(r, row);
        EXPECT_EQ(why.empty(), c.pays) << to_string(c.mode) << " " << c.width;
        if (!c.pays) {
            EXPECT_NE(why.find("wide: the tensor-core passes pay where its rows hold a multiple of 4 samples"),
                      std::string::npos)
                << why;
        }
    }
}

// Where an output's window starts off a 16-byte boundary (base mod 4), zero taps lead the
// kernel while it keeps its depth; at a depth's edge the first tile starts early instead.
TEST(SeparableTensorCoreRule, LeadsWithZeroTapsWhereTheDepthHoldsThem) {
    using rk::sep::tensor_core_lead;
    for (int64_t base : {0, 4, -8, 400}) {
        EXPECT_EQ(tensor_core_lead(31, base), 0);
    }
    EXPECT_EQ(tensor_core_lead(31, -15), 1);  // same mode, 31 taps: 32 still take depth 96
    EXPECT_EQ(tensor_core_lead(31, 2), 2);
    EXPECT_EQ(tensor_core_lead(30, -29), 3);
    EXPECT_EQ(tensor_core_lead(31, -29), 0);  // 34 taps would take depth 128
    EXPECT_EQ(tensor_core_lead(33, 1), 0);    // the edge of depth 96
    EXPECT_EQ(tensor_core_lead(157, 3), 3);
    EXPECT_EQ(tensor_core_lead(rk::sep::tensor_core_max_taps, 1), 0);  // no deeper depth
}

// A window of the full-mode output whose start moves the passes' windows through every
// misalignment: lines of 768 outputs (a whole number of the 384- and 256-output tiles of depths
// 96 and 224), kernels that leave room for the lead (31, 157 taps) and kernels at a depth's
// edge (33, 161), so that both ways of aligning the staged samples are taken along both axes.
TEST_F(CudaSeparableTensorCore, AlignsTilesAtEveryOffset) {
    constexpr int side = 768;
    const halide_type_t f32(halide_type_float, 32);
    int index = 0;
    for (const auto &[kw, kh] : {std::pair{31, 33}, std::pair{157, 161}}) {
        for (int m = 0; m < 4; m++) {
            const int n = 3 - m;  // the window's first column and row in the full output
            const auto boundary = Boundary(index++ % 5);
            SCOPED_TRACE("K " + std::to_string(kw) + "x" + std::to_string(kh) + " window at (" + std::to_string(m) +
                         ", " + std::to_string(n) + ") " + to_string(boundary));
            Image img;
            std::vector<double> row, col;
            random_buffer(f32, side + 4 - kw, side + 4 - kh, img);
            Halide::Runtime::Buffer<float> input(img.width, img.height);
            input.for_each_element([&](int x, int y) { input(x, y) = float(img.at(x, y)); });
            Halide::Runtime::Buffer<> row_taps = taps_buffer(f32, kw, false, row);
            Halide::Runtime::Buffer<> col_taps = taps_buffer(f32, kh, false, col);
            const double fill = 0.75;
            Halide::Runtime::Buffer<float> out = poisoned_output(side, side, 0, std::nanf(""));
            out.translate({m, n});
            run(input, row_taps, col_taps, Mode::full, boundary, fill, false, out);
            const Reference full = separable_reference(img, row, col, Mode::full, boundary, fill, false);
            Reference ref{{side, side, {}}, {side, side, {}}};
            for (int y = 0; y < side; y++) {
                for (int x = 0; x < side; x++) {
                    ref.value.data.push_back(full.value.at(m + x, n + y));
                    ref.magnitude.data.push_back(full.magnitude.at(m + x, n + y));
                }
            }
            EXPECT_TRUE(matches_passes(out, ref, row, col, max_abs_sample(img, boundary, fill)));
        }
    }
}

// The separable entry gives the passes outputs of tensor_core_min_outputs samples and more
// from tensor_core_min_taps taps together (f32, sm_90), at every depth, on images whose width
// is a multiple of tensor_core_row_samples, and keeps the sliding pass below either threshold
// and on other widths.
TEST_F(CudaSeparableTensorCore, SeparableEntryTakesThemWhereTheyPay) {
    const halide_type_t f32(halide_type_float, 32);
    constexpr int side = 2048;
    static_assert(int64_t(side) * side == rk::sep::tensor_core_min_outputs);
    const int k = int(rk::sep::tensor_core_min_taps / 2);
    struct Case {
        int width, height, kw, kh;
        bool pays;
    };
    for (const Case &c : {Case{side, side, k, k, true}, Case{side, side, k - 1, k, false},
                          Case{side, side, k, rk::sep::tensor_core_max_taps, true}, Case{side, side - 1, k, k, false},
                          Case{side - 2, side + 3, k, k, false}}) {
        SCOPED_TRACE(std::to_string(c.width) + "x" + std::to_string(c.height) + " K " + std::to_string(c.kw) + "x" +
                     std::to_string(c.kh));
        Image img;
        std::vector<double> row, col;
        Halide::Runtime::Buffer<> input = random_buffer(f32, c.width, c.height, img);
        Halide::Runtime::Buffer<> row_taps = taps_buffer(f32, c.kw, false, row);
        Halide::Runtime::Buffer<> col_taps = taps_buffer(f32, c.kh, false, col);
        Options o;
        o.device = Device::cuda;
        o.boundary = Boundary::mirror;
        Halide::Runtime::Buffer<> out(f32, c.width, c.height);
        poison(out);
        ASSERT_EQ(out.copy_to_device(cuda_device_interface()), 0);
        const Dispatch d = separable_correlate2d(input, row_taps, col_taps, out, o);
        EXPECT_EQ(rk::sep::tensor_core_preferred(c.kw, c.kh, c.width, c.height, c.width), c.pays);
        // The cases refused have under 150 taps together: the sliding pass's (fft_lines' from 150).
        EXPECT_EQ(d.variant, c.pays ? "separable_cuda_tensor_core" : "separable_cuda_sliding");
        ASSERT_EQ(out.copy_to_host(), 0);
        const Reference ref = separable_reference(img, row, col, Mode::same, Boundary::mirror, 0.0, false);
        EXPECT_TRUE(matches_reference(out, ref, Precision::f32, c.kw + c.kh + 12));
    }
}

INSTANTIATE_TEST_SUITE_P(Cuda, CudaSeparable,
                         ::testing::Values(Precision::f64, Precision::f32, Precision::f16, Precision::f16f32),
                         [](const auto &p) { return std::string(to_string(p.param)); });

// The sliding direct pass on CUDA (runtime_kernels/conv2d/): every kernel shape up to its
// 7 x 7 limit (the square odd ones have kernels of their own, the rest run in the 7 x 7
// one with the taps outside skipped), every mode, each boundary, correlation and
// convolution, on images of one sample, of one row or column, narrower than a thread's
// columns, and over several strips (256 or 512 columns) and bands (8 or 24 rows) with
// partial ones at both ends.
class CudaSliding : public ::testing::TestWithParam<Precision> {
protected:
    void SetUp() override {
        if (!cuda_available()) {
            GTEST_SKIP() << "no CUDA device on this machine: GPU variants are tested on a GPU machine";
        }
    }
};

TEST_P(CudaSliding, MatchesFloat64Reference) {
    const Precision precision = GetParam();
    const std::vector<std::pair<int, int>> images = {{1, 1}, {2, 3}, {40, 1}, {1, 40}, {37, 29}, {1030, 70}};
    int index = 0;
    for (int kw = 1; kw <= rk::conv2d::sliding_max_kernel_edge; kw++) {
        for (int kh = 1; kh <= rk::conv2d::sliding_max_kernel_edge; kh++) {
            for (const auto &[w, h] : images) {
                for (Mode mode : {Mode::same, Mode::valid, Mode::full}) {
                    if (mode == Mode::valid && (kw > w || kh > h)) {
                        continue;
                    }
                    const auto boundary = Boundary(index % 5);
                    const bool flip = index % 2 == 1;
                    ++index;
                    SCOPED_TRACE(std::to_string(w) + "x" + std::to_string(h) + " K " + std::to_string(kw) + "x" +
                                 std::to_string(kh) + " " + to_string(mode) + " " + to_string(boundary) +
                                 (flip ? " convolve" : " correlate"));
                    const Dispatch d = run_case(Device::cuda, Algorithm::sliding, precision, {w, h, kw, kh}, mode,
                                                boundary, flip, false);
                    EXPECT_EQ(d.variant, "conv2d_cuda_sliding");
                }
            }
        }
    }
    // Larger images: whole and partial strips and bands, every boundary, the 3 x 3 kernel's
    // two-column threads and the 7 x 7 one's four.
    for (const Shape &s : {Shape{777, 301, 3, 3}, Shape{515, 97, 7, 7}, Shape{300, 203, 5, 2}}) {
        for (Boundary b :
             {Boundary::constant, Boundary::nearest, Boundary::reflect, Boundary::mirror, Boundary::wrap}) {
            SCOPED_TRACE(std::to_string(s.image_width) + "x" + std::to_string(s.image_height) + " " + to_string(b));
            run_case(Device::cuda, Algorithm::sliding, precision, s, Mode::same, b, b == Boundary::mirror, false);
        }
    }
}

// Past 7 x 7 the sliding pass is refused with the registry's reason, and it has no CPU row.
TEST_P(CudaSliding, RefusesLargerKernelsAndTheCpu) {
    const Precision precision = GetParam();
    Image ignore;
    Halide::Runtime::Buffer<> input = random_buffer(storage_type(precision), 40, 30, ignore);
    Halide::Runtime::Buffer<> out(output_type(precision), 40, 30);
    Options o;
    o.algorithm = Algorithm::sliding;
    o.precision = precision;
    o.device = Device::cuda;
    for (const auto &[kw, kh] : {std::pair{8, 3}, std::pair{3, 8}, std::pair{9, 9}}) {
        Halide::Runtime::Buffer<> kernel = random_buffer(storage_type(precision), kw, kh, ignore);
        try {
            correlate2d(input, kernel, out, o);
            ADD_FAILURE() << kw << "x" << kh << " ran";
        } catch (const Error &e) {
            EXPECT_EQ(e.code(), ErrorCode::unsupported);
            EXPECT_NE(std::string(e.what()).find("7 x 7 at most"), std::string::npos) << e.what();
        }
    }
    o.device = Device::cpu;
    Halide::Runtime::Buffer<> kernel = random_buffer(storage_type(precision), 3, 3, ignore);
    EXPECT_THROW(correlate2d(input, kernel, out, o), Error);
}

INSTANTIATE_TEST_SUITE_P(Cuda, CudaSliding,
                         ::testing::Values(Precision::f64, Precision::f32, Precision::f16, Precision::f16f32),
                         [](const auto &p) { return std::string(to_string(p.param)); });

// The sliding pass's limit, as the registry applies it in every build (CPU-only ones too).
TEST(RegistryLimits, SlidingKernel) {
    internal::Request r;
    r.device = Device::cuda;
    r.output_width = r.output_height = 100;
    internal::VariantRow row{};
    row.algorithm = "sliding";
    for (int kw = 1; kw <= 9; kw++) {
        for (int kh = 1; kh <= 9; kh++) {
            r.kernel_width = kw;
            r.kernel_height = kh;
            const std::string refusal = internal::limit_conv2d_sliding_kernel(r, row);
            EXPECT_EQ(refusal.empty(), kw <= 7 && kh <= 7) << kw << "x" << kh << ": " << refusal;
        }
    }
}

// The sliding pass's bands (conv2d_sliding.h): the shape's on grids that fill the device,
// shorter on small ones (never below the minimum), longer only where CUDA's 65535 bands
// along y would not hold the output; every output row in some band.
TEST(SlidingPlan, BandsFillTheDeviceWithinTheGrid) {
    using namespace rk::conv2d;
    constexpr int sms = 132, shape_rows = 8;
    EXPECT_EQ(sliding_band_rows(4096, 8, sms, shape_rows), shape_rows);       // 4096^2, 512-column strips
    EXPECT_EQ(sliding_band_rows(1024, 2 * 64, sms, shape_rows), shape_rows);  // 64 images of 1024^2
    EXPECT_EQ(sliding_band_rows(1024, 2, sms, shape_rows), 2);                // one 1024^2 image
    EXPECT_EQ(sliding_band_rows(3, 1, sms, shape_rows), sliding_min_band_rows);
    for (const int64_t height : {int64_t(1), int64_t(7), int64_t(1000000), int64_t(65535) * 8 + 1, int64_t(1) << 30}) {
        for (const int64_t columns : {int64_t(1), int64_t(16), int64_t(100000)}) {
            const int64_t rows = sliding_band_rows(height, columns, sms, shape_rows);
            EXPECT_GE(rows, 1);
            EXPECT_LE((height + rows - 1) / rows, sliding_max_bands) << height << " rows";
            EXPECT_TRUE(rows <= shape_rows || (height + shape_rows - 1) / shape_rows > sliding_max_bands) << height;
        }
    }
}

// Images whose extents pass CUDA's grid limits (65535 blocks along y and z) on every GPU
// algorithm: 1 x 10^6, 10^6 x 1, 65536 x 2048 and 2048 x 200000, same mode, reflect,
// a rank-1 3 x 3 kernel; 4096 outputs spread over the image (its corners among them)
// against float64 sums. Each image is made and moved to the device once per storage
// type, then filtered by every algorithm (f32 where it takes f32, else f16f32). The
// typed refusals expected: autoscheduled on outputs thinner than its 512-sample tiles
// whose scratch would be too large (1 x 10^6 and 10^6 x 1), and the Halide GPU schedules
// on a row wider than gpu_max_width (geometry.h), which the separable pass still runs.
TEST(CudaGridLimits, TallAndWideImagesOnEveryGpuAlgorithm) {
    if (!cuda_available()) {
        GTEST_SKIP() << "no CUDA device on this machine: GPU variants are tested on a GPU machine";
    }
    const int too_wide = int(gpu_max_width);  // with the 3-wide kernel's halo, one sample too many
    const std::vector<std::pair<int, int>> sizes = {
        {1, 1000000}, {1000000, 1}, {65536, 2048}, {2048, 200000}, {too_wide, 3}};
    for (const auto &[w, h] : sizes) {
        for (const Precision precision : {Precision::f32, Precision::f16f32}) {
            Halide::Runtime::Buffer<> input(storage_type(precision), w, h);
            for (int64_t y = 0; y < h; y++) {
                for (int64_t x = 0; x < w; x++) {
                    store(input, size_t(y) * size_t(w) + size_t(x), hash_sample(x, y));
                }
            }
            ASSERT_EQ(input.copy_to_device(cuda_device_interface()), 0);
            Image ker;
            Halide::Runtime::Buffer<> kernel = random_rank1_kernel(storage_type(precision), 3, 3, ker);
            Halide::Runtime::Buffer<> out(output_type(precision), w, h);
            for (const AlgorithmInfo &info : algorithms()) {
                const auto takes = [&](Precision p) {
                    return std::find(info.precisions.begin(), info.precisions.end(), p) != info.precisions.end();
                };
                if (std::find(info.devices.begin(), info.devices.end(), Device::cuda) == info.devices.end() ||
                    (precision == Precision::f16f32) == takes(Precision::f32) || !takes(precision)) {
                    continue;
                }
                SCOPED_TRACE(std::to_string(w) + "x" + std::to_string(h) + " " + info.name + " " +
                             to_string(precision));
                Options o;
                o.algorithm = info.algorithm;
                o.precision = precision;
                o.mode = Mode::same;
                o.boundary = Boundary::reflect;
                o.device = Device::cuda;
                poison(out);
                try {
                    correlate2d(input, kernel, out, o);
                } catch (const Error &e) {
                    const bool thin = w < autoscheduled_min_extent || h < autoscheduled_min_extent;
                    EXPECT_TRUE(e.code() == ErrorCode::unsupported &&
                                ((info.algorithm == Algorithm::autoscheduled && thin) ||
                                 (w == too_wide && info.algorithm != Algorithm::separable)))
                        << e.what();
                    continue;
                }
                ASSERT_EQ(out.copy_to_host(), 0);
                // Round the samples as stored: f16f32 stores the image in float16.
                const auto stored = [&](int64_t x, int64_t y) {
                    return load(input, size_t(y) * size_t(w) + size_t(x));
                };
                std::uniform_int_distribution<int> px(0, w - 1), py(0, h - 1);
                double worst = 0.0, worst_absolute = 0.0;
                for (int n = 0; n < 4096; n++) {
                    const int x = n < 4 ? (n & 1) * (w - 1) : px(rng()), y = n < 4 ? (n >> 1) * (h - 1) : py(rng());
                    double sum = 0.0, magnitude = 0.0;
                    for (int j = 0; j < 3; j++) {
                        for (int i = 0; i < 3; i++) {
                            const double v = stored(boundary_index(x + i - 1, w, Boundary::reflect),
                                                    boundary_index(y + j - 1, h, Boundary::reflect));
                            sum += ker.at(i, j) * v;
                            magnitude += std::fabs(ker.at(i, j) * v);
                        }
                    }
                    const double got = load(out, size_t(y) * size_t(w) + size_t(x));
                    worst = std::max(worst, std::fabs(got - sum) / std::max(magnitude, 1e-30));
                    worst_absolute =
                        std::max(worst_absolute, std::fabs(got - sum) - output_roundoff(precision) * std::fabs(sum));
                }
                if (info.algorithm == Algorithm::fft) {
                    // The transforms' error spreads over a tile rather than staying within a
                    // window (halconv.h, fft): their documented bound, samples within [-1, 1).
                    Dispatch cuda;
                    cuda.device = Device::cuda;
                    EXPECT_LT(worst_absolute,
                              fft_error_bound(precision, fft_tile_of(cuda, precision, {w, h}, {3, 3}), ker, 1.0));
                } else {
                    // Nine float32 products and sums: a few ulps of the window's magnitude
                    // (float16 products are exact in float32, so f16f32 meets the same bound).
                    EXPECT_LT(worst, 1e-5);
                }
            }
        }
    }
}

}  // namespace
}  // namespace halconv::test
