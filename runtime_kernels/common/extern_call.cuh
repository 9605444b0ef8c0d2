// The pieces every extern stage shares: device buffer views, output conversion and
// stores, and the host side of Halide's extern-call convention (bounds query, inputs
// moved to the device, the caller's stream, errors reported through halide_error).
#pragma once

#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <array>
#include <atomic>
#include <cstdint>
#include <initializer_list>
#include <string>

#include "HalideRuntime.h"

namespace halconv::rk {

// A 2D buffer on the device: element (x, y) counted from the buffer's mins.
template <typename T>
struct View {
    T *data;
    int width;
    int height;
    int64_t stride;  // elements between rows

    // The element at (x, y) of the view as correlated: reversed in both axes when flip
    // (a convolution reads its kernel so).
    __host__ __device__ T &tap(int x, int y, bool flip) const {
        const int sx = flip ? width - 1 - x : x, sy = flip ? height - 1 - y : y;
        return data[int64_t(sy) * stride + sx];
    }
};

template <typename Out>
__device__ inline Out to_output(float v);
template <>
__device__ inline float to_output<float>(float v) {
    return v;
}
template <>
__device__ inline __half to_output<__half>(float v) {
    return __float2half_rn(v);
}

// A sample as the sums take it: float16 and float32 samples in float32, float64 in
// float64 (the sliding passes' accumulators).
__device__ inline float to_accumulator(__half v) {
    return __half2float(v);
}
__device__ inline float to_accumulator(float v) {
    return v;
}
__device__ inline double to_accumulator(double v) {
    return v;
}

// A value as the storage type S holds it (float16: rounded to nearest even): how the
// stages take the constant boundary's fill, as the generators round it.
template <typename S>
__host__ __device__ inline S to_storage(double v) {
    if constexpr (sizeof(S) == 2) {
        return __float2half_rn(float(v));
    } else {
        return S(v);
    }
}

// Two adjacent outputs as one aligned vector store.
template <typename Out>
__device__ inline void store_pair(Out *o, float v0, float v1);
template <>
__device__ inline void store_pair<float>(float *o, float v0, float v1) {
    *reinterpret_cast<float2 *>(o) = make_float2(v0, v1);
}
template <>
__device__ inline void store_pair<__half>(__half *o, float v0, float v1) {
    *reinterpret_cast<__half2 *>(o) = __floats2half2_rn(v0, v1);
}

// ---- Host side of the Halide extern convention ----

template <typename Out>
halide_type_t output_type() {
    return sizeof(Out) == 4 ? halide_type_t(halide_type_float, 32) : halide_type_t(halide_type_float, 16);
}

// The extern convention shared by the stages that read the output region plus the
// kernel's halo (these and the cuFFT stage): answers a bounds query on `in` (true when
// `out` is one, nothing else to do) ...
bool answer_bounds_query(halide_buffer_t *in, const halide_buffer_t *kernel, const halide_buffer_t *out);
// ... and for a real call checks that the buffers are dense along x and that `in`
// covers the output region plus the halo, moves image and kernel to the device,
// allocates the output there and fetches the stream; (x0, y0) is the output's first
// sample in `in`. 0 or a halide_error_code.
int place_on_device(void *user_context, const char *name, halide_buffer_t *in, halide_buffer_t *kernel,
                    halide_buffer_t *out, int *x0, int *y0, cudaStream_t *stream);

// The real call's prologue once its own checks passed: moves `inputs` to the device,
// allocates `out` there if it has no device memory, fetches the stream. 0 or a
// halide_error_code.
int inputs_to_device(void *user_context, std::initializer_list<halide_buffer_t *> inputs, halide_buffer_t *out,
                     cudaStream_t *stream);

// Batches (x, y, n) through an entry point written for one image: answers a batch's
// bounds query (the output region plus the kernel's halo, the output's images), moves
// the batch to the device and calls one(image_i, output_i) with 2D views of each image
// in order on the same stream; marks the output written. `one` is not called for 2D
// buffers: the caller tests in->dimensions == 3 first. 0 or the first error.
template <typename One>
int for_each_image(void *user_context, const char *name, halide_buffer_t *in, halide_buffer_t *kernel,
                   halide_buffer_t *out, One &&one);

// Reports "name: what" through Halide's error handler; returns halide_error_code_generic_error.
int fail(void *user_context, const char *name, const std::string &what);

// The stream Halide's CUDA work runs on (halconv's hooks: the caller's stream in the
// device's primary context); 0 or a halide_error_code.
int current_stream(void *user_context, cudaStream_t *stream);

// Reports a failed CUDA call through Halide's error handler; returns the error code.
int report_cuda_error(void *user_context, const char *name, const char *what, cudaError_t e);

// Ends an entry point: reports e if the launches failed, else marks out as written on
// the device (the pipeline may not mark it itself). Returns the entry's result.
int finish_extern_call(void *user_context, const char *name, const char *what, cudaError_t e, halide_buffer_t *out);

// Number of SMs of the current device.
int device_sm_count();

// The current device's facts the launchers size their grids and plans by (and choose
// the Hopper kernels by).
struct DeviceFacts {
    int major = 0, minor = 0, smem_limit = 0, sms = 0;
};
cudaError_t device_facts(DeviceFacts *d);

// Lets Kernel launch with up to the current device's opt-in shared memory: set once per
// kernel and device (a function's attributes are the device's own: a call on a second
// GPU, as row bands make, needs them set there too).
template <auto Kernel>
cudaError_t allow_opt_in_shared_memory() {
    constexpr int cached_devices = 64;
    static std::array<std::atomic<int>, cached_devices> done{};  // per device: 0 not yet, else 1 + the result
    int device = 0;
    cudaError_t e = cudaGetDevice(&device);
    if (e != cudaSuccess) {
        return e;
    }
    const bool cached = device >= 0 && device < cached_devices;
    if (cached) {
        if (const int d = done[size_t(device)].load(std::memory_order_acquire); d != 0) {
            return cudaError_t(d - 1);
        }
    }
    int bytes = 0;
    e = cudaDeviceGetAttribute(&bytes, cudaDevAttrMaxSharedMemoryPerBlockOptin, device);
    if (e == cudaSuccess) {
        e = cudaFuncSetAttribute(Kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, bytes);
    }
    if (cached) {
        done[size_t(device)].store(int(e) + 1, std::memory_order_release);
    }
    return e;
}

// Image i of a batch (x, y, n) on the device as a 2D buffer: dimensions 0 and 1, its
// memory dimension 2's stride times i further on.
struct ImageOfBatch {
    halide_dimension_t dims[2];
    halide_buffer_t buffer{};
    ImageOfBatch(const halide_buffer_t *batch, int i) {
        dims[0] = batch->dim[0];
        dims[1] = batch->dim[1];
        buffer.device = batch->device + uint64_t(int64_t(i) * batch->dim[2].stride * batch->type.bytes());
        buffer.device_interface = batch->device_interface;
        buffer.type = batch->type;
        buffer.dimensions = 2;
        buffer.dim = dims;
    }
};

// The batch checks and moves of for_each_image: -1 for a bounds query answered, 0 to go
// on, or a halide_error_code.
int prepare_batch(void *user_context, const char *name, halide_buffer_t *in, halide_buffer_t *kernel,
                  halide_buffer_t *out);

// The loop of for_each_image, for a batch prepare_batch has brought to the device.
template <typename One>
int each_image(halide_buffer_t *in, halide_buffer_t *out, One &&one) {
    for (int i = 0; i < out->dim[2].extent; i++) {
        ImageOfBatch image(in, out->dim[2].min + i - in->dim[2].min), result(out, i);
        if (const int e = one(&image.buffer, &result.buffer); e != 0) {
            return e;
        }
    }
    out->set_device_dirty(true);
    return 0;
}

template <typename One>
int for_each_image(void *user_context, const char *name, halide_buffer_t *in, halide_buffer_t *kernel,
                   halide_buffer_t *out, One &&one) {
    if (const int status = prepare_batch(user_context, name, in, kernel, out); status != 0) {
        return status < 0 ? 0 : status;
    }
    return each_image(in, out, one);
}

}  // namespace halconv::rk
