// The CUDA side shared by every halconv pipeline: Halide's context and stream hooks
// (so Halide stages and hand-written CUDA kernels share the primary context and the
// caller's stream: two contexts do not order work between them), device detection and
// runtime error capture.
#include <cuda.h>
#include <cuda_runtime_api.h>

#include <array>
#include <mutex>

#include "HalideRuntimeCuda.h"
#include "internal.h"

namespace halconv::internal {
namespace {

thread_local Stream current_stream = nullptr;
thread_local std::string last_runtime_error;

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
    *stream = static_cast<void *>(current_stream);
    return halide_error_code_success;
}

void capture_error(void * /*user_context*/, const char *message) {
    last_runtime_error = message ? message : "unknown Halide runtime error";
}

}  // namespace

void install_runtime_hooks() {
    static std::once_flag once;
    std::call_once(once, [] {
        halide_set_cuda_acquire_context(acquire_primary_context);
        halide_set_cuda_release_context(release_context);
        halide_set_cuda_get_stream(get_stream);
        halide_set_error_handler(capture_error);
    });
}

StreamScope::StreamScope(Stream stream) : previous_(current_stream) {
    current_stream = stream;
}

StreamScope::~StreamScope() {
    current_stream = previous_;
}

const halide_device_interface_t *cuda_device_interface() {
    return halide_cuda_device_interface();
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

std::string take_last_runtime_error() {
    std::string message;
    message.swap(last_runtime_error);
    return message;
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

}  // namespace halconv
