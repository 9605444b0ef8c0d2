// Every algorithm x precision x mode x boundary (x correlate/convolve) against the
// float64 reference, on odd, even, non-square and tiny shapes, on the CPU and, where a
// CUDA device exists, on the GPU.
#include <algorithm>
#include <cmath>
#include <tuple>

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

void run_case(Device device, Algorithm algorithm, Precision precision, const Shape &s, Mode mode, Boundary boundary,
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
        ASSERT_EQ(out.copy_to_device(cuda_device_interface()), 0);
    }
    const Dispatch d = flip ? convolve2d(input, kernel, out, o) : correlate2d(input, kernel, out, o);
    if (device == Device::cuda) {
        ASSERT_EQ(out.copy_to_host(), 0);
    }
    const Reference ref = correlate_reference(img, ker, mode, boundary, o.fill_value, flip);
    const bool factored = d.algorithm == Algorithm::separable;
    double factor_error = 0.0;
    Reference window;
    if (factored) {
        // The stored kernel is rank-1 only within rounding (or, under auto, within
        // rank1_tolerance): bound what the factorization drops.
        Halide::Runtime::Buffer<double, 2> k64(ker.width, ker.height);
        double norm = 0.0;
        for (int j = 0; j < ker.height; j++) {
            for (int i = 0; i < ker.width; i++) {
                k64(i, j) = ker.at(i, j);
                norm += ker.at(i, j) * ker.at(i, j);
            }
        }
        factor_error = rank1_relative_residual(k64) * std::sqrt(norm);
        Image ones = ker;
        std::fill(ones.data.begin(), ones.data.end(), 1.0);
        window = correlate_reference(img, ones, mode, boundary, o.fill_value, flip);
    }
    if (d.algorithm == Algorithm::fft) {
        const int tile = fft_tile_of(d, precision, e, {s.kernel_width, s.kernel_height});
        double max_abs_x = boundary == Boundary::constant ? std::fabs(o.fill_value) : 0.0;
        for (double v : img.data) {
            max_abs_x = std::max(max_abs_x, std::fabs(v));
        }
        EXPECT_TRUE(matches_reference_within(out, ref, precision, fft_error_bound(precision, tile, ker, max_abs_x)));
        return;
    }
    EXPECT_TRUE(matches_reference(out, ref, precision, s.kernel_width * s.kernel_height, factored, factor_error,
                                  &window.magnitude));
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
    const int acc_bytes = precision == Precision::f64 ? 8 : (precision == Precision::f16 ? 2 : 4);
    for (int k : {3, 5, 15, 31, 40, 63}) {
        const bool rank1 = algorithm == Algorithm::separable;
        // Explicit tiled algorithms refuse kernels whose tile plus apron exceed shared
        // memory (ErrorsOnGpu covers that); pure f16 accumulation of more than ~250
        // products has no meaningful error bound (n*u approaches 1).
        if ((algorithm == Algorithm::shared_tiled && !shared_tile_fits(k, k, storage_bytes, 0)) ||
            (algorithm == Algorithm::separable && !shared_tile_fits(k, k, storage_bytes, 32 * acc_bytes)) ||
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

}  // namespace
}  // namespace halconv::test
