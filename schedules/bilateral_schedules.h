// Named schedules for the bilateral filter (generators/bilateral_generator.cpp).
#pragma once

#include "Halide.h"
#include "schedule_table.h"

namespace halconv::sched {

// The stages of output(x, y) = sum[0] / sum[1], sum a Tuple (numerator, denominator)
// over the window r of padded, weighted by spatial(r.x) spatial(r.y) and the range weight.
struct BilateralStages {
    Halide::Func output;
    Halide::Func sum;      // Tuple: pure (0, 0) plus one update over r
    Halide::Func padded;   // the image extended by the boundary rule
    Halide::Func spatial;  // g(i) = exp(-i^2 / (2 sigma_spatial^2)), i over [-radius, radius]
    Halide::Var x, y;
    Halide::RDom r;  // the window: r.x, r.y from -radius to radius
    Halide::Expr radius;
    Halide::Expr out_width, out_height;  // extents of the output buffer
    Halide::Expr near_image;             // every position read is within one fold of the image (remap_index)
    Halide::Type storage, accumulator;
    Halide::Target target;
};

// Every schedule of bilateral by name.
const ScheduleTable<BilateralStages> &bilateral_schedules();

}  // namespace halconv::sched
