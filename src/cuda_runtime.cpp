// The CUDA side of halconv (a build with HALCONV_WITH_CUDA; cuda_absent.cpp stands in
// without it): Halide's context and stream hooks (so Halide stages and hand-written CUDA
// kernels share the primary context and the caller's stream: two contexts do not order
// work between them), device detection, and the few CUDA runtime calls of src/.
#include <cuda.h>
#include <cuda_runtime_api.h>

#include <algorithm>
#include <array>
#include <mutex>

#include "HalideRuntimeCuda.h"
#include "common/cuda_libraries.h"
#include "cuda_check.h"
#include "fft/halconv_fft.h"
#include "internal.h"
#include "recursive/halconv_rg.h"
#include "separable/separable_fft.h"
#include "single_channel/halconv_tc.h"
#include "staging/staging.h"
#include "workspace_pool.h"

namespace halconv::internal {
namespace {

using PrimaryCtxRetainFn = CUresult (*)(CUcontext *, CUdevice);
using DeviceGetFn = CUresult (*)(CUdevice *, int);

// Driver entry points through the CUDA runtime, so libhalconv links no libcuda and
// still loads on machines without a driver.
template <typename Fn>
Fn driver_entry_point(const char *name) {
    void *fn = nullptr;
    cudaDriverEntryPointQueryResult status{};
    if (cudaGetDriverEntryPointByVersion(name, &fn, 12000, cudaEnableDefault, &status) != cudaSuccess ||
        status != cudaDriverEntryPointSuccess) {
        return nullptr;
    }
    return reinterpret_cast<Fn>(fn);
}

constexpr int max_devices = 64;
std::mutex context_mutex;
std::array<CUcontext, max_devices> primary_contexts{};

int acquire_primary_context(void * /*user_context*/, void **ctx, bool /*create*/) {
    int device = 0;
    if (cudaGetDevice(&device) != cudaSuccess || device < 0 || device >= max_devices) {
        return halide_error_code_generic_error;
    }
    std::lock_guard<std::mutex> lock(context_mutex);
    if (primary_contexts[device] == nullptr) {
        static const auto retain = driver_entry_point<PrimaryCtxRetainFn>("cuDevicePrimaryCtxRetain");
        static const auto device_get = driver_entry_point<DeviceGetFn>("cuDeviceGet");
        CUdevice cu_device{};
        CUcontext context = nullptr;
        if (retain == nullptr || device_get == nullptr || device_get(&cu_device, device) != CUDA_SUCCESS ||
            retain(&context, cu_device) != CUDA_SUCCESS) {
            return halide_error_code_generic_error;
        }
        // Retained for the life of the process: Halide keeps compiled modules in it.
        primary_contexts[device] = context;
    }
    *ctx = primary_contexts[device];
    return halide_error_code_success;
}

int release_context(void * /*user_context*/) {
    return halide_error_code_success;
}

int get_stream(void * /*user_context*/, void * /*ctx*/, void **stream) {
    *stream = static_cast<void *>(current_stream());
    return halide_error_code_success;
}

}  // namespace

std::string cuda_unavailable_reason() {
    return cuda_available() ? std::string() : "no CUDA device is usable here (no GPU or no driver)";
}

namespace {

template <typename Functions>
CudaLibraryInfo library_info(const rk::CudaLibrary<Functions> &library, const std::string &wheel) {
    const std::string advice = "; install a CUDA toolkit or NVIDIA's wheel (pip install " + wheel +
                               ", or with Python pip install 'halconv[cuda]')";
    return {.name = library.title,
            .file = library.soname,
            .path = library.path,
            .unavailable_reason = library.usable() ? std::string() : library.error + advice};
}

}  // namespace

bool cuda_built() {
    return true;
}

std::vector<CudaDevice> cuda_devices() {
    std::vector<CudaDevice> devices;
    int count = 0;
    if (cuda_available() && cudaGetDeviceCount(&count) == cudaSuccess) {
        for (int d = 0; d < count; d++) {
            cudaDeviceProp p{};
            if (cudaGetDeviceProperties(&p, d) == cudaSuccess) {
                devices.push_back({.ordinal = d,
                                   .name = p.name,
                                   .compute_capability_major = p.major,
                                   .compute_capability_minor = p.minor,
                                   .multiprocessors = p.multiProcessorCount,
                                   .memory_bytes = p.totalGlobalMem});
            }
        }
    }
    cudaGetLastError();
    return devices;
}

CudaLibraryInfo cublas_info() {
    return library_info(rk::cublas_library(), "nvidia-cublas");
}

CudaLibraryInfo cufft_info() {
    return library_info(rk::cufft_library(), "nvidia-cufft");
}

void install_cuda_hooks() {
    halide_set_cuda_acquire_context(acquire_primary_context);
    halide_set_cuda_release_context(release_context);
    halide_set_cuda_get_stream(get_stream);
}

void synchronize_stream(Stream stream) {
    const cudaError_t e = cudaStreamSynchronize(stream);
    if (e != cudaSuccess) {
        throw Error(ErrorCode::device, std::string("CUDA stream synchronization failed: ") + cudaGetErrorString(e));
    }
}

int current_cuda_device() {
    int device = -1;
    return cuda_available() && cudaGetDevice(&device) == cudaSuccess ? device : -1;
}

std::pair<int, int> current_compute_capability() {
    const int device = current_cuda_device();
    int major = 0, minor = 0;
    if (device < 0 || cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device) != cudaSuccess ||
        cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, device) != cudaSuccess) {
        cudaGetLastError();
        return {0, 0};
    }
    return {major, minor};
}

