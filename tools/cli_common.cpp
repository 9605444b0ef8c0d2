#include "cli_common.h"

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <new>
#include <utility>

namespace halconv::cli {

namespace fs = std::filesystem;

std::optional<Format> format_named(const std::string &path) {
    const std::string ext = fs::path(path).extension().string();
    if (ext == ".png" || ext == ".PNG") {
        return Format::png;
    }
    if (ext == ".fits" || ext == ".fit" || ext == ".FITS" || ext == ".FIT") {
        return Format::fits;
    }
    return std::nullopt;
}

Format format_of_name(const std::string &path) {
    if (const std::optional<Format> f = format_named(path)) {
        return *f;
    }
    throw Error(ErrorCode::invalid_argument, path + ": unknown image type; allowed .png, .fits, .fit");
}

Format same_format(const std::string &in, const std::string &out) {
    const Format format = format_of_name(in);
    if (format_of_name(out) != format) {
        throw Error(ErrorCode::invalid_argument,
                    out + ": the output keeps the input's format (" + (format == Format::png ? ".png" : ".fits") + ")");
    }
    return format;
}

namespace {

// The whole word as a double, or nothing; `range` set when it is a number beyond a
// double's range (strtod would make it +-inf or 0).
std::optional<double> whole_double(const std::string &value, bool &range) {
    char *end = nullptr;
    errno = 0;
    const double v = std::strtod(value.c_str(), &end);
    range = errno == ERANGE && std::abs(v) > 1.0;
    if (value.empty() || std::isspace(static_cast<unsigned char>(value[0])) || end != value.c_str() + value.size()) {
        return std::nullopt;
    }
    return v;
}

}  // namespace

double parse_number(const std::string &flag, const std::string &value) {
    bool range = false;
    const std::optional<double> v = whole_double(value, range);
    if (!v || range || !std::isfinite(*v)) {
        throw UsageError(flag + " " + value + ": allowed a finite number" +
                         (range ? " (this one is beyond a double's range)" : ""));
    }
    return *v;
}

int parse_whole(const std::string &flag, const std::string &value, int min, int max) {
    const double v = parse_number(flag, value);
    if (v < min || v > max || v != static_cast<int>(v)) {
        throw UsageError(flag + " " + value + ": allowed whole numbers from " + std::to_string(min) + " to " +
                         std::to_string(max));
    }
    return static_cast<int>(v);
}

double parse_fill(const std::string &flag, const std::string &value) {
    bool range = false;
    const std::optional<double> v = whole_double(value, range);
    if (!v || range) {
        throw UsageError(flag + " " + value + ": allowed a number within a double's range, or nan, inf, -inf");
    }
    return *v;
}

std::string error_text(const std::exception &e) {
    if (dynamic_cast<const std::bad_alloc *>(&e) != nullptr) {
        return "out of memory";
    }
    const std::string what = e.what();
    return what.rfind("halconv: ", 0) == 0 ? what.substr(9) : what;
}

CommandLine::CommandLine(std::string command, std::string usage)
    : command_(std::move(command)), usage_(std::move(usage)), app_(std::make_unique<CLI::App>()) {
    app_->set_help_flag("-h,--help");
    // Unknown words are collected and refused below with the tool's own messages.
    app_->allow_extras();
    app_->option_defaults()->multi_option_policy(CLI::MultiOptionPolicy::TakeLast);
}

CommandLine::~CommandLine() = default;

CommandLine &CommandLine::option(const std::string &flag, Handler handle) {
    app_->add_option_function<std::string>(flag, [flag, handle](const std::string &value) { handle(flag, value); });
    return *this;
}

CommandLine &CommandLine::flag(const std::string &flag, bool &set) {
    app_->add_flag(flag, set);
    return *this;
}

CommandLine &CommandLine::paths(std::vector<std::string> &paths) {
    app_->add_option("paths", paths);
    return *this;
}

bool CommandLine::parse(const std::vector<std::string> &args) {
    std::vector<std::string> reversed(args.rbegin(), args.rend());  // CLI11 takes the words last first
    try {
        app_->parse(reversed);
    } catch (const CLI::CallForHelp &) {
        std::puts(usage_.c_str());
        return false;
    } catch (const CLI::ArgumentMismatch &e) {
        // A value option that ends the line; CLI11 takes any next word as the value.
        if (!args.empty() && args.back().rfind("--", 0) == 0) {
            throw UsageError(args.back() + " needs a value");
        }
        throw UsageError(std::string(e.what()) + " (see halconv " + command_ + " --help)");
    } catch (const CLI::ParseError &e) {
        throw UsageError(std::string(e.what()) + " (see halconv " + command_ + " --help)");
    }
    // CLI11 lists the "--" that ends the options among the words it did not take.
    std::vector<std::string> extra = app_->remaining();
    std::erase(extra, "--");
    if (extra.empty()) {
        return true;
    }
    const std::string &word = extra.front();
    if (word.rfind("--", 0) == 0) {
        throw UsageError("unknown option " + word + " (see halconv " + command_ + " --help)");
    }
    if (word.size() > 1 && word[0] == '-') {
        throw UsageError("unknown option " + word + " (a file whose name starts with '-': write ./" + word + ")");
    }
    throw UsageError("unexpected argument " + word + " (see halconv " + command_ + " --help)");
}

void check_paths(const std::vector<std::string> &paths, const std::string &command) {
    if (paths.size() < 2) {
        throw UsageError("give the input(s) and then the output (see halconv " + command + " --help)");
    }
}

Boundary parse_boundary(const std::string &flag, const std::string &value) {
    return parse_choice(flag, value,
                        {Boundary::constant, Boundary::nearest, Boundary::reflect, Boundary::mirror, Boundary::wrap});
}

Algorithm parse_algorithm(const std::string &flag, const std::string &value) {
    if (const std::optional<Algorithm> a = algorithm_named(value)) {
        return *a;
    }
    throw UsageError(flag + " " + value + ": allowed " + algorithm_names());
}

std::string algorithm_names() {
    std::string names = "auto";
    for (const AlgorithmInfo &a : algorithms()) {
        names += ", " + a.name;
    }
    return names;
}

std::string data_dir() {
    std::vector<fs::path> candidates;
    if (const char *env = std::getenv("HALCONV_DATA_DIR"); env != nullptr && *env != '\0') {
        candidates.emplace_back(env);
    }
    std::error_code ec;
    const fs::path exe = fs::read_symlink("/proc/self/exe", ec);
    if (!ec) {
        candidates.push_back(exe.parent_path() / HALCONV_DATA_DIR_FROM_BIN);
    }
    candidates.emplace_back(HALCONV_SOURCE_DATA_DIR);
    for (const fs::path &dir : candidates) {
        if (fs::is_regular_file(dir / "cameraman.png", ec)) {
            const fs::path canonical = fs::weakly_canonical(dir, ec);
            return (ec ? dir : canonical).string();
        }
    }
    return {};
}

Device parse_device(const std::string &flag, const std::string &value) {
    return parse_choice(flag, value, {Device::automatic, Device::cpu, Device::cuda});
}

namespace {

// Throws when writing `target` would replace `input` (the same file, through any path
// or link).
void refuse_replacing(const std::string &input, const std::string &target) {
    std::error_code ec;
    if (fs::exists(target, ec) && fs::equivalent(input, target, ec)) {
        throw Error(ErrorCode::invalid_argument, target + " is the input " + input +
                                                     ": writing it would replace the original; choose another output");
    }
}

}  // namespace

int run_files(std::vector<std::string> paths,
              const std::function<void(const std::string &, const std::string &)> &one) {
    const std::string out = paths.back();
    paths.pop_back();
    const bool batch = paths.size() > 1 || fs::is_directory(paths[0]);
    if (!batch) {
        refuse_replacing(paths[0], out);
        if (const fs::path parent = fs::path(out).parent_path(); !parent.empty()) {
            fs::create_directories(parent);
        }
        one(paths[0], out);
        return 0;
    }
    std::vector<std::string> inputs;
    for (const std::string &p : paths) {
        if (fs::is_directory(p)) {
            for (const auto &e : fs::directory_iterator(p)) {
                if (e.is_regular_file() && format_named(e.path().string())) {
                    inputs.push_back(e.path().string());
                }
            }
        } else {
            inputs.push_back(p);
        }
    }
    std::sort(inputs.begin(), inputs.end());
    if (inputs.empty()) {
        throw Error(ErrorCode::invalid_argument, "no .png, .fits or .fit files in " + paths[0]);
    }
    if (fs::exists(out) && !fs::is_directory(out)) {
        throw Error(ErrorCode::invalid_argument, out + ": several inputs need an output directory");
    }
    // Every output is named by its input's file name: check them all before writing one.
    std::vector<std::string> targets;
    std::map<std::string, std::string> writer_of;
    for (const std::string &in : inputs) {
        const std::string name = fs::path(in).filename().string();
        const auto [at, fresh] = writer_of.emplace(name, in);
        if (!fresh) {
            throw Error(ErrorCode::invalid_argument, at->second + " and " + in + " would both write " +
                                                         (fs::path(out) / name).string() +
                                                         "; filter inputs of the same name into different directories");
        }
        targets.push_back((fs::path(out) / name).string());
        refuse_replacing(in, targets.back());
    }
    fs::create_directories(out);
    int failed = 0;
    for (size_t i = 0; i < inputs.size(); i++) {
        std::fprintf(stderr, "\r[%zu/%zu] %s", i + 1, inputs.size(), inputs[i].c_str());
        try {
            one(inputs[i], targets[i]);
        } catch (const Error &e) {
            std::fprintf(stderr, "\nhalconv: error: %s\n", error_text(e).c_str());
            failed++;
        } catch (const std::bad_alloc &e) {
            std::fprintf(stderr, "\nhalconv: error: %s: %s\n", inputs[i].c_str(), error_text(e).c_str());
            failed++;
        }
    }
    std::fprintf(stderr, "\n%zu written, %d failed\n", inputs.size() - size_t(failed), failed);
    return failed == 0 ? 0 : 1;
}

Halide::Runtime::Buffer<float> plane_of(const std::vector<double> &samples, int width, int height) {
    Halide::Runtime::Buffer<float> plane(width, height);
    plane.for_each_element(
        [&](int x, int y) { plane(x, y) = static_cast<float>(samples[size_t(y) * size_t(width) + size_t(x)]); });
    return plane;
}

std::vector<double> samples_of(const Halide::Runtime::Buffer<float> &plane) {
    std::vector<double> samples(size_t(plane.width()) * size_t(plane.height()));
    plane.for_each_element([&](int x, int y) {
        samples[size_t(y - plane.dim(1).min()) * size_t(plane.width()) + size_t(x - plane.dim(0).min())] = plane(x, y);
    });
    return samples;
}

Halide::Runtime::Buffer<float> luma_plane(const io::Image &image) {
    if (image.channels.size() < 3) {
        return plane_of(image.channels[0], image.width, image.height);
    }
    std::vector<double> luma(image.channels[0].size());
    for (size_t i = 0; i < luma.size(); i++) {
        luma[i] = 0.299 * image.channels[0][i] + 0.587 * image.channels[1][i] + 0.114 * image.channels[2][i];
    }
    return plane_of(luma, image.width, image.height);
}

}  // namespace halconv::cli
