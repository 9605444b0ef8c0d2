#include "edges_schedules.h"

#include "conv2d_schedules.h"
#include "halconv/types.h"

namespace halconv::sched {

using Halide::TailStrategy;
using Halide::Var;

namespace {

// Strips of 32 rows in parallel; each strip computes both Gaussian passes (with their
// 3-row aprons) into strip-sized buffers, reading the image through the boundary rule
// inline, and the Laplacian and threshold inline. Specialized for reflect, mirror and
// wrap, where the Laplacian reads the blur where it is (the run-time choice of a clamped
// index otherwise makes every vector of the blur a gather), and for images where every
// read lies within one fold of the rule. 4096^2 reflect on 2 cores: 11.0 ms with a padded
// copy gathered through the rule, 6.6 ms now (bench/results/cpu/edges-2026-11-27/).
void schedule_edges_cpu_fused(EdgesStages &s) {
    const int vec = s.target.natural_vector_size(Halide::Float(32));
    Var yo{"yo"}, yi{"yi"};
    cpu_parallel_strips(s.output, s.x, s.y, yo, yi, 32, vec);
    for (Halide::Func f : {s.blur_x, s.blur}) {
        f.compute_at(s.output, yo).vectorize(s.x, vec, TailStrategy::GuardWithIf);
    }
    // One version per rule where every read lies within one fold: the rule's selects fold
    // to a likely inside that Halide splits off, so the Gaussian rows read the image's
    // inside as dense vectors with the rule inline (a gather per vector otherwise).
    for (Boundary b : {Boundary::reflect, Boundary::mirror, Boundary::wrap, Boundary::constant, Boundary::nearest}) {
        s.output.specialize(s.near && s.boundary == int(b));
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
