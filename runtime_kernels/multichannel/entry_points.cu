// Host side of the multi-channel im2col convolution: the Halide extern convention, the
// tiling of the output pixels that bounds the column buffer, and per tile the im2col
// kernel then the GEMM (WMMA for f16 operands, cuBLAS SGEMM for f32); or, for the implicit
// variant, one implicit-GEMM launch (implicit_gemm.cuh) with no column buffer.
#include <algorithm>
#include <cstdint>
#include <string>
#include <string_view>
#include <type_traits>

#include "common/cuda_libraries.h"
#include "common/extern_call.cuh"
#include "common/workspace.h"
#include "contract.h"
#include "multichannel/halconv_mc.h"
#include "multichannel/im2col.cuh"
#include "multichannel/implicit_gemm.cuh"

namespace halconv::rk::mc {
namespace {

using rk::fail;
using rk::report_cuda_error;

// Column-buffer bytes per tile: small enough to stay in the H100's 50 MB L2 between the
// im2col kernel that writes it and the GEMM that reads it, large enough that a tile's
// GEMM fills the GPU (at 1024 x 1024, C = 64, 3 x 3: 21,760 pixels, 170 blocks).
constexpr size_t column_budget_bytes = size_t(24) << 20;
// Kernel positions are the im2col grid's y dimension.
constexpr int max_kernel_positions = 65535;

template <typename T>
halide_type_t type_of() {
    return std::is_same_v<T, float> ? halide_type_t(halide_type_float, 32) : halide_type_t(halide_type_float, 16);
}

// One cuBLAS handle per host thread, created on first use and kept for the thread's
// life: creating one costs milliseconds, and destroying it at exit could run after the
// CUDA runtime is gone.
cublasStatus_t cublas_handle(const rk::CublasFunctions &blas, cublasHandle_t *handle) {
    thread_local cublasHandle_t h = nullptr;
    if (h == nullptr) {
        if (const cublasStatus_t s = blas.create(&h); s != CUBLAS_STATUS_SUCCESS) {
            h = nullptr;
            return s;
        }
    }
    *handle = h;
    return CUBLAS_STATUS_SUCCESS;
}

std::string shape(const halide_buffer_t *b) {
    std::string s;
    for (int d = 0; d < b->dimensions; d++) {
        s += (d ? " x " : "") + std::to_string(b->dim[d].extent);
    }
    return s;
}

// The column buffer's geometry for a problem: rows (kernel positions x the channel pitch,
// padded to the GEMM's k step), tile pitch (pixels, within column_budget_bytes), and the
// filters the packed kernels are padded to.
struct ColumnPlan {
    TileGeometry g;
    size_t pixel_bytes;  // one column
    int padded_filters;
};

ColumnPlan plan_columns(int channels, int kw, int kh, int filters, int out_width, int64_t total_pixels,
                        size_t storage_bytes, bool tensor_cores) {
    ColumnPlan p{};
    TileGeometry &g = p.g;
    g.kw = kw;
    g.kh = kh;
    g.channels = channels;
    g.dpitch = contract::im2col_channel_pitch(channels);
    g.rows = kw * kh * g.dpitch;
    g.padded_rows = (g.rows + gemm_k_step - 1) / gemm_k_step * gemm_k_step;
    g.out_width = out_width;
    p.pixel_bytes = size_t(g.padded_rows) * storage_bytes;
    const int64_t budget_pixels = int64_t(column_budget_bytes / p.pixel_bytes) / pixel_block * pixel_block;
    g.pitch = int(std::min<int64_t>(std::max<int64_t>(budget_pixels, pixel_block),
                                    (total_pixels + pixel_block - 1) / pixel_block * pixel_block));
    const int bn = gemm_f16_block_filters(filters);
    p.padded_filters = tensor_cores ? (filters + bn - 1) / bn * bn : filters;
    return p;
}

// Scratch of an im2col call: the column buffer, the packed kernels and (f32, an output
// whose pixels are not evenly spaced) the dense tile cuBLAS writes.
size_t im2col_scratch_bytes(int channels, int kw, int kh, int filters, int out_width, int out_height,
                            size_t storage_bytes, bool tensor_cores) {
    const int64_t total = int64_t(out_width) * out_height;
    const ColumnPlan p = plan_columns(channels, kw, kh, filters, out_width, total, storage_bytes, tensor_cores);
    return scratch_bytes({size_t(p.g.pitch) * p.pixel_bytes, size_t(p.padded_filters) * p.pixel_bytes,
                          tensor_cores ? 0 : size_t(p.g.pitch) * size_t(filters) * sizeof(float)});
}

// explicit_columns: im2col into the column buffer, then the GEMM; implicit: the column
// matrix read from the staged image inside the GEMM (f16 operands only).
enum class Gemm { explicit_columns, implicit };

template <typename Storage, typename Out, Gemm variant = Gemm::explicit_columns>
int run(halide_buffer_t *in, halide_buffer_t *kernel, bool flip, int32_t channel_min, int32_t channel_pitch,
        halide_buffer_t *out, const char *name) {
    void *uc = nullptr;
    if (kernel->dimensions != 4 || out->dimensions != 3 || in->dimensions != 3) {
        return fail(uc, name, "image and output must be 3D (c, x, y / n, x, y) and the kernels 4D (c, kx, ky, n)");
    }
    const int channels = kernel->dim[0].extent, kw = kernel->dim[1].extent, kh = kernel->dim[2].extent;
    if (out->is_bounds_query()) {
        in->dim[0].min = channel_min;
        in->dim[0].extent = channel_pitch;
        in->dim[1].min = out->dim[1].min;
        in->dim[1].extent = out->dim[1].extent + kw - 1;
        in->dim[2].min = out->dim[2].min;
        in->dim[2].extent = out->dim[2].extent + kh - 1;
        return 0;
    }
    if (in->type != type_of<Storage>() || kernel->type != type_of<Storage>() || out->type != type_of<Out>()) {
        return fail(uc, name,
                    "image and kernels must be " + std::string(sizeof(Storage) == 4 ? "float32" : "float16") +
                        " and the output " + (sizeof(Out) == 4 ? "float32" : "float16"));
    }
    if (in->dim[0].stride != 1 || out->dim[0].stride != 1) {
        return fail(uc, name, "image channels and output filters must be dense (dim 0 stride 1)");
    }
    if (channels < 1 || kw < 1 || kh < 1 || kernel->dim[3].extent < 1 || in->dim[0].extent < channels) {
        return fail(uc, name,
                    "kernels are " + shape(kernel) + " (c x kx x ky x n) for an image of " + shape(in) +
                        " (c x x x y): the image needs at least the kernels' channel count");
    }
    if (int64_t(kw) * kh > max_kernel_positions) {
        return fail(uc, name,
                    "kernel of " + std::to_string(kw) + " x " + std::to_string(kh) + " positions; allowed " +
                        std::to_string(max_kernel_positions) + " at most");
    }
    const int first_filter = out->dim[0].min - kernel->dim[3].min, filters = out->dim[0].extent;
    if (first_filter < 0 || first_filter + filters > kernel->dim[3].extent) {
        return fail(uc, name,
                    "output channels " + std::to_string(out->dim[0].min) + " .. " +
                        std::to_string(out->dim[0].min + filters - 1) + " but the kernels are " +
                        std::to_string(kernel->dim[3].min) + " .. " +
                        std::to_string(kernel->dim[3].min + kernel->dim[3].extent - 1));
    }
    const int x0 = out->dim[1].min - in->dim[1].min, y0 = out->dim[2].min - in->dim[2].min;
    if (x0 < 0 || y0 < 0 || x0 + out->dim[1].extent + kw - 1 > in->dim[1].extent ||
        y0 + out->dim[2].extent + kh - 1 > in->dim[2].extent) {
        return fail(uc, name, "the image does not cover the output region plus the kernel's halo");
    }
    cudaStream_t stream = nullptr;
    if (int e = rk::inputs_to_device(uc, {in, kernel}, out, &stream); e != 0) {
        return e;
    }

    const Tensor3<Storage> image{reinterpret_cast<const Storage *>(in->device) + int64_t(y0) * in->dim[2].stride +
                                     int64_t(x0) * in->dim[1].stride,
                                 channels, in->dim[1].stride, in->dim[2].stride};
    const Kernels<Storage> kernels{
        reinterpret_cast<const Storage *>(kernel->device),
        channels,
        kw,
        kh,
        kernel->dim[3].extent,
        {kernel->dim[0].stride, kernel->dim[1].stride, kernel->dim[2].stride, kernel->dim[3].stride}};
    const OutputView<Out> output{reinterpret_cast<Out *>(out->device), filters, out->dim[1].extent, out->dim[1].stride,
                                 out->dim[2].stride};

    if constexpr (variant == Gemm::implicit) {
        static_assert(std::is_same_v<Storage, __half>, "the implicit GEMM multiplies f16 operands");
        const int in_w = in->dim[1].extent - x0, in_h = in->dim[2].extent - y0;
        bool ran = false;
        Scratch scratch(stream);
        cudaError_t e = launch_implicit_wgmma_f16(image, in_w, in_h, kernels, first_filter, flip, output,
                                                  out->dim[2].extent, scratch, stream, &ran);
        if (e == cudaSuccess && !ran) {
            e = launch_implicit_gemm_f16(image, in_w, in_h, kernels, first_filter, flip, output, out->dim[2].extent,
                                         scratch, stream);
        }
        const cudaError_t freed = scratch.release();
        return rk::finish_extern_call(uc, name, "running the implicit GEMM", e == cudaSuccess ? freed : e, out);
    }

    const int64_t total = int64_t(out->dim[1].extent) * out->dim[2].extent;
    if (total > INT32_MAX - pixel_block) {
        return fail(uc, name, "output of " + std::to_string(total) + " pixels; allowed below 2^31");
    }
    constexpr bool tensor_cores = std::is_same_v<Storage, __half>;
    const ColumnPlan plan =
        plan_columns(channels, kw, kh, filters, out->dim[1].extent, total, sizeof(Storage), tensor_cores);
    TileGeometry g = plan.g;
    const size_t pixel_bytes = plan.pixel_bytes;
    const int padded_filters = plan.padded_filters;
    // 4-wide loads need every pixel's first channel 4-element aligned and the channels
    // up to dpitch inside the buffer (they are read, then zeroed past C).
    const bool vector_loads = in->dim[0].extent >= g.dpitch && in->dim[1].stride % 4 == 0 &&
                              in->dim[2].stride % 4 == 0 && reinterpret_cast<uintptr_t>(image.data) % 16 == 0;

    // cuBLAS writes whole columns of ldc: straight into the output when its pixels are
    // evenly spaced, else into a dense tile that a kernel scatters.
    const bool dense_output =
        out->dim[2].stride == int64_t(g.out_width) * out->dim[1].stride && out->dim[1].stride >= filters;
    // cuBLAS is opened only here: the float16 GEMMs are halconv's own.
    const rk::CublasFunctions *api = nullptr;
    cublasHandle_t blas = nullptr;
    if constexpr (!tensor_cores) {
        const rk::CudaLibrary<rk::CublasFunctions> &cublas = rk::cublas_library();
        if (!cublas.usable()) {
            return fail(uc, name, "the float32 GEMM needs cuBLAS: " + cublas.error);
        }
        api = &cublas.functions;
        if (const cublasStatus_t s = cublas_handle(*api, &blas); s != CUBLAS_STATUS_SUCCESS) {
            return fail(uc, name, std::string("creating the cuBLAS handle: ") + api->status_string(s));
        }
        if (const cublasStatus_t s = api->set_stream(blas, stream); s != CUBLAS_STATUS_SUCCESS) {
            return fail(uc, name, std::string("setting the cuBLAS stream: ") + api->status_string(s));
        }
    }

    Storage *col = nullptr, *kmat = nullptr;
    float *tile = nullptr;
    Scratch scratch(stream);
    cudaError_t e = scratch.take(size_t(g.pitch) * pixel_bytes, &col);
    if (e == cudaSuccess) {
        e = scratch.take(size_t(padded_filters) * pixel_bytes, &kmat);
    }
    if (e == cudaSuccess && !tensor_cores && !dense_output) {
        e = scratch.take(size_t(g.pitch) * filters * sizeof(float), &tile);
    }
    if (e == cudaSuccess && g.padded_rows > g.rows) {
        e = cudaMemsetAsync(col + size_t(g.rows) * g.pitch, 0,
                            size_t(g.padded_rows - g.rows) * g.pitch * sizeof(Storage), stream);
    }
    if (e == cudaSuccess) {
        e = launch_pack_kernels(kernels, first_filter, filters, padded_filters, g, flip, kmat, stream);
    }
    std::string blas_error;
    for (g.pixel0 = 0; g.pixel0 < total && e == cudaSuccess && blas_error.empty(); g.pixel0 += g.pitch) {
        g.pixels = int(std::min<int64_t>(g.pitch, total - g.pixel0));
        e = launch_im2col(image, g, vector_loads, col, stream);
        if (e != cudaSuccess) {
            break;
        }
        if constexpr (tensor_cores) {
            e = launch_gemm_f16(col, kmat, g, output, stream);
        } else {
            const float one = 1.0f, zero = 0.0f;
            const int64_t y = g.pixel0 / g.out_width, x = g.pixel0 - y * g.out_width;
            float *c = dense_output ? output.data + y * output.sy + x * output.sx : tile;
            const int ldc = dense_output ? int(output.sx) : filters;
            const cublasStatus_t s = api->sgemm(blas, CUBLAS_OP_T, CUBLAS_OP_T, filters, g.pixels, g.padded_rows, &one,
                                                kmat, g.padded_rows, col, g.pitch, &zero, c, ldc);
            if (s != CUBLAS_STATUS_SUCCESS) {
                blas_error = std::string("cuBLAS SGEMM: ") + api->status_string(s);
            } else if (!dense_output) {
                e = launch_scatter_tile(tile, g, output, stream);
            }
        }
    }
    const cudaError_t freed = scratch.release();
    e = e == cudaSuccess ? freed : e;
    if (!blas_error.empty()) {
        return fail(uc, name, blas_error);
    }
    return rk::finish_extern_call(uc, name, "running im2col and the GEMM", e, out);
}

}  // namespace
}  // namespace halconv::rk::mc

