// The bands report of halconv_bench: host-resident images streamed through one GPU and
// spread over every visible GPU in row bands (Banding::always), against the host<->device
// copy floor: the image copied in and the output copied out at once, on two streams.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "bench_core.h"

namespace halconv::bench {

extern const std::vector<std::string> bands_columns;

// For each size and kernel (f32, mode same, boundary constant, Auto's algorithm): the
// banded call on device 0 and on every visible device, with pinned and with pageable
// host buffers; median of `reps` wall-clock calls after one warm-up, 64 outputs checked
// against a float64 sum, the device memory the plan holds. checkpoint() after each row.
void bands_report(const std::vector<Size> &sizes, const std::vector<int> &kernels, int reps, bool pageable,
                  Table &table, const std::function<void()> &checkpoint);

}  // namespace halconv::bench
