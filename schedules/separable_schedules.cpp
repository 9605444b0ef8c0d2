#include "separable_schedules.h"

#include "conv2d_schedules.h"

namespace halconv::sched {

using Halide::TailStrategy;
using Halide::Var;

namespace {

// Strips of rows in parallel; each strip runs the row pass over its rows plus the
// column apron into a strip-sized buffer, then the column pass, all vectorized.
void schedule_separable_cpu(SeparableStages &s) {
    const int vec = s.target.natural_vector_size(s.accumulator);
    Var yo{"yo"}, yi{"yi"};
    cpu_parallel_strips(s.output, s.x, s.y, yo, yi, cpu_separable_strip_rows, vec);
    s.padded.compute_at(s.output, yo).vectorize(s.x, vec, TailStrategy::GuardWithIf);
    s.rows.compute_at(s.output, yo).vectorize(s.x, vec, TailStrategy::GuardWithIf);
    s.rows.update().vectorize(s.x, vec, TailStrategy::GuardWithIf);
    s.sum.compute_at(s.output, s.x).vectorize(s.x);
    s.sum.update().vectorize(s.x);
}

// Per block: the input tile plus apron and the row-pass results both live in shared
// memory, so the intermediate never goes to device memory. Staging and the row pass
// give each thread gpu_loads_in_flight samples at a time, the column pass T
// consecutive outputs of one column in registers (1xT tiling, T = 4 where it fits the
// shared budget and the reads stay within one fold of the image, else 1); both run
// the taps outermost so a coefficient is loaded once for several outputs.
// H100, 4096x4096 f32 Gaussian K=31, reflect, median of 20 (2026-11-22,
// bench/results/h100/core-f32-4096.csv): 0.633 ms. Nsight Compute: the L1/shared
// pipe is 78% busy, DRAM 6%: the row pass accumulates in shared memory (a load and
// a store per tap) and reads each sample once per tap.
void schedule_separable_gpu(SeparableStages &s) {
    const Halide::Expr row_bytes =
        gpu_staged_row_bytes(s.k_width, s.storage.bytes(), gpu_tile_width * s.accumulator.bytes());
    const GpuTileVars v(s.output);
    gpu_tile_rows(s.output.specialize(s.near_image && gpu_tile_fits(row_bytes, s.k_height, gpu_rows_per_thread) &&
                                      gpu_whole_tile(s.out_width, s.out_height, gpu_rows_per_thread)),
                  s.x, s.y, gpu_rows_per_thread, v);
    gpu_tile_rows(s.output, s.x, s.y, 1, v);

    gpu_stage_tile(s.padded, s.x, s.y, v);
    gpu_stage_tile(s.rows, s.x, s.y, v);
    gpu_spread_over_block(s.rows.update(), s.x, s.y, Halide::RVar(s.rr));
    gpu_sum_in_registers(s.sum, s.x, s.y, {s.rc}, gpu_rows_per_thread, v);
}

// Rows of the row pass in parallel, each staging its boundary-extended input row once;
// the column pass then reads the stored rows. Any kernel height costs the row pass
// nothing extra (the strip schedule recomputes k_height - 1 apron rows per strip).
void schedule_separable_cpu_two_pass(SeparableStages &s) {
    const int vec = s.target.natural_vector_size(s.accumulator);
    Halide::Func rows_out = s.rows.in();
    Var yo{"yo"}, yi{"yi"};
    rows_out.compute_root();
    cpu_parallel_strips(rows_out, s.x, s.y, yo, yi, 8, vec);
    s.padded.compute_at(rows_out, yi).vectorize(s.x, vec, TailStrategy::GuardWithIf);
    s.rows.compute_at(rows_out, s.x).vectorize(s.x);
    s.rows.update().vectorize(s.x);
    cpu_parallel_strips(s.output, s.x, s.y, yo, yi, 8, vec);
    s.sum.compute_at(s.output, s.x).vectorize(s.x);
    s.sum.update().vectorize(s.x);
}

// Two kernels with the row-pass result in device memory, as cuda-samples'
// convolutionSeparable: each thread sums its taps in a register, reading through the
// cache. No shared memory, so no limit on the kernel size.
void schedule_separable_gpu_two_pass(SeparableStages &s) {
    Halide::Func rows_out = s.rows.in();
    Var xi{"xi"};
    rows_out.compute_root();
    gpu_one_per_thread(rows_out, s.x, s.y, xi);
    s.rows.compute_at(rows_out, xi);
    gpu_one_per_thread(s.output, s.x, s.y, xi);
    s.sum.compute_at(s.output, xi);
}

}  // namespace

const ScheduleTable<SeparableStages> &separable_schedules() {
    static const ScheduleTable<SeparableStages> table = {
        {"cpu_separable", schedule_separable_cpu},
        {"gpu_separable", schedule_separable_gpu},
        {"cpu_separable_two_pass", schedule_separable_cpu_two_pass},
        {"gpu_separable_two_pass", schedule_separable_gpu_two_pass},
    };
    return table;
}

}  // namespace halconv::sched
