// 2D cross-correlation on tensor cores: a hand-written CUDA kernel (runtime_kernels/)
// called as a Halide extern stage, so Halide stages can feed it and consume it.
//
//   halconv_tensor_core_valid: output = valid correlation of the input by the kernel
//     (flipped when flip: convolution). The input buffer goes to the extern stage as it
//     is; no copy, no extra memory.
//   halconv_tensor_core: same / full placement and every boundary rule, as conv2d: a
//     Halide boundary stage builds the extended, shifted image on the GPU
//       extended(x, y) = padded(x - offset_x, y - offset_y)
//     and the extern stage computes the valid correlation of it. `extended` is a second
//     output, over the output's region plus the kernel's halo (output min to output
//     max + k - 1), so the caller owns that image-sized temporary: a Plan allocates it
//     once instead of the pipeline on every call.
//   halconv_tensor_core_batch, halconv_tensor_core_valid_batch: the same over a batch of
//     images (x, y, n), each extended on its own, in one pipeline call (the extern entry
//     points take batches: halconv_tc.h).
//
// The variant (im2tensor, im2tensor_fused, im2tensor_atomic, diagonal_unroll in two
// layouts: runtime_kernels/contract.h) and the precision (f16: f16 samples and result;
// f16f32: f16 samples, f32 result; both accumulate in f32; f32: f32 samples split into
// f16 parts, f32 result, for the variants contract.h lists) pick the extern entry point,
// halconv_tc_<variant>_<precision>. CUDA targets only.
#include <string>
#include <vector>

#include "Halide.h"
#include "conv_common.h"
#include "tensor_core_schedules.h"
#include "tensor_core_stage.h"

namespace halconv::gen {

template <bool Batch>
class TensorCoreValidOf : public Halide::Generator<TensorCoreValidOf<Batch>> {
    static constexpr int dims = Batch ? 3 : 2;

public:
    Halide::GeneratorParam<Precision> precision{"precision", Precision::f16f32, precision_names};
    Halide::GeneratorParam<std::string> variant{"variant",
                                                "im2tensor_fused"};  // one of rk::contract::tensor_core_variants

    Halide::GeneratorInput<Halide::Buffer<void, dims>> input{"input"};
    Halide::GeneratorInput<Halide::Buffer<void, 2>> kernel{"kernel"};
    Halide::GeneratorInput<bool> flip{"flip"};
    Halide::GeneratorOutput<Halide::Buffer<void, dims>> output{"output"};

    void generate() {
        require_types("tensor_core", precision, input, kernel, output);
        // ALGORITHM (the schedule is the extern stage's own)
        Halide::Var x{"x"}, y{"y"};
        output = tensor_core_stage(this->get_target(), variant.value(), precision, {input, kernel, flip}, x, y,
                                   batch_vars(Batch));
    }
};

template <bool Batch>
class TensorCoreOf : public Halide::Generator<TensorCoreOf<Batch>> {
    static constexpr int dims = Batch ? 3 : 2;

public:
    Halide::GeneratorParam<Precision> precision{"precision", Precision::f16f32, precision_names};
    Halide::GeneratorParam<std::string> variant{"variant",
                                                "im2tensor_fused"};  // one of rk::contract::tensor_core_variants

    Halide::GeneratorInput<Halide::Buffer<void, dims>> input{"input"};
    Halide::GeneratorInput<Halide::Buffer<void, 2>> kernel{"kernel"};
    Halide::GeneratorInput<int32_t> boundary{"boundary"};  // a halconv::Boundary value
    Halide::GeneratorInput<double> fill{"fill"};           // value outside the image for Boundary::constant
    Halide::GeneratorInput<int32_t> offset_x{"offset_x"};
    Halide::GeneratorInput<int32_t> offset_y{"offset_y"};
    Halide::GeneratorInput<bool> flip{"flip"};
    Halide::GeneratorOutput<Halide::Buffer<void, dims>> output{"output"};
    Halide::GeneratorOutput<Halide::Buffer<void, dims>> extended{"extended"};  // the image the extern stage reads

    void generate() {
        require_types("tensor_core", precision, input, kernel, output);
        // ALGORITHM
        Halide::Var x{"x"}, y{"y"};
        const std::vector<Halide::Var> batch = batch_vars(Batch);
        output = tensor_core_stage(this->get_target(), variant.value(), precision,
                                   {Halide::Func(extended), kernel, flip}, x, y, batch);
        Halide::Func shifted =
            extended_for_extern(input, output, kernel, boundary, Halide::cast(types_of(precision).storage, fill),
                                offset_x, offset_y, x, y, batch);
        const std::vector<Halide::Var> vars = with_batch<Halide::Var>({x, y}, batch);
        extended(vars) = shifted(vars);

        // SCHEDULE
        sched::schedule_extended_image_gpu(extended, x, y, batch);
    }
};

using TensorCoreValid = TensorCoreValidOf<false>;
using TensorCoreValidBatch = TensorCoreValidOf<true>;
using TensorCore = TensorCoreOf<false>;
using TensorCoreBatch = TensorCoreOf<true>;

}  // namespace halconv::gen

HALIDE_REGISTER_GENERATOR(halconv::gen::TensorCoreValid, halconv_tensor_core_valid)
HALIDE_REGISTER_GENERATOR(halconv::gen::TensorCore, halconv_tensor_core)
HALIDE_REGISTER_GENERATOR(halconv::gen::TensorCoreValidBatch, halconv_tensor_core_valid_batch)
HALIDE_REGISTER_GENERATOR(halconv::gen::TensorCoreBatch, halconv_tensor_core_batch)
