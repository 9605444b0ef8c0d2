#include "unsharp_schedules.h"

#include "conv2d_schedules.h"
#include "tensor_core_schedules.h"

namespace halconv::sched {

using Halide::TailStrategy;
using Halide::Var;

namespace {

// Strips of rows in parallel, the float16 image of each strip plus its apron staged
// once, the taps over vectors of outputs (as conv2d's cpu_tiled).
void schedule_unsharp_cpu_tiled(UnsharpStages &s) {
    const int vec = s.target.natural_vector_size(Halide::Float(32));
    Var yo{"yo"}, yi{"yi"};
    cpu_parallel_strips(s.output, s.x, s.y, yo, yi, 8, vec);
    s.shifted.compute_at(s.output, yo).vectorize(s.x, vec, TailStrategy::GuardWithIf);
    s.blur.compute_at(s.output, s.x).vectorize(s.x);
    s.blur.update().reorder(s.x, s.r.x, s.r.y).vectorize(s.x);
}

// Three kernels on one stream: the boundary stage writes the float16 image with its
// apron, the extern stage the blur (float32), and the combination reads both images.
void schedule_unsharp_gpu_tensor_core(UnsharpStages &s) {
    schedule_extended_image_gpu(s.shifted, s.x, s.y);
    s.blur.compute_root();
    gpu_one_per_thread(s.output, s.x, s.y, Var{"xi"});
}

}  // namespace

const ScheduleTable<UnsharpStages> &unsharp_schedules() {
    static const ScheduleTable<UnsharpStages> table = {
        {"cpu_tiled", schedule_unsharp_cpu_tiled},
        {"gpu_tensor_core", schedule_unsharp_gpu_tensor_core},
    };
    return table;
}

}  // namespace halconv::sched