size_t tensor_core_workspace_bytes(const char *variant, const char *precision, int out_width, int out_height,
                                   int kernel_width, int kernel_height) {
    return halconv_tc_workspace_bytes(variant, precision, out_width, out_height, kernel_width, kernel_height);
}

size_t recursive_gaussian_workspace_bytes(Precision precision, Extent2d extent) {
    return halconv_rg_workspace_bytes(to_string(precision), extent.width, extent.height);
}

std::shared_ptr<rk::PreparedFft> prepare_fft(Precision precision, Extent2d output, Extent2d kernel) {
    if (kernel.width > rk::fft_max_kernel || kernel.height > rk::fft_max_kernel) {
        throw Error(ErrorCode::unsupported, "kernel " + shape_text(kernel.width, kernel.height) +
                                                " is too large for the cuFFT stage (kernels up to " +
                                                std::to_string(rk::fft_max_kernel) + " per axis)");
    }
    try {
        return rk::prepare_fft(static_cast<rk::FftPrecision>(precision), output.width, output.height, kernel.width,
                               kernel.height);
    } catch (const std::runtime_error &e) {
        throw Error(ErrorCode::device, std::string("preparing the FFT: ") + e.what());
    }
}

void set_fft_kernel(rk::PreparedFft &fft, const halide_buffer_t *kernel, bool flip, Stream stream) {
    try {
        rk::set_fft_kernel(fft, reinterpret_cast<const void *>(kernel->device), kernel->dim[1].stride, flip, stream);
    } catch (const std::runtime_error &e) {
        throw Error(ErrorCode::device, std::string("the kernel's spectrum: ") + e.what());
    }
}

FftFootprint fft_footprint(const rk::PreparedFft &fft) {
    const rk::FftTiling &t = rk::fft_tiling_of(fft);
    return {.workspace_bytes = rk::fft_workspace_bytes(fft),
            .spectrum_bytes = rk::fft_spectrum_bytes(fft),
            .tiling = shape_text(t.tile_x, t.tile_y) + " transforms of " + std::to_string(t.tiles()) + " tiles of " +
                      shape_text(t.step_x, t.step_y) + " outputs, " + std::to_string(t.batch) + " per batch"};
}

