// Proves that halconv's Halide pipelines and hand-written CUDA share the primary
// context and the caller's stream: a Halide stage consumes a buffer that a long
// runtime-API kernel wrote just before it on a non-blocking stream. With Halide on its
// own context or stream, nothing orders the two and the stage reads the old contents.
#include "HalideRuntimeCuda.h"
#include "cuda_spin_kernel.h"
#include "test_support.h"

#include <cuda_runtime.h>

namespace halconv::test {
namespace {

TEST(CudaInterop, HalideStageSeesRuntimeKernelOutputOnCallerStream) {
    if (!cuda_available()) {
        GTEST_SKIP() << "no CUDA device on this machine: the interop test runs on a GPU machine";
    }
    const int width = 1024, height = 512, n = width * height;
    cudaStream_t stream = nullptr;
    ASSERT_EQ(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking), cudaSuccess);
    float *device_in = nullptr;
    ASSERT_EQ(cudaMalloc(&device_in, n * sizeof(float)), cudaSuccess);
    ASSERT_EQ(cudaMemset(device_in, 0, n * sizeof(float)), cudaSuccess);
    ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);

    // ~100 ms at H100 clocks: far longer than launching the Halide stage takes.
    ASSERT_EQ(launch_spin_then_fill(device_in, n, 200'000'000LL, stream), 0);

    Halide::Runtime::Buffer<float> input(nullptr, width, height);
    ASSERT_EQ(input.device_wrap_native(halide_cuda_device_interface(), reinterpret_cast<uint64_t>(device_in)), 0);
    input.set_device_dirty();
    Halide::Runtime::Buffer<float> kernel(1, 1);
    kernel(0, 0) = 2.0f;
    Halide::Runtime::Buffer<float> out(width, height);
    out.fill(-1.0f);
    Options o;
    o.device = Device::cuda;
    o.algorithm = Algorithm::naive;
    o.stream = stream;
    correlate2d(input, kernel, out, o);
    // Halide's copies run on the legacy default stream, which a non-blocking stream
    // does not wait for: synchronize before reading back (see halconv.h).
    ASSERT_EQ(cudaStreamSynchronize(stream), cudaSuccess);
    ASSERT_EQ(out.copy_to_host(), 0);

    int wrong = 0;
    for (int y = 0; y < height; y++) {
        for (int x = 0; x < width; x++) {
            const int i = y * width + x;
            wrong += out(x, y) != 2.0f * (1.0f + 0.5f * static_cast<float>(i % 97));
        }
    }
    EXPECT_EQ(wrong, 0) << "the Halide stage ran before the runtime-API kernel finished";
    input.device_detach_native();
    cudaFree(device_in);
    cudaStreamDestroy(stream);
}

}  // namespace
}  // namespace halconv::test
