// Host side of the single-channel tensor-core entry points: the extern-call prologue,
// strip sizing, the workspace query.
#include <algorithm>
#include <cstdint>
#include <string>
#include <string_view>

#include "single_channel/halconv_tc.h"
#include "single_channel/im2tensor_common.cuh"

namespace halconv::rk::tc {

namespace {

template <typename Sample>
bool is_of_sample_type(const halide_buffer_t *b) {
    return b->type.code == halide_type_float && b->type.bits == 8 * sizeof(Sample) && b->type.lanes == 1;
}

template <typename T>
View<T> view_of(const halide_buffer_t *b) {
    return {reinterpret_cast<T *>(b->device), b->dim[0].extent, b->dim[1].extent, b->dim[1].stride};
}

}  // namespace

template <typename Sample>
int prepare_extern_call(void *user_context, halide_buffer_t *in, halide_buffer_t *kernel, bool flip,
                        halide_buffer_t *out, halide_type_t out_type, const char *name, ExternCallOf<Sample> *call) {
    if (answer_bounds_query(in, kernel, out)) {
        return -1;
    }
    if (in->dimensions != 2 || kernel->dimensions != 2 || out->dimensions != 2) {
        return fail(user_context, name, "image, kernel and output must be 2D");
    }
    if (!is_of_sample_type<Sample>(in) || !is_of_sample_type<Sample>(kernel) || out->type != out_type) {
        return fail(user_context, name,
                    std::string("image and kernel must be ") + (sizeof(Sample) == 2 ? "float16" : "float32") +
                        " and the output of the entry's type");
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
    ProblemOf<Sample> &p = call->problem;
    p.img = view_of<const Sample>(in);
    p.img.data += int64_t(y0) * in->dim[1].stride + x0;
    p.img.width = out->dim[0].extent + kw - 1;
    p.img.height = out->dim[1].extent + kh - 1;
    p.ker = view_of<const Sample>(kernel);
    p.flip = flip;
    p.out = reinterpret_cast<void *>(out->device);
    p.out_width = out->dim[0].extent;
    p.out_height = out->dim[1].extent;
    p.out_stride = out->dim[1].stride;
    return 0;
}

template int prepare_extern_call(void *, halide_buffer_t *, halide_buffer_t *, bool, halide_buffer_t *, halide_type_t,
                                 const char *, ExternCallOf<__half> *);
template int prepare_extern_call(void *, halide_buffer_t *, halide_buffer_t *, bool, halide_buffer_t *, halide_type_t,
                                 const char *, ExternCallOf<float> *);

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

}  // namespace halconv::rk::tc

size_t halconv_tc_workspace_bytes(const char *variant, const char *precision, int out_width, int out_height,
                                  int kernel_width, int kernel_height) {
    using namespace halconv::rk::tc;
    const std::string_view v(variant), p(precision);
    if (!halconv::rk::contract::tensor_core_takes(v, p)) {
        return SIZE_MAX;
    }
    if (v == "im2tensor") {
        return im2tensor_workspace_bytes(out_width, out_height, kernel_width);
    }
    if (v == "im2tensor_fused" || v == "im2tensor_atomic") {
        return im2tensor_fused_workspace_bytes(out_width, out_height, kernel_width, kernel_height, p,
                                               v == "im2tensor_atomic");
    }
    if (v == "diagonal_unroll" || v == "diagonal_unroll_m32n8k16") {
        return 0;  // diagonal unrolling keeps its scratch in shared memory
    }
    return SIZE_MAX;
}