extern "C" {

int halconv_mc_im2col_f16f32(halide_buffer_t *in, halide_buffer_t *kernel, bool flip, int32_t channel_min,
                             int32_t channel_pitch, halide_buffer_t *out) {
    return halconv::rk::mc::run<__half, float>(in, kernel, flip, channel_min, channel_pitch, out, "im2col_f16f32");
}
int halconv_mc_im2col_f16(halide_buffer_t *in, halide_buffer_t *kernel, bool flip, int32_t channel_min,
                          int32_t channel_pitch, halide_buffer_t *out) {
    return halconv::rk::mc::run<__half, __half>(in, kernel, flip, channel_min, channel_pitch, out, "im2col_f16");
}
int halconv_mc_im2col_f32(halide_buffer_t *in, halide_buffer_t *kernel, bool flip, int32_t channel_min,
                          int32_t channel_pitch, halide_buffer_t *out) {
    return halconv::rk::mc::run<float, float>(in, kernel, flip, channel_min, channel_pitch, out, "im2col_f32");
}

int halconv_mc_implicit_gemm_f16f32(halide_buffer_t *in, halide_buffer_t *kernel, bool flip, int32_t channel_min,
                                    int32_t channel_pitch, halide_buffer_t *out) {
    using halconv::rk::mc::Gemm;
    return halconv::rk::mc::run<__half, float, Gemm::implicit>(in, kernel, flip, channel_min, channel_pitch, out,
                                                               "implicit_gemm_f16f32");
}
int halconv_mc_implicit_gemm_f16(halide_buffer_t *in, halide_buffer_t *kernel, bool flip, int32_t channel_min,
                                 int32_t channel_pitch, halide_buffer_t *out) {
    using halconv::rk::mc::Gemm;
    return halconv::rk::mc::run<__half, __half, Gemm::implicit>(in, kernel, flip, channel_min, channel_pitch, out,
                                                                "implicit_gemm_f16");
}

size_t halconv_mc_workspace_bytes(const char *gemm, const char *precision, int channels, int kernel_width,
                                  int kernel_height, int filters, int out_width, int out_height) {
    using namespace halconv::rk::mc;
    const std::string_view g(gemm), p(precision);
    if (channels < 1 || kernel_width < 1 || kernel_height < 1 || filters < 1 || out_width < 1 || out_height < 1) {
        return 0;
    }
    if (g == "im2col" && (p == "f16" || p == "f16f32" || p == "f32")) {
        return im2col_scratch_bytes(channels, kernel_width, kernel_height, filters, out_width, out_height,
                                    p == "f32" ? 4 : 2, p != "f32");
    }
    if (g == "implicit_gemm" && (p == "f16" || p == "f16f32")) {
        return implicit_gemm_scratch_bytes(channels, kernel_width, kernel_height, filters, out_width, out_height,
                                           p == "f16" ? 2 : 4);
    }
    return SIZE_MAX;
}

}  // extern "C"
