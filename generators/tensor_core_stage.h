// The tensor-core extern stage as a Halide Func, for every generator that composes it
// (generators/tensor_core_generator.cpp, tests/generators/).
#pragma once

#include <string>
#include <vector>

#include "Halide.h"
#include "contract.h"
#include "conv_common.h"

namespace halconv::gen {

// The extern stage: valid correlation of args' image by args' kernel through the entry
// point of the variant (one of rk::contract::tensor_core_variants) and precision.
inline Halide::Func tensor_core_stage(const Halide::Target &target, const std::string &variant, Precision precision,
                                      const std::vector<Halide::ExternFuncArgument> &args, const Halide::Var &x,
                                      const Halide::Var &y) {
    namespace contract = rk::contract;
    require(precision == Precision::f16 || precision == Precision::f16f32,
            "tensor_core: precision must be f16 or f16f32 (tensor cores take f16 operands)");
    require(target.has_feature(Halide::Target::CUDA), "tensor_core: the extern stages need a CUDA target");
    require(contract::contains(contract::tensor_core_variants, variant),
            "tensor_core: unknown variant '" + variant + "'");
    Halide::Func conv{"tensor_core_" + variant};
    conv.define_extern(contract::tensor_core_entry(variant, precision == Precision::f16), args,
                       types_of(precision).output, {x, y}, Halide::NameMangling::C, Halide::DeviceAPI::CUDA);
    return conv;
}

}  // namespace halconv::gen
