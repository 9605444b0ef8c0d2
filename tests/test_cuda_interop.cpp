// Proves that halconv's Halide pipelines and hand-written CUDA share the primary
// context and the caller's stream: a Halide stage consumes a buffer that a long
// runtime-API kernel wrote just before it on a non-blocking stream. With Halide on its
// own context or stream, nothing orders the two and the stage reads the old contents.
#include <cuda_runtime.h>
#include <gmock/gmock.h>

#include "HalideRuntimeCuda.h"
#include "common/cuda_libraries.h"
#include "cuda_spin_kernel.h"
#include "test_support.h"

namespace halconv::test {
namespace {

using ::testing::HasSubstr;

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

// cuBLAS and cuFFT are opened when first needed, not linked (common/cuda_libraries.h): a
// build machine has its toolkit, so both open here, with every function halconv calls.
TEST(CudaLibraries, OpenWithEveryFunctionWhereTheToolkitIs) {
    const auto &blas = halconv::rk::cublas_library();
    const auto &fft = halconv::rk::cufft_library();
    ASSERT_TRUE(blas.usable()) << blas.error;
    ASSERT_TRUE(fft.usable()) << fft.error;
    EXPECT_EQ(blas.soname, "libcublas.so." + std::to_string(CUBLAS_VER_MAJOR));
    EXPECT_EQ(fft.soname, "libcufft.so." + std::to_string(CUFFT_VER_MAJOR));
    EXPECT_THAT(blas.path, HasSubstr("libcublas.so"));
    const auto &b = blas.functions;
    for (const void *f :
         {(const void *)b.create, (const void *)b.set_stream, (const void *)b.sgemm, (const void *)b.status_string}) {
        EXPECT_NE(f, nullptr);
    }
    const auto &c = fft.functions;
    for (const void *f : {(const void *)c.create, (const void *)c.destroy, (const void *)c.set_auto_allocation,
                          (const void *)c.make_plan_many64, (const void *)c.plan_2d, (const void *)c.set_stream,
                          (const void *)c.set_work_area, (const void *)c.exec_r2c, (const void *)c.exec_c2r,
                          (const void *)c.exec_d2z, (const void *)c.exec_z2d}) {
        EXPECT_NE(f, nullptr);
    }
    EXPECT_THAT(std::string(b.status_string(CUBLAS_STATUS_NOT_INITIALIZED)), HasSubstr("not initialized"));
    // cuda_info() reports the same.
    const CudaInfo info = cuda_info();
    ASSERT_EQ(info.libraries.size(), 2u);
    EXPECT_EQ(info.libraries[0].name, "cuBLAS");
    EXPECT_EQ(info.libraries[0].path, blas.path);
    EXPECT_EQ(info.libraries[1].name, "cuFFT");
    EXPECT_EQ(info.libraries[1].file, fft.soname);
    EXPECT_EQ(info.libraries[1].unavailable_reason, "");
}

TEST(CudaLibraries, AMissingLibrarySaysWhereItWasLookedFor) {
    std::string path = "stale", error;
    EXPECT_EQ(halconv::rk::open_cuda_library("libhalconv_no_such_library.so.7", &path, &error), nullptr);
    EXPECT_EQ(path, "");
    // Both places: the loader's search, then the build's toolkit folder.
    EXPECT_THAT(error, HasSubstr("libhalconv_no_such_library.so.7"));
    EXPECT_THAT(error, HasSubstr("/libhalconv_no_such_library.so.7"));
    EXPECT_THAT(error, HasSubstr("; "));
}

}  // namespace
}  // namespace halconv::test
