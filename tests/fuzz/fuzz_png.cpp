// libFuzzer target: the PNG reader must turn any bytes into an image or a halconv::Error.
#include <cstddef>
#include <cstdint>
#include <vector>

#include "halconv/error.h"
#include "image_io.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    try {
        halconv::io::read_png_bytes("fuzz.png", std::vector<char>(data, data + size));
    } catch (const halconv::Error &) {
    }
    return 0;
}
