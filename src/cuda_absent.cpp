// The CUDA side of a build without CUDA (HALCONV_WITH_CUDA=OFF): no device is ever
// usable, so the entry points resolve every call to the CPU and refuse device cuda with
// cuda_unavailable_reason(); what only a CUDA call reaches throws the same reason.
#include "bands.h"
#include "internal.h"
#include "separable/separable_fft.h"
#include "workspace_pool.h"

namespace halconv::internal {
namespace {

constexpr const char *no_cuda = "this halconv was built without CUDA (HALCONV_WITH_CUDA=OFF): only the CPU runs";

[[noreturn]] void refuse() {
    throw Error(ErrorCode::unsupported, no_cuda);
}

}  // namespace

std::string cuda_unavailable_reason() {
    return no_cuda;
}

void install_cuda_hooks() {}

void synchronize_stream(Stream stream) {
    if (stream != nullptr) {
        refuse();
    }
}

int current_cuda_device() {
    return -1;
}

std::pair<int, int> current_compute_capability() {
    return {0, 0};
}

size_t tensor_core_workspace_bytes(const char *, const char *, int, int, int, int) {
    refuse();
}

size_t recursive_gaussian_workspace_bytes(Precision, Extent2d) {
    refuse();
}

std::shared_ptr<rk::PreparedFft> prepare_fft(Precision, Extent2d, Extent2d) {
    refuse();
}

void set_fft_kernel(rk::PreparedFft &, const halide_buffer_t *, bool, Stream) {
    refuse();
}

FftFootprint fft_footprint(const rk::PreparedFft &) {
    refuse();
}

rk::sep::FftLinesTables prepare_fft_lines(Precision, const halide_buffer_t *, const halide_buffer_t *, bool, double,
                                          Extent2d, WorkspacePool &, Stream) {
    refuse();
}

void copy_device_rows(void *, size_t, const void *, size_t, size_t, size_t, Stream) {
    refuse();
}

size_t cuda_free_bytes() {
    refuse();
}

struct BandResources {};

void *staging_device_alloc(size_t, Stream) {
    throw Error(ErrorCode::unsupported, no_cuda);
}

void staging_device_free(void *, Stream) {}

void staging_convert_device(const halide_buffer_t *, const halide_buffer_t *, Stream) {
    throw Error(ErrorCode::unsupported, no_cuda);
}

std::unique_ptr<BatchStreams> make_batch_streams(int) {
    throw Error(ErrorCode::unsupported, no_cuda);
}

std::shared_ptr<BandResources> make_band_resources() {
    return std::make_shared<BandResources>();
}

void run_bands_cuda(const BandCall &, BandResources &) {
    refuse();
}

CudaTimer::CudaTimer(int /*reps*/) {
    refuse();
}

CudaTimer::~CudaTimer() = default;

void CudaTimer::record(void *) {
    refuse();
}

void CudaTimer::synchronize(const char *) {
    refuse();
}

std::vector<double> CudaTimer::elapsed_ms() {
    refuse();
}

std::unique_ptr<WorkspacePool> make_cuda_workspace_pool(size_t /*bytes*/) {
    refuse();
}

bool cuda_built() {
    return false;
}

std::vector<CudaDevice> cuda_devices() {
    return {};
}

CudaLibraryInfo cublas_info() {
    return {.name = "cuBLAS", .file = "", .path = "", .unavailable_reason = cuda_unavailable_reason()};
}

CudaLibraryInfo cufft_info() {
    return {.name = "cuFFT", .file = "", .path = "", .unavailable_reason = cuda_unavailable_reason()};
}

}  // namespace halconv::internal

namespace halconv {

void use_shared_cuda_context() {}

bool cuda_available() {
    return false;
}

CudaInfo cuda_info() {
    CudaInfo info;
    info.unavailable_reason = internal::cuda_unavailable_reason();
    return info;
}

const halide_device_interface_t *cuda_device_interface() {
    return nullptr;
}

}  // namespace halconv
