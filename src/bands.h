// Row bands (halconv.h, "Bands"): a call on a host-resident image cut into bands of output
// rows, each computed by a valid-mode plan of the same algorithm from its slab — the rows
// of the boundary-extended image it reads (runtime_kernels/bands/band_slab.h). The layout and
// the CPU run here; the CUDA run (copies, streams, devices) in bands_cuda.cpp.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <vector>

#include "bands/band_slab.h"
#include "internal.h"
#include "single_channel/halconv_tc.h"

namespace halconv::internal {

// Device bytes a band's slab and output rows take together when band_rows is chosen.
inline constexpr size_t band_target_bytes = size_t(64) << 20;
// A chosen band of a device-resident call has at least this many times the kernel's halo
// (kh - 1) in rows, so that the halo adds at most 1 / band_halo_ratio to the band's work
// (its pipeline computes over the slab): a tall kernel takes taller bands than
// band_target_bytes. Host-resident calls keep band_target_bytes (at least kh - 1 rows):
// their time is the copies', which hide the halo's work, and taller bands lengthen the
// start and end of the call, where only one direction of copies runs (H200, 32768^2
// K = 127 pinned: 0.95 of the copy floor with 64 MiB bands, 0.92 with 8 (kh - 1) rows).
inline constexpr int band_halo_ratio = 8;
inline constexpr int band_default_streams = 4;
inline constexpr int band_max_streams = 32;

struct BandLayout {
    Extent2d image, kernel, output;
    int offset_x = 0, offset_y = 0;  // output (x, y) reads the extended image from (x - offset_x, y - offset_y)
    int band_rows = 0;               // output rows per band (the last may have fewer)
    int bands = 0;
    size_t storage_bytes = 0, output_bytes = 0;  // per element

    int first_row(int band) const { return band * band_rows; }
    int rows_of(int band) const { return std::min(band_rows, output.height - first_row(band)); }
    // Whether slab rows are 16-byte multiples apart, as the Hopper tensor-core kernel's TMA
    // reads them, or deliberately not: the slab mirrors the image the one-shot call's
    // extern stage reads (the padded extended image in same and full mode, the caller's in
    // valid mode), so that bands run the kernel that call runs and give the same bits.
    bool tma_rows = true;
    // The slab of a band of `rows` output rows, and the elements between its rows.
    Extent2d slab(int rows) const { return {output.width + kernel.width - 1, rows + kernel.height - 1}; }
    int64_t slab_pitch() const {
        const int64_t width = output.width + kernel.width - 1, padded = halconv_tc_tma_pitch(width, storage_bytes);
        return tma_rows ? padded : (padded == width ? width + 1 : width);
    }
    // The image row slab row r of `band` copies; -1 for a row of the fill.
    int64_t source_row(int band, int r, Boundary boundary) const {
        return rk::band_source_index(int64_t(first_row(band)) + r - offset_y, image.height, int(boundary));
    }
    // The slab rows `band` takes over from the slab of `previous` (the band its lane ran
    // last, -1 for none): the halo both read, when previous is the band above it and the
    // rows moved do not overlap their new place (band_rows >= kernel.height - 1). These
    // rows are then moved within the lane's memory instead of copied from the image again,
    // which saves (kernel.height - 1) / band_rows of the input's traffic.
    int kept_rows(int previous, int band) const {
        return previous >= 0 && previous == band - 1 && kernel.height - 1 <= band_rows ? kernel.height - 1 : 0;
    }
};

// The bands of a call handed out to `lanes` workers: each starts on a contiguous share
// (in lane order, so a device's lanes cover neighbouring rows), so that consecutive bands
// keep their halo (BandLayout::kept_rows); a worker whose share is done takes the back
// half (rounded up) of the largest share left, which balances lanes of unequal speed.
class BandQueue {
public:
    BandQueue(int bands, int lanes);
    // The next band for `lane`, or -1 when none is left.
    int next(int lane);

private:
    std::mutex mutex_;
    std::vector<std::pair<int, int>> shares_;  // [first, end) per lane
};

// The bands of a call; band_rows <= 0: as many rows as keep a band's slab and output
// within band_target_bytes (at least one, and at least halo_ratio (kh - 1) where the
// output has that many). Bands start at
// multiples of row_multiple (band_rows rounded up to one, short of the last band): an
// algorithm whose sums depend on an output row's position modulo that (the tensor-core
// kernels, halconv_tc_row_phase in single_channel/halconv_tc.h) then gives every band's rows the same
// bits as the one-shot call.
BandLayout band_layout(Extent2d image, Extent2d kernel, Extent2d output, int offset_x, int offset_y,
                       size_t storage_bytes, size_t output_bytes, int band_rows, int row_multiple = 1,
                       int halo_ratio = 1);

// The most elements one buffer of a one-shot pipeline may have: the pipelines index with
// 32-bit integers (Halide without large_buffers, whose addressing is faster).
inline constexpr int64_t pipeline_max_elements = (int64_t(1) << 31) - 1;

// Whether a one-shot call could need a buffer beyond pipeline_max_elements: the
// boundary-extended image (the larger of image and output, plus the kernel's halo, rows
// padded to 64 elements) with an eighth more for the transforms' tiles. Band slabs stay
// far below it.
bool exceeds_one_shot(Extent2d image, Extent2d kernel, Extent2d output);

// Whether a call on these buffers runs in bands: both host-resident, and Banding::always,
// or Banding::automatic when the one-shot call exceeds its buffers' limit (too_large,
// exceeds_one_shot) or, on CUDA, when image, output and the plan's workspace would not
// fit in the device's free memory; or both in the CUDA device's memory and
// Banding::always (to spread the call over several GPUs) or too_large.
bool wants_bands(const Options &options, Device device, const halide_buffer_t *image, const halide_buffer_t *output,
                 size_t workspace_bytes, bool too_large);

// What a banded call needs: the layout, the buffers, the boundary, and the valid-mode
// plans of the band slabs (made for the current CUDA device, or the CPU).
struct BandCall {
    BandLayout layout;
    halide_buffer_t *image = nullptr;
    halide_buffer_t *output = nullptr;
    Boundary boundary = Boundary::constant;
    uint64_t fill_bits = 0;  // the fill value in the storage type
    std::function<Plan(int rows)> plan_for;
    BandOptions bands;
    Stream stream = nullptr;  // waited for before the first copy (CUDA)
};

// The bands on the CPU, one after the other (each pipeline uses every thread).
void run_bands_cpu(const BandCall &call);
// The lanes (streams and buffers per device) a plan keeps between banded calls; one
// banded call at a time uses them.
struct BandResources;
std::shared_ptr<BandResources> make_band_resources();
// The bands spread over CUDA devices (bands.devices, or every visible device), several
// in flight per device; returns when the output is on the host. bands_cuda.cpp.
void run_bands_cuda(const BandCall &call, BandResources &resources);
// Free bytes on the current CUDA device (cudaMemGetInfo).
size_t cuda_free_bytes();

// Fills `row_is_fill` for every slab row of `band`, and copies the image columns of slab
// rows [first_row, slab height) from a host image into a host slab (rows slab_pitch apart).
void copy_slab_rows(const BandCall &call, int band, void *slab, uint8_t *row_is_fill, int first_row = 0);
// BandPads for a slab of `band`.
rk::BandPads pads_of(const BandCall &call, int band, void *slab, const uint8_t *row_is_fill, bool any_fill_row);

}  // namespace halconv::internal
