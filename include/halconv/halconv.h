// halconv public C++ API: 2D correlation and convolution of single-channel images.
//
// Semantics are those of scipy.signal.correlate2d / convolve2d, for every mode:
//   correlate2d: out(y, x) = sum_{j,i} k(j, i) * img(y + j - oy, x + i - ox)
//   convolve2d:  the same with the kernel flipped in both axes.
// Buffers are indexed (x, y) as Halide indexes them: dim 0 is the width (fastest), dim 1
// the height; the mins of the buffers are ignored (coordinates count from each min).
// Images and outputs need stride 1 along x (rows may be any distance apart: crops
// work; transposed or subsampled views are refused), and an output must not overlap its
// image in memory: there is no in-place filtering (halconv::Error, invalid_argument).
// Out-of-image samples follow Options::boundary (scipy.ndimage names; constant with
// Options::fill_value is scipy.signal's 'fill', reflect its 'symm').
//
// Deviations from SciPy, all deliberate and checked:
//   - valid mode requires the kernel to fit inside the image in both axes; SciPy swaps
//     the operands when the kernel is larger in every axis, we throw halconv::Error.
//   - a kernel holding NaN or +-Inf is rejected (it would make every output pixel
//     non-finite, which is never what a filter means); NaN/Inf in the image propagate
//     exactly as in SciPy and are not scanned for. So does a NaN or +-Inf fill value
//     (an out-of-image sample may be anything an image sample may be), in every
//     function that takes one.
//   - the default mode is same (image filtering), where SciPy's default is full.
//
// Algorithm::automatic (the default) picks, per request, the fastest algorithm that
// supports it on the device, by measured costs: built-in tables measured on an H100 and
// on a reference CPU, or the present device's own, measured by `halconv tune`
// (halconv/tuning.h). Every algorithm it can pick stays within the chosen precision's
// stated error (the tests' bounds): Auto changes speed, and the kind of bound (per
// window for direct sums, per tile for fft), not the precision's arithmetic. Per route:
//   - direct sums (naive, shared_tiled, autoscheduled, and on CUDA sliding for kernels
//     up to 7 x 7): each sum rounded in the precision's arithmetic (f16 and f16f32: sliding
//     sums in float32), |error| <= (n + 4) u sum |k||x| for n taps (Higham 3.5);
//   - tensor cores, f16 and f16f32: float16 operands, float32 accumulation; the
//     result rounded to the output type. Within the same bound with u = 2^-24 for the
//     sums (tighter than f16's own arithmetic), plus one rounding of the output;
//   - tensor cores, f32 (im2tensor_fused, im2tensor_atomic): image and kernel scaled by
//     powers of two and split into float16 parts, the products of each weight summed
//     apart (runtime_kernels/common/split_f32.h). Each output within
//     (2^-19 + (b + 20) 2^-23) sum |k||x| + 2^-26 max|x| sum|k|, b = ceil(kw / 16)
//     ceil((kh + 3) / 16); on the seed's photo within 2x of the f32 direct sums' median
//     relative error at every K (tested);
//   - separable (rank-1 kernels): the factors rounded to the storage type (3 storage
//     roundoffs more per product) and the kernel's rank-1 residual, at most
//     rank1_tolerance(precision) ||K||_F, times the window's sum |x|. Its fft_lines
//     variant (CUDA, from 80 to 150 taps together, kw + kh, by output size) has
//     the transforms' error instead of the sums': each output within
//     8 u sqrt(2) (log2(Mr) sqrt(Mr) + log2(Mc) sqrt(Mc)) sum|row| sum|col| max|x|,
//     u = 2^-24, Mr and Mc the line lengths (256 to 4096) of its row and column passes,
//     max|x| over the image and the fill; NaN, Inf and values a transform could overflow
//     are summed directly, so they reach only the outputs whose window holds them. Its
//     tensor_core variant (f32, sm_90) sums each pass on float16 parts, each line of a tile
//     at its own power-of-two scale: each output within (kw + kh + 16) u sum|col| sum|row| |x|
//     + 2^-38 max|x| (kw max|row| sum|col| + kh max|col| sum|row|), u = 2^-24, max|x| over
//     the image and the fill (a sample 2^28 below its line's largest keeps only that
//     absolute precision); NaN and Inf are summed directly, as fft_lines does.
//   - low_rank (kernels of numerical rank r <= max_low_rank): r separable passes summed;
//     as separable, with the rank-r residual (at most low_rank_tolerance(precision, r) ||K||_F)
//     and the sums of the r products' terms (r (kw + kh) roundings of the accumulator
//     instead of kw kh), each term bounded by |col_k| |row_k| rather than |K|.
//   - fft (f64, f32, and f16 / f16f32 through float32 transforms): overlap-save on
//     T x T tiles. CPU: T a power of two from 64 to 1024 for f32, 256 for the others,
//     the cheapest for the kernel and output; kernels up to the largest T per axis.
//     CUDA (runtime_kernels/fft/halconv_fft.h: halconv's own float32 transforms, cuFFT's
//     for f64): T_x x T_y powers of two from 128 (less for small images; 16 for f64)
//     to 4096 chosen per plan, kernels up to 4095 per axis. Its error is the transforms',
//     spread over a tile rather than held to each window: each output within
//     8 u log2(T) (sum|k| + T ||k||_2) sqrt(2) T max|x| plus one rounding of the output,
//     u = 2^-53 (f64) or 2^-24, T the larger tile edge, max|x| over the image and the
//     fill. NaN, Inf and values whose transforms could overflow never go through a
//     transform, so NaN and Inf propagate as SciPy's do: on the CPU such a call runs a
//     direct sum (checked per call, one pass over the image), on CUDA the tiles holding
//     them are summed directly (slow for large kernels). Auto picks fft only where measured costs
//     (halconv tune) say it is faster, and so only where those say so does the fft
//     bound replace the direct sums'.
// Dispatch (returned by every call, and Plan::dispatch) says what ran and why.
//
// Algorithm::autoscheduled runs what Halide's autoschedulers chose for a 4096 x 4096
// image; their tiles assume outputs at least that large, so smaller outputs are
// computed into a scratch of 512 per axis and cropped. Where that scratch would exceed
// 64 MiB and 4 times the output (thin images: 1 x 10^6), autoscheduled is refused
// (ErrorCode::unsupported) and Auto does not consider it. On CUDA it runs outputs taller
// than 16383 rows in bands of that many (its schedule may give each row its own row of
// blocks, and CUDA allows 65535).
//
// On CUDA, Algorithm::separable runs a one-pass kernel of its own (runtime_kernels/separable/)
// where its staged rows and ring of row sums fit 96 KiB of shared memory (kernels up to
// 193 x 193 in f32, 257 x 257 in f16 and f16f32, whose sums it keeps in float32, 65 x 65
// in f64). In f32, f16 and f16f32, from 140 taps together (kw + kh) on outputs under 2^19
// samples, 80 on those under 2^21, 150 on larger ones (where they overtake that kernel on an
// H200, runtime_kernels/separable/separable_fft.h) and beyond it up to 4095 taps
// per axis, it runs 1D overlap-save FFTs along rows then columns (variant fft_lines: float32
// transforms, a float32 intermediate of the output's width and the image's height in the
// plan's workspace; 4096^2 f32 on an H100: 127 x 127 taps 0.26 ms against the one-pass
// kernel's 0.38); f64 past the one-pass kernel and longer kernels run the Halide schedules.
// In f32 on an sm_90 device (Hopper), from 66 taps together on outputs of 2^22 samples and
// more of images a multiple of 4 samples wide (rows TMA copies; other widths run 1.5-1.8x
// slower), up to 193 taps per axis, it runs two passes on the warpgroup tensor cores instead
// (variant tensor_core: float32 as float16 parts, a float32 intermediate of the output's
// width and the image's height in the plan's workspace; 4096^2 on an H200: 0.0995 ms at
// 63 x 63 against the one-pass kernel's 0.168, 0.124 at 127 x 127 against fft_lines' 0.24;
// runtime_kernels/separable/separable_tensor_core.h).
// GPU grids: outputs of any height run on every CUDA algorithm; an output's width plus the
// kernel's, less one, may be at most 2,097,120 samples (65535 GPU tiles of 32) on every
// CUDA algorithm but separable (ErrorCode::unsupported beyond; the edge and unsharp-mask
// pipelines likewise).
//
// Tensor-core algorithms (im2tensor, im2tensor_fused, im2tensor_atomic, diagonal_unroll)
// run on a CUDA device only, with float16 image and kernel (precision f16 or f16f32),
// or float32 ones on im2tensor_fused and im2tensor_atomic (f32, split for the float16
// tensor cores: two to three times the tensor work and the staging), and kernels up to
// tensor_core_max_kernel per axis; other precisions are refused (ErrorCode::unsupported).
// They accumulate in float32 whatever the precision; f16 then means a float16 result.
// Every mode and boundary is supported (same and full build the extended image on the
// GPU first, an image-sized temporary). On sm_90 devices im2tensor_fused and
// im2tensor_atomic at f16 / f16f32 run a Hopper (wgmma) kernel where the image's rows are
// 16-byte aligned (always in same and full mode; in valid mode when the caller's are),
// the mma.sync kernels elsewhere; results of the two differ within the stated bound.
//
// Element types per precision (halconv::Precision):
//   f64: float64 image, kernel and output       f32: float32 everywhere
//   f16: float16 everywhere (f16 arithmetic)    f16f32: float16 image and kernel, float32 output
//
// CUDA: buffers may be host- or device-resident. On device cuda the call is asynchronous
// on Options::stream (a halconv::Stream: cudaStream_t converts) and leaves the output
// device-dirty: call output.copy_to_host()
// (or synchronize the stream and use output.device) before reading it. Halide's own
// copies (copy_to_host, copy_to_device) run on the legacy default stream: with a
// non-blocking Options::stream, synchronize that stream before copy_to_host. halconv and
// Halide share the device's primary context and the caller's stream, so work queued
// before the call on that stream is seen by it, and work queued after sees its output.
//
// Batches: an image of 3 dimensions (x, y, n) is a batch of n images of one extent, and its
// output a batch of as many (correlate2d, convolve2d, their separable forms, gaussian_blur
// and Plan::apply; the allocating forms allocate (x', y', n)). Each image is filtered
// exactly as its own 2D call would filter it (the same bits). On the CPU the images run
// one after another. On CUDA a host-resident batch is copied to the device whole and its
// output left device-dirty, as a 2D call leaves it. The algorithms whose batch forms run
// a group of images in one launch per stage (naive, shared_tiled, sliding; im2tensor_fused
// and im2tensor_atomic with f16 samples on sm_90) then run the batch as one pipeline call
// per group (groups of up to 65535 images, fewer where the tensor-core rows' extended
// images would pass 64 MiB of device memory per call, taken for the call from a pool the
// plan keeps). The other algorithms' pipelines are dealt over a few streams of the plan
// (forked from Options::stream, joined back to it), so that the kernels of small images
// run side by side. Batches do not run in row bands (Banding::always is refused:
// unsupported; images that would need bands run one by one). Auto chooses for the images
// a call has (Options::batch_images; a call on an (x, y, n) image sets it to n).
// Staging: images may also be 8- or 16-bit unsigned (uint8, uint16; any precision but a
// uint16 image in f16 or f16f32, refused: float16 holds integers exactly only up to 2048),
// outputs may be uint8 or uint16 (whatever the image's type: the float result rounded to
// nearest, ties to even, and saturated to the type's range; NaN gives 0), and a batch's
// elements need not be adjacent along x: an interleaved colour image, Halide's
// make_interleaved (x, y, c with x stride c), is a batch of its channels, each filtered
// alone. Such buffers are converted into dense buffers of the precision's types on the
// plan's device (one pass more over each: a copy the size of the image or output, allocated
// for the call, stream-ordered on CUDA), filtered, and the result converted back. The float
// results are those of the same call on the values as floats, bit for bit.
// Bands (Options::bands): a CUDA call whose image and output are both host-resident
// (no device allocation; pageable or pinned) runs in row bands when it would not fit in
// the device's free memory (Banding::automatic), or always when asked (Banding::always;
// on the CPU too). The one-shot pipelines index buffers with 32 bits: a call whose
// boundary-extended image (rows padded to 64, plus an eighth for transform tiles) passes
// 2^31 - 1 elements (about 43000^2) runs in bands under Banding::automatic, on the CPU
// and for device-resident buffers too, and is refused (unsupported) under
// Banding::never. Each band of output rows is computed from its slab — the rows of the
// boundary-extended image it reads, the whole image's boundary, not the band's — by a
// valid-mode plan of the same algorithm; several bands are in flight per device (each
// lane a thread and a stream: slab copied in, pads filled on the device, pipeline, rows
// copied out), spread over BandOptions::devices (empty: every visible GPU). Pinned
// buffers are copied directly, pageable ones through pinned staging. An image and output
// both in the plan's device's memory (the image not host-dirty) run in bands too with
// Banding::always: the other GPUs read their slabs and write their rows by peer copies
// (direct where the devices allow peer access, else through the host); the output is
// left device-dirty. Results: bit for bit the one-shot call's for the deterministic
// algorithms (direct sums, separable, im2tensor / im2tensor_fused / diagonal_unroll);
// fft within its bound (the bands' tiles differ from the whole image's);
// im2tensor_atomic as nondeterministic as ever. A banded call is synchronous: it waits
// for Options::stream first, and returns with the output written (on the host for
// host-resident buffers). Each lane starts on a run of neighbouring bands and moves the
// halo rows two neighbours share within its slab instead of copying them again (a lane
// done early takes the back half of the longest run left). Device memory per device:
// streams per device x (a slab, a band's output rows, the band plan's workspace); with
// the chosen band height a slab and its rows take about 64 MiB (at least kh - 1 rows),
// or, for device-resident buffers, more for a kernel taller than 1/8 of such a band
// (bands of at least 8 (kh - 1) rows there, so the halo adds at most 1/8 to the work).
// One banded call at a time per plan (others wait). If a band fails, the call throws and
// the output's rows are partly written.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "HalideBuffer.h"
#include "halconv/error.h"
#include "halconv/options.h"
#include "halconv/plan.h"
#include "halconv/tuning.h"
#include "halconv/types.h"
#include "halconv/version.h"

