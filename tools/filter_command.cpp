// `halconv filter`: correlate (or convolve) PNG and FITS images with a --kernel SPEC,
// one file or a batch, each colour channel filtered, alpha passed through, the output in
// the input's format (PNG clamped and rounded at the input's depth; FITS float32, or
// float64 with --precision f64).
#include <algorithm>
#include <cstdio>
#include <string>
#include <vector>

#include "cli_common.h"
#include "commands.h"
#include "halconv/float16.h"
#include "halconv/halconv.h"
#include "image_io.h"
#include "kernel_spec.h"

namespace halconv::cli {
namespace {

std::string filter_usage() {
    return "usage: halconv filter IN... OUT --kernel SPEC [--algorithm A] [--precision f64|f32|f16|f16f32]\n"
           "                      [--mode valid|same|full] [--boundary constant|nearest|reflect|mirror|wrap]\n"
           "                      [--fill V] [--device auto|cpu|cuda] [--convolve] [--verbose]\n"
           "                      [--bands auto|always|never] [--band-rows N] [--gpus 0,1,...]\n"
           "  Correlates (with --convolve: convolves) each IN, a PNG or FITS image, with the kernel\n"
           "  and writes OUT in the same format. Several INs or a directory: OUT is a directory.\n"
           "  SPEC: gaussian:sigma=S[,size=K] | box:K | laplacian | sobel-x | sobel-y |\n"
           "        log:sigma=S[,size=K] | random:K[,seed=N] | FILE.txt | FILE.fits\n"
           "  --verbose: for each IN, the device and algorithm that ran, and why.\n"
           "  --bands: on CUDA, filter in bands of rows (auto: when the image does not fit on the\n"
           "  GPU); --band-rows: rows per band (default: about 64 MiB a band); --gpus: the CUDA\n"
           "  devices the bands spread over (default: every visible one).\n"
           "  Defaults: mode same, boundary constant, fill 0, precision f32, device auto,\n"
           "  algorithm auto (the fastest on the device, halconv tune); the algorithms:\n  " +
           algorithm_names() + ".";
}

halide_type_t storage_type(Precision p) {
    return p == Precision::f64 ? halide_type_of<double>()
                               : (p == Precision::f32 ? halide_type_of<float>() : halide_type_t(halide_type_float, 16));
}

// A dense buffer of the precision's storage type holding samples[y * width + x].
Halide::Runtime::Buffer<> to_buffer(const std::vector<double> &samples, int width, int height, Precision p) {
    Halide::Runtime::Buffer<> b(storage_type(p), width, height);
    for (size_t i = 0; i < samples.size(); i++) {
        switch (p) {
            case Precision::f64:
                static_cast<double *>(b.data())[i] = samples[i];
                break;
            case Precision::f32:
                static_cast<float *>(b.data())[i] = static_cast<float>(samples[i]);
                break;
            default:
                static_cast<uint16_t *>(b.data())[i] = float16_bits_from_double(samples[i]);
        }
    }
    return b;
}

std::vector<double> from_buffer(const Halide::Runtime::Buffer<> &b) {
    std::vector<double> out(size_t(b.width()) * b.height());
    for (int y = 0; y < b.height(); y++) {
        for (int x = 0; x < b.width(); x++) {
            const int pos[2] = {b.dim(0).min() + x, b.dim(1).min() + y};
            const void *at = b.raw_buffer()->address_of(pos);
            const size_t i = size_t(y) * b.width() + x;
            if (b.type() == halide_type_of<double>()) {
                out[i] = *static_cast<const double *>(at);
            } else if (b.type() == halide_type_of<float>()) {
                out[i] = *static_cast<const float *>(at);
            } else {
                out[i] = double_from_float16_bits(*static_cast<const uint16_t *>(at));
            }
        }
    }
    return out;
}

struct Filter {
    io::KernelTaps kernel;
    Options options;
    bool convolve = false;
    bool verbose = false;

