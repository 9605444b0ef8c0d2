// The slab of one row band (src/bands.cpp): the rows of the boundary-extended image a band
// of outputs reads, as a dense (W + kw - 1) x (rows + kh - 1) array that a valid-mode
// pipeline filters into exactly the band's outputs. The host fills each slab row's image
// columns (a copy of an image row, or nothing for a row of the constant boundary's fill);
// the pads — the columns outside the image, and the fill rows — follow from those by the
// boundary rule, on the host (band_fill_pads_host) or the device (band_fill_pads_cuda).
#pragma once

#include <stddef.h>
#include <stdint.h>

#include "common/host_device.h"

namespace halconv::rk {

// The image index that position i (any integer) of an axis of n samples reads under a
// boundary rule, numbered as halconv::Boundary (constant 0, nearest 1, reflect 2,
// mirror 3, wrap 4); -1 for a constant boundary's fill. The generators' remap_index
// (generators/conv_common.h) in plain C++.
HALCONV_HOST_DEVICE inline int64_t band_source_index(int64_t i, int64_t n, int boundary) {
    if (i >= 0 && i < n) {
        return i;
    }
    switch (boundary) {
        case 1:  // nearest: aaaa|abcd|dddd
            return i < 0 ? 0 : n - 1;
        // Each periodic rule reflects or shifts once without a division where the index
        // is within one period of the image (every kernel no larger than the image):
        // the kernels' edge strips map their aprons sample by sample.
        case 2: {  // reflect: period 2n, dcba|abcd|dcba
            if (i >= -n && i < 2 * n) {
                return i < 0 ? -1 - i : 2 * n - 1 - i;
            }
            const int64_t m = ((i % (2 * n)) + 2 * n) % (2 * n);
            return m < n ? m : 2 * n - 1 - m;
        }
        case 3: {  // mirror: period 2n - 2, dcb|abcd|cba
            if (n == 1) {
                return 0;
            }
            const int64_t p = 2 * n - 2;
            if (i >= 1 - n && i <= p) {
                return i < 0 ? -i : p - i;
            }
            const int64_t m = ((i % p) + p) % p;
            return m < n ? m : p - m;
        }
        case 4:  // wrap: period n
            if (i >= -n && i < 2 * n) {
                return i < 0 ? i + n : i - n;
            }
            return ((i % n) + n) % n;
        default:
            return -1;
    }
}

// What the pads of a slab need. Slab column c holds image column c - offset_x; a row
// whose row_is_fill entry is nonzero is entirely the fill (constant boundary, a row
// outside the image).
struct BandPads {
    void *slab = nullptr;  // rows of `width` elements of elem_bytes (2, 4 or 8), `pitch` elements apart
    int elem_bytes = 0;
    int64_t width = 0;     // W + kw - 1
    int64_t pitch = 0;     // >= width
    int64_t rows = 0;      // band rows + kh - 1
    int64_t offset_x = 0;  // the mode's horizontal offset: pads [0, offset_x) and [offset_x + image_width, width)
    int64_t image_width = 0;
    int boundary = 0;
    uint64_t fill_bits = 0;                // the fill value in the storage type, in the low elem_bytes bytes
    const uint8_t *row_is_fill = nullptr;  // `rows` flags (host memory for the host form, device for the CUDA form)
    bool any_fill_row = false;
};

void band_fill_pads_host(const BandPads &pads);
// The same on the device, queued on `stream` (a cudaStream_t); returns the cudaError_t of
// the launch.
int band_fill_pads_cuda(const BandPads &pads, void *stream);

}  // namespace halconv::rk
