// Host side of the Halide extern convention every stage shares (extern_call.cuh).
#include <string>
#include <utility>

#include "HalideRuntimeCuda.h"
#include "common/extern_call.cuh"
#include "common/tensor_map.h"

// Halide's runtime routes these through the hooks halconv installs (primary context,
// the caller's stream); HalideRuntimeCuda.h declares only the setters.
extern "C" int halide_cuda_acquire_context(void *user_context, void **ctx, bool create);
extern "C" int halide_cuda_release_context(void *user_context);
extern "C" int halide_cuda_get_stream(void *user_context, void *ctx, void **stream);

namespace halconv::rk {

PFN_cuTensorMapEncodeTiled_v12000 tensor_map_encoder() {
    static const PFN_cuTensorMapEncodeTiled_v12000 encode = [] {
        void *f = nullptr;
        cudaDriverEntryPointQueryResult found{};
        const cudaError_t e =
            cudaGetDriverEntryPointByVersion("cuTensorMapEncodeTiled", &f, 12000, cudaEnableDefault, &found);
        return e == cudaSuccess && found == cudaDriverEntryPointSuccess
                   ? reinterpret_cast<PFN_cuTensorMapEncodeTiled_v12000>(f)
                   : nullptr;
    }();
    return encode;
}

int fail(void *user_context, const char *name, const std::string &what) {
    halide_error(user_context, (std::string(name) + ": " + what).c_str());
    return halide_error_code_generic_error;
}

int current_stream(void *user_context, cudaStream_t *stream) {
    void *ctx = nullptr;
    if (int e = halide_cuda_acquire_context(user_context, &ctx, true); e != 0) {
        return e;
    }
    void *s = nullptr;
    const int e = halide_cuda_get_stream(user_context, ctx, &s);
    halide_cuda_release_context(user_context);
    *stream = static_cast<cudaStream_t>(s);
    return e;
}

bool answer_bounds_query(halide_buffer_t *in, const halide_buffer_t *kernel, const halide_buffer_t *out) {
    if (!out->is_bounds_query()) {
        return false;
    }
    in->dim[0].min = out->dim[0].min;
    in->dim[0].extent = out->dim[0].extent + kernel->dim[0].extent - 1;
    in->dim[1].min = out->dim[1].min;
    in->dim[1].extent = out->dim[1].extent + kernel->dim[1].extent - 1;
    return true;
}

int place_on_device(void *user_context, const char *name, halide_buffer_t *in, halide_buffer_t *kernel,
                    halide_buffer_t *out, int *x0, int *y0, cudaStream_t *stream) {
    if (in->dim[0].stride != 1 || kernel->dim[0].stride != 1 || out->dim[0].stride != 1) {
        return fail(user_context, name, "buffers must be dense along x (dim 0 stride 1)");
    }
    // The output region [min, min + extent) reads the image from the same min.
    const int kw = kernel->dim[0].extent, kh = kernel->dim[1].extent;
    *x0 = out->dim[0].min - in->dim[0].min;
    *y0 = out->dim[1].min - in->dim[1].min;
    if (*x0 < 0 || *y0 < 0 || int64_t(*x0) + out->dim[0].extent + kw - 1 > in->dim[0].extent ||
        int64_t(*y0) + out->dim[1].extent + kh - 1 > in->dim[1].extent) {
        return fail(user_context, name, "the image does not cover the output region plus the kernel's halo");
    }
    return inputs_to_device(user_context, {in, kernel}, out, stream);
}

int prepare_batch(void *user_context, const char *name, halide_buffer_t *in, halide_buffer_t *kernel,
                  halide_buffer_t *out) {
    if (out->is_bounds_query()) {
        answer_bounds_query(in, kernel, out);
        in->dim[2].min = out->dim[2].min;
        in->dim[2].extent = out->dim[2].extent;
        return -1;
    }
    if (in->dimensions != 3 || out->dimensions != 3) {
        return fail(user_context, name, "a batch's image and output must both be 3D (x, y, n)");
    }
    if (out->dim[2].min < in->dim[2].min || out->dim[2].min + out->dim[2].extent > in->dim[2].min + in->dim[2].extent) {
        return fail(user_context, name, "the image batch does not hold every image of the output batch");
    }
    cudaStream_t stream = nullptr;
    return inputs_to_device(user_context, {in, kernel}, out, &stream);
}

int inputs_to_device(void *user_context, std::initializer_list<halide_buffer_t *> inputs, halide_buffer_t *out,
                     cudaStream_t *stream) {
    const halide_device_interface_t *cuda = halide_cuda_device_interface();
    for (halide_buffer_t *b : inputs) {
        if (int e = halide_copy_to_device(user_context, b, cuda); e != 0) {
            return e;
        }
    }
    if (out->device == 0) {
        if (int e = halide_device_malloc(user_context, out, cuda); e != 0) {
            return e;
        }
    }
    return current_stream(user_context, stream);
}

int report_cuda_error(void *user_context, const char *name, const char *what, cudaError_t e) {
    return fail(user_context, name, std::string(what) + ": " + cudaGetErrorString(e));
}

int finish_extern_call(void *user_context, const char *name, const char *what, cudaError_t e, halide_buffer_t *out) {
    if (e != cudaSuccess) {
        return report_cuda_error(user_context, name, what, e);
    }
    out->set_device_dirty(true);
    return 0;
}

cudaError_t device_facts(DeviceFacts *d) {
    int device = 0;
    cudaError_t e = cudaGetDevice(&device);
    for (auto [attr, out] : {std::pair{cudaDevAttrComputeCapabilityMajor, &d->major},
                             {cudaDevAttrComputeCapabilityMinor, &d->minor},
                             {cudaDevAttrMaxSharedMemoryPerBlockOptin, &d->smem_limit},
                             {cudaDevAttrMultiProcessorCount, &d->sms}}) {
        if (e == cudaSuccess) {
            e = cudaDeviceGetAttribute(out, attr, device);
        }
    }
    return e;
}

int device_sm_count() {
    // Asked each time (an attribute read, no synchronization): bands may run on GPUs of
    // several kinds.
    int device = 0, sms = 0;
    if (cudaGetDevice(&device) != cudaSuccess ||
        cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device) != cudaSuccess || sms <= 0) {
        return 1;
    }
    return sms;
}

}  // namespace halconv::rk
