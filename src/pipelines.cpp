// The table of AOT-compiled pipelines (cmake/halconv_halide_libraries.cmake builds one
// per generator x precision x schedule).
#include "halconv_conv2d_f16_cpu_auto.h"
#include "halconv_conv2d_f16_cpu_naive.h"
#include "halconv_conv2d_f16_cpu_tiled.h"
#include "halconv_conv2d_f16_gpu_auto.h"
#include "halconv_conv2d_f16_gpu_naive.h"
#include "halconv_conv2d_f16_gpu_shared_tiled.h"
#include "halconv_conv2d_f16f32_cpu_auto.h"
#include "halconv_conv2d_f16f32_cpu_naive.h"
#include "halconv_conv2d_f16f32_cpu_tiled.h"
#include "halconv_conv2d_f16f32_gpu_auto.h"
#include "halconv_conv2d_f16f32_gpu_naive.h"
#include "halconv_conv2d_f16f32_gpu_shared_tiled.h"
#include "halconv_conv2d_f32_cpu_auto.h"
#include "halconv_conv2d_f32_cpu_naive.h"
#include "halconv_conv2d_f32_cpu_tiled.h"
#include "halconv_conv2d_f32_gpu_auto.h"
#include "halconv_conv2d_f32_gpu_naive.h"
#include "halconv_conv2d_f32_gpu_shared_tiled.h"
#include "halconv_conv2d_f64_cpu_auto.h"
#include "halconv_conv2d_f64_cpu_naive.h"
#include "halconv_conv2d_f64_cpu_tiled.h"
#include "halconv_conv2d_f64_gpu_auto.h"
#include "halconv_conv2d_f64_gpu_naive.h"
#include "halconv_conv2d_f64_gpu_shared_tiled.h"
#include "halconv_edges_cpu_fused.h"
#include "halconv_edges_cpu_staged.h"
#include "halconv_edges_gpu_fused.h"
#include "halconv_edges_gpu_staged.h"
#include "halconv_im2col_f16.h"
#include "halconv_im2col_f16_valid.h"
#include "halconv_im2col_f16f32.h"
#include "halconv_im2col_f16f32_valid.h"
#include "halconv_im2col_f32.h"
#include "halconv_im2col_f32_valid.h"
#include "halconv_implicit_f16.h"
#include "halconv_implicit_f16_valid.h"
#include "halconv_implicit_f16f32.h"
#include "halconv_implicit_f16f32_valid.h"
#include "halconv_multichannel_f16_cpu_direct.h"
#include "halconv_multichannel_f16_gpu_direct.h"
#include "halconv_multichannel_f16f32_cpu_direct.h"
#include "halconv_multichannel_f16f32_gpu_direct.h"
#include "halconv_multichannel_f32_cpu_direct.h"
#include "halconv_multichannel_f32_gpu_direct.h"
#include "halconv_multichannel_f64_cpu_direct.h"
#include "halconv_multichannel_f64_gpu_direct.h"
#include "halconv_separable_f16_cpu_separable.h"
#include "halconv_separable_f16_cpu_separable_two_pass.h"
#include "halconv_separable_f16_gpu_separable.h"
#include "halconv_separable_f16_gpu_separable_two_pass.h"
#include "halconv_separable_f16f32_cpu_separable.h"
#include "halconv_separable_f16f32_cpu_separable_two_pass.h"
#include "halconv_separable_f16f32_gpu_separable.h"
#include "halconv_separable_f16f32_gpu_separable_two_pass.h"
#include "halconv_separable_f32_cpu_separable.h"
#include "halconv_separable_f32_cpu_separable_two_pass.h"
#include "halconv_separable_f32_gpu_separable.h"
#include "halconv_separable_f32_gpu_separable_two_pass.h"
#include "halconv_separable_f64_cpu_separable.h"
#include "halconv_separable_f64_cpu_separable_two_pass.h"
#include "halconv_separable_f64_gpu_separable.h"
#include "halconv_separable_f64_gpu_separable_two_pass.h"
#include "halconv_tensor_core_dki_m16n16k16_f16.h"
#include "halconv_tensor_core_dki_m16n16k16_f16_valid.h"
#include "halconv_tensor_core_dki_m16n16k16_f16f32.h"
#include "halconv_tensor_core_dki_m16n16k16_f16f32_valid.h"
#include "halconv_tensor_core_dki_m32n8k16_f16.h"
#include "halconv_tensor_core_dki_m32n8k16_f16_valid.h"
#include "halconv_tensor_core_dki_m32n8k16_f16f32.h"
#include "halconv_tensor_core_dki_m32n8k16_f16f32_valid.h"
#include "halconv_tensor_core_im2tensor_atomic_f16.h"
#include "halconv_tensor_core_im2tensor_atomic_f16_valid.h"
#include "halconv_tensor_core_im2tensor_atomic_f16f32.h"
#include "halconv_tensor_core_im2tensor_atomic_f16f32_valid.h"
#include "halconv_tensor_core_im2tensor_f16.h"
#include "halconv_tensor_core_im2tensor_f16_valid.h"
#include "halconv_tensor_core_im2tensor_f16f32.h"
#include "halconv_tensor_core_im2tensor_f16f32_valid.h"
#include "halconv_tensor_core_im2tensor_fused_f16.h"
#include "halconv_tensor_core_im2tensor_fused_f16_valid.h"
#include "halconv_tensor_core_im2tensor_fused_f16f32.h"
#include "halconv_tensor_core_im2tensor_fused_f16f32_valid.h"
#include "halconv_unsharp_cpu_tiled.h"
#include "halconv_unsharp_gpu_tensor_core.h"
#include "internal.h"

