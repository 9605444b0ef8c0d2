// Named schedules for the unsharp-mask pipeline (generators/unsharp_generator.cpp).
#pragma once

#include "Halide.h"
#include "schedule_table.h"

namespace halconv::sched {

// cpu_tiled: the blur as a Halide sum; gpu_tensor_core: the blur is the tensor-core
// extern stage, the other stages Halide GPU kernels around it.
struct UnsharpStages {
    Halide::Func output;   // input + amount * (input - blur)
    Halide::Func blur;     // CPU: pure 0 plus one update over r; GPU: the extern stage
    Halide::Func shifted;  // the float16 image, extended and placed for a valid correlation
    Halide::Var x, y;
    Halide::RDom r;  // kernel taps (CPU)
    Halide::Target target;
};

// Every schedule of unsharp by name.
const ScheduleTable<UnsharpStages> &unsharp_schedules();

}  // namespace halconv::sched
