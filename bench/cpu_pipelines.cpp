#include "cpu_pipelines.h"

#include <algorithm>
#include <chrono>
#include <fstream>
#include <vector>

#include "HalideRuntime.h"
#include "halconv/error.h"
#include "halconv/halconv.h"

namespace halconv::bench {

std::string host_cpu_description() {
    std::ifstream info("/proc/cpuinfo");
    std::string line, name = "host CPU";
    while (std::getline(info, line)) {
        if (line.rfind("model name", 0) == 0) {
            if (const size_t colon = line.find(':'); colon != std::string::npos && colon + 2 <= line.size()) {
                name = line.substr(colon + 2);
            }
            break;
        }
    }
    return name + " (" + std::to_string(cpu_threads()) + " threads)";
}

Timing time_on_host(int reps, const std::function<void()> &run) {
    run();
    std::vector<double> ms;
    for (int i = 0; i < reps; i++) {
        const auto t0 = std::chrono::steady_clock::now();
        run();
        ms.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
    }
    std::sort(ms.begin(), ms.end());
    return {ms[ms.size() / 2], ms.front(), ms.back()};
}

namespace {

constexpr int strip_rows = 32;

struct FloorPass {
    const float *image;
    uint8_t *out;
    int64_t width;
    int height;
};

// Built for AVX2 where the host has it, so that the floor is the memory's and not the loop's
// (an AVX-512 clone, selectable only by an exact `arch=` name in GCC, ran no faster on one core
// of the development machine).
__attribute__((target_clones("avx2", "default"))) int threshold_strip(void *, int strip, uint8_t *closure) {
    const FloorPass &p = *reinterpret_cast<const FloorPass *>(closure);
    const int64_t first = int64_t(strip) * strip_rows * p.width;
    const int64_t end = std::min<int64_t>(first + strip_rows * p.width, int64_t(p.height) * p.width);
    const float *__restrict in = p.image;
    uint8_t *__restrict out = p.out;
    for (int64_t i = first; i < end; i++) {
        out[i] = in[i] > 0.5f ? uint8_t(255) : uint8_t(0);
    }
    return 0;
}

}  // namespace

double host_floor_ms(const float *image, uint8_t *out, int width, int height, int reps) {
    FloorPass pass{image, out, width, height};
    const int strips = (height + strip_rows - 1) / strip_rows;
    return time_on_host(reps,
                        [&] {
                            if (halide_do_par_for(nullptr, threshold_strip, 0, strips,
                                                  reinterpret_cast<uint8_t *>(&pass)) != 0) {
                                throw Error(ErrorCode::internal, "the host floor's parallel loop failed");
                            }
                        })
        .median_ms;
}

}  // namespace halconv::bench
