// PNG through libpng's classic API (the simplified API converts 16-bit samples to linear
// light and premultiplies alpha, which would change the data). libpng reports errors by
// longjmp, so each libpng call sequence runs in a function that owns no C++ object with
// a destructor; the C++ side turns its message into a halconv::Error.
#include <png.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>

#include "halconv/error.h"
#include "image_io.h"

namespace halconv::io {
namespace {

struct Failure {
    char message[256] = "";
    bool too_large = false;  // beyond the reader's limits: the caller says how
};

[[noreturn]] void on_error(png_structp png, png_const_charp message) {
    auto *failure = static_cast<Failure *>(png_get_error_ptr(png));
    std::snprintf(failure->message, sizeof failure->message, "%s", message);
    png_longjmp(png, 1);
}

void on_warning(png_structp, png_const_charp) {}

struct Decoded {
    png_uint_32 width = 0, height = 0;
    int channels = 0, bit_depth = 0;
    std::vector<unsigned char> pixels;  // interleaved rows, 16-bit samples big-endian
    std::vector<png_bytep> rows;
};

// Returns false (message in failure) on any libpng error.
struct Source {
    const unsigned char *data;
    size_t size, at;
};

void read_from_source(png_structp png, png_bytep out, size_t length) {
    auto *source = static_cast<Source *>(png_get_io_ptr(png));
    if (length > source->size - source->at) {
        png_error(png, "unexpected end of file");
    }
    std::memcpy(out, source->data + source->at, length);
    source->at += length;
}

bool decode(Source &source, const ReadLimits &limits, Decoded &out, Failure &failure) {
    png_structp png = png_create_read_struct(PNG_LIBPNG_VER_STRING, &failure, on_error, on_warning);
    if (png == nullptr) {
        std::snprintf(failure.message, sizeof failure.message, "out of memory");
        return false;
    }
    png_infop info = png_create_info_struct(png);
    if (info == nullptr || setjmp(png_jmpbuf(png))) {
        png_destroy_read_struct(&png, info != nullptr ? &info : nullptr, nullptr);
        return false;
    }
    png_set_read_fn(png, &source, read_from_source);
    // halconv's own limits (checked below, before the pixels are allocated) replace
    // libpng's default of 10^6 per axis.
    png_set_user_limits(png, PNG_UINT_31_MAX, PNG_UINT_31_MAX);
    png_read_info(png, info);
    // The budget is checked from the header, before png_read_update_info: that call
    // allocates libpng's row buffers, which for a header 2^31 - 1 wide are gigabytes.
    // Channels after png_set_expand: palette and colour give 3, gray 1, plus alpha or tRNS.
    const int color = png_get_color_type(png, info);
    const bool alpha = (color & PNG_COLOR_MASK_ALPHA) != 0 || png_get_valid(png, info, PNG_INFO_tRNS) != 0;
    out.width = png_get_image_width(png, info);
    out.height = png_get_image_height(png, info);
    out.channels = ((color & PNG_COLOR_MASK_COLOR) != 0 ? 3 : 1) + (alpha ? 1 : 0);
    if (!image_fits(out.width, out.height, out.channels, limits)) {
        failure.too_large = true;
        png_destroy_read_struct(&png, &info, nullptr);
        return false;
    }
    png_set_expand(png);  // palette -> RGB, gray below 8 bits -> 8, tRNS -> alpha
    png_set_interlace_handling(png);
    png_read_update_info(png, info);
    if (png_get_channels(png, info) != out.channels) {
        png_error(png, "unexpected channel count after expansion");
    }
    out.bit_depth = png_get_bit_depth(png, info);
    const size_t row_bytes = png_get_rowbytes(png, info);
    out.pixels.resize(row_bytes * out.height);
    out.rows.resize(out.height);
    for (png_uint_32 y = 0; y < out.height; y++) {
        out.rows[y] = out.pixels.data() + row_bytes * y;
    }
    png_read_image(png, out.rows.data());
    png_read_end(png, nullptr);
    png_destroy_read_struct(&png, &info, nullptr);
    return true;
}

bool encode(std::FILE *file, png_uint_32 width, png_uint_32 height, int color_type, int bit_depth, png_bytepp rows,
            Failure &failure) {
    png_structp png = png_create_write_struct(PNG_LIBPNG_VER_STRING, &failure, on_error, on_warning);
    if (png == nullptr) {
        std::snprintf(failure.message, sizeof failure.message, "out of memory");
        return false;
    }
    png_infop info = png_create_info_struct(png);
    if (info == nullptr || setjmp(png_jmpbuf(png))) {
        png_destroy_write_struct(&png, info != nullptr ? &info : nullptr);
        return false;
    }
    png_init_io(png, file);
    png_set_user_limits(png, PNG_UINT_31_MAX, PNG_UINT_31_MAX);  // PNG's own limit, not libpng's 10^6
    png_set_IHDR(png, info, width, height, bit_depth, color_type, PNG_INTERLACE_NONE, PNG_COMPRESSION_TYPE_DEFAULT,
                 PNG_FILTER_TYPE_DEFAULT);
    png_write_info(png, info);
    png_write_image(png, rows);
    png_write_end(png, nullptr);
    png_destroy_write_struct(&png, &info);
    return true;
}

}  // namespace

Image read_png(const std::string &path, const ReadLimits &limits) {
    return read_png_bytes(path, read_file(path, limits.max_bytes), limits);
}

Image read_png_bytes(const std::string &name, const std::vector<char> &bytes, const ReadLimits &limits) {
    if (bytes.empty()) {
        throw Error(ErrorCode::io, "cannot read " + name + ": the file is empty");
    }
    const auto *data = reinterpret_cast<const unsigned char *>(bytes.data());
    if (bytes.size() < 8 || png_sig_cmp(data, 0, 8) != 0) {
        throw Error(ErrorCode::io, "cannot read " + name + ": not a PNG file");
    }
    Source source{data, bytes.size(), 0};
    Decoded d;
    Failure failure;
    if (!decode(source, limits, d, failure)) {
        if (failure.too_large) {
            check_image_size(name, d.width, d.height, d.channels, limits);
        }
        throw Error(ErrorCode::io, "cannot read " + name + ": invalid or truncated PNG (" + failure.message + ")");
    }
    Image image;
    image.width = int(d.width);
    image.height = int(d.height);
    image.bit_depth = d.bit_depth;
    const int colors = d.channels >= 3 ? 3 : 1;
    const bool alpha = d.channels == 2 || d.channels == 4;
    const size_t n = size_t(d.width) * d.height;
    image.channels.assign(colors, std::vector<double>(n));
    if (alpha) {
        image.alpha.resize(n);
    }
    const double top = (1 << d.bit_depth) - 1;
    const int sample_bytes = d.bit_depth == 16 ? 2 : 1;
    for (size_t y = 0; y < d.height; y++) {
        const unsigned char *row = d.rows[y];
        for (size_t x = 0; x < d.width; x++) {
            for (int c = 0; c < d.channels; c++) {
                const unsigned char *s = row + (x * d.channels + c) * sample_bytes;
                const double v = (sample_bytes == 2 ? (s[0] << 8 | s[1]) : s[0]) / top;
                (c < colors ? image.channels[c] : image.alpha)[y * d.width + x] = v;
            }
        }
    }
    return image;
}

void write_png(const std::string &path, const Image &image) {
    const int colors = int(image.channels.size());
    const size_t n = size_t(image.width) * size_t(image.height);
    if (image.width < 1 || image.height < 1 || (colors != 1 && colors != 3)) {
        throw Error(ErrorCode::io,
                    "cannot write " + path + ": a PNG needs a non-empty image of 1 or 3 colour channels");
    }
    if (image.bit_depth != 8 && image.bit_depth != 16) {
        throw Error(ErrorCode::io,
                    "cannot write " + path + ": bit depth " + std::to_string(image.bit_depth) + "; allowed 8, 16");
    }
    for (const std::vector<double> &c : image.channels) {
        if (c.size() != n) {
            throw Error(ErrorCode::io, "cannot write " + path + ": a channel does not hold width x height samples");
        }
    }
    if (image.has_alpha() && image.alpha.size() != n) {
        throw Error(ErrorCode::io, "cannot write " + path + ": the alpha channel does not hold width x height samples");
    }
    const int channels = colors + (image.has_alpha() ? 1 : 0);
    const int bytes = image.bit_depth / 8;
    const double top = (1 << image.bit_depth) - 1;
    const size_t row_bytes = size_t(image.width) * channels * bytes;
    std::vector<unsigned char> pixels(row_bytes * image.height);
    std::vector<png_bytep> rows(image.height);
    for (size_t y = 0; y < size_t(image.height); y++) {
        rows[y] = pixels.data() + row_bytes * y;
        for (size_t x = 0; x < size_t(image.width); x++) {
            for (int c = 0; c < channels; c++) {
                const double v = (c < colors ? image.channels[c] : image.alpha)[y * image.width + x];
                const auto code =
                    std::isnan(v) ? 0u : static_cast<unsigned>(std::lround(std::clamp(v, 0.0, 1.0) * top));
                unsigned char *d = rows[y] + (x * channels + c) * bytes;
                if (bytes == 2) {
                    d[0] = static_cast<unsigned char>(code >> 8);
                    d[1] = static_cast<unsigned char>(code & 0xff);
                } else {
                    d[0] = static_cast<unsigned char>(code);
                }
            }
        }
    }
    const int color_type = colors == 3 ? (image.has_alpha() ? PNG_COLOR_TYPE_RGBA : PNG_COLOR_TYPE_RGB)
                                       : (image.has_alpha() ? PNG_COLOR_TYPE_GRAY_ALPHA : PNG_COLOR_TYPE_GRAY);
    write_atomically(path, [&](std::FILE *file) {
        Failure failure;
        if (!encode(file, png_uint_32(image.width), png_uint_32(image.height), color_type, image.bit_depth, rows.data(),
                    failure)) {
            throw Error(ErrorCode::io, "cannot write " + path + ": " + failure.message);
        }
    });
}

}  // namespace halconv::io
