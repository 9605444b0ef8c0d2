#include "recursive_gaussian_schedules.h"

#include <utility>

namespace halconv::sched {

using Halide::Var;

namespace {

// The pass's recursions for a strip of columns, vectorized across them, at `at`'s loop
// `strip` (Halide's apps/iir_blur).
void schedule_strip(RecursivePass &p, Halide::Func at, const Var &strip, int vec) {
    for (Halide::Func f : {p.ends, p.start, p.finish}) {
        f.compute_at(at, strip).vectorize(p.x, vec, Halide::TailStrategy::GuardWithIf);
    }
    p.ends.update().reorder(p.x, Halide::RVar(p.over_line)).vectorize(p.x, vec, Halide::TailStrategy::GuardWithIf);
    for (auto [f, r] : {std::pair{p.causal, p.down}, std::pair{p.anticausal, p.up}}) {
        f.compute_at(at, strip);
        f.update(0).vectorize(p.x, vec, Halide::TailStrategy::GuardWithIf);
        f.update(1).reorder(p.x, Halide::RVar(r)).vectorize(p.x, vec, Halide::TailStrategy::GuardWithIf);
    }
    p.filtered.compute_at(at, strip).vectorize(p.x, vec, Halide::TailStrategy::GuardWithIf);
}

// Each pass's transpose in tiles of vec x vec, tile rows in parallel; a tile row is a
// strip of vec columns of the recursion, computed there. The recursions' states (six
// values per sample and direction) are stored for the strip's whole height: one vector
// wide keeps them nearer the cache than the 4 vec of apps/iir_blur (4096^2 f32, 2 cores
// of an AMD EPYC: 410 against 530 ms).
void schedule_cpu_strips(RecursiveGaussianStages &s) {
    const int vec = s.target.natural_vector_size(s.accumulator);
    Var xo{"xo"}, yo{"yo"}, xi{"xi"}, yi{"yi"};
    RecursivePass &c = s.column_pass;
    c.transposed.compute_root()
        .tile(c.x, c.y, xo, yo, xi, yi, vec, vec, Halide::TailStrategy::GuardWithIf)
        .vectorize(xi)
        .parallel(yo);
    schedule_strip(c, c.transposed, yo, vec);
    s.output.tile(s.x, s.y, xo, yo, xi, yi, vec, vec, Halide::TailStrategy::GuardWithIf).vectorize(xi).parallel(yo);
    schedule_strip(s.row_pass, s.output, yo, vec);
}

}  // namespace

const ScheduleTable<RecursiveGaussianStages> &recursive_gaussian_schedules() {
    static const ScheduleTable<RecursiveGaussianStages> table = {
        {"cpu_strips", schedule_cpu_strips},
    };
    return table;
}

}  // namespace halconv::sched
