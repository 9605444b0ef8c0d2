// The host form of a band slab's pads (band_slab.h): host code, in every build.
#include "bands/band_slab.h"

#include <cstring>

namespace halconv::rk {
namespace {

template <typename T>
void fill_pads(const BandPads &p) {
    T fill;
    std::memcpy(&fill, &p.fill_bits, sizeof(T));
    const int64_t right = p.offset_x + p.image_width;
    for (int64_t r = 0; r < p.rows; r++) {
        T *row = static_cast<T *>(p.slab) + r * p.pitch;
        if (p.row_is_fill[r]) {
            for (int64_t c = 0; c < p.width; c++) {
                row[c] = fill;
            }
            continue;
        }
        const auto pad = [&](int64_t c) {
            const int64_t x = band_source_index(c - p.offset_x, p.image_width, p.boundary);
            row[c] = x < 0 ? fill : row[p.offset_x + x];
        };
        for (int64_t c = 0; c < p.offset_x; c++) {
            pad(c);
        }
        for (int64_t c = right; c < p.width; c++) {
            pad(c);
        }
    }
}

}  // namespace

void band_fill_pads_host(const BandPads &p) {
    switch (p.elem_bytes) {
        case 2:
            fill_pads<uint16_t>(p);
            break;
        case 4:
            fill_pads<uint32_t>(p);
            break;
        default:
            fill_pads<uint64_t>(p);
            break;
    }
}

}  // namespace halconv::rk
