// libFuzzer target: the PNG reader must turn any bytes into an image or a halconv::Error.
// A custom mutator repairs the chunk CRCs after libFuzzer's mutation (most of the time),
// so that mutated chunks reach libpng's decoders instead of failing its CRC check.
#include <zlib.h>

#include <cstddef>
#include <cstdint>
#include <vector>

#include "halconv/error.h"
#include "image_io.h"

namespace {

uint32_t load_be32(const uint8_t *p) {
    return uint32_t(p[0]) << 24 | uint32_t(p[1]) << 16 | uint32_t(p[2]) << 8 | uint32_t(p[3]);
}

void store_be32(uint8_t *p, uint32_t v) {
    p[0] = uint8_t(v >> 24);
    p[1] = uint8_t(v >> 16);
    p[2] = uint8_t(v >> 8);
    p[3] = uint8_t(v);
}

// Rewrites the CRC of every whole chunk after the 8-byte signature: length (4), type (4),
// data (length), CRC (4) over type and data.
void repair_crcs(uint8_t *data, size_t size) {
    size_t at = 8;
    while (at + 12 <= size) {
        const uint32_t length = load_be32(data + at);
        if (length > size - at - 12) {
            return;
        }
        const uInt covered = uInt(length) + 4;
        store_be32(data + at + 8 + length, uint32_t(crc32(crc32(0L, Z_NULL, 0), data + at + 4, covered)));
        at += size_t(length) + 12;
    }
}

}  // namespace

extern "C" size_t LLVMFuzzerMutate(uint8_t *data, size_t size, size_t max_size);

extern "C" size_t LLVMFuzzerCustomMutator(uint8_t *data, size_t size, size_t max_size, unsigned int seed) {
    size = LLVMFuzzerMutate(data, size, max_size);
    if (seed % 8 != 0) {  // one in eight keeps its CRCs as mutated: the check itself is code too
        repair_crcs(data, size);
    }
    return size;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    // A working-memory budget well within libFuzzer's 2 GB RSS limit: larger headers must
    // be refused before anything is allocated. 256 MiB, not 1 GiB: ASan's redzones and
    // quarantine (freed blocks held back) and libpng's own buffers come on top of it, and
    // with 1 GiB a valid large header once took the process to 2.2 GB (CI, 2026-11-24).
    halconv::io::ReadLimits limits;
    limits.max_bytes = uint64_t(1) << 28;
    try {
        halconv::io::read_png_bytes("fuzz.png", std::vector<char>(data, data + size), limits);
    } catch (const halconv::Error &) {
    }
    return 0;
}
