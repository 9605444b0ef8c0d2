// Row bands: the layout, the slab's rows, and the CPU run (bands.h).
#include "bands.h"

#include <algorithm>
#include <cstring>

namespace halconv::internal {

BandLayout band_layout(Extent2d image, Extent2d kernel, Extent2d output, int offset_x, int offset_y,
                       size_t storage_bytes, size_t output_bytes, int band_rows, int row_multiple, int halo_ratio) {
    BandLayout l;
    l.image = image;
    l.kernel = kernel;
    l.output = output;
    l.offset_x = offset_x;
    l.offset_y = offset_y;
    l.storage_bytes = storage_bytes;
    l.output_bytes = output_bytes;
    if (band_rows <= 0) {
        const size_t slab_row = (size_t(output.width) + kernel.width - 1) * storage_bytes;
        const size_t out_row = size_t(output.width) * output_bytes;
        const size_t halo = size_t(kernel.height - 1) * slab_row;
        const size_t fit = band_target_bytes > halo ? (band_target_bytes - halo) / (slab_row + out_row) : 0;
        const size_t halo_bound = size_t(halo_ratio) * size_t(kernel.height - 1);
        band_rows = int(std::min<size_t>(std::max<size_t>({fit, halo_bound, 1}), size_t(output.height)));
    }
    const int64_t rounded = (int64_t(band_rows) + row_multiple - 1) / row_multiple * row_multiple;
    l.band_rows = int(std::min<int64_t>(rounded, output.height));
    l.bands = (output.height + l.band_rows - 1) / l.band_rows;
    return l;
}

bool exceeds_one_shot(Extent2d image, Extent2d kernel, Extent2d output) {
    const int64_t width = (int64_t(std::max(image.width, output.width)) + kernel.width - 1 + 63) / 64 * 64;
    const int64_t height = int64_t(std::max(image.height, output.height)) + kernel.height - 1;
    return width * height / 8 * 9 > pipeline_max_elements;
}

bool wants_bands(const Options &o, Device device, const halide_buffer_t *image, const halide_buffer_t *output,
                 size_t workspace_bytes, bool too_large) {
    const auto host_only = [](const halide_buffer_t *b) { return b->host != nullptr && b->device == 0; };
    if (o.bands.banding == Banding::never) {
        return false;
    }
    if (!host_only(image) || !host_only(output)) {
        // Device-resident buffers fit in memory by definition: bands spread them over GPUs
        // when asked, or cut a call too large for one pipeline.
        const auto on_device = [](const halide_buffer_t *b) { return b->device != 0 && !b->host_dirty(); };
        return (o.bands.banding == Banding::always || too_large) && device == Device::cuda && on_device(image) &&
               output->device != 0;
    }
    if (o.bands.banding == Banding::always || too_large) {
        return true;
    }
    if (device != Device::cuda) {
        return false;
    }
    const auto bytes = [](const halide_buffer_t *b) {
        return size_t(b->dim[0].extent) * size_t(b->dim[1].extent) * b->type.bytes();
    };
    // A tenth of the free memory is left for Halide's and cuFFT's own allocations.
    return bytes(image) + bytes(output) + workspace_bytes > cuda_free_bytes() / 10 * 9;
}

BandQueue::BandQueue(int bands, int lanes) {
    for (int i = 0; i < lanes; i++) {
        shares_.push_back({int(int64_t(bands) * i / lanes), int(int64_t(bands) * (i + 1) / lanes)});
    }
}

int BandQueue::next(int lane) {
    std::lock_guard<std::mutex> lock(mutex_);
    std::pair<int, int> &own = shares_[size_t(lane)];
    if (own.first == own.second) {
        const auto largest = std::max_element(shares_.begin(), shares_.end(), [](const auto &a, const auto &b) {
            return a.second - a.first < b.second - b.first;
        });
        const int left = largest->second - largest->first;
        if (left == 0) {
            return -1;
        }
        own = {largest->second - (left + 1) / 2, largest->second};
        largest->second = own.first;
    }
    return own.first++;
}

void copy_slab_rows(const BandCall &call, int band, void *slab, uint8_t *row_is_fill, int first_row) {
    const BandLayout &l = call.layout;
    const Extent2d s = l.slab(l.rows_of(band));
    const size_t e = l.storage_bytes;
    const size_t pitch = size_t(call.image->dim[1].stride) * e;
    for (int r = 0; r < s.height; r++) {
        const int64_t y = l.source_row(band, r, call.boundary);
        row_is_fill[r] = y < 0;
        if (y >= 0 && r >= first_row) {
            std::memcpy(static_cast<uint8_t *>(slab) + (size_t(r) * size_t(l.slab_pitch()) + l.offset_x) * e,
                        call.image->host + size_t(y) * pitch, size_t(l.image.width) * e);
        }
    }
}

rk::BandPads pads_of(const BandCall &call, int band, void *slab, const uint8_t *row_is_fill, bool any_fill_row) {
    const BandLayout &l = call.layout;
    const Extent2d s = l.slab(l.rows_of(band));
    rk::BandPads p;
    p.slab = slab;
    p.elem_bytes = int(l.storage_bytes);
    p.width = s.width;
    p.pitch = l.slab_pitch();
    p.rows = s.height;
    p.offset_x = l.offset_x;
    p.image_width = l.image.width;
    p.boundary = int(call.boundary);
    p.fill_bits = call.fill_bits;
    p.row_is_fill = row_is_fill;
    p.any_fill_row = any_fill_row;
    return p;
}

namespace {

// A 2D view of `extent` over host rows `stride` elements apart.
struct HostView {
    halide_dimension_t dims[2];
    halide_buffer_t buffer{};
    HostView(halide_type_t type, void *data, Extent2d extent, int stride) {
        dims[0] = {0, extent.width, 1, 0};
        dims[1] = {0, extent.height, stride, 0};
        buffer.host = static_cast<uint8_t *>(data);
        buffer.type = type;
        buffer.dimensions = 2;
        buffer.dim = dims;
    }
};

}  // namespace

void run_bands_cpu(const BandCall &call) {
    const BandLayout &l = call.layout;
    const Extent2d biggest = l.slab(l.band_rows);
    std::vector<uint8_t> slab(size_t(l.slab_pitch()) * biggest.height * l.storage_bytes);
    std::vector<uint8_t> row_is_fill(size_t(biggest.height));
    const Plan full = call.plan_for(l.band_rows);
    const int last_rows = l.rows_of(l.bands - 1);
    const Plan last = last_rows == l.band_rows ? full : call.plan_for(last_rows);
    const size_t out_pitch = size_t(call.output->dim[1].stride) * l.output_bytes;
    const size_t slab_row = size_t(l.slab_pitch()) * l.storage_bytes;
    for (int b = 0; b < l.bands; b++) {
        const int rows = l.rows_of(b), kept = l.kept_rows(b - 1, b);
        std::memcpy(slab.data(), slab.data() + size_t(l.band_rows) * slab_row, size_t(kept) * slab_row);
        copy_slab_rows(call, b, slab.data(), row_is_fill.data(), kept);
        const bool any_fill = std::any_of(row_is_fill.begin(), row_is_fill.begin() + l.slab(rows).height,
                                          [](uint8_t f) { return f != 0; });
        rk::band_fill_pads_host(pads_of(call, b, slab.data(), row_is_fill.data(), any_fill));
        HostView in(call.image->type, slab.data(), l.slab(rows), int(l.slab_pitch()));
        HostView out(call.output->type, call.output->host + size_t(l.first_row(b)) * out_pitch, {l.output.width, rows},
                     call.output->dim[1].stride);
        (rows == l.band_rows ? full : last).run(&in.buffer, &out.buffer, nullptr);
    }
}

}  // namespace halconv::internal
