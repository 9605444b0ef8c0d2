// Plans applied on CUDA streams of the caller's (CUDA runtime API): several threads with
// their own streams on one plan, and plans dropped while their work is still queued.
#include <cuda_runtime_api.h>
#include <gmock/gmock.h>

#include <cmath>
#include <cstdint>
#include <random>
#include <thread>

#include "common/workspace.h"
#include "cuda_spin_kernel.h"
#include "multichannel/halconv_mc.h"
#include "recursive/recursive_layout.h"
#include "separable/halconv_sep.h"
#include "separable/separable_fft.h"
#include "test_support.h"

namespace halconv::test {
namespace {

class PlanGpuStreams : public ::testing::Test {
protected:
    void SetUp() override {
        if (!cuda_available()) {
            GTEST_SKIP() << "no CUDA device on this machine: GPU plans are tested on a GPU machine (scripts/gpu-check)";
        }
    }
};

// Threads, each with its own non-blocking stream, apply one plan at once; every result
// equals the one-shot call's, and no apply after a stream's first allocates scratch.
TEST_F(PlanGpuStreams, ConcurrentAppliesOnSeveralStreams) {
    for (Algorithm a :
         {Algorithm::im2tensor_fused, Algorithm::im2tensor, Algorithm::shared_tiled, Algorithm::autoscheduled}) {
        for (Mode mode : {Mode::same, Mode::valid}) {
            SCOPED_TRACE(std::string(to_string(a)) + " " + to_string(mode));
            const Precision p = uses_tensor_cores(a) ? Precision::f16f32 : Precision::f32;
            Image ignore;
            Halide::Runtime::Buffer<> kernel = random_buffer(storage_type(p), 19, 13, ignore);
            Options o;
            o.algorithm = a;
            o.precision = p;
            o.mode = mode;
            o.device = Device::cuda;
            o.boundary = Boundary::wrap;
            const Plan plan({300, 200}, kernel, o);
            constexpr int threads = 4, rounds = 5;
            std::vector<Halide::Runtime::Buffer<>> images, expected;
            for (int t = 0; t < threads; t++) {
                images.push_back(random_buffer(storage_type(p), 300, 200, ignore));
                expected.push_back(correlate2d(images.back(), kernel, o));
                expected.back().copy_to_host();
            }
            std::vector<int> mismatches(threads, 0);
            std::vector<uint64_t> allocations(threads, 0);
            std::vector<std::thread> pool;
            for (int t = 0; t < threads; t++) {
                pool.emplace_back([&, t] {
                    cudaStream_t stream = nullptr;
                    cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking);
                    Halide::Runtime::Buffer<> out = plan.allocate_output();
                    out.device_malloc(cuda_device_interface());
                    for (int r = 0; r < rounds; r++) {
                        const uint64_t before = rk::scratch_allocations();
                        plan.apply(images[size_t(t)], out, stream);
                        if (r > 0) {
                            allocations[size_t(t)] += rk::scratch_allocations() - before;
                        }
                        cudaStreamSynchronize(stream);
                        out.copy_to_host();
                        mismatches[size_t(t)] += !same_bits(out, expected[size_t(t)]);
                        out.set_host_dirty(false);
                    }
                    cudaStreamDestroy(stream);
                });
            }
            for (std::thread &th : pool) {
                th.join();
            }
            for (int t = 0; t < threads; t++) {
                EXPECT_EQ(mismatches[size_t(t)], 0) << "thread " << t;
                EXPECT_EQ(allocations[size_t(t)], 0u) << "thread " << t;
            }
        }
    }
}

// A batch (x, y, n) on CUDA: host-resident batches copied in once, device-resident ones
// dealt over the plan's batch streams; every image's result is its own 2D call's, bit for
// bit. A device batch written by a kernel queued just before on the caller's non-blocking
// stream is read after that kernel, and the output is complete once that stream is synchronized.
TEST_F(PlanGpuStreams, BatchesMatchTheirImagesOneByOne) {
    for (Algorithm a : {Algorithm::automatic, Algorithm::shared_tiled, Algorithm::im2tensor_fused}) {
        SCOPED_TRACE(to_string(a));
        const Precision p = uses_tensor_cores(a) ? Precision::f16f32 : Precision::f32;
        Image ignore;
        Halide::Runtime::Buffer<> kernel = random_buffer(storage_type(p), 9, 7, ignore);
        Options o;
        o.algorithm = a;
        o.precision = p;
        o.device = Device::cuda;
        o.boundary = Boundary::mirror;
        constexpr int width = 130, height = 70, n = 9;
        Halide::Runtime::Buffer<> batch(storage_type(p), width, height, n);
        for (size_t i = 0; i < batch.number_of_elements(); i++) {
            store(batch, i, std::sin(double(i) * 0.37));
        }
        batch.set_host_dirty();
        Halide::Runtime::Buffer<> from_host = correlate2d(batch, kernel, o);
        from_host.copy_to_host();
        const Plan plan({width, height}, kernel, o);
        Halide::Runtime::Buffer<> on_device(batch.type(), width, height, n);
        on_device.device_malloc(cuda_device_interface());
        on_device.copy_from(batch);
        on_device.set_host_dirty();
        on_device.copy_to_device(cuda_device_interface());
        Halide::Runtime::Buffer<> out = plan.allocate_output(), batch_out(out.type(), out.width(), out.height(), n);
        batch_out.device_malloc(cuda_device_interface());
        cudaStream_t stream = nullptr;
        ASSERT_EQ(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking), cudaSuccess);
        plan.apply(on_device, batch_out, stream);
        ASSERT_EQ(cudaStreamSynchronize(stream), cudaSuccess);
        batch_out.copy_to_host();
        for (int i = 0; i < n; i++) {
            Halide::Runtime::Buffer<> image = batch.sliced(2, i);
            Halide::Runtime::Buffer<> alone = correlate2d(image, kernel, o);
            alone.copy_to_host();
            EXPECT_TRUE(same_bits(from_host.sliced(2, i), alone)) << "host batch, image " << i;
            EXPECT_TRUE(same_bits(batch_out.sliced(2, i), alone)) << "device batch, image " << i;
        }
        cudaStreamDestroy(stream);
    }
}

