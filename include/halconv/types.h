// Enumerations shared by the public API and the Halide generators. This header has
// no dependencies so that generators/ can include it without the runtime headers. The
// algorithm enums are generated from the registry of variants (halconv/algorithm.h).
#pragma once

#include <cstdint>

namespace halconv {

// Output extent, as scipy.signal.correlate2d / convolve2d define it.
enum class Mode : int32_t {
    valid = 0,  // (H-kh+1) x (W-kw+1): only positions where the kernel fits inside
    same = 1,   // H x W, centred as SciPy centres it (also for even kernels)
    full = 2,   // (H+kh-1) x (W+kw-1): every position where kernel and image overlap
};

// How samples outside the image are defined, named as scipy.ndimage names them
// (for abcd):
enum class Boundary : int32_t {
    constant = 0,  // kkkk|abcd|kkkk with k = Options::fill_value (scipy.signal 'fill')
    nearest = 1,   // aaaa|abcd|dddd
    reflect = 2,   // dcba|abcd|dcba, edge repeated (scipy.signal 'symm')
    mirror = 3,    // dcb|abcd|cba, edge not repeated
    wrap = 4,      // abcd|abcd|abcd (scipy.signal 'wrap')
};

// Storage and arithmetic precision.
enum class Precision : int32_t {
    f64 = 0,     // float64 input, kernel, arithmetic and output
    f32 = 1,     // float32 input, kernel, arithmetic and output
    f16 = 2,     // float16 input, kernel, arithmetic (each operation rounded to f16) and output
    f16f32 = 3,  // float16 input and kernel, float32 accumulation, float32 output
};

enum class Device : int32_t {
    automatic = 0,  // cuda when a CUDA device is present, else cpu
    cpu = 1,
    cuda = 2,
};

// How gaussian_blur computes (halconv.h).
enum class GaussianMethod : int32_t {
    exact = 0,      // correlation with the sampled Gaussian's taps (gaussian_taps), the separable pipeline
    recursive = 1,  // a recursive approximation of the untruncated Gaussian, cost independent of sigma
};

// Largest kernel edge of the tensor-core algorithms (8 fragments of 16).
inline constexpr int tensor_core_max_kernel = 128;

}  // namespace halconv

// A CUDA stream: cudaStream_t and CUstream are both CUstream_st *, so either converts;
// nullptr is the legacy default stream. Declared here so that no CUDA header is needed.
struct CUstream_st;

namespace halconv {

using Stream = CUstream_st *;

}  // namespace halconv
