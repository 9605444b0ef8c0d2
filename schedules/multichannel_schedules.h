// Named schedules for the direct multi-channel convolution
// (generators/multichannel_generator.cpp).
#pragma once

#include <map>
#include <string>

#include "Halide.h"

namespace halconv::sched {

enum class MultichannelSchedule { cpu_direct, gpu_direct };

inline const std::map<std::string, MultichannelSchedule> multichannel_schedule_names = {
    {"cpu_direct", MultichannelSchedule::cpu_direct},
    {"gpu_direct", MultichannelSchedule::gpu_direct},
};

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

void schedule_multichannel_cpu_direct(MultichannelStages &s);
void schedule_multichannel_gpu_direct(MultichannelStages &s);

}  // namespace halconv::sched
