// The bands report of halconv_bench: host-resident images streamed through one GPU and
// spread over every visible GPU in row bands (Banding::always), against the host<->device
// copy floor of as many GPUs: each moving its share of the image in and of the output out
// at once. With several GPUs also device-resident images (in device 0's memory) spread
// over all of them, against the one-shot call and bands on device 0.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "bench_core.h"

namespace halconv::bench {

extern const std::vector<std::string> bands_columns;

// For each size and kernel (f32, mode same, boundary constant, Auto's algorithm): the
// banded call on device 0 and on every visible device, with pinned and with pageable
// host buffers (and device-resident ones where there are several GPUs); median of `reps`
// wall-clock calls after one warm-up, 64 outputs checked against a float64 sum, the device
// memory the plan holds. `scaling` is the one-GPU time over the n-GPU time over n;
// `copy_scaling` the same of the copy floors (what the host's links allow the bands).
// checkpoint() after each row.
void bands_report(const std::vector<Size> &sizes, const std::vector<int> &kernels, int reps, bool pageable,
                  Table &table, const std::function<void()> &checkpoint);

}  // namespace halconv::bench
