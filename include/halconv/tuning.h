// What Algorithm::automatic decides with: measured times of every algorithm on a device
// ("wisdom", as FFTW calls it). Built into the library: tables measured on an H100 (for
// CUDA devices) and on a reference x86-64 CPU (for CPUs), each used for any device of
// its kind that has no wisdom of its own. `halconv tune` (or tune() below) measures the
// present device and writes a wisdom file; plans read it from default_wisdom_path().
// A wisdom file made by another build of halconv, with no measurements of the present
// device, or unreadable is not trusted: it is ignored, with a warning (one per file and
// process, through the warning handler), and the built-in tables are used.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "halconv/options.h"
#include "halconv/types.h"

namespace halconv {

// Which device measurements belong to: its kind and what tells one model from another.
struct DeviceIdentity {
    Device kind = Device::cpu;  // cpu or cuda
    std::string name;           // "NVIDIA H100 80GB HBM3", or the CPU's model name
    std::string detail;         // cuda: "sm_90, 132 SMs"; cpu: "24 threads"
    bool operator==(const DeviceIdentity &) const = default;
};
// The present device of `kind` (cuda: the current one; throws Error(device) without one).
DeviceIdentity identify_device(Device kind);
std::string describe(const DeviceIdentity &device);

// One median time: `algorithm` on images of image_width x image_height with a
// kernel_width x kernel_height kernel of numerical rank kernel_rank (1 for separable;
// low_rank's time grows with it: Auto scales its measurements by the ranks' ratio), data
// resident on the device.
struct Measurement {
    Algorithm algorithm = Algorithm::naive;
    Precision precision = Precision::f32;
    Mode mode = Mode::same;
    int image_width = 0, image_height = 0;
    int kernel_width = 0, kernel_height = 0;
    double ms = 0.0;
    int kernel_rank = 1;  // the wisdom file's "rank" (written when not 1)
};

struct Wisdom {
    std::string build_id;  // BuildInfo::build_id of the halconv that measured it
    std::string created;   // UTC date and time
    std::string command;   // what measured it
    struct Section {
        DeviceIdentity device;
        std::vector<Measurement> measurements;
    };
    std::vector<Section> sections;  // one per device
};

// A wisdom file (JSON). read_wisdom throws Error(io) for a file it cannot read or parse
// and Error(invalid_argument) for contents that are not wisdom (it does not check the
// build: plans do). write_wisdom writes through a temporary file and a rename.
Wisdom read_wisdom(const std::string &path);
void write_wisdom(const std::string &path, const Wisdom &wisdom);
// Parse / format without files.
Wisdom parse_wisdom(const std::string &json, const std::string &origin);
std::string format_wisdom(const Wisdom &wisdom);

// Where plans read wisdom: $HALCONV_WISDOM if set, else $XDG_CACHE_HOME/halconv/wisdom.json,
// else $HOME/.cache/halconv/wisdom.json.
std::string default_wisdom_path();

// The measurements Auto uses for `device`, and where they come from.
struct CostTable {
    std::string source;  // "wisdom file PATH", "built-in H100 table (bench/results/h100/...)", ...
    DeviceIdentity measured_on;
    std::vector<Measurement> measurements;
};
CostTable cost_table(const DeviceIdentity &device);

// Makes plans read this wisdom instead of the file (its sections for other devices and
// other builds are ignored as a file's would be); reload_wisdom() goes back to the file
// (re-read on the next plan). For programs that keep their own, and tests.
void use_wisdom(const Wisdom &wisdom);
void reload_wisdom();

// Receives each warning halconv gives (a wisdom file ignored, and why); the default
// prints "halconv: warning: MESSAGE" to stderr. Returns the previous handler. It runs
// while a plan is being made and must not make plans itself.
using WarningHandler = std::function<void(const std::string &message)>;
WarningHandler set_warning_handler(WarningHandler handler);

// What `halconv tune` measures: every algorithm that supports each request, on plans
// applied to resident random data (CUDA events, or wall time on the CPU), median of reps.
struct TuneOptions {
    Device device = Device::automatic;
    std::vector<Extent2d> sizes;        // default: 1024^2 and 4096^2 (cuda); 256^2 and 1024^2 (cpu)
    std::vector<int> kernels;           // square K; default 1 3 5 7 9 11 15 21 31 47 63 95 127 (cpu: to 31)
    std::vector<Precision> precisions;  // default: all four
    std::vector<Mode> modes;            // default: same and valid
    std::vector<Algorithm> algorithms;  // default: every algorithm of the device
    int reps = 10;                      // timed applies per point, after one warm-up
    double max_ms = 20.0;               // an algorithm slower than this is not timed at larger K
    std::function<void(const std::string &line)> progress;  // a line per point, if set
};
// Measures the present device: a Wisdom with one section, stamped with this build.
Wisdom tune(const TuneOptions &options);
// `into` with the sections of `update` replacing those of the same devices (a file of
// another build is replaced whole).
Wisdom merge_wisdom(const Wisdom &into, const Wisdom &update);

}  // namespace halconv
