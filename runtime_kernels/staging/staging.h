// Converting copies between a caller's buffer and a dense staging buffer (halconv.h,
// "Staging"): 8- and 16-bit unsigned images into the precision's float type, float results
// into 8- and 16-bit outputs (rounded to nearest, ties to even, and saturated; NaN gives 0),
// and channel-interleaved batches to and from planar ones. Up to 3 dimensions, any strides.
#pragma once

#include <cmath>
#include <cstdint>

#include "common/host_device.h"

namespace halconv::rk::staging {

enum class Element : int32_t { u8, u16, f16, f32, f64 };

// A buffer as the copies see it: element type, extents and strides (in elements) of up to
// three dimensions (unused ones: extent 1), dimension 0 fastest.
struct View {
    void *data = nullptr;
    Element type = Element::f32;
    int32_t extent[3] = {1, 1, 1};
    int64_t stride[3] = {0, 0, 0};
};

// The value an integer element takes from a float result: nearest, ties to even; below 0
// gives 0, above the type's largest its largest; NaN gives 0. (Host and device.)
HALCONV_HOST_DEVICE inline double saturated(double v, double largest) {
    if (!(v == v)) {
        return 0.0;
    }
    const double r = rint(v);
    return r < 0.0 ? 0.0 : r > largest ? largest : r;
}

// dst = src converted element by element (dst's extents are src's). Host memory.
void convert_host(const View &src, const View &dst);
// The same in CUDA device memory, queued on `stream` (a cudaStream_t); 0 or a cudaError_t.
int convert_cuda(const View &src, const View &dst, void *stream);

}  // namespace halconv::rk::staging