// Applies `plan` to `batch` (host- or device-resident; into a poisoned output) and checks that
// each of the images `which` came out as its own 2D apply gives it, bit for bit.
void expect_batch_equals_its_images(const Plan &plan, Halide::Runtime::Buffer<> &batch, const std::vector<int> &which) {
    Halide::Runtime::Buffer<> out = plan.allocate_output(batch.dim(2).extent());
    poison(out);
    out.copy_to_device(cuda_device_interface());
    plan.apply(batch, out);
    out.copy_to_host();
    for (int i : which) {
        Halide::Runtime::Buffer<> image = batch.sliced(2, i);
        Halide::Runtime::Buffer<> alone = plan.allocate_output();
        plan.apply(image, alone);
        alone.copy_to_host();
        EXPECT_TRUE(same_bits(out.sliced(2, i), alone)) << "image " << i;
    }
}

// The batch forms (one pipeline call per group of images: conv2d's CUDA schedules, the
// sliding pass and every tensor-core variant; im2tensor_fused / _atomic in one launch on sm_90): every image of
// a device-resident batch equals its own 2D call bit for bit, for every mode, boundary and
// precision the row has, correlation and convolution, with a NaN and an infinity in later
// images, the batch's outputs poisoned first.
TEST_F(PlanGpuStreams, BatchFormsMatchTheirImagesOneByOne) {
    // 3 x 3 takes conv2d's unrolled code and sliding's 3 x 3 kernel; 11 x 6 conv2d's
    // general code, 6 x 4 sliding's 7 x 7 one.
    const std::vector<std::pair<int, int>> kernels = {{3, 3}, {11, 6}};
    struct Case {
        Algorithm algorithm;
        std::vector<Precision> precisions;
        std::vector<std::pair<int, int>> kernels;
    };
    const std::vector<Case> cases = {
        {Algorithm::naive, {Precision::f64, Precision::f32, Precision::f16f32}, kernels},
        {Algorithm::shared_tiled, {Precision::f64, Precision::f32, Precision::f16, Precision::f16f32}, kernels},
        {Algorithm::sliding, {Precision::f64, Precision::f32, Precision::f16, Precision::f16f32}, {{3, 3}, {6, 4}}},
        {Algorithm::im2tensor, {Precision::f16f32, Precision::f16}, kernels},
        {Algorithm::im2tensor_fused, {Precision::f16f32, Precision::f16, Precision::f32}, kernels},
        {Algorithm::im2tensor_atomic, {Precision::f16f32, Precision::f32}, kernels},
        {Algorithm::diagonal_unroll, {Precision::f16f32}, kernels},
        {Algorithm::diagonal_unroll_m32n8k16, {Precision::f16}, kernels},
    };
    for (const Case &c : cases) {
        for (Precision p : c.precisions) {
            for (const auto &[kw, kh] : c.kernels) {
                for (Mode mode : {Mode::valid, Mode::same, Mode::full}) {
                    for (Boundary b : {Boundary::constant, Boundary::reflect, Boundary::wrap}) {
                        const Operation operation = b == Boundary::reflect ? Operation::convolve : Operation::correlate;
                        SCOPED_TRACE(std::string(to_string(c.algorithm)) + " " + to_string(p) + " " +
                                     std::to_string(kw) + "x" + std::to_string(kh) + " " + to_string(mode) + " " +
                                     to_string(b));
                        Image ignore;
                        Halide::Runtime::Buffer<> kernel = random_buffer(storage_type(p), kw, kh, ignore);
                        Options o;
                        o.algorithm = c.algorithm;
                        o.precision = p;
                        o.mode = mode;
                        o.boundary = b;
                        o.fill_value = 0.25;
                        o.device = Device::cuda;
                        constexpr int width = 77, height = 41, n = 5;
                        const Plan plan({width, height}, kernel, o, operation);
                        Halide::Runtime::Buffer<> batch(storage_type(p), width, height, n);
                        std::uniform_real_distribution<double> dist(-1.0, 1.0);
                        for (size_t i = 0; i < batch.number_of_elements(); i++) {
                            store(batch, i, dist(rng()));
                        }
                        // A NaN and an infinity in later images: the tensor-core kernels
                        // recompute those windows' outputs from the right image.
                        const size_t per_image = size_t(width) * height;
                        store(batch, 3 * per_image + 40 * width + 30, std::nan(""));
                        store(batch, 4 * per_image + 7 * width + 70, HUGE_VAL);
                        batch.set_host_dirty();
                        batch.copy_to_device(cuda_device_interface());
                        expect_batch_equals_its_images(plan, batch, {0, 1, 2, 3, 4});
                    }
                }
            }
        }
    }
}

// Batches beyond one call of a batch form: more images than CUDA's 65535 blocks along z
// (conv2d), and more extended images than one call's scratch budget (tensor cores).
TEST_F(PlanGpuStreams, BatchFormsSplitLargeBatches) {
    struct Case {
        Algorithm algorithm;
        Precision precision;
        int width, height, n, k;
    };
    for (const Case &c : {Case{Algorithm::shared_tiled, Precision::f32, 4, 3, 70000, 3},
                          Case{Algorithm::sliding, Precision::f32, 4, 3, 70000, 3},
                          Case{Algorithm::im2tensor_fused, Precision::f16f32, 1000, 700, 50, 9}}) {
        SCOPED_TRACE(to_string(c.algorithm));
        Image ignore;
        Halide::Runtime::Buffer<> kernel = random_buffer(storage_type(c.precision), c.k, c.k, ignore);
        Options o;
        o.algorithm = c.algorithm;
        o.precision = c.precision;
        o.boundary = Boundary::mirror;
        o.device = Device::cuda;
        const Plan plan({c.width, c.height}, kernel, o);
        Halide::Runtime::Buffer<> batch(storage_type(c.precision), c.width, c.height, c.n);
        for (size_t i = 0; i < batch.number_of_elements(); i++) {
            store(batch, i, std::sin(double(i % 100003) * 0.37));
        }
        batch.set_host_dirty();  // host-resident: the batch is copied to the device whole
        expect_batch_equals_its_images(plan, batch, {0, 1, c.n / 2, c.n - 2, c.n - 1, 65534 % c.n, 65535 % c.n});
    }
}

