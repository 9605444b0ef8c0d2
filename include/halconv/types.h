// Enumerations shared by the public API and the Halide generators. This header has
// no dependencies so that generators/ can include it without the runtime headers.
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

// Which implementation computes the result.
enum class Algorithm : int32_t {
    automatic = 0,      // separable when the kernel is rank 1, else shared_tiled
    naive = 1,          // GPU: one thread per output pixel; CPU: a plain serial loop nest
    shared_tiled = 2,   // GPU: tile + apron in shared memory, 1xT tiling; CPU: vectorized strips
    separable = 3,      // row pass then column pass (needs a rank-1 kernel, or the separable entry)
    autoscheduled = 4,  // GPU: Anderson2021 autoscheduler; CPU: Mullapudi2016 autoscheduler
    // Tensor cores (CUDA only; precision f16 or f16f32; kernels up to 128 x 128), seed 000:
    im2tensor = 5,         // P = K^T S into device memory, then the diagonal sums (two kernels)
    im2tensor_fused = 6,   // P-blocks in shared memory, partial sums in a small buffer, recombined
    im2tensor_atomic = 7,  // as fused, the partial sums added atomically into the output
    diagonal_unroll = 8,   // seed 003's diagonal kernel-image-loop unrolling (Options::tensor_core_shape)
};

// How multi-channel convolution (halconv::multichannel_correlate2d) computes its result.
enum class MultichannelAlgorithm : int32_t {
    automatic = 0,      // CUDA: implicit_gemm for f16 and f16f32, im2col for f32; direct for
                        // f64 and on the CPU
    direct = 1,         // a Halide pipeline summing channels x taps per output (CPU and CUDA)
    im2col = 2,         // CUDA: seed 002's im2col into a bounded buffer, then a GEMM with the N
                        // kernels (f16 operands on tensor cores, f32 through cuBLAS); no f64
    implicit_gemm = 3,  // CUDA, f16 and f16f32: the same GEMM on tensor cores with the column
                        // matrix read from the image staged in shared memory (no buffer);
                        // wgmma on sm_90 GPUs for C > 8 and N > 32, else mma.sync
};

// WMMA fragment shape of Algorithm::diagonal_unroll (M x N x K: kernel columns x image
// columns x kernel rows per tensor-core operation).
enum class TensorCoreShape : int32_t {
    m16n16k16 = 0,
    m32n8k16 = 1,
};

// How a composed pipeline (halconv::detect_edges) runs its stages.
enum class Staging : int32_t {
    fused = 0,   // every stage computed per tile, intermediates in cache / shared memory
    staged = 1,  // stage by stage, each intermediate a whole image in memory
};

enum class Device : int32_t {
    automatic = 0,  // cuda when a CUDA device is present, else cpu
    cpu = 1,
    cuda = 2,
};

}  // namespace halconv

namespace halconv {

// GPU tiling geometry shared by the tiled schedules and the API's limit checks: a
// thread block is gpu_tile_width x gpu_tile_height threads and stages its input tile
// plus apron in at most gpu_shared_budget_bytes of shared memory (Halide launches with
// the default 48 KB dynamic shared-memory limit; the rest is headroom).
inline constexpr int gpu_tile_width = 32;
inline constexpr int gpu_tile_height = 8;
inline constexpr int gpu_shared_budget_bytes = 46 * 1024;
// Output rows per strip of the CPU separable schedule; taller kernels (whose apron
// would more than double the row pass per strip) run the two-pass schedule.
inline constexpr int cpu_separable_strip_rows = 32;
// Largest kernel edge of the tensor-core algorithms (8 fragments of 16).
inline constexpr int tensor_core_max_kernel = 128;
// Smallest output extent per axis the autoscheduled pipelines are run on (see halconv.h).
inline constexpr int autoscheduled_min_extent = 512;

}  // namespace halconv
