// halconv::Plan: a correlation or convolution prepared once and applied to many images
// (OpenCV's createLinearFilter / apply, CUTLASS's can_implement -> workspace -> run).
#pragma once

#include <cstddef>
#include <memory>

#include "HalideBuffer.h"
#include "halconv/error.h"
#include "halconv/options.h"

namespace halconv {

enum class Operation : int32_t {
    correlate = 0,  // scipy.signal.correlate2d
    convolve = 1,   // scipy.signal.convolve2d: the kernel flipped in both axes
};

namespace detail {
struct PlanState;
}  // namespace detail

// Everything about a call that does not depend on the pixels, done once when the plan is
// made: the options validated, the kernel checked (finite), factorized (rank-1 test),
// converted and, for CUDA, uploaded; Algorithm::automatic and Device::automatic resolved
// (Dispatch says to what, and why); the variant's workspace sized. apply() then checks
// the image and output buffers and runs the pipeline: no allocation on the hot path
// beyond the first apply on each stream (a CUDA plan keeps one workspace per stream it
// has run on, reused in stream order, freed stream-ordered when the last copy of the
// plan goes).
//
// Results are those of the free functions (halconv.h) with the same options, bit for
// bit: the free functions are one-shot plans. Errors are halconv::Error: making a plan
// throws what the call would throw for the kernel and options; apply throws for image
// and output buffers of the wrong type or extent.
//
// Copies share the prepared state. Several threads may apply one plan at the same time,
// each on its own stream (or the same stream: stream order then serializes them). A
// CUDA plan belongs to the device that was current when it was made; apply from a
// thread whose current device differs throws.
class Plan {
public:
    // correlate2d / convolve2d of images of extent `image` with `kernel` (2D, of the
    // precision's storage type; host- or device-resident, copied into the plan).
    template <typename TK, int DK, int NK>
    Plan(Extent2d image, Halide::Runtime::Buffer<TK, DK, NK> &kernel, const Options &options = {},
         Operation operation = Operation::correlate)
        : Plan(create(image, kernel.raw_buffer(), options, operation)) {}

    // separable_correlate2d / separable_convolve2d: the kernel col_kernel^T row_kernel
    // (1D buffers; row_kernel along x). options.algorithm is ignored: the separable
    // pipeline runs.
    template <typename TR, int DR, int NR, typename TC, int DC, int NC>
    static Plan separable(Extent2d image, Halide::Runtime::Buffer<TR, DR, NR> &row_kernel,
                          Halide::Runtime::Buffer<TC, DC, NC> &col_kernel, const Options &options = {},
                          Operation operation = Operation::correlate) {
        return create_separable(image, row_kernel.raw_buffer(), col_kernel.raw_buffer(), options, operation);
    }

    // gaussian_blur: correlation with g g^T, g = gaussian_taps(sigma, size), through the
    // separable pipeline (options.algorithm is ignored).
    static Plan gaussian(Extent2d image, double sigma, const Options &options = {}, int size = 0);
    // gaussian_blur with `method`: exact as above (the taps of 2 ceil(3 sigma) + 1), or
    // recursive (halconv.h, "The recursive Gaussian").
    static Plan gaussian(Extent2d image, double sigma, const Options &options, GaussianMethod method);

    // Runs the plan on `image` (the plan's image extent and storage type) into `output`
    // (its output extent and output type), on options().stream. A 3D image (x, y, n) and
    // output are a batch of n images (halconv.h, "Batches").
    template <typename TI, int DI, int NI, typename TO, int DO, int NO>
    void apply(Halide::Runtime::Buffer<TI, DI, NI> &image, Halide::Runtime::Buffer<TO, DO, NO> &output) const {
        run(image.raw_buffer(), output.raw_buffer(), options().stream);
    }

    // The same on `stream` (CUDA plans; a CPU plan ignores it).
    template <typename TI, int DI, int NI, typename TO, int DO, int NO>
    void apply(Halide::Runtime::Buffer<TI, DI, NI> &image, Halide::Runtime::Buffer<TO, DO, NO> &output,
               Stream stream) const {
        run(image.raw_buffer(), output.raw_buffer(), stream);
    }

    // Allocating form: the output gets host memory (on CUDA it is left device-dirty:
    // call copy_to_host before reading it).
    template <typename TI, int DI, int NI>
    Halide::Runtime::Buffer<> apply(Halide::Runtime::Buffer<TI, DI, NI> &image) const {
        Halide::Runtime::Buffer<> output = allocate_output(image.dimensions() == 3 ? image.dim(2).extent() : 0);
        run(image.raw_buffer(), output.raw_buffer(), options().stream);
        return output;
    }

    const Dispatch &dispatch() const;
    const Options &options() const;
    Operation operation() const;
    Extent2d image_extent() const;
    Extent2d output_extent() const;
    // Device bytes each stream's workspace holds (extern-stage scratch, the extended image
    // of the tensor-core and cuFFT pipelines, the autoscheduled scratch), plus what the plan
    // prepared once from its kernel (a cuFFT plan's spectrum, the separable fft_lines
    // passes' spectra and tables); 0 for CPU plans.
    size_t workspace_bytes() const;
    // Low-level forms of the above on raw buffers (what the templates call).
    static Plan create(Extent2d image, halide_buffer_t *kernel, const Options &options, Operation operation);
    static Plan create_separable(Extent2d image, halide_buffer_t *row_kernel, halide_buffer_t *col_kernel,
                                 const Options &options, Operation operation);
    void run(halide_buffer_t *image, halide_buffer_t *output, Stream stream) const;
    // An output of the plan's extent and type with host memory; batch > 0: a batch of as
    // many (x, y, batch).
    Halide::Runtime::Buffer<> allocate_output(int batch = 0) const;

private:
    explicit Plan(std::shared_ptr<const detail::PlanState> state) : state_(std::move(state)) {}
    void run_batch(halide_buffer_t *image, halide_buffer_t *output, Stream stream) const;
    void run_staged(halide_buffer_t *image, halide_buffer_t *output, Stream stream) const;
    std::shared_ptr<const detail::PlanState> state_;
};

}  // namespace halconv