TEST_F(PlanGpuStreams, BatchesWaitForTheCallersStream) {
    constexpr int width = 256, height = 64, n = 16;
    float *device_in = nullptr;
    ASSERT_EQ(cudaMalloc(&device_in, sizeof(float) * width * height * n), cudaSuccess);
    ASSERT_EQ(cudaMemset(device_in, 0, sizeof(float) * width * height * n), cudaSuccess);
    ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
    cudaStream_t stream = nullptr;
    ASSERT_EQ(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking), cudaSuccess);
    // ~100 ms of spinning on the caller's stream, then the batch's values.
    ASSERT_EQ(launch_spin_then_fill(device_in, width * height * n, 200'000'000LL, stream), 0);
    Halide::Runtime::Buffer<float> input(nullptr, width, height, n);
    ASSERT_EQ(input.device_wrap_native(cuda_device_interface(), reinterpret_cast<uint64_t>(device_in)), 0);
    input.set_device_dirty();
    Halide::Runtime::Buffer<float> kernel(1, 1);
    kernel(0, 0) = 2.0f;
    Halide::Runtime::Buffer<float> out(width, height, n);
    out.device_malloc(cuda_device_interface());
    Options o;
    o.device = Device::cuda;
    o.stream = stream;
    correlate2d(input, kernel, out, o);
    ASSERT_EQ(cudaStreamSynchronize(stream), cudaSuccess);
    out.copy_to_host();
    int wrong = 0;
    for (int i = 0; i < width * height * n; i++) {
        wrong += out.data()[i] != 2.0f * (1.0f + 0.5f * static_cast<float>(i % 97));
    }
    EXPECT_EQ(wrong, 0) << "the batch ran before the caller's kernel finished, or was incomplete at its stream's end";
    input.device_detach_native();
    cudaFree(device_in);
    cudaStreamDestroy(stream);
}

// The origin on CUDA's algorithms (extern stages and Halide schedules): each output the
// full-mode result shifted as on the CPU (test_api.cpp, Origin), within float32's rounding.
TEST_F(PlanGpuStreams, OriginShiftsEveryAlgorithm) {
    Image ignore;
    Halide::Runtime::Buffer<> img = random_buffer(halide_type_of<float>(), 301, 157, ignore);
    Halide::Runtime::Buffer<> k = random_buffer(halide_type_of<float>(), 9, 6, ignore);
    Halide::Runtime::Buffer<> rank1 = random_rank1_kernel(halide_type_of<float>(), 9, 6, ignore);
    for (Operation operation : {Operation::correlate, Operation::convolve}) {
        for (Algorithm a : {Algorithm::shared_tiled, Algorithm::im2tensor_fused, Algorithm::fft, Algorithm::separable,
                            Algorithm::naive}) {
            Halide::Runtime::Buffer<> &kernel = a == Algorithm::separable ? rank1 : k;
            Options full;
            full.device = Device::cpu;
            full.mode = Mode::full;
            full.boundary = Boundary::nearest;
            full.algorithm = Algorithm::naive;
            Halide::Runtime::Buffer<float> f(Plan({301, 157}, kernel, full, operation).apply(img));
            const bool flip = operation == Operation::convolve;
            const int cx = flip ? 9 / 2 : 8 / 2, cy = flip ? 6 / 2 : 5 / 2;
            for (auto [ox, oy] : {std::pair{-cx, 5 - cy}, std::pair{8 - cx, -cy}, std::pair{1, -1}}) {
                SCOPED_TRACE(std::string(to_string(operation)) + " " + to_string(a) + " origin " + std::to_string(ox) +
                             "," + std::to_string(oy));
                Options o = full;
                o.device = Device::cuda;
                o.mode = Mode::same;
                o.algorithm = a;
                o.origin_x = ox;
                o.origin_y = oy;
                Halide::Runtime::Buffer<> got = Plan({301, 157}, kernel, o, operation).apply(img);
                got.copy_to_host();
                const Halide::Runtime::Buffer<float> out(got);
                double worst = 0.0;
                out.for_each_element([&](int x, int y) {
                    worst = std::max(worst, std::abs(double(out(x, y)) - f(x + 8 - cx - ox, y + 5 - cy - oy)));
                });
                EXPECT_LT(worst, 2e-4);
            }
        }
    }
}

// A plan dropped while its work is queued frees its memory after that work: results
// stay right when plans come and go on a busy stream.
TEST_F(PlanGpuStreams, ShortLivedPlansOnOneStream) {
    Image img, ker;
    Halide::Runtime::Buffer<> image = random_buffer(storage_type(Precision::f16), 257, 131, img);
    Halide::Runtime::Buffer<> out(halide_type_of<float>(), 257, 131);
    cudaStream_t stream = nullptr;
    cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking);
    Options o;
    o.algorithm = Algorithm::im2tensor_fused;
    o.precision = Precision::f16f32;
    o.device = Device::cuda;
    o.stream = stream;
    for (int i = 0; i < 6; i++) {
        Halide::Runtime::Buffer<> kernel = random_buffer(storage_type(Precision::f16), 9 + 2 * i, 7, ker);
        poison(out);
        out.copy_to_device(cuda_device_interface());
        correlate2d(image, kernel, out, o);  // a one-shot plan: made, applied, dropped
        cudaStreamSynchronize(stream);
        out.copy_to_host();
        const Reference ref = correlate_reference(img, ker, Mode::same, Boundary::constant, 0.0, false);
        for (size_t j = 0; j < ref.value.data.size(); j++) {
            ASSERT_NEAR(load(out, j), ref.value.data[j], (ker.width * ker.height + 4) * 0x1p-23 * ref.magnitude.data[j])
                << "kernel " << i << " sample " << j;
        }
    }
    cudaStreamDestroy(stream);
}