    // Every channel of one file through one plan (the image's extent and the kernel
    // prepared once); returns each channel's output samples and the output extent.
    std::vector<std::vector<double>> run(const std::string &in, const std::vector<std::vector<double>> &channels,
                                         int width, int height, int &out_width, int &out_height) const {
        Halide::Runtime::Buffer<> k = to_buffer(kernel.taps, kernel.width, kernel.height, options.precision);
        const Plan plan({width, height}, k, options, convolve ? Operation::convolve : Operation::correlate);
        if (verbose) {
            const Dispatch &d = plan.dispatch();
            std::fprintf(stderr, "%s: device %s, algorithm %s (variant %s): %s\n", in.c_str(), to_string(d.device),
                         to_string(d.algorithm), d.variant.c_str(), d.reason.c_str());
        }
        std::vector<std::vector<double>> outputs;
        for (const std::vector<double> &samples : channels) {
            Halide::Runtime::Buffer<> image = to_buffer(samples, width, height, options.precision);
            Halide::Runtime::Buffer<> out = plan.apply(image);
            out.copy_to_host();
            outputs.push_back(from_buffer(out));
        }
        out_width = plan.output_extent().width;
        out_height = plan.output_extent().height;
        return outputs;
    }
};

void filter_file(const Filter &f, const std::string &in, const std::string &out) {
    if (same_format(in, out) == Format::fits) {
        const io::FitsImage img = io::read_fits(in);
        io::FitsImage result;
        result.data = f.run(in, {img.data}, img.width, img.height, result.width, result.height).front();
        result.bitpix = f.options.precision == Precision::f64 ? -64 : -32;
        io::write_fits(out, result);
        return;
    }
    const io::Image img = io::read_png(in);
    if (img.has_alpha() && f.options.mode != Mode::same) {
        throw Error(ErrorCode::invalid_argument,
                    in + ": has an alpha channel, which is passed through unchanged: allowed only with --mode same");
    }
    io::Image result;
    result.bit_depth = img.bit_depth;
    result.alpha = img.alpha;
    result.channels = f.run(in, img.channels, img.width, img.height, result.width, result.height);
    io::write_png(out, result);
}

}  // namespace

int filter_command(const std::vector<std::string> &args) {
    Filter f;
    std::vector<std::string> paths;
    std::string spec;
    CommandLine line("filter", filter_usage());
    line.paths(paths)
        .flag("--convolve", f.convolve)
        .flag("--verbose", f.verbose)
        .option("--kernel", [&](const std::string &, const std::string &v) { spec = v; })
        .option("--algorithm",
                [&](const std::string &a, const std::string &v) { f.options.algorithm = parse_algorithm(a, v); })
        .option("--precision",
                [&](const std::string &a, const std::string &v) {
                    f.options.precision =
                        parse_choice(a, v, {Precision::f64, Precision::f32, Precision::f16, Precision::f16f32});
                })
        .option("--mode",
                [&](const std::string &a, const std::string &v) {
                    f.options.mode = parse_choice(a, v, {Mode::valid, Mode::same, Mode::full});
                })
        .option("--boundary",
                [&](const std::string &a, const std::string &v) { f.options.boundary = parse_boundary(a, v); })
        .option("--device", [&](const std::string &a, const std::string &v) { f.options.device = parse_device(a, v); })
        .option("--fill", [&](const std::string &a, const std::string &v) { f.options.fill_value = parse_fill(a, v); })
        .option("--bands",
                [&](const std::string &a, const std::string &v) {
                    f.options.bands.banding = parse_choice(a, v, {Banding::automatic, Banding::always, Banding::never});
                })
        .option("--band-rows", [&](const std::string &a,
                                   const std::string &v) { f.options.bands.band_rows = parse_whole(a, v, 1, 1 << 30); })
        .option("--gpus", [&](const std::string &a, const std::string &v) {
            f.options.bands.devices.clear();
            size_t start = 0;
            while (start <= v.size()) {
                const size_t end = std::min(v.find(',', start), v.size());
                f.options.bands.devices.push_back(parse_whole(a, v.substr(start, end - start), 0, 1023));
                start = end + 1;
            }
        });
    if (!line.parse(args)) {
        return 0;
    }
    if (spec.empty()) {
        throw UsageError("--kernel SPEC is required (see halconv filter --help)");
    }
    check_paths(paths, "filter");
    f.kernel = io::parse_kernel_spec(spec);
    return run_files(paths, [&](const std::string &in, const std::string &out) { filter_file(f, in, out); });
}

}  // namespace halconv::cli
