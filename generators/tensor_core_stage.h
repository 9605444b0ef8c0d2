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
// point of the variant (one of rk::contract::tensor_core_variants) and precision. `batch`
// (none or one variable) is the image of a batch (x, y, n): the entry points take batches.
inline Halide::Func tensor_core_stage(const Halide::Target &target, const std::string &variant, Precision precision,
                                      const std::vector<Halide::ExternFuncArgument> &args, const Halide::Var &x,
                                      const Halide::Var &y, const std::vector<Halide::Var> &batch = {}) {
    namespace contract = rk::contract;
    require(target.has_feature(Halide::Target::CUDA), "tensor_core: the extern stages need a CUDA target");
    require(contract::contains(contract::tensor_core_variants, variant),
            "tensor_core: unknown variant '" + variant + "'");
    require(contract::tensor_core_takes(variant, precision_name(precision)),
            "tensor_core: variant '" + variant + "' has no " + precision_name(precision) +
                " entry point (runtime_kernels/contract.h)");
    Halide::Func conv{"tensor_core_" + variant};
    conv.define_extern(contract::tensor_core_entry(variant, precision_name(precision)), args,
                       types_of(precision).output, with_batch<Halide::Var>({x, y}, batch), Halide::NameMangling::C,
                       Halide::DeviceAPI::CUDA);
    return conv;
}

}  // namespace halconv::gen