namespace halconv::internal {

namespace {

#define HALCONV_CONV2D_ROW(p)                                                                                    \
    {                                                                                                            \
        halconv_conv2d_##p##_cpu_naive, halconv_conv2d_##p##_cpu_tiled, halconv_conv2d_##p##_cpu_auto,           \
            halconv_conv2d_##p##_gpu_naive, halconv_conv2d_##p##_gpu_shared_tiled, halconv_conv2d_##p##_gpu_auto \
    }
#define HALCONV_SEPARABLE_ROW(p)                                                                           \
    {                                                                                                      \
        halconv_separable_##p##_cpu_separable, halconv_separable_##p##_gpu_separable,                      \
            halconv_separable_##p##_cpu_separable_two_pass, halconv_separable_##p##_gpu_separable_two_pass \
    }

// Rows in halconv::Precision order, columns in variant order.
constexpr Conv2dFn conv2d_table[4][6] = {HALCONV_CONV2D_ROW(f64), HALCONV_CONV2D_ROW(f32), HALCONV_CONV2D_ROW(f16),
                                         HALCONV_CONV2D_ROW(f16f32)};
constexpr SeparableFn separable_table[4][4] = {HALCONV_SEPARABLE_ROW(f64), HALCONV_SEPARABLE_ROW(f32),
                                               HALCONV_SEPARABLE_ROW(f16), HALCONV_SEPARABLE_ROW(f16f32)};

#define HALCONV_TENSOR_CORE_ROW(p, form)                                                                 \
    {                                                                                                    \
        halconv_tensor_core_im2tensor_##p##form, halconv_tensor_core_im2tensor_fused_##p##form,          \
            halconv_tensor_core_im2tensor_atomic_##p##form, halconv_tensor_core_dki_m16n16k16_##p##form, \
            halconv_tensor_core_dki_m32n8k16_##p##form                                                   \
    }

// Rows: f16, f16f32; columns in TensorCoreVariant order.
constexpr Conv2dFn tensor_core_table[2][5] = {HALCONV_TENSOR_CORE_ROW(f16, ), HALCONV_TENSOR_CORE_ROW(f16f32, )};
constexpr TensorCoreValidFn tensor_core_valid_table[2][5] = {HALCONV_TENSOR_CORE_ROW(f16, _valid),
                                                             HALCONV_TENSOR_CORE_ROW(f16f32, _valid)};

int tensor_core_row(Precision precision) {
    if (precision != Precision::f16 && precision != Precision::f16f32) {
        throw Error("tensor-core pipelines exist for precisions f16 and f16f32 only");
    }
    return precision == Precision::f16 ? 0 : 1;
}

// Rows in halconv::Precision order; columns cpu, cuda.
constexpr MultichannelFn multichannel_table[4][2] = {
    {halconv_multichannel_f64_cpu_direct, halconv_multichannel_f64_gpu_direct},
    {halconv_multichannel_f32_cpu_direct, halconv_multichannel_f32_gpu_direct},
    {halconv_multichannel_f16_cpu_direct, halconv_multichannel_f16_gpu_direct},
    {halconv_multichannel_f16f32_cpu_direct, halconv_multichannel_f16f32_gpu_direct}};

}  // namespace

MultichannelFn multichannel_direct_pipeline(Precision precision, Device device) {
    return multichannel_table[static_cast<int>(precision)][device == Device::cuda ? 1 : 0];
}

MultichannelFn im2col_pipeline(Precision precision, bool implicit) {
    switch (precision) {
        case Precision::f32:
            if (!implicit) {
                return halconv_im2col_f32;
            }
            break;
        case Precision::f16:
            return implicit ? halconv_implicit_f16 : halconv_im2col_f16;
        case Precision::f16f32:
            return implicit ? halconv_implicit_f16f32 : halconv_im2col_f16f32;
        default:
            break;
    }
    throw Error(implicit ? "implicit GEMM pipelines exist for precisions f16 and f16f32 only"
                         : "im2col pipelines exist for precisions f32, f16 and f16f32 only");
}

Im2colValidFn im2col_valid_pipeline(Precision precision, bool implicit) {
    switch (precision) {
        case Precision::f32:
            if (!implicit) {
                return halconv_im2col_f32_valid;
            }
            break;
        case Precision::f16:
            return implicit ? halconv_implicit_f16_valid : halconv_im2col_f16_valid;
        case Precision::f16f32:
            return implicit ? halconv_implicit_f16f32_valid : halconv_im2col_f16f32_valid;
        default:
            break;
    }
    throw Error(implicit ? "implicit GEMM pipelines exist for precisions f16 and f16f32 only"
                         : "im2col pipelines exist for precisions f32, f16 and f16f32 only");
}

Conv2dFn tensor_core_pipeline(Precision precision, TensorCoreVariant variant) {
    return tensor_core_table[tensor_core_row(precision)][static_cast<int>(variant)];
}

TensorCoreValidFn tensor_core_valid_pipeline(Precision precision, TensorCoreVariant variant) {
    return tensor_core_valid_table[tensor_core_row(precision)][static_cast<int>(variant)];
}

Conv2dFn conv2d_pipeline(Precision precision, Conv2dVariant variant) {
    return conv2d_table[static_cast<int>(precision)][static_cast<int>(variant)];
}

SeparableFn separable_pipeline(Precision precision, SeparableVariant variant) {
    return separable_table[static_cast<int>(precision)][static_cast<int>(variant)];
}

EdgesFn edges_pipeline(Device device, Staging staging) {
    const bool fused = staging == Staging::fused;
    if (device == Device::cuda) {
        return fused ? halconv_edges_gpu_fused : halconv_edges_gpu_staged;
    }
    return fused ? halconv_edges_cpu_fused : halconv_edges_cpu_staged;
}

UnsharpFn unsharp_pipeline(Device device) {
    return device == Device::cuda ? halconv_unsharp_gpu_tensor_core : halconv_unsharp_cpu_tiled;
}

}  // namespace halconv::internal
