// Named schedules for the recursive Gaussian (generators/recursive_gaussian_generator.cpp).
#pragma once

#include "Halide.h"
#include "schedule_table.h"

namespace halconv::sched {

// One pass: the recursion down the columns of its input, then the result transposed.
struct RecursivePass {
    Halide::Func transposed;     // transposed(x, y) = filtered(y, x): the pass's result
    Halide::Func filtered;       // sum over the poles of causal + anticausal
    Halide::Func causal;         // undef, then update 0 (first row) and update 1 (down the rows)
    Halide::Func anticausal;     // undef, then update 0 (last row) and update 1 (up the rows)
    Halide::Func ends;           // the line's head and tail sums (periodic rules): zero, then one update
    Halide::Func start, finish;  // the states before the first and after the last sample, per column
    Halide::Var x, y;
    Halide::RDom over_line, down, up;  // ends' update, causal's update 1, anticausal's update 1
};

// The column pass, then the row pass on its transposed result; `output` reads the row
// pass's `transposed` (inlined into it).
struct RecursiveGaussianStages {
    Halide::Func output;
    Halide::Var x, y;
    RecursivePass column_pass, row_pass;
    Halide::Target target;
    Halide::Type accumulator;
};

const ScheduleTable<RecursiveGaussianStages> &recursive_gaussian_schedules();

}  // namespace halconv::sched
