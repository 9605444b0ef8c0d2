// Image files for the halconv tool and tests (internal, not part of the installed API):
// PNG through libpng, FITS through cfitsio. Every failure is a halconv::Error that names the file and says what
// was wrong; writes go to a temporary file in the same directory that is renamed into
// place, so a failed write leaves no partial output.
#pragma once

#include <cstdio>
#include <functional>
#include <string>
#include <vector>

namespace halconv::io {

// A decoded image, planar: channel c's sample (x, y) is channels[c][y * width + x].
// PNG samples are normalized to [0, 1] (value / (2^bit_depth - 1)).
struct Image {
    int width = 0;
    int height = 0;
    std::vector<std::vector<double>> channels;  // 1 (gray) or 3 (RGB): the ones to filter
    std::vector<double> alpha;                  // empty when the file has no alpha; passed through
    int bit_depth = 8;                          // of the PNG samples: 8 or 16

    bool has_alpha() const { return !alpha.empty(); }
};

// Reads an 8- or 16-bit PNG: gray, gray + alpha, RGB or RGBA. Palette images become RGB,
// gray depths below 8 become 8-bit, a tRNS chunk becomes alpha.
Image read_png(const std::string &path);
// The same from the file's bytes (name for messages only).
Image read_png_bytes(const std::string &name, const std::vector<char> &bytes);

// Writes gray / gray + alpha / RGB / RGBA at image.bit_depth, each sample clamped to
// [0, 1] and rounded to the nearest code; NaN is written as 0.
void write_png(const std::string &path, const Image &image);

// A 2D FITS image (primary HDU), NAXIS1 = width; sample (x, y) is data[y * width + x]
// with y the file's row order (as astropy and SciPy see it).
struct FitsImage {
    int width = 0;
    int height = 0;
    std::vector<double> data;
    int bitpix = -32;  // on read: the file's; on write: -32 (float32) or -64 (float64)
};

// Reads the primary HDU's 2D image (further axes of extent 1 allowed) of any BITPIX
// (8, 16, 32, 64, -32, -64), BSCALE/BZERO applied, BLANK pixels as NaN.
FitsImage read_fits(const std::string &path);
// The same from the file's bytes (name for messages only).
FitsImage read_fits_bytes(const std::string &name, const std::vector<char> &bytes);

// Writes a float32 or float64 FITS file.
void write_fits(const std::string &path, const FitsImage &image);

// The whole file; halconv::Error naming path when it is missing, not a regular file or
// unreadable.
std::vector<char> read_file(const std::string &path);

// Creates path through a temporary file beside it: write(file) fills it; on success the
// file is flushed, closed and renamed over path, on any failure (write throws, or the
// flush, close or rename fails) it is removed and a halconv::Error names path.
void write_atomically(const std::string &path, const std::function<void(std::FILE *)> &write);

}  // namespace halconv::io
