// FITS through cfitsio, from and to memory: the file is read whole and parsed with
// fits_open_memfile (no extended-filename syntax, no network drivers), and written into
// a memory file that write_atomically puts in place.
#include <fitsio.h>

#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <limits>
#include <string_view>

#include "halconv/error.h"
#include "image_io.h"

namespace halconv::io {
namespace {

std::string fits_message(int status) {
    char text[FLEN_STATUS] = "";
    fits_get_errstatus(status, text);
    fits_clear_errmsg();
    return text;
}

// Closes the file (if open) whatever happened; a close error only matters on success.
int close_file(fitsfile *file, int status) {
    if (file != nullptr) {
        int close_status = 0;
        fits_close_file(file, &close_status);
        if (status == 0) {
            status = close_status;
        }
    }
    return status;
}

// Throws unless every card of the primary header that holds a quoted string value opens
// it at column 11 or later, as FITS requires ("= " in columns 9-10). cfitsio 4.2 writes
// one byte past a stack buffer when a string of doubled quotes starts earlier (found by
// fuzzing it, tests/fuzz): such headers must not reach it.
void check_string_cards(const std::string &name, const std::vector<char> &bytes) {
    constexpr size_t card = 80;
    for (size_t at = 0; at + card <= bytes.size(); at += card) {
        const std::string_view c(bytes.data() + at, card);
        const std::string_view keyword = c.substr(0, 8);
        if (keyword == "END     ") {
            return;
        }
        if (keyword == "COMMENT " || keyword == "HISTORY " || keyword == "CONTINUE" || keyword == "        ") {
            continue;  // no value: cfitsio reads them as text
        }
        // Where cfitsio looks for the value: after '=' in columns 9-10, else after the first '='.
        size_t value = c.substr(8, 2) == "= " ? 10 : c.find('=');
        if (value == std::string_view::npos) {
            continue;
        }
        value = c.find_first_not_of(' ', value == 10 ? 10 : value + 1);
        if (value != std::string_view::npos && value < 10 && c[value] == '\'') {
            throw Error(ErrorCode::io, "cannot read " + name + ": invalid FITS header (card " +
                                           std::to_string(at / card + 1) +
                                           " opens a string value before column 11; FITS puts '= ' in columns 9-10)");
        }
    }
}

}  // namespace

FitsImage read_fits(const std::string &path, const ReadLimits &limits) {
    return read_fits_bytes(path, read_file(path, limits.max_bytes), limits);
}

FitsImage read_fits_bytes(const std::string &name, const std::vector<char> &bytes, const ReadLimits &limits) {
    if (bytes.empty()) {
        throw Error(ErrorCode::io, "cannot read " + name + ": the file is empty");
    }
    if (bytes.size() < 9 || std::string(bytes.data(), 9) != "SIMPLE  =") {
        throw Error(ErrorCode::io, "cannot read " + name + ": not a FITS file");
    }
    if (bytes.size() < 2880) {
        throw Error(ErrorCode::io, "cannot read " + name + ": truncated (shorter than one 2880-byte header block)");
    }
    check_string_cards(name, bytes);
    // cfitsio reads through these; it does not write to a READONLY memory file.
    void *buffer = const_cast<char *>(bytes.data());
    size_t size = bytes.size();
    fitsfile *file = nullptr;
    int status = 0;
    fits_open_memfile(&file, name.c_str(), READONLY, &buffer, &size, 0, nullptr, &status);
    int bitpix = 0, naxis = 0;
    long naxes[8] = {};
    if (status == 0) {
        fits_get_img_param(file, 8, &bitpix, &naxis, naxes, &status);
    }
    if (status != 0) {
        status = close_file(file, status);
        throw Error(ErrorCode::io, "cannot read " + name + ": invalid FITS header (" + fits_message(status) + ")");
    }
    long extra = 1;  // axes beyond the second must be of extent 1
    for (int a = 2; a < std::min(naxis, 8); a++) {
        extra *= naxes[a];
    }
    if (naxis < 2 || naxis > 8 || extra != 1 || naxes[0] < 1 || naxes[1] < 1) {
        close_file(file, 0);
        throw Error(ErrorCode::io, "cannot read " + name + ": the primary HDU holds no 2D image (NAXIS = " +
                                       std::to_string(naxis) + "); halconv reads 2D images, NAXIS1 as the width");
    }
    if (!image_fits(uint64_t(naxes[0]), uint64_t(naxes[1]), 1, limits)) {
        close_file(file, 0);
        check_image_size(name, uint64_t(naxes[0]), uint64_t(naxes[1]), 1, limits);
    }
    // cfitsio's memory driver reads past the end of a truncated buffer without an error.
    LONGLONG header_start = 0, data_start = 0, data_end = 0;
    fits_get_hduaddrll(file, &header_start, &data_start, &data_end, &status);
    if (status != 0 || data_end > LONGLONG(bytes.size())) {
        status = close_file(file, status);
        throw Error(ErrorCode::io, "cannot read " + name + ": truncated (the header announces " +
                                       std::to_string(data_end) + " bytes, the file has " +
                                       std::to_string(bytes.size()) + ")");
    }
    FitsImage image;
    image.width = int(naxes[0]);
    image.height = int(naxes[1]);
    image.bitpix = bitpix;
    image.data.resize(size_t(image.width) * size_t(image.height));
    // BSCALE / BZERO applied by cfitsio; BLANK (integer null) pixels read as NaN. Float
    // images are read unchecked (a null value of 0): cfitsio's null check would turn
    // +-Inf into the null value and subnormals into 0, where halconv keeps every sample.
    double null_value = bitpix < 0 ? 0.0 : std::numeric_limits<double>::quiet_NaN();
    int any_null = 0;
    fits_read_img(file, TDOUBLE, 1, long(image.data.size()), &null_value, image.data.data(), &any_null, &status);
    status = close_file(file, status);
    if (status != 0) {
        throw Error(ErrorCode::io,
                    "cannot read " + name + ": invalid or truncated image data (" + fits_message(status) + ")");
    }
    return image;
}

void write_fits(const std::string &path, const FitsImage &image) {
    if (image.width < 1 || image.height < 1 || image.data.size() != size_t(image.width) * size_t(image.height)) {
        throw Error(ErrorCode::io, "cannot write " + path + ": a FITS image needs width x height > 0 samples");
    }
    if (image.bitpix != FLOAT_IMG && image.bitpix != DOUBLE_IMG) {
        throw Error(ErrorCode::io,
                    "cannot write " + path + ": BITPIX " + std::to_string(image.bitpix) + "; allowed -32, -64");
    }
    size_t size = 2880 * 4;
    void *buffer = std::malloc(size);
    if (buffer == nullptr) {
        throw Error(ErrorCode::io, "cannot write " + path + ": out of memory");
    }
    fitsfile *file = nullptr;
    int status = 0;
    long naxes[2] = {image.width, image.height};
    fits_create_memfile(&file, &buffer, &size, 2880 * 16, std::realloc, &status);
    fits_create_img(file, image.bitpix, 2, naxes, &status);
    fits_write_img(file, TDOUBLE, 1, long(image.data.size()), const_cast<double *>(image.data.data()), &status);
    // The memory file's logical size is the HDU's extent, a multiple of 2880 bytes.
    LONGLONG header_start = 0, data_start = 0, data_end = 0;
    fits_get_hduaddrll(file, &header_start, &data_start, &data_end, &status);
    status = close_file(file, status);
    if (status != 0) {
        std::free(buffer);
        throw Error(ErrorCode::io, "cannot write " + path + ": " + fits_message(status));
    }
    const size_t extent = size_t((data_end + 2879) / 2880 * 2880);
    try {
        write_atomically(path, [&](std::FILE *out) {
            if (std::fwrite(buffer, 1, extent, out) != extent) {
                throw Error(ErrorCode::io, "cannot write " + path + ": short write");
            }
        });
    } catch (...) {
        std::free(buffer);
        throw;
    }
    std::free(buffer);
}

}  // namespace halconv::io
