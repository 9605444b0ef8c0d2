// A composed pipeline for the tests: the fused im2tensor extern stage followed by a
// Halide stage (scale, then threshold to 0/1) computed on the GPU from the extern's
// device output. Proves that extern stages compose with Halide stages after them.
//   mask(x, y) = scale * conv(x, y) > threshold,  conv = valid correlation (f32 result)
#include "Halide.h"
#include "tensor_core_stage.h"

namespace halconv::gen {

class TensorCoreThreshold : public Halide::Generator<TensorCoreThreshold> {
public:
    Input<Buffer<Halide::float16_t, 2>> input{"input"};
    Input<Buffer<Halide::float16_t, 2>> kernel{"kernel"};
    Input<float> scale{"scale"};
    Input<float> threshold{"threshold"};
    Output<Buffer<uint8_t, 2>> mask{"mask"};

    void generate() {
        // ALGORITHM
        Var x{"x"}, y{"y"};
        Func conv = tensor_core_stage(get_target(), "im2tensor_fused", Precision::f16f32, {input, kernel, false}, x, y);
        mask(x, y) = Halide::cast<uint8_t>(scale * conv(x, y) > threshold);

        // SCHEDULE
        Var xo{"xo"}, yo{"yo"}, xi{"xi"}, yi{"yi"};
        conv.compute_root();
        mask.gpu_tile(x, y, xo, yo, xi, yi, 32, 8, Halide::TailStrategy::GuardWithIf);
    }
};

}  // namespace halconv::gen

HALIDE_REGISTER_GENERATOR(halconv::gen::TensorCoreThreshold, halconv_test_tensor_core_threshold)
