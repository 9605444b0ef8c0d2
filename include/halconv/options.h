// What a call asks for (Options and the options of the other entry points) and what it
// resolved to (Dispatch). Semantics: halconv/halconv.h.
#pragma once

#include <string>
#include <vector>

#include "halconv/algorithm.h"
#include "halconv/types.h"

namespace halconv {

// Whether a CUDA call on a host-resident image and output runs in row bands (halconv.h,
// "Bands"): each band's rows plus the kernel's halo copied in, filtered and copied out,
// several bands in flight per device, over one or several GPUs.
enum class Banding : int32_t {
    automatic = 0,  // bands when image, output and workspace would not fit in the device's free memory
    always = 1,     // bands whenever both buffers are host-resident (CPU too), or both on the device (several GPUs)
    never = 2,      // one pass on the plan's device, whatever it needs (may fail with out_of_memory)
};

struct BandOptions {
    Banding banding = Banding::automatic;
    int band_rows = 0;           // output rows per band; 0: chosen (a band's slab and rows about 64 MiB)
    int streams_per_device = 0;  // bands in flight per device; 0: 4
    std::vector<int> devices;    // CUDA ordinals the bands spread over; empty: every visible device
};

struct Options {
    Algorithm algorithm = Algorithm::automatic;
    Precision precision = Precision::f32;
    Mode mode = Mode::same;
    Boundary boundary = Boundary::constant;
    double fill_value = 0.0;  // every out-of-image sample under Boundary::constant, rounded to the image's type
    Device device = Device::automatic;
    Stream stream = nullptr;  // CUDA stream for device work (cudaStream_t converts); nullptr = the default stream
    BandOptions bands;        // host-resident images too large for the device, or several GPUs
    // Mode::same only: the kernel's placement shifted as scipy.ndimage's origin shifts it
    // (OpenCV's anchor): output(x, y) is the same-mode result at (x - origin_x, y - origin_y)
    // of the boundary-extended image. Allowed while the output sample stays under the
    // kernel: -c <= origin <= k - 1 - c, c the same mode's centre ((k - 1) / 2 taps for
    // correlation, k / 2 for convolution). For odd k it is scipy.ndimage's origin; for even
    // k SciPy's signal and ndimage centre one sample apart: scipy.ndimage.correlate's origin o
    // is o + 1 here, scipy.ndimage.convolve's o - 1.
    int origin_x = 0, origin_y = 0;
    // Images per call the plan is made for: Algorithm::automatic predicts the time of that
    // many images, which a batch (x, y, n) runs at about the rate of one image of n times
    // the pixels. A plan for small images that will mostly run batches should say so (at
    // 1024^2 one image's fixed costs favour other algorithms than 64 of them do); a call on
    // an (x, y, n) image sets it to n. 1 or more; it changes nothing but Auto's choice.
    int batch_images = 1;
};

// Extents (width, height) of an image, a kernel or an output.
struct Extent2d {
    int width = 0;
    int height = 0;
};

// Output extent of a mode: valid (H-kh+1) x (W-kw+1), same H x W, full (H+kh-1) x (W+kw-1).
Extent2d output_extent(Extent2d image, Extent2d kernel, Mode mode);

// What a call or a Plan resolved Device::automatic and Algorithm::automatic to.
struct Dispatch {
    Device device = Device::cpu;
    Algorithm algorithm = Algorithm::naive;
    std::string variant;  // the registry row that runs, <generator>_<schedule> (variants.cmake)
    std::string reason;   // one line: why this algorithm (auto's comparison, or that it was asked for)
};

// ---- Composed pipelines ----
struct PipelineOptions {
    Boundary boundary = Boundary::reflect;  // for every stage's input (no spurious edges at the frame)
    double fill_value = 0.0;                // Boundary::constant
    Device device = Device::automatic;
    Stream stream = nullptr;           // as Options::stream
    Staging staging = Staging::fused;  // detect_edges: fused or stage by stage (same result)
};

// ---- Bilateral filter ----
struct BilateralOptions {
    BilateralAlgorithm algorithm = BilateralAlgorithm::automatic;
    Precision precision = Precision::f32;   // f64, f32 or f16f32
    Boundary boundary = Boundary::reflect;  // the window's samples outside the image
    double fill_value = 0.0;                // Boundary::constant
    Device device = Device::automatic;
    Stream stream = nullptr;  // as Options::stream
};

// ---- Multi-channel convolution ----
struct MultichannelOptions {
    MultichannelAlgorithm algorithm = MultichannelAlgorithm::automatic;
    Precision precision = Precision::f32;
    Mode mode = Mode::same;
    Boundary boundary = Boundary::constant;
    double fill_value = 0.0;  // every out-of-image sample under Boundary::constant
    Device device = Device::automatic;
    Stream stream = nullptr;  // as Options::stream
};

struct BilateralDispatch {
    Device device = Device::cpu;
    BilateralAlgorithm algorithm = BilateralAlgorithm::direct;
    std::string variant;  // the registry row that ran
    int radius = 0;       // the window's radius (as given, or chosen)
};

struct MultichannelDispatch {
    Device device = Device::cpu;
    MultichannelAlgorithm algorithm = MultichannelAlgorithm::direct;
};

}  // namespace halconv
