// The tensor-core extern stage as a Halide Func, for every generator that composes it
// (generators/tensor_core_generator.cpp, tests/generators/).
#pragma once

#include <map>
#include <string>
#include <vector>

#include "Halide.h"
#include "conv_common.h"

namespace halconv::gen {

enum class TensorCoreVariant { im2tensor, im2tensor_fused, im2tensor_atomic, dki_m16n16k16, dki_m32n8k16 };

inline const std::map<std::string, TensorCoreVariant> tensor_core_variant_names = {
    {"im2tensor", TensorCoreVariant::im2tensor},
    {"im2tensor_fused", TensorCoreVariant::im2tensor_fused},
    {"im2tensor_atomic", TensorCoreVariant::im2tensor_atomic},
    {"dki_m16n16k16", TensorCoreVariant::dki_m16n16k16},
    {"dki_m32n8k16", TensorCoreVariant::dki_m32n8k16},
};

// The extern stage: valid correlation of args' image by args' kernel through the entry
// point of the variant and precision.
inline Halide::Func tensor_core_stage(const Halide::Target &target, TensorCoreVariant variant, Precision precision,
                                      const std::vector<Halide::ExternFuncArgument> &args, const Halide::Var &x,
                                      const Halide::Var &y) {
    require(precision == Precision::f16 || precision == Precision::f16f32,
            "tensor_core: precision must be f16 or f16f32 (tensor cores take f16 operands)");
    require(target.has_feature(Halide::Target::CUDA), "tensor_core: the extern stages need a CUDA target");
    std::string variant_name;
    for (const auto &[name, v] : tensor_core_variant_names) {
        if (v == variant) {
            variant_name = name;
        }
    }
    const std::string entry = "halconv_tc_" + variant_name + (precision == Precision::f16 ? "_f16" : "_f16f32");
    Halide::Func conv{"tensor_core_" + variant_name};
    conv.define_extern(entry, args, types_of(precision).output, {x, y}, Halide::NameMangling::C,
                       Halide::DeviceAPI::CUDA);
    return conv;
}

}  // namespace halconv::gen
