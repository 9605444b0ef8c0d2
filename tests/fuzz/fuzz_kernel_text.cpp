// libFuzzer target: kernel text files and --kernel specs must parse or give a
// halconv::Error. Specs naming files are skipped (the fuzzer must not open paths).
#include <cstddef>
#include <cstdint>
#include <string>

#include "halconv/error.h"
#include "kernel_spec.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    const std::string text(reinterpret_cast<const char *>(data), size);
    try {
        halconv::io::parse_kernel_text("fuzz.txt", text);
    } catch (const halconv::Error &) {
    }
    const bool names_a_file = text.find('/') != std::string::npos || text.find(".txt") != std::string::npos ||
                              text.find(".fit") != std::string::npos;
    if (!names_a_file && text.size() < 256) {
        try {
            halconv::io::parse_kernel_spec(text);
        } catch (const halconv::Error &) {
        }
    }
    return 0;
}
