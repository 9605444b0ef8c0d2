// The table of AOT-compiled pipelines (cmake/halconv_halide_libraries.cmake builds one
// per generator x precision x schedule).
#include "internal.h"

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
#include "halconv_separable_f16_cpu_separable.h"
#include "halconv_separable_f16_gpu_separable.h"
#include "halconv_separable_f16f32_cpu_separable.h"
#include "halconv_separable_f16f32_gpu_separable.h"
#include "halconv_separable_f32_cpu_separable.h"
#include "halconv_separable_f32_gpu_separable.h"
#include "halconv_separable_f64_cpu_separable.h"
#include "halconv_separable_f64_gpu_separable.h"

namespace halconv::internal {

namespace {

#define HALCONV_CONV2D_ROW(p)                                                                                      \
    {halconv_conv2d_##p##_cpu_naive, halconv_conv2d_##p##_cpu_tiled, halconv_conv2d_##p##_cpu_auto,                \
     halconv_conv2d_##p##_gpu_naive, halconv_conv2d_##p##_gpu_shared_tiled, halconv_conv2d_##p##_gpu_auto}
#define HALCONV_SEPARABLE_ROW(p) {halconv_separable_##p##_cpu_separable, halconv_separable_##p##_gpu_separable}

// Rows in halconv::Precision order, columns in variant order.
constexpr Conv2dFn conv2d_table[4][6] = {HALCONV_CONV2D_ROW(f64), HALCONV_CONV2D_ROW(f32), HALCONV_CONV2D_ROW(f16),
                                         HALCONV_CONV2D_ROW(f16f32)};
constexpr SeparableFn separable_table[4][2] = {HALCONV_SEPARABLE_ROW(f64), HALCONV_SEPARABLE_ROW(f32),
                                               HALCONV_SEPARABLE_ROW(f16), HALCONV_SEPARABLE_ROW(f16f32)};

}  // namespace

Conv2dFn conv2d_pipeline(Precision precision, Conv2dVariant variant) {
    return conv2d_table[static_cast<int>(precision)][static_cast<int>(variant)];
}

SeparableFn separable_pipeline(Precision precision, SeparableVariant variant) {
    return separable_table[static_cast<int>(precision)][static_cast<int>(variant)];
}

}  // namespace halconv::internal
