// Internal declarations shared by the files of src/.
#pragma once

#include <cstdlib>
#include <functional>
#include <initializer_list>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "HalideRuntime.h"
#include "halconv/halconv.h"

namespace halconv::rk {
class PreparedFft;  // runtime_kernels/fft/halconv_fft.h
namespace sep {
struct FftLinesTables;  // runtime_kernels/separable/separable_fft.h
}  // namespace sep
}  // namespace halconv::rk

namespace halconv::internal {

class WorkspacePool;  // workspace_pool.h

// ---- Halide's runtime hooks (runtime_hooks.cpp) ----
// Installs, once, the error handler that turns Halide runtime errors into messages, Halide's
// allocator (scratch_malloc / scratch_free) and, in a build with CUDA, Halide's CUDA
// context/stream hooks (install_cuda_hooks).
void install_runtime_hooks();
// Halide's host allocations (a schedule's per-strip and per-tile intermediates): 128-byte
// aligned, with readable slack before and after as Halide requires, and freed blocks kept for
// reuse by the freeing thread, up to scratch_cached_blocks of them and scratch_cached_bytes in
// all, the oldest freed first (a thread's strips of an 8192-wide image take about 2 MB; larger
// blocks are not kept, so that the library holds little memory between calls). glibc serves
// blocks of these sizes (hundreds of KB) by mmap, so each strip's rows had been fresh pages,
// faulted in on first write and unmapped when freed: the CPU edge pipeline ran 1.5-3.5x slower
// for it (bench/results/cpu/edges-2026-11-27/RUN.md). A block that scratch_malloc did not make
// (allocated before the hooks) goes to Halide's default free.
inline constexpr int scratch_cached_blocks = 8;
inline constexpr size_t scratch_cached_bytes = size_t(16) << 20;
void *scratch_malloc(void *user_context, size_t bytes);
void scratch_free(void *user_context, void *ptr);
// While alive, Halide's CUDA work on this thread goes to `stream` (nullptr = default).
class StreamScope {
public:
    explicit StreamScope(Stream stream);
    ~StreamScope();
    StreamScope(const StreamScope &) = delete;
    StreamScope &operator=(const StreamScope &) = delete;

private:
    Stream previous_;
};
// The stream the innermost StreamScope set on this thread.
Stream current_stream();
// Message of the last Halide runtime error on this thread (then cleared).
std::string take_last_runtime_error();

// ---- CUDA (cuda_runtime.cpp; in a build without CUDA, cuda_absent.cpp: no device is
// ever usable there, and whatever needs one throws Error(unsupported)) ----
// Why device cuda cannot run here ("" when it can): no device or driver, or no CUDA in
// this build.
std::string cuda_unavailable_reason();
// Whether this build has its CUDA pipelines, and the devices this process sees: what
// cuda_info() says of them, without opening the CUDA libraries cuda_info() also lists
// (halconv's own callers want only these).
bool cuda_built();
std::vector<CudaDevice> cuda_devices();
// The CUDA libraries opened on first use (halconv.h, CudaLibraryInfo); opens them. Without
// CUDA in this build, unavailable.
CudaLibraryInfo cublas_info();
CudaLibraryInfo cufft_info();
// Halide's CUDA hooks: the device's primary context (the one the CUDA runtime and the
// extern stages use) and the stream of current_stream().
void install_cuda_hooks();
// Waits for `stream` (nullptr: the legacy default stream); throws halconv::Error on failure.
void synchronize_stream(Stream stream);
// The current CUDA device, or -1 without one.
int current_cuda_device();
// The current CUDA device's compute capability (major, minor); (0, 0) without one.
std::pair<int, int> current_compute_capability();
// Device bytes of scratch a tensor-core extern stage takes (halconv_tc_workspace_bytes);
// SIZE_MAX for an unknown variant or a precision it lacks.
size_t tensor_core_workspace_bytes(const char *variant, const char *precision, int out_width, int out_height,
                                   int kernel_width, int kernel_height);
// Device bytes of scratch the recursive Gaussian's CUDA stage takes for an image of
// `extent` on the current device (halconv_rg_workspace_bytes).
size_t recursive_gaussian_workspace_bytes(Precision precision, Extent2d extent);
// The FFT stage's cuFFT plans and kernel spectrum (runtime_kernels/fft/halconv_fft.h), which
// a plan prepares once: plans for this output and kernel (Error(unsupported) when the
// kernel is too large, Error(device) on a cuFFT failure), then the kernel's spectrum
// from its device copy (flipped for convolution), waiting for `stream`.
std::shared_ptr<rk::PreparedFft> prepare_fft(Precision precision, Extent2d output, Extent2d kernel);
void set_fft_kernel(rk::PreparedFft &fft, const halide_buffer_t *kernel, bool flip, Stream stream);
struct FftFootprint {
    size_t workspace_bytes = 0;  // taken from the plan's workspace by each call
    size_t spectrum_bytes = 0;   // held by the prepared object
    std::string tiling;          // for Dispatch::reason
};
FftFootprint fft_footprint(const rk::PreparedFft &fft);
// The separable fft_lines stage's tables of a plan's rank-1 kernel (its device copies,
// reversed for convolution) for an output of `output`, in device memory of `pool` (the
// plan's), queued on `stream`; Error(device) on a CUDA failure.
rk::sep::FftLinesTables prepare_fft_lines(Precision precision, const halide_buffer_t *row_kernel,
                                          const halide_buffer_t *col_kernel, bool flip, double fill, Extent2d output,
                                          WorkspacePool &pool, Stream stream);
// `rows` rows of `row_bytes` from device memory at `src` to `dst` (pitches in bytes),
// queued on `stream`.
void copy_device_rows(void *dst, size_t dst_pitch, const void *src, size_t src_pitch, size_t row_bytes, size_t rows,
                      Stream stream);
// Times work queued on a non-blocking stream of its own with CUDA events (halconv tune).
class CudaTimer {
public:
    explicit CudaTimer(int reps);
    ~CudaTimer();
    CudaTimer(const CudaTimer &) = delete;
    CudaTimer &operator=(const CudaTimer &) = delete;
    Stream stream() const { return stream_; }
    // Milliseconds of each of `reps` calls of work(stream()), after one untimed call.
    template <typename Work>
    std::vector<double> time(Work work) {
        work();
        synchronize("warm-up");
        for (size_t r = 0; r < starts_.size(); r++) {
            record(starts_[r]);
            work();
            record(stops_[r]);
        }
        synchronize("timed calls");
        return elapsed_ms();
    }

private:
    void record(void *event);
    void synchronize(const char *what);
    std::vector<double> elapsed_ms();
    Stream stream_ = nullptr;
    std::vector<void *> starts_, stops_;  // cudaEvent_t
};

// ---- Dispatch steps shared by the entry points (dispatch.cpp) ----
// Device::automatic resolved; cuda without a usable device throws.
Device resolve_device(Device requested);
// Placement of a mode's output relative to the image along an axis of kernel extent k.
int mode_offset(int k, Mode mode, bool flip);
// Inputs brought to the side the pipeline runs on, the output marked as freshly written.
void prepare_cpu(std::initializer_list<halide_buffer_t *> inputs, halide_buffer_t *output);
void prepare_gpu(std::initializer_list<halide_buffer_t *> inputs, halide_buffer_t *output);
void finish_cpu(halide_buffer_t *output);
// Throw unless the value is one of the enum's.
void check_mode(Mode mode);
void check_boundary(Boundary boundary);
void check_precision(Precision precision);
void check_device(Device device);
// Every option value known (plan.cpp).
void check_options(const Options &options);
// Runs `call` on a shallow copy of `output` whose dimension d starts at mins[d], then
// hands back the device allocation and dirty bits the pipeline gave the copy. Returns
// what `call` returned.
template <typename Call>
int with_output_mins(halide_buffer_t *output, const std::vector<int> &mins, Call call) {
    halide_buffer_t placed = *output;
    std::vector<halide_dimension_t> dims(output->dim, output->dim + output->dimensions);
    for (size_t d = 0; d < dims.size() && d < mins.size(); d++) {
        dims[d].min = mins[d];
    }
    placed.dim = dims.data();
    const int result = call(&placed);
    output->device = placed.device;
    output->device_interface = placed.device_interface;
    output->flags = placed.flags;
    return result;
}
// The same with the output's mins the image's (pipelines that read the image from the
// output's min).
template <typename Call>
int with_output_at_image_mins(const halide_buffer_t *image, halide_buffer_t *output, Call call) {
    return with_output_mins(output, {image->dim[0].min, image->dim[1].min}, call);
}
// The ErrorCode of a Halide status (out of memory, device failures, anything else internal).
ErrorCode error_code_of(int halide_status);
// Throws halconv::Error naming `what` and the runtime's message when result != 0.
void check_call(int result, const char *what);
// Runs `call()` (an AOT pipeline call, returning its status) on `device`: inputs brought
// there and the output marked as written by it, on `stream` for CUDA.
template <typename Call>
void run_pipeline(Device device, std::initializer_list<halide_buffer_t *> inputs, halide_buffer_t *output,
                  Stream stream, const char *what, Call call) {
    install_runtime_hooks();
    if (device == Device::cuda) {
        prepare_gpu(inputs, output);
        StreamScope scope(stream);
        check_call(call(), what);
    } else {
        prepare_cpu(inputs, output);
        check_call(call(), what);
        finish_cpu(output);
    }
}
std::string shape_text(int w, int h);

// ---- Validation (validate.cpp) ----
struct PrecisionTypes {
    halide_type_t storage;
    halide_type_t output;
};
PrecisionTypes types_of(Precision precision);
std::string type_name(halide_type_t type);
double unit_roundoff(Precision precision);
// Throws unless buf is a non-empty `dims`-dimensional buffer of `type`.
void check_buffer(const halide_buffer_t *buf, const char *role, int dims, halide_type_t type, Precision precision);
// Throws unless buf is an image of `type`: 2 dimensions (x, y), or 3 (x, y, n: a batch of
// n images of one extent), each extent at least 1.
void check_image_buffer(const halide_buffer_t *buf, const char *role, halide_type_t type, Precision precision);
// Throws unless buf's elements are adjacent along x (dimension 0 stride 1), as every
// pipeline reads and writes them; rows may be any distance apart.
void check_unit_stride(const halide_buffer_t *buf, const char *role);
// Throws when the memory `output` covers overlaps what `input` covers, on the host or
// on the device: a pipeline would read samples it has already overwritten.
void check_no_overlap(const halide_buffer_t *input, const char *input_role, const halide_buffer_t *output,
                      const char *output_role);
// ---- Staging (staging.cpp; halconv.h, "Staging") ----
// The type a buffer is taken as: its own when it is 8- or 16-bit unsigned (staged),
// else `native` (what the checks then require).
halide_type_t accepted_type(const halide_buffer_t *buf, halide_type_t native);
// Whether a buffer runs through a dense staging copy: an 8- or 16-bit unsigned type, or a
// batch whose elements are not adjacent along x (interleaved channels).
bool needs_staging(const halide_buffer_t *buf);
// A dense buffer (x, y[, n]) of `type` for the length of a call: host memory, or device
// memory of the current device, allocated and freed in order on `stream`.
class StagingBuffer {
public:
    StagingBuffer(halide_type_t type, const halide_buffer_t *shape_of, Device where, Stream stream);
    ~StagingBuffer();
    StagingBuffer(const StagingBuffer &) = delete;
    StagingBuffer &operator=(const StagingBuffer &) = delete;
    halide_buffer_t *raw() { return &buffer_; }

private:
    halide_dimension_t dims_[3]{};
    halide_buffer_t buffer_{};
    std::vector<uint8_t> host_;
    void *device_ = nullptr;
    Stream stream_ = nullptr;
};
// dst = src converted element by element (extents equal): on the host, or on the device
// (queued on `stream`) where `where` is cuda. Integer destinations are rounded and saturated.
void stage_convert(const halide_buffer_t *src, const halide_buffer_t *dst, Device where, Stream stream);
// CUDA halves of the above (cuda_runtime.cpp; cuda_absent.cpp throws).
void *staging_device_alloc(size_t bytes, Stream stream);
void staging_device_free(void *p, Stream stream);
void staging_convert_device(const halide_buffer_t *src, const halide_buffer_t *dst, Stream stream);
}  // namespace halconv::internal
namespace halconv::rk::staging {
struct View;
}
namespace halconv::internal {
// A buffer's memory on the host or the device as the staging copies see it.
rk::staging::View view_of(const halide_buffer_t *buf, Device where);

// ---- Batches on CUDA (batch_cuda.cpp; cuda_absent.cpp has none) ----
// Streams of the plan's device that a batch spreads its images over, so that small
// images fill the device: work on them starts after what the caller queued on its stream
// before, and the caller's stream waits for all of it.
class BatchStreams {
public:
    virtual ~BatchStreams() = default;
    // run_one(i, stream) for i in [0, n), the images dealt round-robin over the streams.
    virtual void run(int n, Stream caller, const std::function<void(int, Stream)> &run_one) = 0;
};
// `count` streams on the current device.
std::unique_ptr<BatchStreams> make_batch_streams(int count);
// Host copy of a (host- or device-resident) buffer's values as float64, with NaN/Inf rejected.
Halide::Runtime::Buffer<double> finite_host_values(halide_buffer_t *buf, const char *role);
// The same check without keeping the values (no allocation: it runs on every call).
void check_finite_host_values(halide_buffer_t *buf, const char *role);
// The largest |value| of a host-resident 2D buffer whose rows are dense along x;
// +infinity when a value is NaN or infinite (the transform algorithms' check, on every
// call: one pass over the image, vectorized).
double max_magnitude_2d(const halide_buffer_t *buf);
// Best rank-1 factors K(i, j) ~ row[i] * col[j] (row along x) and the relative
// Frobenius residual; row/col may be null when only the residual is wanted.
double rank1_factorize(const Halide::Runtime::Buffer<const double, 2> &kernel, std::vector<double> *row,
                       std::vector<double> *col);
// The kernel's numerical rank and factors (halconv.h, low_rank_factors) under
// low_rank_tolerance(precision, r), looked for up to max_rank.
LowRankFactors low_rank_factorize(const Halide::Runtime::Buffer<const double, 2> &kernel, Precision precision,
                                  int max_rank);
// Host memory for Halide buffers: Halide's own allocation does not check for failure
// (it would crash), this throws halconv::Error (out_of_memory) naming the size.
void *checked_host_alloc(size_t bytes);
// `b` (a shape without data) with its host memory allocated through checked_host_alloc.
template <typename B>
B with_host_memory(B b) {
    b.allocate(checked_host_alloc, std::free);
    return b;
}
// A dense 1D or 2D buffer of the precision's storage type holding `values` (x fastest).
Halide::Runtime::Buffer<> storage_buffer(const std::vector<double> &values, int width, int height, int dims,
                                         Precision precision);

// ---- The recursive Gaussian (recursive_gaussian.cpp) ----
// Its coefficients and powers (runtime_kernels/recursive/recursive_layout.h) for sigma
// (checked: Error(invalid_argument) outside the range), an image's extent and a rule,
// the poles rounded to float when `single` (the pipeline's sums are float).
struct RecursiveCoefficients {
    Halide::Runtime::Buffer<double> coefficients, powers;
};
RecursiveCoefficients recursive_gaussian_coefficients(double sigma, Extent2d image, Boundary boundary, bool single);

}  // namespace halconv::internal
