// `halconv tune`: measures every algorithm on the present GPU (or CPU) and writes the
// wisdom file Auto reads (halconv/tuning.h).
#include <cstdio>
#include <filesystem>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "cli_common.h"
#include "commands.h"

namespace halconv::cli {
namespace {

const char *const tune_usage =
    "usage: halconv tune [--device auto|cpu|cuda] [--sizes N|WxH,...] [--kernels K,...] [--precisions P,...]\n"
    "                    [--modes M,...] [--algorithms A,...] [--reps R] [--max-ms MS] [--output PATH] [--quiet]\n"
    "  Times every algorithm that supports each request (plans applied to resident random data;\n"
    "  an algorithm slower than --max-ms is not timed at larger K) and writes the wisdom file that\n"
    "  Algorithm::automatic reads: its section for this device replaced, other devices' kept.\n"
    "  Defaults: device auto; sizes 1024,4096 (CUDA) or 256,1024 (CPU); kernels 1,3,5,7,9,11,15,21,31\n"
    "  and on CUDA 47,63,95,127; every precision; modes same,valid; every algorithm of the device;\n"
    "  reps 10; max-ms 20; output the default wisdom path ($HALCONV_WISDOM, else\n"
    "  $XDG_CACHE_HOME/halconv/wisdom.json, else ~/.cache/halconv/wisdom.json).";

std::vector<std::string> items(const std::string &flag, const std::string &value) {
    std::vector<std::string> out;
    std::stringstream ss(value);
    for (std::string item; std::getline(ss, item, ',');) {
        if (!item.empty()) {
            out.push_back(item);
        }
    }
    if (out.empty()) {
        throw UsageError(flag + " needs at least one value");
    }
    return out;
}

}  // namespace

int tune_command(const std::vector<std::string> &args) {
    TuneOptions o;
    std::string output;
    bool quiet = false;
    CommandLine line("tune", tune_usage);
    line.flag("--quiet", quiet)
        .option("--device", [&](const std::string &a, const std::string &v) { o.device = parse_device(a, v); })
        .option(
            "--sizes",
            [&](const std::string &a, const std::string &v) {
                for (const std::string &s : items(a, v)) {
                    const size_t x = s.find('x');
                    const int w = parse_whole(a, s.substr(0, x), 1, 1 << 16);
                    o.sizes.push_back({w, x == std::string::npos ? w : parse_whole(a, s.substr(x + 1), 1, 1 << 16)});
                }
            })
        .option("--kernels",
                [&](const std::string &a, const std::string &v) {
                    for (const std::string &k : items(a, v)) {
                        o.kernels.push_back(parse_whole(a, k, 1, 4096));
                    }
                })
        .option("--precisions",
                [&](const std::string &a, const std::string &v) {
                    for (const std::string &p : items(a, v)) {
                        o.precisions.push_back(
                            parse_choice(a, p, {Precision::f64, Precision::f32, Precision::f16, Precision::f16f32}));
                    }
                })
        .option("--modes",
                [&](const std::string &a, const std::string &v) {
                    for (const std::string &m : items(a, v)) {
                        o.modes.push_back(parse_choice(a, m, {Mode::valid, Mode::same, Mode::full}));
                    }
                })
        .option("--algorithms",
                [&](const std::string &a, const std::string &v) {
                    for (const std::string &name : items(a, v)) {
                        const Algorithm algorithm = parse_algorithm(a, name);
                        if (algorithm == Algorithm::automatic) {
                            throw UsageError(a + ": name the algorithms to measure, not auto");
                        }
                        o.algorithms.push_back(algorithm);
                    }
                })
        .option("--reps", [&](const std::string &a, const std::string &v) { o.reps = parse_whole(a, v, 1, 1000); })
        .option("--max-ms",
                [&](const std::string &a, const std::string &v) {
                    o.max_ms = parse_number(a, v);
                    if (!(o.max_ms > 0)) {
                        throw UsageError(a + " " + v + ": allowed a number > 0");
                    }
                })
        .option("--output", [&](const std::string &, const std::string &v) { output = v; });
    if (!line.parse(args)) {
        return 0;
    }
    if (output.empty()) {
        output = default_wisdom_path();
        if (output.empty()) {
            throw UsageError("no default wisdom location (HOME is not set): give --output PATH");
        }
    }
    if (!quiet) {
        o.progress = [](const std::string &progress) { std::fprintf(stderr, "%s\n", progress.c_str()); };
    }
    std::string command = "halconv tune";
    for (const std::string &a : args) {
        command += " " + a;
    }
    Wisdom measured = tune(o);
    measured.command = command;
    Wisdom merged = measured;
    std::error_code ec;
    if (std::filesystem::exists(output, ec)) {
        try {
            merged = merge_wisdom(read_wisdom(output), measured);
        } catch (const Error &e) {
            std::fprintf(stderr, "halconv: replacing %s, which could not be read: %s\n", output.c_str(), e.what());
        }
    }
    write_wisdom(output, merged);

    // The fastest algorithm per point, as Auto will see it.
    const Wisdom::Section &s = measured.sections.front();
    std::map<std::string, std::pair<double, std::string>> fastest;
    std::vector<std::string> order;
    for (const Measurement &m : s.measurements) {
        const std::string key = std::string(to_string(m.precision)) + " " + to_string(m.mode) + " " +
                                std::to_string(m.image_width) + "x" + std::to_string(m.image_height) + " K " +
                                std::to_string(m.kernel_width);
        const auto it = fastest.find(key);
        if (it == fastest.end()) {
            order.push_back(key);
        }
        if (it == fastest.end() || m.ms < it->second.first) {
            fastest[key] = {m.ms, to_string(m.algorithm)};
        }
    }
    std::printf("%s: %zu measurements of %s\n", output.c_str(), s.measurements.size(), describe(s.device).c_str());
    std::printf("%-30s %-24s %10s\n", "point", "fastest", "ms");
    for (const std::string &key : order) {
        std::printf("%-30s %-24s %10.4f\n", key.c_str(), fastest[key].second.c_str(), fastest[key].first);
    }
    return 0;
}

}  // namespace halconv::cli