// Applies `plan` three times into `out` on the device; the scratch allocations of the
// applies after the first (none when the plan's workspace holds what its stages take).
uint64_t scratch_allocated_after_first_apply(const Plan &plan, Halide::Runtime::Buffer<> &image,
                                             Halide::Runtime::Buffer<> &out) {
    out.device_malloc(cuda_device_interface());
    uint64_t allocated = 0;
    for (int r = 0; r < 3; r++) {
        const uint64_t before = rk::scratch_allocations();
        plan.apply(image, out);
        allocated += r > 0 ? rk::scratch_allocations() - before : 0;
    }
    EXPECT_EQ(cudaDeviceSynchronize(), cudaSuccess);
    return allocated;
}

// The recursive Gaussian's plan holds the scratch its stage takes on this device: none
// where both axes go by whole lines (a 300 x 200 float32 image, one block per line on
// any device this builds for), the transposed image and the segments' states where an
// axis goes by segments (lines past 8192 samples). Applies after the first allocate
// nothing and give the one-shot call's bits.
TEST_F(PlanGpuStreams, RecursiveGaussianRunsInThePlansWorkspace) {
    for (const Extent2d e : {Extent2d{300, 200}, Extent2d{9000, 3}, Extent2d{3, 9000}}) {
        for (Precision p : {Precision::f32, Precision::f64, Precision::f16f32}) {
            SCOPED_TRACE(::testing::Message() << e.width << "x" << e.height << " " << to_string(p));
            Image img;
            Halide::Runtime::Buffer<> image = random_buffer(storage_type(p), e.width, e.height, img);
            Options o;
            o.device = Device::cuda;
            o.precision = p;
            o.boundary = Boundary::reflect;
            const Plan plan = Plan::gaussian(e, 4.0, o, GaussianMethod::recursive);
            const size_t by_segments = rk::rg::workspace_bytes(e.width, e.height, p == Precision::f64 ? 8 : 4);
            if (e.width <= 1024 && e.height <= 1024 && p != Precision::f64) {
                EXPECT_EQ(plan.workspace_bytes(), 0u);
            } else if (e.width > 8192 || e.height > 8192) {
                EXPECT_GE(plan.workspace_bytes(), by_segments);
            }
            Halide::Runtime::Buffer<> out = plan.allocate_output();
            EXPECT_EQ(scratch_allocated_after_first_apply(plan, image, out), 0u);
            Halide::Runtime::Buffer<> want = plan.allocate_output();
            gaussian_blur(image, want, 4.0, o, GaussianMethod::recursive);
            want.copy_to_host();
            out.copy_to_host();
            EXPECT_TRUE(same_bits(out, want));
        }
    }
}

// The separable algorithm's fft_lines pass (long kernels: fft_lines_preferred)
// runs in its plan's workspace: its intermediate, sized by fft_lines_layout, beside the
// spectra and tables the plan prepared once, so applies after the first allocate nothing
// and give the one-shot call's bits (whose plan prepared its own), in every mode;
// a device-resident batch, its images dealt over the plan's streams each with a workspace
// of its own, gives each image's own apply.
TEST_F(PlanGpuStreams, SeparableFftLinesRunsInThePlansWorkspace) {
    for (Precision p : {Precision::f32, Precision::f16f32}) {
        Image img, taps;
        Halide::Runtime::Buffer<> image = random_buffer(storage_type(p), 301, 203, img);
        Halide::Runtime::Buffer<> row = random_buffer(storage_type(p), 9, 1, taps);
        Halide::Runtime::Buffer<> col = random_buffer(storage_type(p), 301, 1, taps);
        Halide::Runtime::Buffer<> row_taps = row.sliced(1, 0), col_taps = col.sliced(1, 0);
        for (Mode mode : {Mode::same, Mode::full}) {
            SCOPED_TRACE(::testing::Message() << to_string(p) << " " << to_string(mode));
            Options o;
            o.precision = p;
            o.device = Device::cuda;
            o.mode = mode;
            o.boundary = Boundary::mirror;
            const Plan plan = Plan::separable({301, 203}, row_taps, col_taps, o);
            EXPECT_EQ(plan.dispatch().variant, "separable_cuda_fft_lines");
            const Extent2d e = output_extent({301, 203}, {9, 301}, mode);
            EXPECT_GE(plan.workspace_bytes(), rk::sep::fft_lines_layout(e.width, e.height, 203, 9, 301).total_bytes);
            Halide::Runtime::Buffer<> out = plan.allocate_output();
            EXPECT_EQ(scratch_allocated_after_first_apply(plan, image, out), 0u);
            Halide::Runtime::Buffer<> want = plan.allocate_output();
            separable_correlate2d(image, row_taps, col_taps, want, o);
            want.copy_to_host();
            out.copy_to_host();
            EXPECT_TRUE(same_bits(out, want));
        }
        Options o;
        o.precision = p;
        o.device = Device::cuda;
        const Plan plan = Plan::separable({301, 203}, row_taps, col_taps, o);
        Halide::Runtime::Buffer<> batch(storage_type(p), 301, 203, 4);
        std::uniform_real_distribution<double> dist(-1.0, 1.0);
        for (size_t i = 0; i < batch.number_of_elements(); i++) {
            store(batch, i, dist(rng()));
        }
        batch.set_host_dirty();
        batch.copy_to_device(cuda_device_interface());
        expect_batch_equals_its_images(plan, batch, {0, 1, 2, 3});
    }
}

