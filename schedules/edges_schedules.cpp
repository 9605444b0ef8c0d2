#include "edges_schedules.h"

#include "conv2d_schedules.h"

namespace halconv::sched {

using Halide::TailStrategy;
using Halide::Var;

namespace {

// Strips of 32 rows in parallel; each strip computes the padded input, both Gaussian
// passes (with their 3-row aprons) into strip-sized buffers that stay in cache, and
// the Laplacian and threshold inline. Specialized for reflect, mirror and wrap, where the
// Laplacian reads the blur where it is: the run-time choice of a clamped index otherwise
// makes every vector of the blur a gather (4096^2 on 2 cores: 31 -> 18 ms; constant and
// nearest, whose clamp marks the inside likely, 31 -> 20 ms).
void schedule_edges_cpu_fused(EdgesStages &s) {
    const int vec = s.target.natural_vector_size(Halide::Float(32));
    Var yo{"yo"}, yi{"yi"};
    cpu_parallel_strips(s.output, s.x, s.y, yo, yi, 32, vec);
    for (Halide::Func f : {s.padded, s.blur_x, s.blur}) {
        f.compute_at(s.output, yo).vectorize(s.x, vec, TailStrategy::GuardWithIf);
    }
    s.output.specialize(!s.clamps);
}

// Each stage over the whole image into memory: Gaussian rows, Gaussian columns,
// Laplacian, then the threshold.
void schedule_edges_cpu_staged(EdgesStages &s) {
    const int vec = s.target.natural_vector_size(Halide::Float(32));
    Var yo{"yo"}, yi{"yi"};
    for (Halide::Func f : {s.blur_x, s.blur, s.laplacian, s.output}) {
        cpu_parallel_strips(f.compute_root(), s.x, s.y, yo, yi, 8, vec);
    }
}

// Four kernels, each stage a whole image in device memory.
void schedule_edges_gpu_staged(EdgesStages &s) {
    for (Halide::Func f : {s.blur_x, s.blur, s.laplacian, s.output}) {
        gpu_one_per_thread(f.compute_root(), s.x, s.y, Var{"xi"});
    }
}

}  // namespace

const ScheduleTable<EdgesStages> &edges_schedules() {
    static const ScheduleTable<EdgesStages> table = {
        {"cpu_fused", schedule_edges_cpu_fused},
        {"cpu_staged", schedule_edges_cpu_staged},
        {"gpu_staged", schedule_edges_gpu_staged},
    };
    return table;
}

}  // namespace halconv::sched
