// Plans applied on CUDA streams of the caller's (CUDA runtime API): several threads with
// their own streams on one plan, and plans dropped while their work is still queued.
#include <cuda_runtime_api.h>
#include <gmock/gmock.h>

#include <thread>

#include "test_support.h"
#include "workspace.h"

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

}  // namespace
}  // namespace halconv::test
