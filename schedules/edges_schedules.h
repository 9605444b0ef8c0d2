// Named schedules for the edge-detection pipeline (generators/edges_generator.cpp):
// the same algorithm fused (every stage computed per tile, intermediates in cache or
// shared memory) or stage by stage (every stage a whole image in memory, as separate
// library calls would run it).
#pragma once

#include "Halide.h"
#include "schedule_table.h"

namespace halconv::sched {

// padded -> blur_x (Gaussian rows) -> blur (Gaussian columns) -> extended by the
// boundary rule -> laplacian -> output (threshold).
struct EdgesStages {
    Halide::Func output, laplacian, blur, blur_x, padded;
    Halide::Var x, y;
    Halide::Expr out_width, out_height;
    Halide::Expr near_image;  // every position read is within one fold of the image (remap_index)
    Halide::Target target;
};

// Every schedule of edges by name.
const ScheduleTable<EdgesStages> &edges_schedules();

}  // namespace halconv::sched
