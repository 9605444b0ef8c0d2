// Host side of the staging copies (staging.h).
#include <cstring>

#include "halconv/float16.h"
#include "staging/staging.h"

namespace halconv::rk::staging {
namespace {

double load(const uint8_t *p, Element t) {
    switch (t) {
        case Element::u8:
            return *p;
        case Element::u16: {
            uint16_t v;
            std::memcpy(&v, p, 2);
            return v;
        }
        case Element::f16: {
            uint16_t bits;
            std::memcpy(&bits, p, 2);
            return double_from_float16_bits(bits);
        }
        case Element::f32: {
            float v;
            std::memcpy(&v, p, 4);
            return v;
        }
        case Element::f64: {
            double v;
            std::memcpy(&v, p, 8);
            return v;
        }
    }
    return 0.0;
}

void store(uint8_t *p, Element t, double v) {
    switch (t) {
        case Element::u8:
            *p = static_cast<uint8_t>(saturated(v, 255.0));
            break;
        case Element::u16: {
            const auto w = static_cast<uint16_t>(saturated(v, 65535.0));
            std::memcpy(p, &w, 2);
            break;
        }
        case Element::f16: {
            const uint16_t bits = float16_bits_from_double(v);
            std::memcpy(p, &bits, 2);
            break;
        }
        case Element::f32: {
            const auto f = static_cast<float>(v);
            std::memcpy(p, &f, 4);
            break;
        }
        case Element::f64:
            std::memcpy(p, &v, 8);
            break;
    }
}

size_t bytes_of(Element t) {
    return t == Element::u8 ? 1 : t == Element::u16 || t == Element::f16 ? 2 : t == Element::f32 ? 4 : 8;
}

}  // namespace

void convert_host(const View &src, const View &dst) {
    const size_t sb = bytes_of(src.type), db = bytes_of(dst.type);
    const auto *s = static_cast<const uint8_t *>(src.data);
    auto *d = static_cast<uint8_t *>(dst.data);
    for (int32_t k = 0; k < src.extent[2]; k++) {
        for (int32_t j = 0; j < src.extent[1]; j++) {
            const int64_t srow = k * src.stride[2] + j * src.stride[1], drow = k * dst.stride[2] + j * dst.stride[1];
            for (int32_t i = 0; i < src.extent[0]; i++) {
                store(d + size_t(drow + i * dst.stride[0]) * db, dst.type,
                      load(s + size_t(srow + i * src.stride[0]) * sb, src.type));
            }
        }
    }
}

}  // namespace halconv::rk::staging
