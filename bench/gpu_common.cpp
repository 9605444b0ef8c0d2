#include "gpu_common.h"

#include <cublas_v2.h>
#include <cuda_fp16.h>

#include <algorithm>
#include <cstring>

#include "HalideRuntime.h"
#include "gpu_delay.h"
#include "halconv/error.h"
#include "halconv/float16.h"

namespace halconv::bench {

halide_type_t storage_type(Precision p) {
    return p == Precision::f64   ? halide_type_of<double>()
           : p == Precision::f32 ? halide_type_of<float>()
                                 : halide_type_t(halide_type_float, 16);
}

halide_type_t output_type(Precision p) {
    return storage_type(p == Precision::f16f32 ? Precision::f32 : p);
}

void check_cuda(cudaError_t e, const char *what) {
    if (e != cudaSuccess) {
        throw Error(ErrorCode::device, std::string("CUDA error in ") + what + ": " + cudaGetErrorString(e));
    }
}

Timing time_on_stream(cudaStream_t stream, int reps, const std::function<void()> &queue) {
    cudaEvent_t start = nullptr, stop = nullptr;
    check_cuda(cudaEventCreate(&start), "event");
    check_cuda(cudaEventCreate(&stop), "event");
    for (int i = 0; i < 3; i++) {
        queue();
    }
    check_cuda(cudaStreamSynchronize(stream), "warm-up");
    std::vector<double> ms;
    for (int i = 0; i < reps; i++) {
        check_cuda(static_cast<cudaError_t>(queue_gpu_delay(2'000'000, stream)), "delay");
        check_cuda(cudaEventRecord(start, stream), "record");
        queue();
        check_cuda(cudaEventRecord(stop, stream), "record");
        check_cuda(cudaEventSynchronize(stop), "timed run");
        float t = 0.0f;
        check_cuda(cudaEventElapsedTime(&t, start, stop), "elapsed");
        ms.push_back(t);
    }
    cudaEventDestroy(start);
    cudaEventDestroy(stop);
    std::sort(ms.begin(), ms.end());
    return {ms[ms.size() / 2], ms.front(), ms.back()};
}

namespace {

void check_cublas(cublasStatus_t s, const char *what) {
    if (s != CUBLAS_STATUS_SUCCESS) {
        throw Error(ErrorCode::device, std::string("cuBLAS error in ") + what + ": " + cublasGetStatusString(s));
    }
}

// A device buffer freed on scope exit.
struct DeviceBytes {
    void *p = nullptr;
    explicit DeviceBytes(size_t bytes) { check_cuda(cudaMalloc(&p, bytes), "ceiling buffer"); }
    ~DeviceBytes() { cudaFree(p); }
    DeviceBytes(const DeviceBytes &) = delete;
    DeviceBytes &operator=(const DeviceBytes &) = delete;
};

}  // namespace

Ceilings measure_ceilings(cudaStream_t stream, int reps) {
    Ceilings c;
    {
        const size_t bytes = size_t(1) << 30;
        DeviceBytes a(bytes), b(bytes);
        check_cuda(cudaMemsetAsync(a.p, 1, bytes, stream), "memset");
        const Timing t = time_on_stream(stream, reps, [&] {
            check_cuda(cudaMemcpyAsync(b.p, a.p, bytes, cudaMemcpyDeviceToDevice, stream), "copy");
        });
        c.copy_bytes_per_s = 2.0 * double(bytes) / (t.median_ms * 1e-3);
    }
    // GEMM rates on data in [0, 1) made on the device (cuBLAS rates depend little on
    // the values; zeros would flatter them).
    const int n = 8192;
    const size_t elements = size_t(n) * size_t(n);
    cublasHandle_t handle = nullptr;
    check_cublas(cublasCreate(&handle), "create");
    check_cublas(cublasSetStream(handle, stream), "set stream");
    try {
        DeviceBytes a(elements * 4), b(elements * 4), out(elements * 4);
        std::vector<float> host(elements);
        for (size_t i = 0; i < elements; i++) {
            host[i] = float((i * 2654435761u) % 1000u) / 1000.0f;
        }
        check_cuda(cudaMemcpy(a.p, host.data(), elements * 4, cudaMemcpyHostToDevice), "upload");
        check_cuda(cudaMemcpy(b.p, host.data(), elements * 4, cudaMemcpyHostToDevice), "upload");
        const float one = 1.0f, zero = 0.0f;
        const double flops = 2.0 * n * double(n) * n;
        const Timing t32 = time_on_stream(stream, reps, [&] {
            check_cublas(cublasSgemm(handle, CUBLAS_OP_N, CUBLAS_OP_N, n, n, n, &one, static_cast<float *>(a.p), n,
                                     static_cast<float *>(b.p), n, &zero, static_cast<float *>(out.p), n),
                         "sgemm");
        });
        c.gemm_f32_flops = flops / (t32.median_ms * 1e-3);
        std::vector<uint16_t> half(elements);
        for (size_t i = 0; i < elements; i++) {
            half[i] = float16_bits_from_double(host[i]);
        }
        check_cuda(cudaMemcpy(a.p, half.data(), elements * 2, cudaMemcpyHostToDevice), "upload");
        check_cuda(cudaMemcpy(b.p, half.data(), elements * 2, cudaMemcpyHostToDevice), "upload");
        const Timing t16 = time_on_stream(stream, reps, [&] {
            check_cublas(
                cublasGemmEx(handle, CUBLAS_OP_N, CUBLAS_OP_N, n, n, n, &one, a.p, CUDA_R_16F, n, b.p, CUDA_R_16F, n,
                             &zero, out.p, CUDA_R_32F, n, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT),
                "f16 gemm");
        });
        c.gemm_f16_flops = flops / (t16.median_ms * 1e-3);
    } catch (...) {
        cublasDestroy(handle);
        throw;
    }
    cublasDestroy(handle);
    return c;
}

namespace {

cudaMemPool_t default_pool() {
    int device = 0;
    check_cuda(cudaGetDevice(&device), "device");
    cudaMemPool_t pool = nullptr;
    check_cuda(cudaDeviceGetDefaultMemPool(&pool, device), "default memory pool");
    return pool;
}

size_t free_device_bytes() {
    size_t free = 0, total = 0;
    check_cuda(cudaMemGetInfo(&free, &total), "memory info");
    return free;
}

}  // namespace

void MemoryProbe::begin() {
    check_cuda(cudaDeviceSynchronize(), "memory probe");
    cudaMemPool_t pool = default_pool();
    check_cuda(cudaMemPoolTrimTo(pool, 0), "pool trim");
    uint64_t zero = 0;
    check_cuda(cudaMemPoolSetAttribute(pool, cudaMemPoolAttrUsedMemHigh, &zero), "pool high-water reset");
    halide_reuse_device_allocations(nullptr, true);
    check_cuda(cudaMemPoolGetAttribute(pool, cudaMemPoolAttrReservedMemCurrent, &pool_reserved_before_),
               "pool reserved");
    free_before_ = free_device_bytes();
}

int64_t MemoryProbe::end() {
    check_cuda(cudaDeviceSynchronize(), "memory probe");
    cudaMemPool_t pool = default_pool();
    // Freed stream-ordered memory goes back first, so it counts once (as the high-water mark).
    check_cuda(cudaMemPoolTrimTo(pool, 0), "pool trim");
    const size_t free_after = free_device_bytes();
    uint64_t high = 0, reserved = 0;
    check_cuda(cudaMemPoolGetAttribute(pool, cudaMemPoolAttrUsedMemHigh, &high), "pool high-water");
    check_cuda(cudaMemPoolGetAttribute(pool, cudaMemPoolAttrReservedMemCurrent, &reserved), "pool reserved");
    // Turning the cache off releases what it held.
    halide_reuse_device_allocations(nullptr, false);
    // Memory still taken outside the pool (Halide's cache, cudaMalloc); what the pool still
    // reserves is a live stream-ordered allocation (a plan's workspace), already in the
    // high-water mark, or the pool's rounding of one, which is not the variant's.
    const int64_t held =
        int64_t(free_before_) - int64_t(free_after) - (int64_t(reserved) - int64_t(pool_reserved_before_));
    return std::max<int64_t>(0, held) + int64_t(high);
}

namespace {

double to_double(const unsigned char *p, int bits) {
    if (bits == 64) {
        double v;
        std::memcpy(&v, p, 8);
        return v;
    }
    if (bits == 32) {
        float v;
        std::memcpy(&v, p, 4);
        return v;
    }
    uint16_t v;
    std::memcpy(&v, p, 2);
    return double_from_float16_bits(v);
}

}  // namespace

std::vector<double> fetch_output(const OutputView &view) {
    const size_t bytes = size_t(view.bits / 8);
    std::vector<unsigned char> raw(size_t(view.width) * size_t(view.height) * bytes);
    check_cuda(cudaMemcpy2D(raw.data(), size_t(view.width) * bytes, view.data, size_t(view.pitch) * bytes,
                            size_t(view.width) * bytes, size_t(view.height), cudaMemcpyDeviceToHost),
               "output read-back");
    std::vector<double> values(size_t(view.width) * size_t(view.height));
    for (size_t i = 0; i < values.size(); i++) {
        values[i] = to_double(&raw[i * bytes], view.bits);
    }
    return values;
}

double fetch_sample(const OutputView &view, int x, int y) {
    const size_t bytes = size_t(view.bits / 8);
    unsigned char raw[8];
    const auto *base = static_cast<const unsigned char *>(view.data);
    check_cuda(
        cudaMemcpy(raw, base + (size_t(y) * size_t(view.pitch) + size_t(x)) * bytes, bytes, cudaMemcpyDeviceToHost),
        "sample read-back");
    return to_double(raw, view.bits);
}

}  // namespace halconv::bench
