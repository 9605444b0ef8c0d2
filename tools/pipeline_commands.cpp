// `halconv edges`, `halconv unsharp` and `halconv bilateral`: the composed pipelines and the
// bilateral filter on PNG and FITS files.
#include <cmath>
#include <string>
#include <vector>

#include "cli_common.h"
#include "commands.h"
#include "kernel_spec.h"

namespace halconv::cli {
namespace {

const char *const edges_usage =
    "usage: halconv edges IN... OUT [--threshold T] [--boundary B] [--fill V] [--device auto|cpu|cuda] [--staged]\n"
    "  Edges of seed 001: 5x5 Gaussian (sigma 1.4), 3x3 Laplacian, |Laplacian| > T, as one\n"
    "  Halide pipeline (--staged: stage by stage, the same result). Colour is taken as its\n"
    "  Rec. 601 luma. PNG values are in [0, 1]; T defaults to 5/255 (seed 001's 5 on 8-bit\n"
    "  data). OUT: an 8-bit gray PNG (edges white) or a float32 FITS of 0/1, as IN.\n"
    "  Defaults: boundary reflect, fill 0, device auto. Several INs or a directory: OUT is a directory.";

const char *const unsharp_usage =
    "usage: halconv unsharp IN... OUT (--sigma S | --kernel SPEC) [--amount A] [--boundary B] [--fill V]\n"
    "                       [--device auto|cpu|cuda]\n"
    "  Unsharp mask: OUT = IN + A (IN - blur), blur the correlation with a Gaussian of sigma S\n"
    "  (2 ceil(3 S) + 1 taps) or any --kernel SPEC (see halconv filter --help), on CUDA\n"
    "  through the tensor-core extern stage (kernels up to 128 x 128), float16 operands.\n"
    "  Colour per channel, alpha passed through; the output keeps the input's format.\n"
    "  Defaults: amount 1, boundary reflect, fill 0, device auto.";

const char *const bilateral_usage =
    "usage: halconv bilateral IN... OUT --sigma-spatial S --sigma-range R [--radius N] [--boundary B] [--fill V]\n"
    "                         [--device auto|cpu|cuda]\n"
    "  Bilateral filter (seed 003 eq. 3): each output the normalized sum over the (2N + 1)^2\n"
    "  window of exp(-d^2 / 2S^2) exp(-(I(p) - I(q))^2 / 2R^2) I(q), float32. R is in the\n"
    "  image's units (PNG values are in [0, 1]: R = 0.1 smooths within about 25 grey levels).\n"
    "  N defaults to ceil(3 S). Colour per channel, alpha passed through; the output keeps the\n"
    "  input's format. Defaults: boundary reflect, fill 0, device auto.";

// The options both commands take.
void pipeline_options(CommandLine &line, PipelineOptions &o) {
    line.option("--boundary", [&o](const std::string &a, const std::string &v) { o.boundary = parse_boundary(a, v); })
        .option("--fill", [&o](const std::string &a, const std::string &v) { o.fill_value = parse_fill(a, v); })
        .option("--device", [&o](const std::string &a, const std::string &v) { o.device = parse_device(a, v); });
}

void edges_file(const std::string &in, const std::string &out, double threshold, const PipelineOptions &o) {
    const Format format = same_format(in, out);
    Halide::Runtime::Buffer<float> plane;
    if (format == Format::fits) {
        const io::FitsImage img = io::read_fits(in);
        plane = plane_of(img.data, img.width, img.height);
    } else {
        plane = luma_plane(io::read_png(in));
    }
    Halide::Runtime::Buffer<uint8_t> edges(plane.width(), plane.height());
    detect_edges(plane, edges, threshold, o);
    edges.copy_to_host();
    std::vector<double> samples(size_t(edges.width()) * size_t(edges.height()));
    edges.for_each_element([&](int x, int y) { samples[size_t(y) * size_t(edges.width()) + size_t(x)] = edges(x, y); });
    if (format == Format::fits) {
        io::write_fits(out, {.width = edges.width(), .height = edges.height(), .data = samples, .bitpix = -32});
    } else {
        io::Image result;
        result.width = edges.width();
        result.height = edges.height();
        result.bit_depth = 8;
        result.channels.push_back(samples);
        io::write_png(out, result);
    }
}

// Each channel of a PNG (or the FITS plane) filtered by `filter` (float32 samples in, out);
// PNG alpha and format kept.
template <typename Filter>
void per_channel_file(const std::string &in, const std::string &out, Filter filter) {
    const auto run = [&](const std::vector<double> &samples, int width, int height) {
        Halide::Runtime::Buffer<float> plane = plane_of(samples, width, height);
        Halide::Runtime::Buffer<float> result(width, height);
        filter(plane, result);
        result.copy_to_host();
        return samples_of(result);
    };
    if (same_format(in, out) == Format::fits) {
        io::FitsImage img = io::read_fits(in);
        img.data = run(img.data, img.width, img.height);
        img.bitpix = -32;
        io::write_fits(out, img);
        return;
    }
    io::Image img = io::read_png(in);
    for (std::vector<double> &channel : img.channels) {
        channel = run(channel, img.width, img.height);
    }
    io::write_png(out, img);
}

void unsharp_file(const std::string &in, const std::string &out, Halide::Runtime::Buffer<float> &kernel, double amount,
                  const PipelineOptions &o) {
    per_channel_file(in, out, [&](Halide::Runtime::Buffer<float> &plane, Halide::Runtime::Buffer<float> &result) {
        unsharp_mask(plane, kernel, result, amount, o);
    });
}

}  // namespace

int edges_command(const std::vector<std::string> &args) {
    PipelineOptions o;
    double threshold = default_edge_threshold;
    bool staged = false;
    std::vector<std::string> paths;
    CommandLine line("edges", edges_usage);
    line.paths(paths).flag("--staged", staged).option("--threshold", [&](const std::string &a, const std::string &v) {
        threshold = parse_number(a, v);
        if (threshold < 0) {
            throw UsageError(a + " " + v + ": allowed a number >= 0");
        }
    });
    pipeline_options(line, o);
    if (!line.parse(args)) {
        return 0;
    }
    o.staging = staged ? Staging::staged : Staging::fused;
    check_paths(paths, "edges");
    return run_files(paths, [&](const std::string &in, const std::string &out) { edges_file(in, out, threshold, o); });
}

int unsharp_command(const std::vector<std::string> &args) {
    PipelineOptions o;
    double amount = 1.0;
    std::string sigma, spec;
    std::vector<std::string> paths;
    CommandLine line("unsharp", unsharp_usage);
    line.paths(paths)
        .option("--amount", [&](const std::string &a, const std::string &v) { amount = parse_number(a, v); })
        .option("--sigma", [&](const std::string &, const std::string &v) { sigma = v; })
        .option("--kernel", [&](const std::string &, const std::string &v) { spec = v; });
    pipeline_options(line, o);
    if (!line.parse(args)) {
        return 0;
    }
    if (sigma.empty() == spec.empty()) {
        throw UsageError("give the blur as --sigma S or as --kernel SPEC, one of them (see halconv unsharp --help)");
    }
    check_paths(paths, "unsharp");
    const io::KernelTaps taps = io::parse_kernel_spec(spec.empty() ? "gaussian:sigma=" + sigma : spec);
    Halide::Runtime::Buffer<float> kernel = plane_of(taps.taps, taps.width, taps.height);
    return run_files(paths,
                     [&](const std::string &in, const std::string &out) { unsharp_file(in, out, kernel, amount, o); });
}

int bilateral_command(const std::vector<std::string> &args) {
    PipelineOptions po;
    double sigma_spatial = 0, sigma_range = 0;
    int radius = default_bilateral_radius;
    std::vector<std::string> paths;
    CommandLine line("bilateral", bilateral_usage);
    line.paths(paths)
        .option("--sigma-spatial",
                [&](const std::string &a, const std::string &v) { sigma_spatial = parse_number(a, v); })
        .option("--sigma-range", [&](const std::string &a, const std::string &v) { sigma_range = parse_number(a, v); })
        .option("--radius",
                [&](const std::string &a, const std::string &v) { radius = parse_whole(a, v, 1, 1 << 20); });
    pipeline_options(line, po);
    if (!line.parse(args)) {
        return 0;
    }
    if (!(sigma_spatial > 0) || !(sigma_range > 0)) {
        throw UsageError("give --sigma-spatial S and --sigma-range R, both > 0 (see halconv bilateral --help)");
    }
    check_paths(paths, "bilateral");
    BilateralOptions o;
    o.boundary = po.boundary;
    o.fill_value = po.fill_value;
    o.device = po.device;
    return run_files(paths, [&](const std::string &in, const std::string &out) {
        per_channel_file(in, out, [&](Halide::Runtime::Buffer<float> &plane, Halide::Runtime::Buffer<float> &result) {
            bilateral_filter(plane, result, sigma_spatial, sigma_range, radius, o);
        });
    });
}

}  // namespace halconv::cli