namespace halconv {

// True when a CUDA device and driver are usable by this process (always false in a
// build without CUDA: cuda_info().built).
bool cuda_available();

// Threads the CPU pipelines run on, for the whole process (as cv::setNumThreads): n from 1
// to max_cpu_threads, or 0 for the default (HL_NUM_THREADS when set, else the machine's
// hardware threads). Calls already running keep theirs. Returns the previous count.
inline constexpr int max_cpu_threads = 256;  // Halide's thread pool
int set_cpu_threads(int n);
// The count set_cpu_threads set, or the default.
int cpu_threads();

// What this process sees of CUDA.
struct CudaDevice {
    int ordinal = 0;
    std::string name;
    int compute_capability_major = 0, compute_capability_minor = 0;
    int multiprocessors = 0;
    size_t memory_bytes = 0;
};
// A CUDA library that halconv opens when something first needs it instead of linking it
// (the GPU path needs only the NVIDIA driver): cuFFT for algorithm fft on CUDA, cuBLAS for
// multichannel im2col in float32. Where one is missing those are refused with its reason
// and Auto passes over them. Looked for by the dynamic loader's search for `file`
// (LD_LIBRARY_PATH, NVIDIA's pip wheels beside the Python module, ldconfig's cache), then
// in the CUDA toolkit halconv was built with.
struct CudaLibraryInfo {
    std::string name;                // "cuFFT"
    std::string file;                // "libcufft.so.12"
    std::string path;                // the file that was opened, "" when none was
    std::string unavailable_reason;  // why it cannot be used, "" when it can
};
struct CudaInfo {
    bool built = false;       // this halconv has its CUDA pipelines (built with HALCONV_WITH_CUDA)
    int runtime_version = 0;  // of the CUDA runtime inside halconv, 1000 * major + 10 * minor (0: none)
    int driver_version = 0;   // of the installed driver, same encoding (0: no driver)
    std::vector<CudaDevice> devices;
    std::string unavailable_reason;          // why cuda_available() is false, "" when it is true
    std::vector<CudaLibraryInfo> libraries;  // cuBLAS, cuFFT (opened by this call); none without CUDA
};
CudaInfo cuda_info();

// Halide's CUDA device interface of the runtime inside libhalconv, for device_malloc /
// copy_to_device on the buffers you give halconv; nullptr in a build without CUDA.
const halide_device_interface_t *cuda_device_interface();

// For Halide pipelines of your own that contain halconv's extern stages
// (runtime_kernels/single_channel/halconv_tc.h): makes Halide's CUDA runtime use the device's primary
// context (the one the CUDA runtime and the extern stages use; two contexts do not
// order work between them) and the default stream. halconv's own entry points do this
// themselves. Idempotent.
void use_shared_cuda_context();

// Rank-1 test used by Algorithm::automatic: the kernel is separable when the best
// rank-1 approximation leaves a residual (Frobenius) of at most
// (4 * unit roundoff(precision) + 64 * 2^-53) * ||K||_F, i.e. no more than rounding the
// kernel to the storage precision already costs (plus the float64 floor of the test).
// Returns the relative residual.
double rank1_relative_residual(const Halide::Runtime::Buffer<const double, 2> &kernel);
double rank1_tolerance(Precision precision);

// Low-rank test (Algorithm::low_rank, and Auto): a kernel's numerical rank is the smallest
// r whose rank-r factors (its leading singular triplets) leave a residual (Frobenius) of
// at most low_rank_tolerance(precision, r) * ||K||_F, computed explicitly from the
// factors: the rank-1 test's rule, its float64 floor (64 ulps) counted once per term, as
// the residual's own rounding grows with the terms subtracted (rank1_tolerance(p) is
// low_rank_tolerance(p, 1)). Ranks up to max_low_rank are looked for: a kernel above it
// (or whose factors miss the tolerance by any margin) is never split.
// The factors are what the low_rank pipelines run (rounded to the storage type):
// K(x, y) ~ sum_t row_factors[t * width + x] * col_factors[t * height + y].
inline constexpr int max_low_rank = 16;
struct LowRankFactors {
    int rank = 0;                     // 1 ... max_low_rank, or 0: above max_low_rank
    double relative_residual = 0.0;   // of the rank-`rank` factors (of rank max_low_rank when above)
    std::vector<double> row_factors;  // rank x kernel width (empty when rank is 0)
    std::vector<double> col_factors;  // rank x kernel height
};
LowRankFactors low_rank_factors(const Halide::Runtime::Buffer<const double, 2> &kernel, Precision precision);
double low_rank_tolerance(Precision precision, int rank);

namespace detail {
Dispatch correlate(halide_buffer_t *input, halide_buffer_t *kernel, halide_buffer_t *output, const Options &options,
                   Operation operation);
Dispatch correlate_separable(halide_buffer_t *input, halide_buffer_t *row_kernel, halide_buffer_t *col_kernel,
                             halide_buffer_t *output, const Options &options, Operation operation);
Halide::Runtime::Buffer<> allocate_output(const halide_buffer_t *input, int kernel_width, int kernel_height,
                                          const Options &options);
}  // namespace detail

// scipy.signal.correlate2d(image, kernel, mode, boundary, fillvalue) into a
// caller-provided output of the mode's extent and the precision's output type.
template <typename TI, int DI, int NI, typename TK, int DK, int NK, typename TO, int DO, int NO>
Dispatch correlate2d(Halide::Runtime::Buffer<TI, DI, NI> &image, Halide::Runtime::Buffer<TK, DK, NK> &kernel,
                     Halide::Runtime::Buffer<TO, DO, NO> &output, const Options &options = {}) {
    return detail::correlate(image.raw_buffer(), kernel.raw_buffer(), output.raw_buffer(), options,
                             Operation::correlate);
}

// scipy.signal.convolve2d: correlation with the kernel flipped in both axes.
template <typename TI, int DI, int NI, typename TK, int DK, int NK, typename TO, int DO, int NO>
Dispatch convolve2d(Halide::Runtime::Buffer<TI, DI, NI> &image, Halide::Runtime::Buffer<TK, DK, NK> &kernel,
                    Halide::Runtime::Buffer<TO, DO, NO> &output, const Options &options = {}) {
    return detail::correlate(image.raw_buffer(), kernel.raw_buffer(), output.raw_buffer(), options,
                             Operation::convolve);
}

// Allocating forms: the output gets host memory of the right type and extent.
template <typename TI, int DI, int NI, typename TK, int DK, int NK>
Halide::Runtime::Buffer<> correlate2d(Halide::Runtime::Buffer<TI, DI, NI> &image,
                                      Halide::Runtime::Buffer<TK, DK, NK> &kernel, const Options &options = {}) {
    const int kw = kernel.dimensions() > 0 ? kernel.dim(0).extent() : 0;
    const int kh = kernel.dimensions() > 1 ? kernel.dim(1).extent() : 0;
    Halide::Runtime::Buffer<> output = detail::allocate_output(image.raw_buffer(), kw, kh, options);
    detail::correlate(image.raw_buffer(), kernel.raw_buffer(), output.raw_buffer(), options, Operation::correlate);
    return output;
}

template <typename TI, int DI, int NI, typename TK, int DK, int NK>
Halide::Runtime::Buffer<> convolve2d(Halide::Runtime::Buffer<TI, DI, NI> &image,
                                     Halide::Runtime::Buffer<TK, DK, NK> &kernel, const Options &options = {}) {
    const int kw = kernel.dimensions() > 0 ? kernel.dim(0).extent() : 0;
    const int kh = kernel.dimensions() > 1 ? kernel.dim(1).extent() : 0;
    Halide::Runtime::Buffer<> output = detail::allocate_output(image.raw_buffer(), kw, kh, options);
    detail::correlate(image.raw_buffer(), kernel.raw_buffer(), output.raw_buffer(), options, Operation::convolve);
    return output;
}

// Separable correlation with the kernel col_kernel^T * row_kernel: row_kernel (1D,
// length kw) runs along x, col_kernel (1D, length kh) along y. Same result as
// correlate2d with that kh x kw kernel, at O(kw + kh) work per pixel. The algorithm
// option is ignored: this entry always runs the separable pipeline.
template <typename TI, int DI, int NI, typename TR, int DR, int NR, typename TC, int DC, int NC, typename TO, int DO,
          int NO>
Dispatch separable_correlate2d(Halide::Runtime::Buffer<TI, DI, NI> &image,
                               Halide::Runtime::Buffer<TR, DR, NR> &row_kernel,
                               Halide::Runtime::Buffer<TC, DC, NC> &col_kernel,
                               Halide::Runtime::Buffer<TO, DO, NO> &output, const Options &options = {}) {
    return detail::correlate_separable(image.raw_buffer(), row_kernel.raw_buffer(), col_kernel.raw_buffer(),
                                       output.raw_buffer(), options, Operation::correlate);
}

template <typename TI, int DI, int NI, typename TR, int DR, int NR, typename TC, int DC, int NC, typename TO, int DO,
          int NO>
Dispatch separable_convolve2d(Halide::Runtime::Buffer<TI, DI, NI> &image,
                              Halide::Runtime::Buffer<TR, DR, NR> &row_kernel,
                              Halide::Runtime::Buffer<TC, DC, NC> &col_kernel,
                              Halide::Runtime::Buffer<TO, DO, NO> &output, const Options &options = {}) {
    return detail::correlate_separable(image.raw_buffer(), row_kernel.raw_buffer(), col_kernel.raw_buffer(),
                                       output.raw_buffer(), options, Operation::convolve);
}

// ---- Gaussian blur of any sigma, through the separable path ----
// Normalized taps of the sampled Gaussian exp(-i^2 / (2 sigma^2)), i = -(size-1)/2 ..
// (size-1)/2; size 0 means 2 ceil(3 sigma) + 1. sigma > 0 and finite; sizes odd, up to
// max_gaussian_taps.
inline constexpr int max_gaussian_taps = 8191;
std::vector<double> gaussian_taps(double sigma, int size = 0);

namespace detail {
Dispatch gaussian_blur(halide_buffer_t *input, halide_buffer_t *output, double sigma, int size, const Options &options);
}  // namespace detail

// correlate2d(image, g g^T) with g = gaussian_taps(sigma, size), run as a row pass and a
// column pass (O(size) work per pixel) for every sigma: kernels whose tile outgrows
// shared memory (GPU) or a strip (CPU) run as two passes through memory. Options as for
// correlate2d (mode, boundary, precision, device); the algorithm option is ignored.
template <typename TI, int DI, int NI, typename TO, int DO, int NO>
Dispatch gaussian_blur(Halide::Runtime::Buffer<TI, DI, NI> &image, Halide::Runtime::Buffer<TO, DO, NO> &output,
                       double sigma, const Options &options = {}, int size = 0) {
    return detail::gaussian_blur(image.raw_buffer(), output.raw_buffer(), sigma, size, options);
}

// ---- The recursive Gaussian: any sigma at a cost independent of sigma ----
// gaussian_blur(image, output, sigma, options, GaussianMethod::recursive) approximates
// correlation with the untruncated sampled Gaussian g(i) = exp(-i^2 / (2 sigma^2)) / sum
// along each axis: Deriche's parallel form with three complex poles (a causal and an
// anticausal recursion per pole, summed), fitted to exp(-t^2 / 2) with a largest error
// of 2e-6 of the peak. It is never chosen for you: GaussianMethod::exact is the default.
//   - Boundaries: all five, exactly: the recursions start from the states the image's
//     infinite extension by the rule leaves at each line's end (closed-form sums over the
//     extension's period), not from a truncated extension.
//   - Mode same only (the image's extent): the filter has no finite size for valid or
//     full. Precisions f64, f32 and f16f32 (float16 arithmetic cannot carry a recursion
//     over thousands of samples: f16 is refused). The algorithm option is ignored.
//   - sigma from min_recursive_sigma to max_recursive_sigma.
//   - Not in row bands (a line's result depends on the whole line): Banding::always is
//     refused, Banding::automatic runs in one pass.
//   - Dispatch: algorithm separable, variant recursive_gaussian_cpu_strips (Halide) or
//     recursive_gaussian_cuda_segments (runtime_kernels/recursive/). On CUDA a plan's
//     workspace holds one image of sums (the first axis's result) and 12 sums per 64
//     samples of a line (Plan::workspace_bytes); lines (rows or columns) up to
//     16,776,960 samples (8,388,480 in f64), longer ones refused (Error unsupported).
//   - Accuracy: |recursive - exact| <= recursive_gaussian_error(sigma) * max |x| for every
//     output, where exact is the correlation with the untruncated sampled Gaussian (taps
//     to where they vanish in the precision) and max |x| the largest magnitude of the
//     image (and of fill_value under Boundary::constant); plus the precision's rounding.
//     gaussian_taps(sigma) truncates at 3 sigma: it differs from both by up to 0.3 %.
inline constexpr double min_recursive_sigma = 0.5;
inline constexpr double max_recursive_sigma = 10000.0;
// The bound above, computed from the 1D filters in float64: about 2e-5 for every sigma in
// range. Throws Error(invalid_argument) for sigma outside the range.
double recursive_gaussian_error(double sigma);

namespace detail {
Dispatch gaussian_blur(halide_buffer_t *input, halide_buffer_t *output, double sigma, GaussianMethod method,
                       const Options &options);
}  // namespace detail

template <typename TI, int DI, int NI, typename TO, int DO, int NO>
Dispatch gaussian_blur(Halide::Runtime::Buffer<TI, DI, NI> &image, Halide::Runtime::Buffer<TO, DO, NO> &output,
                       double sigma, const Options &options, GaussianMethod method) {
    return detail::gaussian_blur(image.raw_buffer(), output.raw_buffer(), sigma, method, options);
}

// ---- Composed pipelines: float32 images, output the image's size (PipelineOptions) ----

// seed 001's threshold (5 on 0..255 data) on images scaled to [0, 1].
inline constexpr double default_edge_threshold = 5.0 / 255.0;

namespace detail {
Device detect_edges(halide_buffer_t *image, halide_buffer_t *edges, double threshold, const PipelineOptions &options);
Device unsharp_mask(halide_buffer_t *image, halide_buffer_t *blur_kernel, halide_buffer_t *output, double amount,
                    const PipelineOptions &options);
}  // namespace detail

// Edge detection of seed 001 as one Halide pipeline: the image (float32) correlated with
// the 5x5 Gaussian of sigma 1.4 ([2 4 5 4 2] / 17 per axis), that result correlated
// with the Laplacian [0 1 0; 1 -4 1; 0 1 0], both mode same with options.boundary;
// edges (uint8, the image's extent) = 1 where |Laplacian| > threshold, else 0.
// threshold: finite, >= 0, in the image's units. Returns the device it ran on.
template <typename TI, int DI, int NI, typename TO, int DO, int NO>
Device detect_edges(Halide::Runtime::Buffer<TI, DI, NI> &image, Halide::Runtime::Buffer<TO, DO, NO> &edges,
                    double threshold = default_edge_threshold, const PipelineOptions &options = {}) {
    return detail::detect_edges(image.raw_buffer(), edges.raw_buffer(), threshold, options);
}

// Unsharp mask: output = image + amount * (image - blur), blur = correlate2d(image,
// blur_kernel, same, options.boundary) computed from float16 operands with float32
// sums. On CUDA the blur is the im2tensor_fused tensor-core extern stage between two
// Halide stages (kernels up to tensor_core_max_kernel per axis); on the CPU the same
// sum in Halide. A Gaussian kernel sharpens; a difference of Gaussians enhances one
// band. image, blur_kernel (values within float16 range) and output are float32.
template <typename TI, int DI, int NI, typename TK, int DK, int NK, typename TO, int DO, int NO>
Device unsharp_mask(Halide::Runtime::Buffer<TI, DI, NI> &image, Halide::Runtime::Buffer<TK, DK, NK> &blur_kernel,
                    Halide::Runtime::Buffer<TO, DO, NO> &output, double amount, const PipelineOptions &options = {}) {
    return detail::unsharp_mask(image.raw_buffer(), blur_kernel.raw_buffer(), output.raw_buffer(), amount, options);
}

// ---- Bilateral filter (seed 003 §II.B): a linear time-variant filter ----
// bilateral_filter(image, output, sigma_spatial, sigma_range, radius, options): each
// output is the normalized sum over the square window of (2 radius + 1)^2 samples q
// around p,
//   output(p) = sum_q ws wr I(q) / sum_q ws wr,
//   ws = exp(-|p - q|^2 / (2 sigma_spatial^2)), wr = exp(-(I(p) - I(q))^2 / (2 sigma_range^2)),
// I the image extended by options.boundary (the window's samples outside the image, and
// their range weights, are the rule's; fill_value under Boundary::constant). The output
// is the image's extent and type (f64: float64; f32: float32; f16f32: float16 image,
// float32 sums and output). f16 is refused (float16 sums of exponentials lose the small
// weights). A NaN in a window makes its output NaN; so does an infinity (0 * inf).
//   - sigma_spatial, sigma_range: finite, > 0 (sigma_range in the image's units).
//   - radius: 0 chooses ceil(3 sigma_spatial), capped at max(width, height) - 1; a radius
//     given must be at most max(width, height) - 1 (a larger window reaches past the
//     image's own extent on every side) and, on CUDA, fit the shared tile (limit
//     gpu_bilateral_tile: radius 44 in f32, 66 in f16f32, 28 in f64).
//   - Accuracy: the output is a convex combination of the window's samples, each weight
//     an exponential in the sums' type (u = 2^-24 in f32 and f16f32, 2^-53 in f64; on CUDA
//     in float32 a fast one, 2 + 1.16 |x| ulp for exp(x)): within (3 n + 12) u max|I| of
//     the float64 definition on the stored samples, n = (2 radius + 1)^2,
//     max|I| over the image (and fill_value under Boundary::constant), plus one rounding
//     of the output (tested).
//   - Algorithms (BilateralOptions::algorithm; auto is direct): direct, the window's sums
//     on CPU vectors / CUDA cores; kernel_image_unroll, CUDA and f16f32 only, seed 003's
//     tensor-core formulation (kernel-image-loop unrolling, WMMA m32n8k16: the numerator
//     and the denominator as products with the spatial weights, float16 operands), for
//     rerunning the paper's comparison: its float16 products add 2^-9 max|I| to the bound.
// Returns what ran and the radius used.
inline constexpr int default_bilateral_radius = 0;

namespace detail {
BilateralDispatch bilateral_filter(halide_buffer_t *image, halide_buffer_t *output, double sigma_spatial,
                                   double sigma_range, int radius, const BilateralOptions &options);
}  // namespace detail

template <typename TI, int DI, int NI, typename TO, int DO, int NO>
BilateralDispatch bilateral_filter(Halide::Runtime::Buffer<TI, DI, NI> &image,
                                   Halide::Runtime::Buffer<TO, DO, NO> &output, double sigma_spatial,
                                   double sigma_range, int radius = default_bilateral_radius,
                                   const BilateralOptions &options = {}) {
    return detail::bilateral_filter(image.raw_buffer(), output.raw_buffer(), sigma_spatial, sigma_range, radius,
                                    options);
}

// ---- Multi-channel convolution: C input channels, N kernels (the DNN setting) ----
// Layouts, Halide dimension order (fastest first), channels innermost:
//   image   (c, x, y):      C x W x H, i.e. H x W x C row-major (interleaved channels)
//   kernels (c, i, j, n):   N kernels of kw x kh x C, i.e. N x kh x kw x C row-major
//   output  (n, x, y):      N x W' x H', i.e. H' x W' x N row-major
//   correlate: output(n, x, y) = sum_{c,i,j} kernels(c, i, j, n) * image(c, x + i - ox, y + j - oy)
// with (ox, oy) and W' x H' as correlate2d places them for the mode, out-of-image samples
// per the boundary; convolve flips the kernels in i and j (not in c). Channels count from
// each buffer's first channel (mins in dims 1 and 2 are ignored as in correlate2d).
// Element types per precision as for correlate2d; dimension 0 of every buffer has stride
// 1. Algorithms im2col and implicit_gemm read the image as it is in valid mode; same and
// full build a boundary-extended copy on the GPU first, its channels padded with zeros
// (im2col: to a multiple of 4, seed 002's depth pitch, so that it reads 4 channels per
// load; implicit_gemm: to 2, 4 or 8 for C <= 8, else a multiple of 8, for 16-byte copies).
// implicit_gemm copies a valid-mode image whose pixels are not so aligned into such a
// padded buffer first (device memory of the image's size while it runs).
// (MultichannelOptions, MultichannelDispatch: halconv/options.h.)
namespace detail {
MultichannelDispatch correlate_multichannel(halide_buffer_t *image, halide_buffer_t *kernels, halide_buffer_t *output,
                                            const MultichannelOptions &options, bool flip);
Halide::Runtime::Buffer<> allocate_multichannel_output(const halide_buffer_t *image, const halide_buffer_t *kernels,
                                                       const MultichannelOptions &options);
}  // namespace detail

// Into a caller-provided output of N x W' x H' and the precision's output type.
template <typename TI, int DI, int NI, typename TK, int DK, int NK, typename TO, int DO, int NO>
MultichannelDispatch multichannel_correlate2d(Halide::Runtime::Buffer<TI, DI, NI> &image,
                                              Halide::Runtime::Buffer<TK, DK, NK> &kernels,
                                              Halide::Runtime::Buffer<TO, DO, NO> &output,
                                              const MultichannelOptions &options = {}) {
    return detail::correlate_multichannel(image.raw_buffer(), kernels.raw_buffer(), output.raw_buffer(), options,
                                          false);
}

template <typename TI, int DI, int NI, typename TK, int DK, int NK, typename TO, int DO, int NO>
MultichannelDispatch multichannel_convolve2d(Halide::Runtime::Buffer<TI, DI, NI> &image,
                                             Halide::Runtime::Buffer<TK, DK, NK> &kernels,
                                             Halide::Runtime::Buffer<TO, DO, NO> &output,
                                             const MultichannelOptions &options = {}) {
    return detail::correlate_multichannel(image.raw_buffer(), kernels.raw_buffer(), output.raw_buffer(), options, true);
}

// Allocating forms: the output gets host memory of the right type and extent.
template <typename TI, int DI, int NI, typename TK, int DK, int NK>
Halide::Runtime::Buffer<> multichannel_correlate2d(Halide::Runtime::Buffer<TI, DI, NI> &image,
                                                   Halide::Runtime::Buffer<TK, DK, NK> &kernels,
                                                   const MultichannelOptions &options = {}) {
    Halide::Runtime::Buffer<> output =
        detail::allocate_multichannel_output(image.raw_buffer(), kernels.raw_buffer(), options);
    detail::correlate_multichannel(image.raw_buffer(), kernels.raw_buffer(), output.raw_buffer(), options, false);
    return output;
}

template <typename TI, int DI, int NI, typename TK, int DK, int NK>
Halide::Runtime::Buffer<> multichannel_convolve2d(Halide::Runtime::Buffer<TI, DI, NI> &image,
                                                  Halide::Runtime::Buffer<TK, DK, NK> &kernels,
                                                  const MultichannelOptions &options = {}) {
    Halide::Runtime::Buffer<> output =
        detail::allocate_multichannel_output(image.raw_buffer(), kernels.raw_buffer(), options);
    detail::correlate_multichannel(image.raw_buffer(), kernels.raw_buffer(), output.raw_buffer(), options, true);
    return output;
}

// What this build of halconv contains (halconv info prints it).
struct BuildInfo {
    std::string version;                 // halconv's
    std::string build_id;                // digest of the registry and every generator, schedule and kernel source
    std::string halide_version;          // the Halide the pipelines were compiled with
    std::string cpu_targets;             // Halide targets of the CPU pipelines (multitarget, best first)
    std::string cuda_target;             // Halide target of the CUDA pipelines
    std::string cuda_architectures;      // what the hand-written kernels were compiled for
    std::vector<std::string> pipelines;  // every AOT pipeline, halconv_<generator>_<schedule>[_<precision>][_valid]
};
BuildInfo build_info();

// ---- The registry of variants (variants.cmake), as this build has it ----
// An algorithm of correlate2d / convolve2d: what --algorithm, the benchmark and Auto list.
struct AlgorithmInfo {
    Algorithm algorithm = Algorithm::automatic;
    std::string name;                   // as to_string spells it
    std::string description;            // the registry's line
    std::vector<Device> devices;        // where this build has variants (cpu, cuda); empty for a
                                        // CUDA algorithm in a build without CUDA
    std::vector<Precision> precisions;  // on any of them
    bool tensor_cores = false;          // runs on tensor cores (float16 operands; f32 split into them)
    int max_kernel_rank = 0;            // every variant needs a kernel of numerical rank at most this (1:
                                        // rank-1, or the separable entry; low_rank: max_low_rank); 0: any
    std::vector<std::string> variants;  // its registry rows, <generator>_<schedule>
};
// Every algorithm in registry order, automatic excluded.
const std::vector<AlgorithmInfo> &algorithms();
// The algorithm `name` spells ("auto" for automatic), or nullopt.
std::optional<Algorithm> algorithm_named(std::string_view name);

// Names for messages, the CLI and the benchmark ("auto" for the automatic values).
const char *to_string(Mode mode);
const char *to_string(Boundary boundary);
const char *to_string(Precision precision);
const char *to_string(Algorithm algorithm);
const char *to_string(Device device);
const char *to_string(Banding banding);
const char *to_string(Staging staging);
const char *to_string(MultichannelAlgorithm algorithm);
const char *to_string(BilateralAlgorithm algorithm);
const char *to_string(Operation operation);
// True for the algorithms that run on tensor cores in this build (none without CUDA).
bool uses_tensor_cores(Algorithm algorithm);

}  // namespace halconv
