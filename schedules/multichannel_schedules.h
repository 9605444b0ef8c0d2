// Named schedules for the direct multi-channel convolution
// (generators/multichannel_generator.cpp).
#pragma once

#include "Halide.h"
#include "schedule_table.h"

namespace halconv::sched {

// The stages of output(n, x, y) = sum_r kern(r, n) * padded(r.x, x + r.y - ox, y + r.z - oy).
struct MultichannelStages {
    Halide::Func output;  // (n, x, y)
    Halide::Func sum;     // (n, x, y): pure 0 plus one update over r
    Halide::Func padded;  // (c, x, y): the image extended by the boundary rule
    Halide::Var c, n, x, y;
    Halide::RDom r;  // r.x channel, r.y / r.z kernel column / row
    Halide::Type accumulator;
    Halide::Target target;
};

// Every schedule of multichannel by name.
const ScheduleTable<MultichannelStages> &multichannel_schedules();

}  // namespace halconv::sched
