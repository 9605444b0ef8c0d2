#include "multichannel_schedules.h"

#include "conv2d_schedules.h"

namespace halconv::sched {

using Halide::TailStrategy;
using Halide::Var;

namespace {

// Strips of rows in parallel. Each strip stages its padded rows once with x innermost
// (the boundary rule evaluated once per sample, and a vector of x reads contiguous
// samples); a vector of outputs along x then accumulates every filter, taps and
// channels outermost so each staged vector is loaded once for all filters.
void schedule_multichannel_cpu_direct(MultichannelStages &s) {
    const int vec = s.target.natural_vector_size(s.accumulator);
    Var yo{"yo"}, yi{"yi"}, xo{"xo"}, xi{"xi"};
    s.output.split(s.y, yo, yi, 4, TailStrategy::GuardWithIf)
        .split(s.x, xo, xi, vec, TailStrategy::GuardWithIf)
        .reorder(xi, s.n, xo, yi, yo)
        .parallel(yo)
        .vectorize(xi);
    s.padded.compute_at(s.output, yo).reorder_storage(s.x, s.c, s.y).vectorize(s.x, vec, TailStrategy::GuardWithIf);
    s.sum.compute_at(s.output, xo).vectorize(s.x);
    s.sum.update().reorder(s.x, s.n, s.r.x, s.r.y, s.r.z).vectorize(s.x);
}

// One thread per output sample, filters on consecutive threads (coalesced stores, and
// the threads of a pixel read the same image samples: one load serves them all).
// Blocks of 8 filters x 32 columns; fewer filters leave threads idle. No register
// blocking: each thread reloads every tap. H100, valid, f32, median of 20 (2026-11-22,
// bench/results/h100/multichannel/): 1024^2 x C 64, N 64, K 3 55.2 ms (1.4 TFLOP/s);
// 4096^2 x C 3, N 16, K 7 93.1 ms.
void schedule_multichannel_gpu_direct(MultichannelStages &s) {
    // Rows and column tiles fused into one block axis (gpu_one_per_thread says why).
    Var nb{"nb"}, xb{"xb"}, ni{"ni"}, xi{"xi"}, b{"b"};
    s.output.tile(s.n, s.x, nb, xb, ni, xi, 8, 32, TailStrategy::GuardWithIf)
        .reorder(ni, xi, xb, s.y, nb)
        .fuse(xb, s.y, b)
        .gpu_blocks(b, nb)
        .gpu_threads(ni, xi);
    s.sum.compute_at(s.output, ni);
}

}  // namespace

const ScheduleTable<MultichannelStages> &multichannel_schedules() {
    static const ScheduleTable<MultichannelStages> table = {
        {"cpu_direct", schedule_multichannel_cpu_direct},
        {"gpu_direct", schedule_multichannel_gpu_direct},
    };
    return table;
}

}  // namespace halconv::sched