// A call of the fft_lines stage takes installed tables only where they are its own. Tables
// of 9 x 301 taps (correlation, fill 0) for a 301 x 203 output, installed with a workspace
// that holds just the intermediate: the call they were made for allocates nothing; calls
// of convolution, of another fill, of another column kernel length or of float16 samples
// compute tables of their own (the workspace too small for them: an allocation). Each
// gives the bits of the same call with nothing installed.
TEST_F(PlanGpuStreams, FftLinesCallsTakeOnlyTheirOwnTables) {
    Image img, taps;
    constexpr int w = 301, h = 203, kw = 9;
    Halide::Runtime::Buffer<> image = random_buffer(storage_type(Precision::f32), w, h, img);
    Halide::Runtime::Buffer<> image16 = random_buffer(storage_type(Precision::f16f32), w, h, img);
    Halide::Runtime::Buffer<> row = random_buffer(storage_type(Precision::f32), kw, 1, taps).sliced(1, 0);
    Halide::Runtime::Buffer<> row16 = random_buffer(storage_type(Precision::f16f32), kw, 1, taps).sliced(1, 0);
    Halide::Runtime::Buffer<> col16 = random_buffer(storage_type(Precision::f16f32), 301, 1, taps).sliced(1, 0);
    Halide::Runtime::Buffer<> cols[2] = {random_buffer(storage_type(Precision::f32), 301, 1, taps).sliced(1, 0),
                                         random_buffer(storage_type(Precision::f32), 299, 1, taps).sliced(1, 0)};
    for (Halide::Runtime::Buffer<> *b : {&image, &image16, &row, &row16, &col16, &cols[0], &cols[1]}) {
        b->set_host_dirty();
        ASSERT_EQ(b->copy_to_device(cuda_device_interface()), 0);
    }
    void *tables_memory = nullptr, *intermediate = nullptr;
    ASSERT_EQ(cudaMalloc(&tables_memory, rk::sep::fft_lines_tables_bytes(kw, 301, w, h)), cudaSuccess);
    const rk::sep::FftLinesTables tables =
        rk::sep::prepare_fft_lines(4, reinterpret_cast<const void *>(row.raw_buffer()->device),
                                   reinterpret_cast<const void *>(cols[0].raw_buffer()->device), kw, 301, false, 0.0, w,
                                   h, tables_memory, nullptr);
    const size_t intermediate_bytes = rk::sep::fft_lines_layout(w, h, h, kw, 301).tables_offset;
    ASSERT_EQ(cudaMalloc(&intermediate, intermediate_bytes), cudaSuccess);
    ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
    struct Call {
        int col;
        bool flip, f16;
        double fill;
        Boundary boundary;
        bool own;  // the installed tables are this call's
    };
    for (const Call &c :
         {Call{0, false, false, 0.0, Boundary::reflect, true}, Call{0, false, false, 0.0, Boundary::constant, true},
          Call{0, true, false, 0.0, Boundary::reflect, false}, Call{0, false, false, 0.5, Boundary::constant, false},
          Call{1, false, false, 0.0, Boundary::reflect, false}, Call{0, false, true, 0.0, Boundary::reflect, false}}) {
        SCOPED_TRACE(::testing::Message() << "column taps " << cols[c.col].dim(0).extent() << " flip " << c.flip
                                          << " f16 " << c.f16 << " fill " << c.fill << " " << to_string(c.boundary));
        Halide::Runtime::Buffer<> &col = c.f16 ? col16 : cols[c.col];
        const int kh = col.dim(0).extent();
        const auto call = [&](Halide::Runtime::Buffer<> &out) {
            out.device_malloc(cuda_device_interface());
            return c.f16 ? halconv_sep_fft_lines_f16f32(image16.raw_buffer(), row16.raw_buffer(), col.raw_buffer(),
                                                        int32_t(c.boundary), c.fill, kw / 2, kh / 2, c.flip,
                                                        out.raw_buffer())
                         : halconv_sep_fft_lines_f32(image.raw_buffer(), row.raw_buffer(), col.raw_buffer(),
                                                     int32_t(c.boundary), c.fill, kw / 2, kh / 2, c.flip,
                                                     out.raw_buffer());
        };
        Halide::Runtime::Buffer<> want(halide_type_of<float>(), w, h), got(halide_type_of<float>(), w, h);
        ASSERT_EQ(call(want), 0);
        uint64_t allocated = 0;
        {
            rk::WorkspaceScope scope({intermediate, intermediate_bytes, nullptr, &tables});
            const uint64_t before = rk::scratch_allocations();
            ASSERT_EQ(call(got), 0);
            allocated = rk::scratch_allocations() - before;
        }
        EXPECT_EQ(allocated == 0, c.own) << allocated << " allocations";
        want.set_device_dirty();
        got.set_device_dirty();
        want.copy_to_host();
        got.copy_to_host();
        EXPECT_TRUE(same_bits(got, want));
    }
    EXPECT_EQ(cudaDeviceSynchronize(), cudaSuccess);
    cudaFree(tables_memory);
    cudaFree(intermediate);
}

// f32 on tensor cores takes the most scratch of any stage (on Hopper the split image's
// planes, 4 bytes a sample): a plan's queried workspace holds it, so applies after the
// first allocate nothing, in every mode (valid reads the caller's image, same and full the
// plan's extended one), for kernels below and from 7 x 7 taps (the two split schemes).
TEST_F(PlanGpuStreams, F32TensorCoreStagesRunInThePlansWorkspace) {
    Image img, ker;
    Halide::Runtime::Buffer<> image = random_buffer(storage_type(Precision::f32), 301, 203, img);
    for (const auto &[kw, kh] : {std::pair{5, 3}, {9, 9}, {31, 17}}) {
        Halide::Runtime::Buffer<> kernel = random_buffer(storage_type(Precision::f32), kw, kh, ker);
        for (Mode mode : {Mode::valid, Mode::same, Mode::full}) {
            SCOPED_TRACE(::testing::Message() << kw << "x" << kh << " " << to_string(mode));
            Options o;
            o.algorithm = Algorithm::im2tensor_fused;
            o.precision = Precision::f32;
            o.device = Device::cuda;
            o.mode = mode;
            const Plan plan({image.dim(0).extent(), image.dim(1).extent()}, kernel, o);
            Halide::Runtime::Buffer<> out = plan.allocate_output();
            EXPECT_EQ(scratch_allocated_after_first_apply(plan, image, out), 0u);
            Halide::Runtime::Buffer<> want = correlate2d(image, kernel, o);
            want.copy_to_host();
            out.copy_to_host();
            EXPECT_TRUE(same_bits(out, want));
        }
    }
}

