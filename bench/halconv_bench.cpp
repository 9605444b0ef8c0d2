// halconv's benchmark and accuracy suite: every halconv variant and the peers (cuFFT,
// cuDNN, NPP) on the same problems, in one run, on the GPU (seed 000 §5.1: valid
// correlation, data resident, CUDA events, median of >= 20 runs after warm-up), with
// the ceilings measured in the same run so each row reads as a fraction of the roofline.
//
//   halconv_bench [--report time|auto|memory|accuracy|pipelines|separable|recursive|low_rank|bilateral|multichannel|
//                  bands|batch] [--batch 64]
//                 [--sizes
//   1024,4096,8192,3840x2160]
//                 [--kernels sweep|3,15,31] [--precisions f32,f16f32,f16] [--variants a,b,...]
//                 [--reps 20] [--max-ms 20] [--photos FILE|DIR,...] [--csv FILE] [--json FILE]
//
// time:      one row per variant x size x K x precision (variants: `auto`, every algorithm of
//            the registry, the peers; halconv's as plans made untimed, then applied): times, useful TFLOP/s (2 (H-K+1)
//            (W-K+1) K^2 operations whatever the method), memory and compute floors, the
//            fraction of the roofline, extra device bytes, and a spot check of 64 outputs
//            against float64. A variant slower than --max-ms at some K is not run at larger
//            K for that size and precision (row status "skipped").
// auto:      the time report, then a table of auto against the best halconv algorithm and
//            the best peer at every point (the target: auto within 5 % of the best halconv).
// memory:    the same rows without timing: extra device bytes per variant (seed 000 Table 4).
// accuracy:  MAPE (seed 000 eq. 20, median absolute percentage error) against a float64
//            correlation of the original photo, per photo x variant x precision x K, kernels
//            uniform in [0, 1) (seed 000 Table 5).
// pipelines: the composed pipelines (edges, unsharp mask, gaussian_blur one-shot and as a plan), float32;
//            then the edge pipeline on the host CPU against the host's floor (cpu_pipelines.h).
// separable: halconv's separable entry against NPP's row/column filters and its Gaussian,
//            float32, nearest boundary, Gaussian taps of K = 3 ... 127 (default).
// recursive: gaussian_blur's recursive method at sigma 1 ... 1000, float32, reflect, against
//            the exact method (the default taps) and the sampled Gaussian to 6 sigma
//            (its largest difference from the recursive result, beside the stated bound).
// low_rank:  a Laplacian of Gaussian of K = 15 ... 127 (default; sigma = K / 8, rank 2),
//            float32, same mode, reflect: Algorithm::low_rank, auto, and every algorithm that
//            takes any kernel, each with its largest difference from shared_tiled's output.
// bilateral: bilateral_filter at radius 3 ... 15 (the --kernels are the radii; sigma_spatial
//            = radius / 2, sigma_range 0.1 on [0, 1) data, nearest boundary), each variant
//            and precision against NPP's nppiFilterBilateralGaussBorder (32f), in Mpixel/s.
// multichannel: C-channel images by N kernels, halconv's implicit GEMM, im2col and direct pipelines against
//            cuDNN NHWC / NCHW in f16 and f32 (multichannel_report.h; --reps applies).
// batch:     --batch N device-resident images (default 64 x 1024^2, K 3 and 31, f32 and f16f32)
//            in one call, one by one, and as one image of as many pixels (batch_report.h; wall clock).
// bands:     host-resident f32 images (default 32768^2, K 3, 31, 127) streamed in row bands
//            through device 0 and over every visible device, pinned and (up to 32768^2)
//            pageable, against the copy floor (bands_report.h; wall clock, --reps applies).
#include <CLI/CLI.hpp>
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <ctime>
#include <filesystem>
#include <functional>
#include <map>
#include <optional>
#include <random>
#include <string>
#include <string_view>
#include <thread>

#include "HalideRuntimeCuda.h"
#include "bands_report.h"
#include "batch_report.h"
#include "bench_core.h"
#include "cpu_pipelines.h"
#include "gpu_common.h"
#include "halconv/float16.h"
#include "halconv/halconv.h"
#include "image_io.h"
#include "multichannel_report.h"
#include "peers.h"
#include "variants.h"

