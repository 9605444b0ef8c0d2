// FFT convolution on the GPU (overlap-save), as a Halide extern stage.
//
// The entry points follow the tensor-core convention (halconv_tc.h): called with
// out->is_bounds_query() set they report the image region they read (the output region
// plus the kernel's halo); otherwise they compute the valid cross-correlation of `in` by
// `kernel` (flipped in both axes when `flip`: convolution) into `out` on Halide's
// current CUDA stream and return 0 or a halide_error_code.
//
//   f64:    float64 image and kernel, float64 transforms (cuFFT D2Z / Z2D), float64 output
//   f32:    float32 throughout (halconv's own fused transforms, fft_line.cuh)
//   f16f32: float16 image and kernel, float32 transforms, float32 output
//   f16:    float16 image and kernel, float32 transforms, float16 output
// The kernel's spectrum comes from cuFFT in every precision.
// float16 transforms (cufftXt) are not used: their rounding, about 8 u log2(T) of
// max|image| sum|kernel| with u = 2^-11 (3 % at T = 256), is far above the float16
// output's own rounding, which the direct float16 paths reach with float32 sums.
//
// Overlap-save: the output is cut into tiles of (T_x - kw + 1) x (T_y - kh + 1) outputs;
// a tile's T_x x T_y block of the image is transformed (R2C), multiplied by the kernel's
// conjugate spectrum, transformed back (C2R), and its first outputs (those whose window
// does not wrap around the block) are the tile's. Tiles go in batches whose buffers stay
// within fft_batch_budget (so that they stay in the GPU's L2 cache between passes).
// Extra device memory: the kernel's spectrum (one tile's complex transform), the batch
// buffers (at most fft_batch_budget, or one tile's when a tile is larger) and, for f64,
// cuFFT's work area; PreparedFft reports each.
//
// Tiles whose block holds NaN, Inf or a value whose transform could overflow (|x| above
// range / (4 T_x T_y max(1, sum|kernel|))) are computed by direct sums instead, so that
// such values reach only the outputs whose window holds them, as in SciPy.
#pragma once

#include <stddef.h>

#include "HalideRuntime.h"

#ifdef __cplusplus
extern "C" {
#endif

int halconv_fft_overlap_save_f64(halide_buffer_t *in, halide_buffer_t *kernel, bool flip, halide_buffer_t *out);
int halconv_fft_overlap_save_f32(halide_buffer_t *in, halide_buffer_t *kernel, bool flip, halide_buffer_t *out);
int halconv_fft_overlap_save_f16(halide_buffer_t *in, halide_buffer_t *kernel, bool flip, halide_buffer_t *out);
int halconv_fft_overlap_save_f16f32(halide_buffer_t *in, halide_buffer_t *kernel, bool flip, halide_buffer_t *out);

#ifdef __cplusplus
}  // extern "C"

#include <memory>
#include <string>

namespace halconv::rk {

// In halconv::Precision's order.
enum class FftPrecision { f64, f32, f16, f16f32 };

// Largest transform edge, and so the largest kernel edge (a tile must hold one output).
inline constexpr int fft_max_tile = 4096;
inline constexpr int fft_max_kernel = fft_max_tile - 1;
// The batch's tile buffers (real blocks and their spectra) stay within this.
inline constexpr size_t fft_batch_budget = size_t(32) << 20;

// How an output of out_width x out_height is cut into tiles for a kernel_width x
// kernel_height kernel.
struct FftTiling {
    int tile_x = 0, tile_y = 0;    // T_x x T_y: the transform size
    int step_x = 0, step_y = 0;    // outputs per tile and axis: T - k + 1
    int tiles_x = 0, tiles_y = 0;  // tiles per axis
    int batch = 0;                 // tiles per cuFFT call
    int tiles() const { return tiles_x * tiles_y; }
};

// The tiling of least estimated time (transforms, passes and launches); tile 0 x 0 when
// the kernel exceeds fft_max_kernel.
FftTiling fft_tiling(int out_width, int out_height, int kernel_width, int kernel_height, FftPrecision precision);
// Complex values between the rows of a tile's spectrum: T_x / 2 + 1 (cuFFT's layout)
// for f64, rounded up to 32 bytes for the fused kernels' column loads otherwise.
int fft_spectrum_pitch(const FftTiling &t, FftPrecision p);
// Bytes of one tile's real block (f64 only: the fused form has none) and of its
// spectrum (T_y rows of fft_spectrum_pitch complex values).
size_t fft_block_bytes(const FftTiling &t, FftPrecision p);
size_t fft_block_spectrum_bytes(const FftTiling &t, FftPrecision p);
// What one tile of a batch takes of the batch buffers (block, if any, and spectrum):
// fft_batch_budget bounds a batch's sum.
size_t fft_tile_buffer_bytes(const FftTiling &t, FftPrecision p);
// The largest |sample| a transform of tile_elements samples takes: its largest
// intermediate, tile_elements max|x| max(1, sum|kernel|), stays within a quarter of the
// transform type's range (f64's when f64_transforms, else f32's). The CPU and CUDA FFTs
// both send larger samples (and NaN) to direct sums.
double fft_transform_limit(double tile_elements, double kernel_abs_sum, bool f64_transforms);

// The cuFFT plans of a tiling and, once set_kernel ran, the kernel's spectrum: what a
// halconv::Plan prepares once and the stage uses on every call (installed through
// WorkspaceScope). Without one installed, a stage call prepares its own.
class PreparedFft;

struct PreparedFftDeleter {
    void operator()(PreparedFft *p) const;
};
using PreparedFftPtr = std::unique_ptr<PreparedFft, PreparedFftDeleter>;

// Plans for the tiling of this output and kernel. Throws std::runtime_error saying why
// (no tiling, cuFFT failure).
PreparedFftPtr prepare_fft(FftPrecision precision, int out_width, int out_height, int kernel_width, int kernel_height);
// Device bytes a call takes from the workspace: the batch buffers and the work area.
size_t fft_workspace_bytes(const PreparedFft &p);
// Device bytes the prepared object holds itself: the spectrum (and the twiddle and pass
// tables).
size_t fft_spectrum_bytes(const PreparedFft &p);
const FftTiling &fft_tiling_of(const PreparedFft &p);
// The kernel's conjugate spectrum, from the kernel on the device (storage type of the
// precision, `row_stride` elements between rows), flipped when `flip`; on `stream`, which
// it synchronizes. Throws std::runtime_error on a CUDA or cuFFT failure.
void set_fft_kernel(PreparedFft &p, const void *kernel_device, int row_stride, bool flip, void *stream);

}  // namespace halconv::rk
#endif