// Row bands on CUDA (Banding::always with host-resident buffers): every mode and
// boundary on odd shapes, bands of one row and kernels taller than a band, pageable and
// pinned buffers, one device and every visible one: bit for bit the one-shot call's for
// the deterministic algorithms, within the FFT's bound for fft (the bands' tiles differ).
TEST_F(PlanGpuStreams, BandsMatchTheOneShotCall) {
    int devices = 0;
    cudaGetDeviceCount(&devices);
    struct Case {
        Algorithm algorithm;
        Precision precision;
        int width, height, kw, kh, rows;
    };
    const Case cases[] = {{Algorithm::shared_tiled, Precision::f32, 301, 157, 7, 9, 13},
                          {Algorithm::naive, Precision::f64, 45, 30, 3, 11, 1},
                          {Algorithm::im2tensor_fused, Precision::f16f32, 203, 99, 17, 31, 8},
                          {Algorithm::separable, Precision::f32, 130, 71, 5, 5, 10},
                          {Algorithm::fft, Precision::f64, 260, 140, 21, 17, 40}};
    for (const Case &c : cases) {
        for (Mode mode : {Mode::valid, Mode::same, Mode::full}) {
            for (Boundary b :
                 {Boundary::constant, Boundary::nearest, Boundary::reflect, Boundary::mirror, Boundary::wrap}) {
                for (bool pinned : {false, true}) {
                    SCOPED_TRACE(::testing::Message() << to_string(c.algorithm) << " " << to_string(mode) << " "
                                                      << to_string(b) << (pinned ? " pinned" : " pageable"));
                    const Precision p = c.precision;
                    Image kernel_exact, image_exact;
                    Halide::Runtime::Buffer<> kernel =
                        c.algorithm == Algorithm::separable
                            ? random_rank1_kernel(storage_type(p), c.kw, c.kh, kernel_exact)
                            : random_buffer(storage_type(p), c.kw, c.kh, kernel_exact);
                    Halide::Runtime::Buffer<> image = random_buffer(storage_type(p), c.width, c.height, image_exact);
                    Options o;
                    o.algorithm = c.algorithm;
                    o.precision = p;
                    o.mode = mode;
                    o.boundary = b;
                    o.fill_value = 0.25;
                    o.device = Device::cuda;
                    o.bands.banding = Banding::never;
                    const Plan whole({c.width, c.height}, kernel, o);
                    // On a copy: the one-shot call leaves its image on the device too,
                    // and only host-resident images run in bands.
                    Halide::Runtime::Buffer<> image_copy = image.copy();
                    Halide::Runtime::Buffer<> want = whole.apply(image_copy);
                    want.copy_to_host();
                    o.bands.banding = Banding::always;
                    o.bands.band_rows = c.rows;
                    o.bands.streams_per_device = 3;
                    for (int d = 0; d <= (devices > 1 ? 1 : 0); d++) {
                        o.bands.devices = d == 0 ? std::vector<int>{0} : std::vector<int>{};
                        const Plan banded({c.width, c.height}, kernel, o);
                        Halide::Runtime::Buffer<> got = banded.allocate_output();
                        poison(got);
                        got.set_host_dirty(false);
                        if (pinned) {
                            cudaHostRegister(image.data(), image.size_in_bytes(), cudaHostRegisterDefault);
                            cudaHostRegister(got.data(), got.size_in_bytes(), cudaHostRegisterDefault);
                        }
                        banded.apply(image, got);
                        if (pinned) {
                            cudaHostUnregister(image.data());
                            cudaHostUnregister(got.data());
                        }
                        EXPECT_EQ(got.raw_buffer()->device, 0u) << "the output stays on the host";
                        if (c.algorithm == Algorithm::fft) {
                            const Extent2d out = banded.output_extent();
                            const rk::FftTiling t =
                                rk::fft_tiling(out.width, c.rows, c.kw, c.kh, static_cast<rk::FftPrecision>(p));
                            const Reference ref = correlate_reference(image_exact, kernel_exact, mode, b, 0.25, false);
                            EXPECT_TRUE(matches_reference_within(
                                got, ref, p, fft_error_bound(p, std::max(t.tile_x, t.tile_y), kernel_exact, 1.0)))
                                << (d == 0 ? "device 0" : "every device");
                        } else {
                            EXPECT_TRUE(same_bits(got, want)) << (d == 0 ? "device 0" : "every device");
                        }
                    }
                }
            }
        }
    }
}

