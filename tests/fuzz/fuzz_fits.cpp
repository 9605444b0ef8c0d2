// libFuzzer target: the FITS reader must turn any bytes into an image or a halconv::Error.
#include <cstddef>
#include <cstdint>
#include <vector>

#include "halconv/error.h"
#include "image_io.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    // A working-memory budget well within libFuzzer's 2 GB RSS limit (256 MiB: ASan's
    // redzones and quarantine come on top, see fuzz_png.cpp): larger headers must be
    // refused before anything is allocated.
    halconv::io::ReadLimits limits;
    limits.max_bytes = uint64_t(1) << 28;
    try {
        halconv::io::read_fits_bytes("fuzz.fits", std::vector<char>(data, data + size), limits);
    } catch (const halconv::Error &) {
    }
    return 0;
}
