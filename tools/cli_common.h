// Pieces every halconv command shares: typed usage errors, image formats by file name,
// option values, single-file or batch runs, and images as one float32 plane.
#pragma once

#include <cstdlib>
#include <exception>
#include <functional>
#include <initializer_list>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "HalideBuffer.h"
#include "halconv/halconv.h"
#include "image_io.h"

namespace CLI {
class App;
}

namespace halconv::cli {

// A command line that cannot be run as given: exit status 2 (other errors: 1).
class UsageError : public Error {
public:
    explicit UsageError(const std::string &message) : Error(ErrorCode::invalid_argument, message) {}
};

enum class Format { png, fits };

// The image format a file name says, if any; format_of_name throws for other names.
std::optional<Format> format_named(const std::string &path);
Format format_of_name(const std::string &path);
// Throws unless `out` names the same format as `in`.
Format same_format(const std::string &in, const std::string &out);

// A finite number; "1e400" (out of a double's range), "nan" and "inf" are refused.
double parse_number(const std::string &flag, const std::string &value);
// A whole number from min to max.
int parse_whole(const std::string &flag, const std::string &value, int min, int max);
// A fill value: a number as above, or nan, inf, -inf (an out-of-image sample may be
// anything an image sample may be; they propagate as in SciPy).
double parse_fill(const std::string &flag, const std::string &value);

// An exception's message without halconv::Error's "halconv: " prefix (the tool adds
// "halconv: error: "); "out of memory" for std::bad_alloc.
std::string error_text(const std::exception &e);

// The value of an enum option among `choices`, by halconv::to_string name ("auto" for automatic).
template <typename Enum>
Enum parse_choice(const std::string &flag, const std::string &value, std::initializer_list<Enum> choices) {
    std::string allowed;
    for (Enum c : choices) {
        if (value == to_string(c) || (value == "auto" && std::string(to_string(c)) == "automatic")) {
            return c;
        }
        allowed += std::string(allowed.empty() ? "" : ", ") + to_string(c);
    }
    throw UsageError(flag + " " + value + ": allowed " + allowed);
}

// A command's arguments, parsed by CLI11 with the tool's conventions: --help / -h prints
// the command's usage and parse() returns false; a value option keeps its last value
// ("--mode same" or "--mode=same"); the words that are not options are the command's
// paths, and so is everything after "--". Unknown options, missing values and words a
// command does not take throw UsageError; a word that starts with '-' is never taken as
// a path (a stray option must not become a file name: write ./-x for a file that does).
class CommandLine {
public:
    using Handler = std::function<void(const std::string &flag, const std::string &value)>;

    CommandLine(std::string command, std::string usage);
    ~CommandLine();
    CommandLine(const CommandLine &) = delete;
    CommandLine &operator=(const CommandLine &) = delete;

    // `handle(flag, value)` runs during parse() with the option's last value, if given.
    CommandLine &option(const std::string &flag, Handler handle);
    CommandLine &flag(const std::string &flag, bool &set);
    // The words that are not options (IN... OUT); a command without paths refuses them.
    CommandLine &paths(std::vector<std::string> &paths);
    bool parse(const std::vector<std::string> &args);

private:
    std::string command_, usage_;
    std::unique_ptr<CLI::App> app_;
};

// Throws UsageError unless `paths` holds the input(s) and then the output.
void check_paths(const std::vector<std::string> &paths, const std::string &command);

Boundary parse_boundary(const std::string &flag, const std::string &value);
// An algorithm of the registry by name, or auto.
Algorithm parse_algorithm(const std::string &flag, const std::string &value);
// "auto, naive, shared_tiled, ...": what --algorithm takes.
std::string algorithm_names();
Device parse_device(const std::string &flag, const std::string &value);

// Runs `one(in, out)` for IN... OUT: a single input writes OUT (its parent directories
// created); several inputs or a directory write into the directory OUT, with a progress
// line and a failure count. Returns the exit status. Before anything is written it
// refuses (halconv::Error) outputs that would replace an input (OUT the input itself,
// or the input's own directory) and batches in which two inputs share a file name.
int run_files(std::vector<std::string> paths, const std::function<void(const std::string &, const std::string &)> &one);

// The folder of halconv's data (the demo's photo): $HALCONV_DATA_DIR, else the installed
// share/halconv beside this executable's bin/, else the source tree's data/ (a build
// tree); "" when none holds cameraman.png.
std::string data_dir();

// One float32 plane of an image: gray as it is, colour as Rec. 601 luma (alpha dropped).
Halide::Runtime::Buffer<float> luma_plane(const io::Image &image);
Halide::Runtime::Buffer<float> plane_of(const std::vector<double> &samples, int width, int height);
std::vector<double> samples_of(const Halide::Runtime::Buffer<float> &plane);

}  // namespace halconv::cli