// Device-resident image and output with Banding::always: the bands read and write the
// plan's device's memory by device-to-device (one GPU) or peer (several) copies; bit for
// bit the one-shot call's, the output left device-dirty.
TEST_F(PlanGpuStreams, DeviceResidentBandsMatchTheOneShotCall) {
    int devices = 0;
    cudaGetDeviceCount(&devices);
    for (Algorithm a : {Algorithm::shared_tiled, Algorithm::im2tensor_fused}) {
        for (Boundary b : {Boundary::constant, Boundary::reflect, Boundary::wrap}) {
            for (Mode mode : {Mode::same, Mode::full}) {
                SCOPED_TRACE(std::string(to_string(a)) + " " + to_string(b) + " " + to_string(mode));
                const Precision p = uses_tensor_cores(a) ? Precision::f16f32 : Precision::f32;
                Image ignore;
                Halide::Runtime::Buffer<> kernel = random_buffer(storage_type(p), 9, 13, ignore);
                Halide::Runtime::Buffer<> image = random_buffer(storage_type(p), 333, 241, ignore);
                image.copy_to_device(cuda_device_interface());
                Options o;
                o.algorithm = a;
                o.precision = p;
                o.mode = mode;
                o.boundary = b;
                o.fill_value = -1.5;
                o.device = Device::cuda;
                Halide::Runtime::Buffer<> want = Plan({333, 241}, kernel, o).apply(image);
                want.copy_to_host();
                poison(image);  // the host copy is stale: the bands must read the device's
                image.set_host_dirty(false);
                o.bands.banding = Banding::always;
                o.bands.band_rows = 17;
                for (int d = 0; d <= (devices > 1 ? 1 : 0); d++) {
                    o.bands.devices = d == 0 ? std::vector<int>{0} : std::vector<int>{};
                    const Plan banded({333, 241}, kernel, o);
                    Halide::Runtime::Buffer<> got = banded.allocate_output();
                    poison(got);
                    got.copy_to_device(cuda_device_interface());  // NaN on both sides
                    banded.apply(image, got);
                    EXPECT_TRUE(got.device_dirty());
                    got.copy_to_host();
                    EXPECT_TRUE(same_bits(got, want)) << (d == 0 ? "device 0" : "every device");
                }
            }
        }
    }
}

// Banding::automatic as a user meets it: with the device nearly full, a call whose image
// and output do not fit runs in bands and gives the one-shot call's bits, where
// Banding::never fails for want of memory.
TEST_F(PlanGpuStreams, AutomaticBandsWhenTheDeviceIsFull) {
    Image ignore;
    Halide::Runtime::Buffer<> kernel = random_buffer(storage_type(Precision::f32), 5, 3, ignore);
    Halide::Runtime::Buffer<> image = random_buffer(storage_type(Precision::f32), 4096, 8192, ignore);  // 128 MiB
    Options o;
    o.algorithm = Algorithm::shared_tiled;
    o.device = Device::cuda;
    o.boundary = Boundary::mirror;
    o.bands.band_rows = 256;
    o.bands.streams_per_device = 2;
    o.bands.devices = {0};
    Halide::Runtime::Buffer<> copy = image.copy();
    Halide::Runtime::Buffer<> want = Plan({4096, 8192}, kernel, o).apply(copy);
    want.copy_to_host();
    copy.device_free();
    want.device_free();

    const Plan plan({4096, 8192}, kernel, o);
    // Memory freed stream-ordered goes back to the device once the pool is trimmed, and
    // buffers Halide freed stay in its allocation cache until released.
    cudaDeviceSynchronize();
    halide_reuse_device_allocations(nullptr, false);  // releases the cache
    halide_reuse_device_allocations(nullptr, true);
    cudaMemPool_t pool = nullptr;
    cudaDeviceGetDefaultMemPool(&pool, 0);
    cudaMemPoolTrimTo(pool, 0);
    size_t free = 0, total = 0;
    ASSERT_EQ(cudaMemGetInfo(&free, &total), cudaSuccess);
    constexpr size_t keep = size_t(192) << 20;  // less than image + output (256 MiB)
    void *hog = nullptr;
    ASSERT_EQ(cudaMalloc(&hog, free - keep), cudaSuccess);
    Halide::Runtime::Buffer<> got = plan.allocate_output();
    poison(got);
    got.set_host_dirty(false);
    EXPECT_NO_THROW(plan.apply(image, got));
    EXPECT_EQ(got.raw_buffer()->device, 0u) << "banded: the output stays on the host";
    EXPECT_TRUE(same_bits(got, want));

    Options whole = o;
    whole.bands.banding = Banding::never;
    Halide::Runtime::Buffer<> again = plan.allocate_output();
    EXPECT_THROW(Plan({4096, 8192}, kernel, whole).apply(image, again), Error);
    image.device_free();
    again.device_free();
    cudaFree(hog);
}