namespace {

using namespace halconv;
using namespace halconv::bench;

struct Settings {
    std::string report = "time";
    std::vector<Size> sizes;
    std::vector<int> kernels;
    std::vector<Precision> precisions;
    std::vector<std::string> variants = all_variant_names();
    std::vector<std::string> photos;
    int reps = 20;
    int batch = 64;  // images per batch (--report batch)
    double max_ms = 20.0;
    std::string csv_path, json_path, command_line;
};

Precision precision_of(const std::string &s) {
    for (Precision p : {Precision::f64, Precision::f32, Precision::f16, Precision::f16f32}) {
        if (s == to_string(p)) {
            return p;
        }
    }
    throw Error(ErrorCode::invalid_argument, "unknown precision '" + s + "'; allowed: f64, f32, f16, f16f32");
}

Settings parse(int argc, char **argv) {
    Settings s;
    for (int i = 0; i < argc; i++) {
        s.command_line += (i ? " " : "") + std::string(argv[i]);
    }
    CLI::App app{"halconv's benchmark against cuDNN, cuFFT and NPP (the protocol: the header of halconv_bench.cpp)",
                 "halconv_bench"};
    std::string sizes, kernels;
    std::vector<std::string> precisions, variants;
    app.add_option("--report", s.report, "what to measure")
        ->check(CLI::IsMember({"time", "auto", "memory", "accuracy", "pipelines", "separable", "recursive", "low_rank",
                               "bilateral", "multichannel", "bands", "batch"}))
        ->capture_default_str();
    app.add_option("--sizes", sizes, "image sizes, N or WxH (default per report)");
    app.add_option("--kernels", kernels, "sweep, or kernel sizes (default per report)");
    app.add_option("--precisions", precisions, "f64, f32, f16, f16f32 (default per report)")
        ->delimiter(',')
        ->check(CLI::IsMember({"f64", "f32", "f16", "f16f32"}));
    app.add_option("--variants", variants, "variants and peers, or all (the default)")->delimiter(',');
    app.add_option("--photos", s.photos, "accuracy photos: PNG files or folders")->delimiter(',');
    app.add_option("--reps", s.reps, "timed runs per point (the protocol's minimum is 20)")
        ->check(CLI::Range(20, 1 << 20))
        ->capture_default_str();
    app.add_option("--max-ms", s.max_ms, "a variant slower than this at some K is not run at larger K")
        ->check(CLI::PositiveNumber)
        ->capture_default_str();
    app.add_option("--batch", s.batch, "images per batch (--report batch)")
        ->check(CLI::Range(1, 1 << 16))
        ->capture_default_str();
    app.add_option("--csv", s.csv_path, "write the results as CSV");
    app.add_option("--json", s.json_path, "write the results as JSON");
    try {
        app.parse(argc, argv);
    } catch (const CLI::ParseError &e) {
        std::exit(app.exit(e));
    }
    const bool accuracy = s.report == "accuracy", memory = s.report == "memory", bands = s.report == "bands",
               separable = s.report == "separable", low_rank = s.report == "low_rank",
               bilateral = s.report == "bilateral", batch = s.report == "batch";
    s.sizes = parse_sizes(sizes.empty() ? (memory  ? "4096"
                                           : bands ? "32768"
                                           : batch ? "1024"
                                                   : "1024,4096,8192,3840x2160")
                                        : sizes);
    s.kernels = parse_kernels(kernels.empty() ? (accuracy    ? "3,9,15,31,63,127"
                                                 : separable ? "3,7,15,31,63,95,127"
                                                 : memory    ? "3,15,31,63"
                                                 : bands     ? "3,31,127"
                                                 : batch     ? "3,31"
                                                 : low_rank  ? "15,31,63,127"
                                                 : bilateral ? "3,5,7,9,11,13,15"
                                                             : "sweep")
                                              : kernels);
    if (precisions.empty()) {
        precisions = accuracy ? std::vector<std::string>{"f64", "f32", "f16f32", "f16"}
                     : batch  ? std::vector<std::string>{"f32", "f16f32"}
                              : std::vector<std::string>{"f32", "f16f32", "f16"};
    }
    for (const std::string &p : precisions) {
        s.precisions.push_back(precision_of(p));
    }
    if (!variants.empty() && variants != std::vector<std::string>{"all"}) {
        s.variants = variants;
    }
    if (s.photos.empty()) {
        // The source tree's data/ where it was built, else ./data (a copy run elsewhere).
        const std::string data = std::filesystem::is_directory(HALCONV_DATA_DIR) ? HALCONV_DATA_DIR : "data";
        s.photos = {data + "/cameraman.png", data + "/photos"};
    }
    return s;
}

// The value a float64 becomes in the precision's storage type.
double stored(Precision p, double v) {
    return p == Precision::f64   ? v
           : p == Precision::f32 ? double(float(v))
                                 : double_from_float16_bits(float16_bits_from_double(v));
}

// An image on the device in the precision's storage type, from float64 values.
Halide::Runtime::Buffer<> upload(Precision p, const Plane &values) {
    Halide::Runtime::Buffer<> b(storage_type(p), values.width, values.height);
    for (int y = 0; y < values.height; y++) {
        for (int x = 0; x < values.width; x++) {
            const double v = values.at(x, y);
            if (p == Precision::f64) {
                b.as<double>()(x, y) = v;
            } else if (p == Precision::f32) {
                b.as<float>()(x, y) = float(v);
            } else {
                b.as<uint16_t>()(x, y) = float16_bits_from_double(v);
            }
        }
    }
    b.set_host_dirty();
    if (b.copy_to_device(halide_cuda_device_interface()) != 0) {
        throw Error(ErrorCode::invalid_argument, "could not copy benchmark data to the GPU");
    }
    return b;
}

Plane random_plane(int w, int h, std::mt19937_64 &rng) {
    Plane p(w, h);
    std::uniform_real_distribution<double> dist(0.0, 1.0);
    for (double &v : p.data) {
        v = dist(rng);
    }
    return p;
}

Plane rounded(Precision p, const Plane &values) {
    Plane r = values;
    for (double &v : r.data) {
        v = stored(p, v);
    }
    return r;
}

// Spot-check bound on the error of sampled outputs against float64 on the stored inputs,
// relative to the largest sampled output (an FFT's error is spread over the whole image,
// so per-pixel relative error says nothing for its small outputs). float64 and float32
// sums of up to 16129 positive terms stay far inside 1e-9 and 1e-3; float16 storage of
// the output alone is 5e-4 and float16 FFTs reach ~1e-2; arithmetic in float16 itself
// (halconv's f16 CUDA-core pipelines) drifts by tens of percent at large K, so there the
// check only catches unwritten or misplaced outputs.
double check_bound(Precision p, bool accumulates_in_storage) {
    switch (p) {
        case Precision::f64:
            return 1e-9;
        case Precision::f32:
            return 1e-3;
        case Precision::f16f32:
            return 1e-2;
        default:
            return accumulates_in_storage ? 1.0 : 0.05;
    }
}

// 64 samples (the four corners and random positions).
double spot_check(const OutputView &out, const Plane &image, const Plane &kernel, std::mt19937_64 &rng) {
    std::uniform_int_distribution<int> xs(0, out.width - 1), ys(0, out.height - 1);
    double worst = 0.0, scale = 0.0;
    for (int i = 0; i < 64; i++) {
        const int x = i < 4 ? (i % 2) * (out.width - 1) : xs(rng), y = i < 4 ? (i / 2) * (out.height - 1) : ys(rng);
        const double want = correlate_valid_at(image, kernel, x, y), got = fetch_sample(out, x, y);
        worst = std::max(worst, std::isfinite(got) ? std::abs(got - want) : INFINITY);
        scale = std::max(scale, std::abs(want));
    }
    return worst / std::max(scale, 1e-300);
}

struct Run {
    Settings settings;
    cudaStream_t stream = nullptr;
    cudaDeviceProp prop{};
    Ceilings ceilings;
    std::unique_ptr<PeerContext, PeerContextDeleter> peers;
    std::vector<std::pair<std::string, std::string>> metadata;
    // Writes the rows so far (after each image size or photo), so a run stopped early
    // keeps what it measured.
    std::function<void()> checkpoint = [] {};
};

// After a failed row: a failure the CUDA context survives is that row's alone; one it
// does not (a kernel fault) ends the run, which still writes the rows it has.
void check_context() {
    cudaGetLastError();
    check_cuda(cudaDeviceSynchronize(), "the CUDA context after a failed run (the run stops here)");
}

const std::vector<std::string> time_columns{
    "device",          "family",           "variant",     "precision",
    "width",           "height",           "K",           "status",
    "median_ms",       "min_ms",           "max_ms",      "useful_tflops",
    "memory_floor_ms", "compute_floor_ms", "roofline_ms", "fraction_of_roofline",
    "extra_bytes",     "check_max_err",    "note"};

std::string fixed(double v, int digits) {
    char text[32];
    std::snprintf(text, sizeof text, "%.*f", digits, v);
    return text;
}

int output_bytes(Precision p) {
    return p == Precision::f64 ? 8 : p == Precision::f16 ? 2 : 4;
}

void time_report(Run &run, Table &table) {
    const Settings &s = run.settings;
    const bool timed = s.report == "time" || s.report == "auto";
    std::mt19937_64 rng(20261122);
    std::printf("%-24s %-6s %10s %4s %10s %8s %6s %9s  %s\n", "variant", "prec", "size", "K", "median_ms", "TFLOP/s",
                "roof%", "extra_MiB", "status");
    for (Precision precision : s.precisions) {
        for (const Size &size : s.sizes) {
            const Plane image_values = rounded(precision, random_plane(size.width, size.height, rng));
            Halide::Runtime::Buffer<> image = upload(precision, image_values);
            std::map<std::string, int> too_slow_at;  // variant -> K where it passed --max-ms
            for (int k : s.kernels) {
                if (k > std::min(size.width, size.height)) {
                    continue;
                }
                const Plane kernel = rounded(precision, random_plane(k, k, rng));
                const int ow = size.width - k + 1, oh = size.height - k + 1;
                const double flops = 2.0 * ow * double(oh) * k * k;
                const double bytes = double(size.width) * size.height * (storage_type(precision).bytes()) +
                                     double(ow) * oh * output_bytes(precision);
                const double memory_floor = bytes / run.ceilings.copy_bytes_per_s * 1e3;
                const double rate = precision == Precision::f32   ? run.ceilings.gemm_f32_flops
                                    : precision == Precision::f64 ? 0.0
                                                                  : run.ceilings.gemm_f16_flops;
                const double compute_floor = rate > 0 ? flops / rate * 1e3 : 0.0;
                const double roofline = std::max(memory_floor, compute_floor);
                Problem problem{precision, &image, &kernel, run.stream};
                for (const std::string &name : s.variants) {
                    table.add_row();
                    table.set("device", run.prop.name);
                    table.set("family", family_of(name));
                    table.set("variant", name);
                    table.set("precision", to_string(precision));
                    table.set("width", int64_t(size.width));
                    table.set("height", int64_t(size.height));
                    table.set("K", int64_t(k));
                    table.set("memory_floor_ms", memory_floor);
                    if (compute_floor > 0) {
                        table.set("compute_floor_ms", compute_floor);
                    }
                    table.set("roofline_ms", roofline);
                    std::string status = "ok", note;
                    char line[160];
                    std::snprintf(line, sizeof line, "%-24s %-6s %5dx%-5d %3d", name.c_str(), to_string(precision),
                                  size.width, size.height, k);
                    std::unique_ptr<Variant> v = make_variant(name, *run.peers);
                    if (std::string why = v->unsupported(problem); !why.empty()) {
                        table.set("status", "unsupported");
                        table.set("note", why);
                        continue;
                    }
                    if (too_slow_at.count(name)) {
                        table.set("status", "skipped");
                        table.set("note", "median over --max-ms " + fixed(s.max_ms, 1) +
                                              " at K=" + std::to_string(too_slow_at[name]));
                        continue;
                    }
                    try {
                        v->prepare(problem);
                        MemoryProbe probe;
                        probe.begin();
                        v->setup();
                        v->run();
                        const int64_t extra = probe.end();
                        table.set("extra_bytes", extra);
                        const double err = spot_check(v->output(), image_values, kernel, rng);
                        table.set("check_max_err", err);
                        if (!(err <= check_bound(precision, v->accumulates_in_storage()))) {
                            status = "check_failed";
                        }
                        note = v->note();
                        if (timed) {
                            const Timing t = time_on_stream(run.stream, s.reps, [&] { v->run(); });
                            table.set("median_ms", t.median_ms);
                            table.set("min_ms", t.min_ms);
                            table.set("max_ms", t.max_ms);
                            table.set("useful_tflops", flops / (t.median_ms * 1e-3) / 1e12);
                            table.set("fraction_of_roofline", roofline / t.median_ms);
                            if (t.median_ms > s.max_ms) {
                                too_slow_at[name] = k;
                            }
                            std::printf("%s %10.4f %8.2f %5.0f%% %9.1f  %s\n", line, t.median_ms,
                                        flops / (t.median_ms * 1e-3) / 1e12, 100.0 * roofline / t.median_ms,
                                        double(extra) / (1 << 20), status.c_str());
                        } else {
                            std::printf("%s %10s %8s %6s %9.1f  %s\n", line, "", "", "", double(extra) / (1 << 20),
                                        status.c_str());
                        }
                    } catch (const Error &e) {
                        // A plan refuses what the algorithm cannot run (its limits): not a failure.
                        status = e.code() == ErrorCode::unsupported ? "unsupported" : "failed";
                        note = e.what();
                        std::printf("%s  %s: %s\n", line, status.c_str(), e.what());
                    } catch (const std::exception &e) {
                        status = "failed";
                        note = e.what();
                        std::printf("%s  failed: %s\n", line, e.what());
                    }
                    table.set("status", status);
                    table.set("note", note);
                    std::fflush(stdout);
                    check_context();
                }
                run.checkpoint();  // after every K: a run stopped at its time limit keeps its rows
            }
        }
    }
}

// The auto report's verdict: per point, auto's time against the best other halconv
// algorithm and the best peer measured in the same run.
void auto_summary(const Table &table) {
    struct Point {
        double auto_ms = 0, best_ms = 0, peer_ms = 0;
        std::string chose, best, peer;
    };
    std::map<std::string, Point> points;
    std::vector<std::string> order;
    for (size_t r = 0; r < table.rows(); r++) {
        if (table.cell(r, "status") != "ok" || table.cell(r, "median_ms").empty()) {
            continue;
        }
        const std::string key = table.cell(r, "precision") + " " + table.cell(r, "width") + "x" +
                                table.cell(r, "height") + " K " + table.cell(r, "K");
        if (!points.count(key)) {
            order.push_back(key);
        }
        Point &p = points[key];
        const double ms = std::stod(table.cell(r, "median_ms"));
        const std::string variant = table.cell(r, "variant");
        if (variant == "auto") {
            p.auto_ms = ms;
            p.chose = table.cell(r, "note");
        } else if (table.cell(r, "family") == "halconv") {
            if (p.best_ms == 0 || ms < p.best_ms) {
                p.best_ms = ms;
                p.best = variant;
            }
        } else if (p.peer_ms == 0 || ms < p.peer_ms) {
            p.peer_ms = ms;
            p.peer = variant;
        }
    }
    std::printf("\nauto vs the best halconv algorithm and the best peer (median ms)\n");
    std::printf("%-28s %10s %-18s %10s %-18s %7s %10s %-12s\n", "point", "auto", "(chose)", "best", "(algorithm)",
                "ratio", "peer", "(peer)");
    double worst = 0;
    int within = 0, compared = 0;
    std::string worst_at;
    for (const std::string &key : order) {
        const Point &p = points[key];
        if (p.auto_ms == 0 || p.best_ms == 0) {
            continue;
        }
        const double ratio = p.auto_ms / p.best_ms;
        compared++;
        within += ratio <= 1.05;
        if (ratio > worst) {
            worst = ratio;
            worst_at = key;
        }
        std::printf("%-28s %10.4f %-18s %10.4f %-18s %7.3f %10.4f %-12s\n", key.c_str(), p.auto_ms, p.chose.c_str(),
                    p.best_ms, p.best.c_str(), ratio, p.peer_ms, p.peer.c_str());
    }
    std::printf("auto within 5%% of the best halconv algorithm at %d of %d points; worst %.3fx at %s\n", within,
                compared, worst, worst_at.c_str());
}

const std::vector<std::string> accuracy_columns{
    "device", "family", "variant",      "precision",       "photo",           "width", "height",
    "K",      "status", "mape_percent", "p95_ape_percent", "max_ape_percent", "note"};

// The photo's first channel (the photos are gray) as float64 in [0, 1].
Plane read_photo(const std::string &path) {
    const io::Image png = io::read_png(path);
    Plane p(png.width, png.height);
    p.data = png.channels.front();
    return p;
}

std::vector<std::string> photo_files(const std::vector<std::string> &entries) {
    std::vector<std::string> files;
    for (const std::string &e : entries) {
        if (std::filesystem::is_directory(e)) {
            std::vector<std::string> in_dir;
            for (const auto &f : std::filesystem::directory_iterator(e)) {
                if (f.path().extension() == ".png") {
                    in_dir.push_back(f.path().string());
                }
            }
            std::sort(in_dir.begin(), in_dir.end());
            files.insert(files.end(), in_dir.begin(), in_dir.end());
        } else {
            files.push_back(e);
        }
    }
    if (files.empty()) {
        throw Error(ErrorCode::invalid_argument, "no photos found for the accuracy report");
    }
    return files;
}

void accuracy_report(Run &run, Table &table) {
    const Settings &s = run.settings;
    const int threads = int(std::max(1u, std::thread::hardware_concurrency()));
    std::printf("%-24s %-6s %-14s %4s %12s %12s  %s\n", "variant", "prec", "photo", "K", "MAPE_%", "max_APE_%",
                "status");
    for (const std::string &path : photo_files(s.photos)) {
        const Plane photo = read_photo(path);
        const std::string photo_name = std::filesystem::path(path).stem().string();
        for (int k : s.kernels) {
            if (k > std::min(photo.width, photo.height)) {
                continue;
            }
            // The same kernel for every photo and precision (seeded by K).
            std::mt19937_64 rng(20261122u + unsigned(k));
            const Plane kernel = random_plane(k, k, rng);
            const Plane gold = correlate_valid_gold(photo, kernel, threads);
            for (Precision precision : s.precisions) {
                Halide::Runtime::Buffer<> image = upload(precision, photo);
                Problem problem{precision, &image, &kernel, run.stream};
                for (const std::string &name : s.variants) {
                    std::unique_ptr<Variant> v = make_variant(name, *run.peers);
                    const std::string why = v->unsupported(problem);
                    if (!why.empty()) {
                        continue;  // the time report lists what each variant supports
                    }
                    table.add_row();
                    table.set("device", run.prop.name);
                    table.set("family", family_of(name));
                    table.set("variant", name);
                    table.set("precision", to_string(precision));
                    table.set("photo", photo_name);
                    table.set("width", int64_t(photo.width));
                    table.set("height", int64_t(photo.height));
                    table.set("K", int64_t(k));
                    try {
                        v->prepare(problem);
                        v->setup();
                        v->run();
                        check_cuda(cudaStreamSynchronize(run.stream), "accuracy run");
                        const ApeSummary a = ape_summary(gold, fetch_output(v->output()));
                        table.set("status", "ok");
                        table.set("mape_percent", a.median);
                        table.set("p95_ape_percent", a.p95);
                        table.set("max_ape_percent", a.max);
                        table.set("note", v->note());
                        std::printf("%-24s %-6s %-14s %4d %12.3e %12.3e  ok\n", name.c_str(), to_string(precision),
                                    photo_name.c_str(), k, a.median, a.max);
                    } catch (const std::exception &e) {
                        table.set("status", "failed");
                        table.set("note", e.what());
                        std::printf("%-24s %-6s %-14s %4d  failed: %s\n", name.c_str(), to_string(precision),
                                    photo_name.c_str(), k, e.what());
                    }
                    check_context();
                    std::fflush(stdout);
                }
            }
        }
        run.checkpoint();
    }
}

// Starts a row of a timed report with the columns they all have: device, extent, times.
void add_timing_row(Table &table, const Run &run, int width, int height, const Timing &t) {
    table.add_row();
    table.set("device", run.prop.name);
    table.set("width", int64_t(width));
    table.set("height", int64_t(height));
    table.set("median_ms", t.median_ms);
    table.set("min_ms", t.min_ms);
    table.set("max_ms", t.max_ms);
}

// The same for a report timed against the one-pass memory floor (pipelines, separable,
// recursive): the floor and the fraction of it too.
void add_timed_row(Table &table, const Run &run, int width, int height, const Timing &t, double floor_ms) {
    add_timing_row(table, run, width, height, t);
    table.set("memory_floor_ms", floor_ms);
    table.set("fraction_of_memory_floor", floor_ms / t.median_ms);
}

const std::vector<std::string> pipeline_columns{"device", "pipeline",        "width",
                                                "height", "median_ms",       "min_ms",
                                                "max_ms", "memory_floor_ms", "fraction_of_memory_floor"};

// The composed pipelines, float32, reflect; the floor is one pass: the image read and
// the output written.
void pipelines_report(Run &run, Table &table) {
    const Settings &s = run.settings;
    std::mt19937_64 rng(20261122);
    const std::string host = host_cpu_description();
    std::printf("host CPU: %s\n", host.c_str());
    std::printf("%-22s %11s %10s %10s %8s\n", "pipeline", "size", "median_ms", "floor_ms", "floor%");
    auto report = [&](const std::string &name, const Size &size, const Timing &t, int out_bytes) {
        const double floor_ms =
            double(size.width) * size.height * (4 + out_bytes) / run.ceilings.copy_bytes_per_s * 1e3;
        std::printf("%-22s %5dx%-5d %10.4f %10.4f %7.0f%%\n", name.c_str(), size.width, size.height, t.median_ms,
                    floor_ms, 100.0 * floor_ms / t.median_ms);
        add_timed_row(table, run, size.width, size.height, t, floor_ms);
        table.set("pipeline", name);
    };
    for (const Size &size : s.sizes) {
        Halide::Runtime::Buffer<> image = upload(Precision::f32, random_plane(size.width, size.height, rng));
        Halide::Runtime::Buffer<uint8_t> edges(size.width, size.height);
        edges.device_malloc(halide_cuda_device_interface());
        PipelineOptions po;
        po.device = Device::cuda;
        po.stream = run.stream;
        for (Staging st : {Staging::fused, Staging::staged}) {
            po.staging = st;
            const Timing t = time_on_stream(run.stream, s.reps, [&] { detect_edges(image, edges, 0.02, po); });
            report(std::string("edges_") + to_string(st), size, t, 1);
        }
        Halide::Runtime::Buffer<float> blur_kernel(49, 49), sharpened(size.width, size.height);
        const std::vector<double> g = gaussian_taps(8.0, 49);
        blur_kernel.for_each_element(
            [&](int x, int y) { blur_kernel(x, y) = static_cast<float>(g[size_t(x)] * g[size_t(y)]); });
        sharpened.device_malloc(halide_cuda_device_interface());
        report("unsharp_tc_k49", size,
               time_on_stream(run.stream, s.reps, [&] { unsharp_mask(image, blur_kernel, sharpened, 1.0, po); }), 4);
        Options go;
        go.device = Device::cuda;
        go.boundary = Boundary::reflect;
        go.stream = run.stream;
        // Each sigma as a one-shot call (a plan made and dropped per call) and as a plan made
        // once and applied (the form repeated filtering takes).
        for (double sigma : {3.0, 10.0, 20.0, 25.0}) {
            const std::string taps = std::to_string(int(sigma)) + "_k" + std::to_string(gaussian_taps(sigma).size());
            const Timing t = time_on_stream(run.stream, s.reps, [&] { gaussian_blur(image, sharpened, sigma, go); });
            report("gaussian_blur_s" + taps, size, t, 4);
            const Plan plan = Plan::gaussian(Extent2d{size.width, size.height}, sigma, go);
            report("gaussian_plan_s" + taps, size,
                   time_on_stream(run.stream, s.reps, [&] { plan.apply(image, sharpened); }), 4);
        }
        // The edge pipeline on the host CPU, against this host's floor at this size.
        Halide::Runtime::Buffer<float> host_image(size.width, size.height);
        std::uniform_real_distribution<float> unit(0.0f, 1.0f);
        host_image.for_each_value([&](float &v) { v = unit(rng); });
        Halide::Runtime::Buffer<uint8_t> host_edges(size.width, size.height);
        const double floor_ms = host_floor_ms(host_image.data(), host_edges.data(), size.width, size.height, s.reps);
        PipelineOptions cpu;
        cpu.device = Device::cpu;
        for (Staging st : {Staging::fused, Staging::staged}) {
            cpu.staging = st;
            const Timing t = time_on_host(s.reps, [&] { detect_edges(host_image, host_edges, 0.02, cpu); });
            std::printf("%-22s %5dx%-5d %10.4f %10.4f %7.0f%%  (host CPU)\n",
                        (std::string("edges_") + to_string(st)).c_str(), size.width, size.height, t.median_ms, floor_ms,
                        100.0 * floor_ms / t.median_ms);
            add_timed_row(table, run, size.width, size.height, t, floor_ms);
            table.set("device", host);
            table.set("pipeline", std::string("edges_") + to_string(st));
        }
    }
}

// The largest |a - b| over n samples; infinity where a NaN makes them incomparable.
double max_abs_difference(const float *a, const float *b, int64_t n) {
    double worst = 0;
    for (int64_t i = 0; i < n; i++) {
        const double d = std::fabs(double(a[i]) - double(b[i]));
        if (!(d <= worst)) {
            worst = std::isnan(d) ? INFINITY : d;
        }
    }
    return worst;
}

const std::vector<std::string> recursive_columns{"device",
                                                 "method",
                                                 "variant",
                                                 "width",
                                                 "height",
                                                 "sigma",
                                                 "median_ms",
                                                 "min_ms",
                                                 "max_ms",
                                                 "memory_floor_ms",
                                                 "fraction_of_memory_floor",
                                                 "error_bound",
                                                 "max_abs_difference"};

// gaussian_blur, float32, reflect, plans made once: the recursive method at sigma 1 ...
// 1000 and the exact one (2 ceil(3 sigma) + 1 taps) beside it. error_bound: the stated
// bound (recursive_gaussian_error) for data in [0, 1); max_abs_difference: the recursive
// result's largest difference from the sampled Gaussian to 6 sigma (the exact method with
// 2 ceil(6 sigma) + 1 taps: its truncation is below 1e-8), where that fits max_gaussian_taps.
// The floor is one pass: the image read and the output written.
void recursive_report(Run &run, Table &table) {
    const Settings &s = run.settings;
    std::mt19937_64 rng(20261126);
    std::printf("%-10s %-36s %11s %7s %10s %10s %8s %10s %10s\n", "method", "variant", "size", "sigma", "median_ms",
                "floor_ms", "floor%", "bound", "max_diff");
    for (const Size &size : s.sizes) {
        const int w = size.width, h = size.height;
        Halide::Runtime::Buffer<> image = upload(Precision::f32, random_plane(w, h, rng));
        image.copy_to_device(halide_cuda_device_interface());
        Halide::Runtime::Buffer<float> recursive(w, h), exact(w, h);
        recursive.device_malloc(halide_cuda_device_interface());
        exact.device_malloc(halide_cuda_device_interface());
        const double floor_ms = double(w) * h * 8 / run.ceilings.copy_bytes_per_s * 1e3;
        Options o;
        o.device = Device::cuda;
        o.boundary = Boundary::reflect;
        o.stream = run.stream;
        for (double sigma : {1.0, 3.0, 10.0, 20.0, 100.0, 1000.0}) {
            auto report = [&](const char *method, const Plan &plan, const Timing &t, double bound, double diff) {
                const std::string b = bound >= 0 ? std::to_string(bound) : "-";
                const std::string d = diff >= 0 ? std::to_string(diff) : "-";
                std::printf("%-10s %-36s %5dx%-5d %7g %10.4f %10.4f %7.0f%% %10s %10s\n", method,
                            plan.dispatch().variant.c_str(), w, h, sigma, t.median_ms, floor_ms,
                            100.0 * floor_ms / t.median_ms, b.c_str(), d.c_str());
                add_timed_row(table, run, w, h, t, floor_ms);
                table.set("method", method);
                table.set("variant", plan.dispatch().variant);
                table.set("sigma", sigma);
                if (bound >= 0) {
                    table.set("error_bound", bound);
                }
                if (diff >= 0) {
                    table.set("max_abs_difference", diff);
                }
            };
            const Plan fast = Plan::gaussian(Extent2d{w, h}, sigma, o, GaussianMethod::recursive);
            const Timing t = time_on_stream(run.stream, s.reps, [&] { fast.apply(image, recursive); });
            double diff = -1;
            const int wide = 2 * int(std::ceil(6.0 * sigma)) + 1;
            if (wide <= max_gaussian_taps) {
                const Plan reference = Plan::gaussian(Extent2d{w, h}, sigma, o, wide);
                reference.apply(image, exact);
                check_cuda(cudaStreamSynchronize(run.stream), "gaussian_blur");
                recursive.copy_to_host();
                exact.copy_to_host();
                diff = max_abs_difference(recursive.data(), exact.data(), int64_t(w) * h);
            }
            report("recursive", fast, t, recursive_gaussian_error(sigma), diff);
            const Plan taps = Plan::gaussian(Extent2d{w, h}, sigma, o);
            report("exact", taps, time_on_stream(run.stream, s.reps, [&] { taps.apply(image, exact); }), -1, -1);
            run.checkpoint();
        }
    }
}

const std::vector<std::string> separable_columns{"device",
                                                 "variant",
                                                 "width",
                                                 "height",
                                                 "k",
                                                 "median_ms",
                                                 "min_ms",
                                                 "max_ms",
                                                 "memory_floor_ms",
                                                 "fraction_of_memory_floor",
                                                 "max_abs_difference"};

// Separable filtering, float32, same mode, nearest boundary (NPP's replicate border, the
// only one its separable filters take): halconv's separable entry (the variant it takes,
// sliding or fft_lines, named in the row) against NPP's row and column passes and its
// Gaussian of any tap count, with the sampled Gaussian of K taps (sigma = K / 6) as both
// kernels. The floor is one pass:
// the image read and the output written. max_abs_difference: the largest difference of a
// peer's output from halconv's (blank for halconv's own row).
void separable_report(Run &run, Table &table) {
    const Settings &s = run.settings;
    const PeerContext &peers = *run.peers;
    std::mt19937_64 rng(20261126);
    std::printf("%-30s %11s %4s %10s %10s %8s %10s\n", "variant", "size", "K", "median_ms", "floor_ms", "floor%",
                "max_diff");
    for (const Size &size : s.sizes) {
        const int w = size.width, h = size.height;
        Halide::Runtime::Buffer<> image = upload(Precision::f32, random_plane(w, h, rng));
        image.copy_to_device(halide_cuda_device_interface());
        Halide::Runtime::Buffer<float> ours(w, h), theirs(w, h);
        ours.device_malloc(halide_cuda_device_interface());
        float *intermediate = nullptr, *taps_device = nullptr, *peer_out = nullptr;
        check_cuda(cudaMalloc(&intermediate, size_t(w) * size_t(h) * 4), "NPP intermediate");
        check_cuda(cudaMalloc(&peer_out, size_t(w) * size_t(h) * 4), "NPP output");
        const float *src = reinterpret_cast<const float *>(image.raw_buffer()->device);
        const double floor_ms = double(w) * h * 8 / run.ceilings.copy_bytes_per_s * 1e3;
        bool npp_gauss_too_slow = false;
        for (int k : s.kernels) {
            const std::vector<double> g = gaussian_taps(double(k) / 6.0, k % 2 == 1 ? k : k + 1);
            Halide::Runtime::Buffer<float> taps(int(g.size()));
            for (size_t i = 0; i < g.size(); i++) {
                taps(int(i)) = float(g[i]);
            }
            const int taps_k = int(g.size());
            cudaFree(taps_device);
            check_cuda(cudaMalloc(&taps_device, g.size() * 4), "NPP taps");
            // Symmetric taps: reversed (NPP's order) they are the same.
            check_cuda(cudaMemcpy(taps_device, taps.data(), g.size() * 4, cudaMemcpyHostToDevice), "NPP taps");
            Options o;
            o.device = Device::cuda;
            o.boundary = Boundary::nearest;
            o.stream = run.stream;
            auto report = [&](const std::string &name, const Timing &t, double difference) {
                const std::string shown = difference >= 0 ? std::to_string(difference) : "-";
                std::printf("%-30s %5dx%-5d %4d %10.4f %10.4f %7.0f%% %10s\n", name.c_str(), w, h, taps_k, t.median_ms,
                            floor_ms, 100.0 * floor_ms / t.median_ms, shown.c_str());
                add_timed_row(table, run, w, h, t, floor_ms);
                table.set("variant", name);
                table.set("k", int64_t(taps_k));
                if (difference >= 0) {
                    table.set("max_abs_difference", difference);
                }
            };
            // A plan made once (untimed), as a user filtering many images would.
            const Plan plan = Plan::separable(Extent2d{w, h}, taps, taps, o);
            report("halconv_" + plan.dispatch().variant,
                   time_on_stream(run.stream, s.reps, [&] { plan.apply(image, ours); }), -1);
            check_cuda(cudaStreamSynchronize(run.stream), "halconv separable");
            ours.copy_to_host();
            // The largest difference of the peer's output (peer_out) from ours.
            const auto difference = [&] {
                check_cuda(cudaStreamSynchronize(run.stream), "NPP");
                check_cuda(cudaMemcpy(theirs.data(), peer_out, size_t(w) * size_t(h) * 4, cudaMemcpyDeviceToHost),
                           "NPP output");
                return max_abs_difference(theirs.data(), ours.data(), int64_t(w) * h);
            };
            const int step = w * 4, anchor = taps_k / 2;
            const NppSize roi{w, h};
            const auto npp_check = [](int status, const char *what) {
                if (status < 0) {  // positive statuses are NPP's warnings
                    throw Error(ErrorCode::device, std::string(what) + " returned status " + std::to_string(status));
                }
            };
            if (peers.npp_filter_row_32f != nullptr && peers.npp_filter_column_32f != nullptr) {
                const auto npp_separable = [&] {
                    npp_check(peers.npp_filter_row_32f(src, step, roi, {0, 0}, intermediate, step, roi, taps_device,
                                                       taps_k, anchor, npp_border_replicate, peers.npp_context),
                              "nppiFilterRowBorder_32f_C1R_Ctx");
                    npp_check(
                        peers.npp_filter_column_32f(intermediate, step, roi, {0, 0}, peer_out, step, roi, taps_device,
                                                    taps_k, anchor, npp_border_replicate, peers.npp_context),
                        "nppiFilterColumnBorder_32f_C1R_Ctx");
                };
                const Timing t = time_on_stream(run.stream, s.reps, npp_separable);
                report("npp_row_column", t, difference());
            }
            if (peers.npp_gauss_advanced_32f != nullptr && !npp_gauss_too_slow) {
                const auto npp_gauss = [&] {
                    npp_check(peers.npp_gauss_advanced_32f(src, step, roi, {0, 0}, peer_out, step, roi, taps_k,
                                                           taps_device, npp_border_replicate, peers.npp_context),
                              "nppiFilterGaussAdvancedBorder_32f_C1R_Ctx");
                };
                const Timing t = time_on_stream(run.stream, s.reps, npp_gauss);
                report("npp_gauss_advanced", t, difference());
                npp_gauss_too_slow = t.median_ms > s.max_ms;  // its time grows as K^2: not run at larger K
            }
            if (run.checkpoint) {
                run.checkpoint();
            }
        }
        cudaFree(taps_device);
        cudaFree(intermediate);
        cudaFree(peer_out);
    }
}

const std::vector<std::string> low_rank_columns{
    "device", "algorithm", "variant",           "width", "height", "k", "rank", "median_ms",
    "min_ms", "max_ms",    "max_abs_difference"};

// A kernel of small rank as users meet it: the Laplacian of Gaussian, float32, same mode,
// reflect, plans made once. Every algorithm that takes the kernel on CUDA (low_rank, auto,
// and those that take any kernel but naive), each with its largest difference from
// shared_tiled's output (a direct sum) where shared_tiled runs the kernel.
void low_rank_report(Run &run, Table &table) {
    const Settings &s = run.settings;
    std::mt19937_64 rng(20261126);
    std::vector<Algorithm> algorithms{Algorithm::low_rank, Algorithm::automatic};
    for (const AlgorithmInfo &a : halconv::algorithms()) {
        if (a.max_kernel_rank == 0 && a.algorithm != Algorithm::naive &&
            std::find(a.devices.begin(), a.devices.end(), Device::cuda) != a.devices.end() &&
            std::find(a.precisions.begin(), a.precisions.end(), Precision::f32) != a.precisions.end()) {
            algorithms.push_back(a.algorithm);
        }
    }
    std::printf("%-16s %-34s %11s %4s %4s %10s %10s\n", "algorithm", "variant", "size", "K", "rank", "median_ms",
                "max_diff");
    for (const Size &size : s.sizes) {
        const int w = size.width, h = size.height;
        Halide::Runtime::Buffer<> image = upload(Precision::f32, random_plane(w, h, rng));
        Halide::Runtime::Buffer<float> out(w, h), reference(w, h);
        out.device_malloc(halide_cuda_device_interface());
        reference.device_malloc(halide_cuda_device_interface());
        for (int k : s.kernels) {
            const double sigma = k / 8.0, c = (k - 1) / 2.0, s2 = sigma * sigma;
            Halide::Runtime::Buffer<float> kernel(k, k);
            Halide::Runtime::Buffer<double> stored(k, k);
            kernel.for_each_element([&](int x, int y) {
                const double r2 = (x - c) * (x - c) + (y - c) * (y - c);
                kernel(x, y) = float((r2 - 2 * s2) / (s2 * s2) * std::exp(-r2 / (2 * s2)));
                stored(x, y) = kernel(x, y);
            });
            const int rank = low_rank_factors(stored, Precision::f32).rank;
            Options o;
            o.device = Device::cuda;
            o.boundary = Boundary::reflect;
            o.stream = run.stream;
            const auto plan_of = [&](Algorithm a) -> std::optional<Plan> {
                o.algorithm = a;
                try {
                    return Plan(Extent2d{w, h}, kernel, o);
                } catch (const Error &e) {
                    if (e.code() == ErrorCode::unsupported) {
                        return std::nullopt;  // outside the algorithm's limits
                    }
                    throw;
                }
            };
            bool have_reference = false;
            if (const std::optional<Plan> direct = plan_of(Algorithm::shared_tiled)) {
                direct->apply(image, reference);
                check_cuda(cudaStreamSynchronize(run.stream), "shared_tiled");
                reference.copy_to_host();
                have_reference = true;
            }
            for (Algorithm a : algorithms) {
                const std::optional<Plan> plan = plan_of(a);
                if (!plan) {
                    continue;
                }
                const Timing t = time_on_stream(run.stream, s.reps, [&] { plan->apply(image, out); });
                double difference = -1;
                if (have_reference) {
                    plan->apply(image, out);
                    check_cuda(cudaStreamSynchronize(run.stream), to_string(a));
                    out.copy_to_host();
                    difference = max_abs_difference(out.data(), reference.data(), int64_t(w) * h);
                }
                const std::string shown = difference >= 0 ? std::to_string(difference) : "-";
                std::printf("%-16s %-34s %5dx%-5d %4d %4d %10.4f %10s\n", to_string(a),
                            plan->dispatch().variant.c_str(), w, h, k, rank, t.median_ms, shown.c_str());
                add_timing_row(table, run, w, h, t);
                table.set("algorithm", to_string(a));
                table.set("variant", plan->dispatch().variant);
                table.set("k", int64_t(k));
                table.set("rank", int64_t(rank));
                if (difference >= 0) {
                    table.set("max_abs_difference", difference);
                }
                std::fflush(stdout);
            }
            run.checkpoint();
        }
    }
}

const std::vector<std::string> bilateral_columns{"device", "variant",      "precision",         "width",
                                                 "height", "radius",       "median_ms",         "min_ms",
                                                 "max_ms", "mpixel_per_s", "max_abs_difference"};

// The bilateral filter, images of [0, 1) values, nearest boundary (NPP_BORDER_REPLICATE):
// every halconv algorithm on CUDA at f32 and f16f32, and NPP's 32f filter, per radius.
// max_abs_difference: each row's largest difference from halconv's first (f32) output.
void bilateral_report(Run &run, Table &table) {
    const Settings &s = run.settings;
    const PeerContext &peers = *run.peers;
    std::mt19937_64 rng(20261126);
    std::printf("%-34s %-7s %11s %6s %10s %10s %10s\n", "variant", "prec", "size", "radius", "median_ms", "Mpix/s",
                "max_diff");
    // The public enum's values after automatic, to the first without a name.
    std::vector<BilateralAlgorithm> algorithms;
    for (int a = 1; std::string_view(to_string(static_cast<BilateralAlgorithm>(a))) != "?"; a++) {
        algorithms.push_back(static_cast<BilateralAlgorithm>(a));
    }
    for (const Size &size : s.sizes) {
        const int w = size.width, h = size.height;
        const Plane values = random_plane(w, h, rng);
        Halide::Runtime::Buffer<> image32 = upload(Precision::f32, values), image16 = upload(Precision::f16f32, values);
        Halide::Runtime::Buffer<float> out(w, h), reference(w, h);
        out.device_malloc(halide_cuda_device_interface());
        for (int radius : s.kernels) {
            const double sigma_s = radius / 2.0, sigma_r = 0.1;
            auto report = [&](const std::string &variant, const char *precision, const Timing &t, double difference) {
                const double mpix = double(w) * h / (t.median_ms * 1e3);
                const std::string shown = difference >= 0 ? std::to_string(difference) : "-";
                std::printf("%-34s %-7s %5dx%-5d %6d %10.4f %10.0f %10s\n", variant.c_str(), precision, w, h, radius,
                            t.median_ms, mpix, shown.c_str());
                add_timing_row(table, run, w, h, t);
                table.set("variant", variant);
                table.set("precision", precision);
                table.set("radius", int64_t(radius));
                table.set("mpixel_per_s", mpix);
                if (difference >= 0) {
                    table.set("max_abs_difference", difference);
                }
                std::fflush(stdout);
            };
            // The output's largest difference from the reference (-1: this is the reference).
            bool have_reference = false;
            const auto difference = [&] {
                check_cuda(cudaStreamSynchronize(run.stream), "bilateral");
                out.copy_to_host();
                if (!have_reference) {
                    std::copy(out.data(), out.data() + int64_t(w) * h, reference.data());
                    have_reference = true;
                    return -1.0;
                }
                return max_abs_difference(out.data(), reference.data(), int64_t(w) * h);
            };
            for (Precision p : {Precision::f32, Precision::f16f32}) {
                for (BilateralAlgorithm a : algorithms) {
                    BilateralOptions o;
                    o.algorithm = a;
                    o.precision = p;
                    o.boundary = Boundary::nearest;
                    o.device = Device::cuda;
                    o.stream = run.stream;
                    Halide::Runtime::Buffer<> &in = p == Precision::f32 ? image32 : image16;
                    BilateralDispatch d;
                    try {
                        d = bilateral_filter(in, out, sigma_s, sigma_r, radius, o);
                    } catch (const Error &e) {
                        if (e.code() == ErrorCode::unsupported) {
                            continue;
                        }
                        throw;
                    }
                    const Timing t = time_on_stream(run.stream, s.reps,
                                                    [&] { bilateral_filter(in, out, sigma_s, sigma_r, radius, o); });
                    report("halconv_" + d.variant, to_string(p), t, difference());
                }
            }
            if (peers.npp_bilateral_32f != nullptr) {
                const float *src = reinterpret_cast<const float *>(image32.raw_buffer()->device);
                float *dst = reinterpret_cast<float *>(out.raw_buffer()->device);
                const NppSize roi{w, h};
                const Timing t = time_on_stream(run.stream, s.reps, [&] {
                    const int status = peers.npp_bilateral_32f(src, w * 4, roi, {0, 0}, dst, w * 4, roi, radius, 1,
                                                               float(sigma_r * sigma_r), float(sigma_s * sigma_s),
                                                               npp_border_replicate, peers.npp_context);
                    if (status < 0) {
                        throw Error(ErrorCode::device, "nppiFilterBilateralGaussBorder_32f_C1R_Ctx returned status " +
                                                           std::to_string(status));
                    }
                });
                out.set_device_dirty();
                report("npp_bilateral_gauss", "f32", t, difference());
            }
            run.checkpoint();
        }
    }
}

std::string utc_now() {
    const std::time_t now = std::time(nullptr);
    char text[32];
    std::strftime(text, sizeof text, "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&now));
    return text;
}

int main_checked(int argc, char **argv) {
    Run run;
    run.settings = parse(argc, argv);
    if (!cuda_available()) {
        std::fprintf(stderr, "halconv_bench: no CUDA device; the benchmark runs on the GPU only\n");
        return 1;
    }
    check_cuda(cudaGetDeviceProperties(&run.prop, 0), "device properties");
    check_cuda(cudaStreamCreateWithFlags(&run.stream, cudaStreamNonBlocking), "stream");
    run.ceilings = measure_ceilings(run.stream, run.settings.reps);
    run.peers = open_peers(run.stream);
    int driver = 0, runtime = 0;
    cudaDriverGetVersion(&driver);
    cudaRuntimeGetVersion(&runtime);
    const BuildInfo build = build_info();
    run.metadata = {{"report", run.settings.report},
                    {"command", run.settings.command_line},
                    {"date_utc", utc_now()},
                    {"device", run.prop.name},
                    {"multiprocessors", std::to_string(run.prop.multiProcessorCount)},
                    {"cuda_driver", std::to_string(driver)},
                    {"cuda_runtime", std::to_string(runtime)},
                    {"halconv", build.version},
                    {"halide", build.halide_version},
                    {"copy_bandwidth_gb_s", fixed(run.ceilings.copy_bytes_per_s / 1e9, 1)},
                    {"cublas_f16_gemm_tflops", fixed(run.ceilings.gemm_f16_flops / 1e12, 1)},
                    {"cublas_f32_gemm_tflops", fixed(run.ceilings.gemm_f32_flops / 1e12, 1)}};
    for (const std::string &peer : describe_peers(*run.peers)) {
        run.metadata.push_back({"peer", peer});
    }
    for (const auto &[name, value] : run.metadata) {
        std::printf("%s: %s\n", name.c_str(), value.c_str());
    }
    for (const std::string &name : run.settings.variants) {
        make_variant(name, *run.peers);  // unknown names fail before any work
    }
    const std::string &r = run.settings.report;
    Table table(r == "accuracy"       ? accuracy_columns
                : r == "pipelines"    ? pipeline_columns
                : r == "separable"    ? separable_columns
                : r == "recursive"    ? recursive_columns
                : r == "low_rank"     ? low_rank_columns
                : r == "bilateral"    ? bilateral_columns
                : r == "multichannel" ? multichannel_columns
                : r == "bands"        ? bands_columns
                : r == "batch"        ? batch_columns
                                      : time_columns);
    auto write = [&] {
        if (!run.settings.csv_path.empty()) {
            write_text_file(run.settings.csv_path, table.csv());
        }
        if (!run.settings.json_path.empty()) {
            write_text_file(run.settings.json_path, table.json(run.metadata));
        }
    };
    run.checkpoint = write;
    try {
        if (r == "accuracy") {
            accuracy_report(run, table);
        } else if (r == "pipelines") {
            pipelines_report(run, table);
        } else if (r == "separable") {
            separable_report(run, table);
        } else if (r == "recursive") {
            recursive_report(run, table);
        } else if (r == "low_rank") {
            low_rank_report(run, table);
        } else if (r == "bilateral") {
            bilateral_report(run, table);
        } else if (r == "bands") {
            // Pageable buffers too up to 32768^2 (their copies are slower: the time goes up).
            const bool pageable = std::all_of(run.settings.sizes.begin(), run.settings.sizes.end(),
                                              [](const Size &z) { return int64_t(z.width) * z.height <= (1ll << 30); });
            bands_report(run.settings.sizes, run.settings.kernels, run.settings.reps, pageable, table, run.checkpoint);
        } else if (r == "batch") {
            batch_report(run.settings.sizes, run.settings.kernels, run.settings.precisions, run.settings.batch,
                         run.settings.reps, run.ceilings.copy_bytes_per_s, run.stream, table, run.checkpoint);
        } else if (r == "multichannel") {
            multichannel_report(default_multichannel_cases(), run.settings.reps, run.stream, run.peers->cudnn,
                                run.peers->cudnn_status, run.prop.name, table, run.checkpoint);
        } else {
            time_report(run, table);
            if (r == "auto") {
                auto_summary(table);
            }
        }
    } catch (...) {
        run.metadata.push_back({"incomplete", "the run stopped early; these are the rows it had"});
        write();
        throw;
    }
    write();
    run.peers.reset();
    cudaStreamDestroy(run.stream);
    return 0;
}

}  // namespace

int main(int argc, char **argv) {
    try {
        return main_checked(argc, argv);
    } catch (const std::exception &e) {
        std::fprintf(stderr, "halconv_bench: %s\n", e.what());
        return 2;
    }
}
