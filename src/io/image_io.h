// Image files for the halconv tool and tests (internal, not part of the installed API):
// PNG through libpng, FITS through cfitsio. Every failure is a halconv::Error that names the file and says what
// was wrong; writes go to a temporary file in the same directory that is renamed into
// place, so a failed write leaves no partial output.
#pragma once

#include <cstdint>
#include <cstdio>
#include <functional>
#include <limits>
#include <string>
#include <vector>

namespace halconv::io {

// The working memory one image may take in the tool: $HALCONV_MEMORY_LIMIT (bytes, or
// with a suffix K, M, G, T of 1024^n), else half of the machine's physical memory.
// halconv::Error (invalid_argument) for a malformed value.
uint64_t working_memory_budget();

// What each sample of a decoded image costs the tool while it filters: its double, the
// pipeline's input and output buffers (at most 8 bytes each) and the output's double,
// with room for the borders of full mode.
inline constexpr uint64_t bytes_per_sample_held = 40;

// What a reader may decode, checked from the header before any sample is allocated.
struct ReadLimits {
    int max_edge = std::numeric_limits<int>::max();  // per axis
    uint64_t max_bytes = working_memory_budget();    // samples x bytes_per_sample_held
};

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
// Images beyond `limits` are refused (io) before they are decoded.
Image read_png(const std::string &path, const ReadLimits &limits = {});
// The same from the file's bytes (name for messages only).
Image read_png_bytes(const std::string &name, const std::vector<char> &bytes, const ReadLimits &limits = {});

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
// (8, 16, 32, 64, -32, -64), BSCALE/BZERO applied, BLANK pixels of integer images as NaN;
// float samples as stored (NaN, +-Inf and subnormals kept).
// Images beyond `limits` are refused (io) before the data are read.
FitsImage read_fits(const std::string &path, const ReadLimits &limits = {});
// The same from the file's bytes (name for messages only).
FitsImage read_fits_bytes(const std::string &name, const std::vector<char> &bytes, const ReadLimits &limits = {});

// Writes a float32 or float64 FITS file.
void write_fits(const std::string &path, const FitsImage &image);

// The whole file; halconv::Error naming path when it is missing, not a regular file,
// unreadable or longer than max_bytes (checked before reading).
std::vector<char> read_file(const std::string &path, uint64_t max_bytes = std::numeric_limits<uint64_t>::max());

// Whether width x height x channels samples fit `limits` (and int coordinates).
bool image_fits(uint64_t width, uint64_t height, int channels, const ReadLimits &limits);
// Throws halconv::Error (io) naming `name` when they do not: "an image of W x H needs
// about N MiB of working memory; the budget is ...".
void check_image_size(const std::string &name, uint64_t width, uint64_t height, int channels, const ReadLimits &limits);

// Creates path through a temporary file beside it: write(file) fills it; on success the
// file is flushed, closed and renamed over path, on any failure (write throws, or the
// flush, close or rename fails) it is removed and a halconv::Error names path. A path
// that is a symbolic link is written through (the file it names is replaced; a link to
// nothing is refused); a replaced file keeps its permission bits (and owner and group
// where the process may set them); a new one gets 0666 less the umask.
void write_atomically(const std::string &path, const std::function<void(std::FILE *)> &write);

// Installs handlers for SIGINT, SIGTERM and SIGHUP (where no handler is set) that remove
// the temporary files being written and then end the process as the signal would.
// For programs (the halconv tool), not for libraries that do not own the process.
void remove_temporaries_on_signals();

}  // namespace halconv::io