// A device-resident image beyond the one-shot pipelines' 2^31 - 1 elements (65536 x 33000
// f16, 4.3 GB; f32 output) as a user meets it: the default Banding::automatic runs it in
// bands over the visible GPUs, Banding::never refuses it. Integer samples and taps, so
// every sum is exact in f32: 64 outputs (corners, edges, band seams) against the sums.
TEST_F(PlanGpuStreams, DeviceResidentImagesBeyondTheOneShotLimitRunInBands) {
    constexpr int w = 65536, h = 33000;
    size_t free = 0, total = 0;
    ASSERT_EQ(cudaMemGetInfo(&free, &total), cudaSuccess);
    if (free < (size_t(14) << 30)) {
        GTEST_SKIP() << "needs 14 GiB of free device memory, " << (free >> 20) << " MiB free";
    }
    const Precision p = Precision::f16f32;
    const auto half_of = [](int v) {  // small integers in float16
        static constexpr uint16_t bits[] = {0xC000, 0xBC00, 0x0000, 0x3C00, 0x4000};
        return bits[v + 2];
    };
    const auto sample = [](int64_t i) { return int((uint64_t(i) * 0x9E3779B97F4A7C15ull >> 61) % 5) - 2; };
    Halide::Runtime::Buffer<> image(storage_type(p), w, h);
    auto *pixels = static_cast<uint16_t *>(image.data());
    for (int64_t i = 0; i < int64_t(w) * h; i++) {
        pixels[i] = half_of(sample(i));
    }
    const int taps[9] = {1, -2, 0, 2, 1, -1, 0, 1, 2};
    Halide::Runtime::Buffer<> kernel(storage_type(p), 3, 3);
    for (int i = 0; i < 9; i++) {
        static_cast<uint16_t *>(kernel.data())[i] = half_of(taps[i]);
    }
    image.set_host_dirty();
    image.copy_to_device(cuda_device_interface());
    Options o;
    o.algorithm = Algorithm::shared_tiled;
    o.precision = p;
    o.device = Device::cuda;
    o.boundary = Boundary::reflect;
    const Plan plan({w, h}, kernel, o);
    Halide::Runtime::Buffer<> out = plan.allocate_output();
    out.device_malloc(cuda_device_interface());
    ASSERT_NO_THROW(plan.apply(image, out));
    EXPECT_TRUE(out.device_dirty());
    for (int s = 0; s < 64; s++) {
        const int x = s < 8 ? (s % 2 ? w - 1 : 0) : int((uint64_t(s) * 7919 + 13) % w);
        const int y = s < 8 ? (s < 4 ? s / 2 : h - 1 - (s - 4) / 2) : int((uint64_t(s) * 104729 + 7) % h);
        int64_t want = 0;
        for (int j = 0; j < 3; j++) {
            for (int i = 0; i < 3; i++) {
                const int64_t xx = boundary_index(x + i - 1, w, Boundary::reflect);
                const int64_t yy = boundary_index(y + j - 1, h, Boundary::reflect);
                want += taps[j * 3 + i] * sample(yy * w + xx);
            }
        }
        float got = 0.0f;
        ASSERT_EQ(cudaMemcpy(&got, reinterpret_cast<const float *>(out.raw_buffer()->device) + int64_t(y) * w + x,
                             sizeof(float), cudaMemcpyDeviceToHost),
                  cudaSuccess);
        EXPECT_EQ(got, float(want)) << "output (" << x << ", " << y << ")";
    }
    Options whole = o;
    whole.bands.banding = Banding::never;
    try {
        Plan({w, h}, kernel, whole).apply(image, out);
        ADD_FAILURE() << "a one-shot call of " << int64_t(w) * h << " samples ran";
    } catch (const Error &e) {
        EXPECT_EQ(e.code(), ErrorCode::unsupported) << e.what();
    }
}

// The multichannel GEMM stages take all their scratch (column buffer, packed kernels,
// cuBLAS's tile, the aligned image copy) from a workspace of the size
// halconv_mc_workspace_bytes reports, allocate nothing then, and compute the same bits.
TEST_F(PlanGpuStreams, MultichannelStagesRunInTheQueriedWorkspace) {
    struct Shape {
        int channels, filters, k, width, height;
    };
    // sm80 dense (C <= 8), chunked, the wgmma kernel (C > 8, more than 32 filters), 1x1.
    const Shape shapes[] = {{3, 16, 3, 67, 45}, {16, 8, 5, 41, 29}, {64, 64, 3, 70, 33}, {20, 40, 1, 129, 5}};
    const std::pair<MultichannelAlgorithm, Precision> runs[] = {
        {MultichannelAlgorithm::implicit_gemm, Precision::f16f32},
        {MultichannelAlgorithm::implicit_gemm, Precision::f16},
        {MultichannelAlgorithm::im2col, Precision::f16f32},
        {MultichannelAlgorithm::im2col, Precision::f32}};
    for (const auto &[algorithm, precision] : runs) {
        for (const Shape &sh : shapes) {
            SCOPED_TRACE(std::string(to_string(algorithm)) + " " + to_string(precision) + " C " +
                         std::to_string(sh.channels) + " N " + std::to_string(sh.filters) + " K " +
                         std::to_string(sh.k));
            Halide::Runtime::Buffer<> image(storage_type(precision), sh.channels, sh.width, sh.height);
            Halide::Runtime::Buffer<> kernels(storage_type(precision), sh.channels, sh.k, sh.k, sh.filters);
            for (Halide::Runtime::Buffer<> *b : {&image, &kernels}) {
                std::uniform_real_distribution<double> dist(-1.0, 1.0);
                for (size_t i = 0; i < b->number_of_elements(); i++) {
                    store(*b, i, dist(rng()));
                }
            }
            MultichannelOptions o;
            o.algorithm = algorithm;
            o.precision = precision;
            o.device = Device::cuda;
            o.mode = Mode::valid;
            const int ow = sh.width - sh.k + 1, oh = sh.height - sh.k + 1;
            Halide::Runtime::Buffer<> want = multichannel_correlate2d(image, kernels, o);
            want.copy_to_host();

            const size_t bytes = halconv_mc_workspace_bytes(to_string(algorithm), to_string(precision), sh.channels,
                                                            sh.k, sh.k, sh.filters, ow, oh);
            ASSERT_GT(bytes, 0u);
            ASSERT_NE(bytes, SIZE_MAX);
            void *data = nullptr;
            ASSERT_EQ(cudaMalloc(&data, bytes), cudaSuccess);
            Halide::Runtime::Buffer<> got(output_type(precision), sh.filters, ow, oh);
            poison(got);
            uint64_t allocated = 0;
            {
                rk::WorkspaceScope scope({data, bytes, nullptr});
                const uint64_t before = rk::scratch_allocations();
                multichannel_correlate2d(image, kernels, got, o);
                allocated = rk::scratch_allocations() - before;
            }
            got.copy_to_host();
            EXPECT_EQ(allocated, 0u) << bytes << " bytes were not enough";
            EXPECT_TRUE(same_bits(got, want));
            // A workspace too small for the packed kernels: the stage allocates the rest.
            {
                rk::WorkspaceScope scope({data, 256, nullptr});
                const uint64_t before = rk::scratch_allocations();
                multichannel_correlate2d(image, kernels, got, o);
                EXPECT_GT(rk::scratch_allocations() - before, 0u);
            }
            cudaFree(data);
        }
    }
    EXPECT_EQ(halconv_mc_workspace_bytes("implicit", "f16", 8, 3, 3, 8, 16, 16), SIZE_MAX);
    EXPECT_EQ(halconv_mc_workspace_bytes("implicit_gemm", "f32", 8, 3, 3, 8, 16, 16), SIZE_MAX);
}

}  // namespace
}  // namespace halconv::test
