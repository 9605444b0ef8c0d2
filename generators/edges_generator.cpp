// Edge detection as seed 001 builds it, one Halide pipeline:
//
//   blur      = the image correlated with the 5x5 Gaussian of sigma 1.4, applied as
//               [2 4 5 4 2] / 17 along x, then along y (seed 001 eq. 4)
//   laplacian = blur correlated with [0 1 0; 1 -4 1; 0 1 0]
//   output    = 1 where |laplacian| > threshold, else 0
//
// Both correlations are mode same with the same boundary rule, each applied to its
// own input (the image, then the blurred image): the result equals running the two
// filters one after the other through the library. float32 throughout. The schedule
// (fused or stage by stage on the CPU, stage by stage on the GPU) is a GeneratorParam;
// EdgesCuda is the fused form on CUDA.
#include "Halide.h"
#include "contract.h"
#include "conv_common.h"
#include "edges_schedules.h"

namespace halconv::gen {

class Edges : public Halide::Generator<Edges> {
public:
    GeneratorParam<std::string> schedule{"schedule", "cpu_fused"};  // a name of sched::edges_schedules()

    Input<Buffer<float, 2>> input{"input"};
    Input<int32_t> boundary{"boundary"};  // a halconv::Boundary value
    Input<float> fill{"fill"};            // value outside the image for Boundary::constant
    Input<float> threshold{"threshold"};
    Output<Buffer<uint8_t, 2>> output{"output"};

    void generate() {
        // ALGORITHM
        Var x{"x"}, y{"y"};
        const Expr x_min = input.dim(0).min(), width = input.dim(0).extent();
        const Expr y_min = input.dim(1).min(), height = input.dim(1).extent();
        // The output covers the image (mode same); the Laplacian reads the blur 1 sample
        // beyond it and the blur there reads the image 3 beyond: one fold from extent 4.
        const Expr near = width >= 4 && height >= 4;
        // On the CPU the image's inside (and the clamped blur's, below) is marked likely, so
        // that the loops split off its edges and read dense vectors inside instead of
        // gathering through the rule.
        const bool cpu = !get_target().has_gpu_feature();
        Func padded = extend_by_rule(input, boundary, fill, near, x, y, {}, cpu);
        const float g[5] = {2.0f / 17, 4.0f / 17, 5.0f / 17, 4.0f / 17, 2.0f / 17};
        Func blur_x{"blur_x"}, blur{"blur"}, laplacian{"laplacian"};
        Expr row = 0.0f, col = 0.0f;
        for (int i = 0; i < 5; i++) {
            row += g[i] * padded(x + i - 2, y);
        }
        blur_x(x, y) = row;
        for (int j = 0; j < 5; j++) {
            col += g[j] * blur_x(x, y + j - 2);
        }
        blur(x, y) = col;
        // The blurred image extended by the rule, for the Laplacian's 1-sample apron.
        // The Gaussian is symmetric, so under reflect, mirror and wrap the blur of the
        // extended image is the extended blur: blur is read where it is, and a tile
        // needs only its own apron of it (reading through the remapped index would make
        // bounds inference ask for the whole image). constant and nearest clamp.
        const Expr clamps = boundary == int(Boundary::constant) || boundary == int(Boundary::nearest);
        const auto inside = [&](const Expr &e) { return cpu ? Halide::likely(e) : e; };
        const Expr xc = Halide::select(clamps, Halide::clamp(inside(x), x_min, x_min + width - 1), x);
        const Expr yc = Halide::select(clamps, Halide::clamp(inside(y), y_min, y_min + height - 1), y);
        const Expr outside = x < x_min || x >= x_min + width || y < y_min || y >= y_min + height;
        Func blurred{"blurred"};
        blurred(x, y) = Halide::select(boundary == int(Boundary::constant) && outside, fill, blur(xc, yc));
        laplacian(x, y) =
            blurred(x, y - 1) + blurred(x - 1, y) + blurred(x + 1, y) + blurred(x, y + 1) - 4.0f * blurred(x, y);
        output(x, y) = Halide::cast<uint8_t>(Halide::abs(laplacian(x, y)) > threshold);
        output.dim(0).set_bounds(x_min, width).dim(1).set_bounds(y_min, height);

        // SCHEDULE
        sched::EdgesStages stages{.output = output,
                                  .laplacian = laplacian,
                                  .blur = blur,
                                  .blur_x = blur_x,
                                  .padded = padded,
                                  .x = x,
                                  .y = y,
                                  .clamps = clamps,
                                  .near = near,
                                  .boundary = boundary,
                                  .target = get_target()};
        sched::apply_schedule(sched::edges_schedules(), schedule, stages, "edges");
    }
};

// The same definition on CUDA as one hand-written kernel (runtime_kernels/edges/): each warp
// slides down a strip of columns with the Gaussian's row sums in registers and the next
// rows copied ahead into shared memory, and stores four outputs as one word. Halide's GPU schedules stage each stage in
// shared memory and recompute or re-read them per output; the best of them (a fused schedule it replaces) ran at 8-11 %
// of the memory floor on the H100 (0.267 ms at 4096^2).
class EdgesCuda : public Halide::Generator<EdgesCuda> {
public:
    GeneratorParam<std::string> form{"form", "fused"};

    Input<Buffer<float, 2>> input{"input"};
    Input<int32_t> boundary{"boundary"};
    Input<float> fill{"fill"};
    Input<float> threshold{"threshold"};
    Output<Buffer<uint8_t, 2>> output{"output"};

    void generate() {
        require(get_target().has_feature(Halide::Target::CUDA), "edges_cuda: the extern stage needs a CUDA target");
        require(std::string(form) == "fused", "edges_cuda: the one form is fused");
        // ALGORITHM (the schedule is the extern stage's own)
        Var x{"x"}, y{"y"};
        Func edges{"edges_" + std::string(form)};
        edges.define_extern(rk::contract::edges_entry(std::string(form)), {input, boundary, fill, threshold},
                            Halide::UInt(8), {x, y}, Halide::NameMangling::C, Halide::DeviceAPI::CUDA);
        output = edges;
        output.dim(0).set_bounds(input.dim(0).min(), input.dim(0).extent());
        output.dim(1).set_bounds(input.dim(1).min(), input.dim(1).extent());
    }
};

}  // namespace halconv::gen

HALIDE_REGISTER_GENERATOR(halconv::gen::Edges, halconv_edges)
HALIDE_REGISTER_GENERATOR(halconv::gen::EdgesCuda, halconv_edges_cuda)
