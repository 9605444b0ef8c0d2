// Host side of the Halide extern convention shared by the tensor-core entry points.
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <string>

#include "HalideRuntimeCuda.h"
#include "halconv_tc.h"
#include "tc_common.cuh"

// Halide's runtime routes these through the hooks halconv installs (primary context,
// the caller's stream); HalideRuntimeCuda.h declares only the setters.
extern "C" int halide_cuda_acquire_context(void *user_context, void **ctx, bool create);
extern "C" int halide_cuda_release_context(void *user_context);
extern "C" int halide_cuda_get_stream(void *user_context, void *ctx, void **stream);

namespace halconv::tc {

namespace {

bool is_f16(const halide_buffer_t *b) {
    return b->type.code == halide_type_float && b->type.bits == 16 && b->type.lanes == 1;
}

template <typename T>
View<T> view_of(const halide_buffer_t *b) {
    return {reinterpret_cast<T *>(b->device), b->dim[0].extent, b->dim[1].extent, b->dim[1].stride};
}

}  // namespace

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
    const halide_device_interface_t *cuda = halide_cuda_device_interface();
    for (halide_buffer_t *b : {in, kernel}) {
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

int prepare_extern_call(void *user_context, halide_buffer_t *in, halide_buffer_t *kernel, bool flip,
                        halide_buffer_t *out, halide_type_t out_type, const char *name, ExternCall *call) {
    if (answer_bounds_query(in, kernel, out)) {
        return -1;
    }
    if (in->dimensions != 2 || kernel->dimensions != 2 || out->dimensions != 2) {
        return fail(user_context, name, "image, kernel and output must be 2D");
    }
    if (!is_f16(in) || !is_f16(kernel) || out->type != out_type) {
        return fail(user_context, name, "image and kernel must be float16 and the output of the entry's type");
    }
    const int kw = kernel->dim[0].extent, kh = kernel->dim[1].extent;
    if (kw < 1 || kh < 1 || kw > max_kernel_edge || kh > max_kernel_edge) {
        return fail(user_context, name,
                    "kernel is " + std::to_string(kw) + " x " + std::to_string(kh) + "; allowed 1 .. " +
                        std::to_string(max_kernel_edge) + " per axis");
    }
    int x0 = 0, y0 = 0;
    if (int e = place_on_device(user_context, name, in, kernel, out, &x0, &y0, &call->stream); e != 0) {
        return e;
    }
    Problem &p = call->problem;
    p.img = view_of<const __half>(in);
    p.img.data += int64_t(y0) * in->dim[1].stride + x0;
    p.img.width = out->dim[0].extent + kw - 1;
    p.img.height = out->dim[1].extent + kh - 1;
    p.ker = view_of<const __half>(kernel);
    p.flip = flip;
    p.out = reinterpret_cast<void *>(out->device);
    p.out_width = out->dim[0].extent;
    p.out_height = out->dim[1].extent;
    p.out_stride = out->dim[1].stride;
    return 0;
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

int strip_chunks_for(int chunks, int row_blocks) {
    const int strips = (4 * device_sm_count() + row_blocks - 1) / row_blocks;
    return (chunks + strips - 1) / strips;
}

int strip_chunks_for_waves(int chunks, int row_blocks, int resident_per_sm, int prologue_chunks) {
    const int64_t resident = int64_t(std::max(resident_per_sm, 1)) * device_sm_count();
    int best = chunks;
    int64_t best_cost = -1;
    for (int strips = 1; strips <= chunks; strips++) {
        const int per_strip = (chunks + strips - 1) / strips;
        if (strips > 1 && (chunks + per_strip - 1) / per_strip < strips) {
            continue;  // same strips as a smaller count
        }
        const int64_t waves = (int64_t(strips) * row_blocks + resident - 1) / resident;
        const int64_t cost = waves * (per_strip + prologue_chunks);
        if (best_cost < 0 || cost < best_cost) {
            best_cost = cost;
            best = per_strip;
        }
        if (waves > 8) {
            break;  // many waves balance themselves; more strips only add boundaries
        }
    }
    return best;
}

int device_sm_count() {
    static const int count = [] {
        int device = 0, sms = 0;
        if (cudaGetDevice(&device) != cudaSuccess ||
            cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device) != cudaSuccess || sms <= 0) {
            return 1;
        }
        return sms;
    }();
    return count;
}

}  // namespace halconv::tc

size_t halconv_tc_workspace_bytes(const char *variant, bool f16_output, int out_width, int out_height, int kernel_width,
                                  int kernel_height) {
    using namespace halconv::tc;
    if (std::strcmp(variant, "im2tensor") == 0) {
        return im2tensor_workspace_bytes(out_width, out_height, kernel_width);
    }
    if (std::strcmp(variant, "im2tensor_fused") == 0 || std::strcmp(variant, "im2tensor_atomic") == 0) {
        return im2tensor_fused_workspace_bytes(out_width, out_height, kernel_width, kernel_height, f16_output,
                                               std::strcmp(variant, "im2tensor_atomic") == 0);
    }
    if (std::strcmp(variant, "dki_m16n16k16") == 0 || std::strcmp(variant, "dki_m32n8k16") == 0) {
        return 0;  // diagonal unrolling keeps its scratch in shared memory
    }
    return SIZE_MAX;
}