rk::sep::FftLinesTables prepare_fft_lines(Precision precision, const halide_buffer_t *row_kernel,
                                          const halide_buffer_t *col_kernel, bool flip, double fill, Extent2d output,
                                          WorkspacePool &pool, Stream stream) {
    const int kw = row_kernel->dim[0].extent, kh = col_kernel->dim[0].extent;
    rk::sep::FftLinesTables tables;
    pool.prepare(rk::sep::fft_lines_tables_bytes(kw, kh, output.width, output.height), stream, [&](void *memory) {
        try {
            tables = rk::sep::prepare_fft_lines(types_of(precision).storage.bytes(),
                                                reinterpret_cast<const void *>(row_kernel->device),
                                                reinterpret_cast<const void *>(col_kernel->device), kw, kh, flip, fill,
                                                output.width, output.height, memory, stream);
        } catch (const std::runtime_error &e) {
            throw Error(ErrorCode::device, e.what());
        }
    });
    return tables;
}

void copy_device_rows(void *dst, size_t dst_pitch, const void *src, size_t src_pitch, size_t row_bytes, size_t rows,
                      Stream stream) {
    check_cuda(cudaMemcpy2DAsync(dst, dst_pitch, src, src_pitch, row_bytes, rows, cudaMemcpyDeviceToDevice, stream),
               "device-to-device copy");
}

void *staging_device_alloc(size_t bytes, Stream stream) {
    void *p = nullptr;
    const cudaError_t e = cudaMallocAsync(&p, std::max<size_t>(bytes, 1), stream);
    if (e != cudaSuccess) {
        cudaGetLastError();
        throw Error(e == cudaErrorMemoryAllocation ? ErrorCode::out_of_memory : ErrorCode::device,
                    "allocating a staging buffer of " + std::to_string(bytes) +
                        " bytes on the device: " + cudaGetErrorString(e));
    }
    return p;
}

void staging_device_free(void *p, Stream stream) {
    cudaFreeAsync(p, stream);
}

void staging_convert_device(const halide_buffer_t *src, const halide_buffer_t *dst, Stream stream) {
    const int e = rk::staging::convert_cuda(view_of(src, Device::cuda), view_of(dst, Device::cuda), stream);
    check_cuda(cudaError_t(e), "a staging copy on the device");
}

CudaTimer::CudaTimer(int reps) {
    check_cuda(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking), "creating a stream");
    for (int r = 0; r < std::max(reps, 1); r++) {
        for (std::vector<void *> *events : {&starts_, &stops_}) {
            cudaEvent_t e = nullptr;
            check_cuda(cudaEventCreate(&e), "creating an event");
            events->push_back(e);
        }
    }
}

CudaTimer::~CudaTimer() {
    for (const std::vector<void *> *events : {&starts_, &stops_}) {
        for (void *e : *events) {
            cudaEventDestroy(static_cast<cudaEvent_t>(e));
        }
    }
    cudaStreamDestroy(stream_);
}

void CudaTimer::record(void *event) {
    check_cuda(cudaEventRecord(static_cast<cudaEvent_t>(event), stream_), "recording a timing event");
}

void CudaTimer::synchronize(const char *what) {
    check_cuda(cudaStreamSynchronize(stream_), what);
}

std::vector<double> CudaTimer::elapsed_ms() {
    std::vector<double> ms;
    for (size_t r = 0; r < starts_.size(); r++) {
        float elapsed = 0;
        check_cuda(
            cudaEventElapsedTime(&elapsed, static_cast<cudaEvent_t>(starts_[r]), static_cast<cudaEvent_t>(stops_[r])),
            "reading a timing event");
        ms.push_back(elapsed);
    }
    return ms;
}

}  // namespace halconv::internal

namespace halconv {

void use_shared_cuda_context() {
    internal::install_runtime_hooks();
}

bool cuda_available() {
    static const bool available = [] {
        int count = 0;
        return cudaGetDeviceCount(&count) == cudaSuccess && count > 0;
    }();
    return available;
}

CudaInfo cuda_info() {
    CudaInfo info;
    info.built = internal::cuda_built();
    cudaRuntimeGetVersion(&info.runtime_version);
    if (cudaDriverGetVersion(&info.driver_version) != cudaSuccess) {
        info.driver_version = 0;
    }
    info.devices = internal::cuda_devices();
    info.unavailable_reason = internal::cuda_unavailable_reason();
    info.libraries = {internal::cublas_info(), internal::cufft_info()};
    return info;
}

const halide_device_interface_t *cuda_device_interface() {
    return halide_cuda_device_interface();
}

}  // namespace halconv
