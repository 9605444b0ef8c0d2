// Row bands (halconv.h, "Bands"): a call on a host-resident image cut into bands of output
// rows, each computed by a valid-mode plan of the same algorithm from its slab — the rows
// of the boundary-extended image it reads (runtime_kernels/bands/band_slab.h). The layout and
// the CPU run here; the CUDA run (copies, streams, devices) in bands_cuda.cpp.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <vector>

#include "bands/band_slab.h"
#include "internal.h"
#include "single_channel/halconv_tc.h"

namespace halconv::internal {

// Device bytes a band's slab and output rows take together when band_rows is chosen.
inline constexpr size_t band_target_bytes = size_t(64) << 20;
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
};

// The bands of a call; band_rows <= 0: as many rows as keep a band's slab and output
// within band_target_bytes (at least one, and at least the kernel's height where the
// output has that many, so that the halo stays under half a slab). Bands start at
// multiples of row_multiple (band_rows rounded up to one, short of the last band): an
// algorithm whose sums depend on an output row's position modulo that (the tensor-core
// kernels, halconv_tc_row_phase in single_channel/halconv_tc.h) then gives every band's rows the same
// bits as the one-shot call.
BandLayout band_layout(Extent2d image, Extent2d kernel, Extent2d output, int offset_x, int offset_y,
                       size_t storage_bytes, size_t output_bytes, int band_rows, int row_multiple = 1);

// Whether a call on these buffers runs in bands: both host-resident, and Banding::always,
// or Banding::automatic on CUDA when they and the plan's workspace would not fit in the
// device's free memory; or both in the CUDA device's memory and Banding::always (to
// spread the call over several GPUs).
bool wants_bands(const Options &options, Device device, const halide_buffer_t *image, const halide_buffer_t *output,
                 size_t workspace_bytes);

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

// Copies the image columns of slab rows [0, rows) of `band` from a host image into a host
// slab (dense rows of slab width), and fills `row_is_fill`.
void copy_slab_rows(const BandCall &call, int band, void *slab, uint8_t *row_is_fill);
// BandPads for a slab of `band`.
rk::BandPads pads_of(const BandCall &call, int band, void *slab, const uint8_t *row_is_fill, bool any_fill_row);

}  // namespace halconv::internal
