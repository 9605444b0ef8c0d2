// Staging (halconv.h, "Staging"): 8- and 16-bit unsigned images and outputs, and batches of
// interleaved channels, run through dense buffers of the precision's types.
#include "staging/staging.h"

#include "internal.h"

namespace halconv::internal {
namespace {

bool is_staged_integer(halide_type_t t) {
    return t.code == halide_type_uint && t.lanes == 1 && (t.bits == 8 || t.bits == 16);
}

rk::staging::Element element_of(halide_type_t t) {
    using rk::staging::Element;
    if (t.code == halide_type_uint) {
        return t.bits == 8 ? Element::u8 : Element::u16;
    }
    return t.bits == 16 ? Element::f16 : t.bits == 32 ? Element::f32 : Element::f64;
}

}  // namespace

halide_type_t accepted_type(const halide_buffer_t *buf, halide_type_t native) {
    return buf != nullptr && is_staged_integer(buf->type) ? buf->type : native;
}

bool needs_staging(const halide_buffer_t *buf) {
    return buf != nullptr && buf->dimensions >= 1 &&
           (is_staged_integer(buf->type) || (buf->dimensions == 3 && buf->dim[0].stride != 1));
}

rk::staging::View view_of(const halide_buffer_t *b, Device where) {
    rk::staging::View v;
    v.data = where == Device::cuda ? reinterpret_cast<void *>(b->device) : static_cast<void *>(b->host);
    v.type = element_of(b->type);
    for (int d = 0; d < b->dimensions && d < 3; d++) {
        v.extent[d] = b->dim[d].extent;
        v.stride[d] = b->dim[d].stride;
    }
    return v;
}

StagingBuffer::StagingBuffer(halide_type_t type, const halide_buffer_t *shape_of, Device where, Stream stream)
    : stream_(stream) {
    int64_t count = 1;
    for (int d = 0; d < shape_of->dimensions; d++) {
        dims_[d] = halide_dimension_t(shape_of->dim[d].min, shape_of->dim[d].extent, int32_t(count));
        count *= shape_of->dim[d].extent;
    }
    const size_t bytes = size_t(count) * type.bytes();
    if (where == Device::cuda) {
        device_ = staging_device_alloc(bytes, stream);
        buffer_.device = reinterpret_cast<uint64_t>(device_);
        buffer_.device_interface = cuda_device_interface();
    } else {
        try {
            host_.resize(bytes);
        } catch (const std::bad_alloc &) {
            throw Error(ErrorCode::out_of_memory,
                        "no host memory for a staging buffer of " + std::to_string(bytes) + " bytes");
        }
        buffer_.host = host_.data();
    }
    buffer_.type = type;
    buffer_.dimensions = shape_of->dimensions;
    buffer_.dim = dims_;
}

StagingBuffer::~StagingBuffer() {
    if (device_ != nullptr) {
        staging_device_free(device_, stream_);
    }
}

void stage_convert(const halide_buffer_t *src, const halide_buffer_t *dst, Device where, Stream stream) {
    if (where == Device::cuda) {
        staging_convert_device(src, dst, stream);
    } else {
        rk::staging::convert_host(view_of(src, Device::cpu), view_of(dst, Device::cpu));
    }
}

}  // namespace halconv::internal
