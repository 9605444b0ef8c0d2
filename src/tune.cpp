// halconv tune: every algorithm that supports each request, timed as plans on the present
// device, into a Wisdom for Auto.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <ctime>
#include <optional>
#include <random>

#include "internal.h"
#include "registry.h"

namespace halconv {

namespace {

std::string utc_now() {
    const std::time_t now = std::time(nullptr);
    char text[32];
    std::strftime(text, sizeof text, "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&now));
    return text;
}

std::vector<double> uniform(size_t n, std::mt19937_64 &rng) {
    std::uniform_real_distribution<double> u(0.0, 1.0);
    std::vector<double> v(n);
    for (double &x : v) {
        x = u(rng);
    }
    return v;
}

// Median ms of one plan's apply, after one warm-up apply: CUDA events on a stream of the
// timer's own, or the host clock.
class Timer {
public:
    Timer(Device device, int reps) : reps_(std::max(reps, 1)) {
        if (device == Device::cuda) {
            cuda_.emplace(reps_);
        }
    }

    Stream stream() const { return cuda_ ? cuda_->stream() : nullptr; }

    double median_ms(const Plan &plan, Halide::Runtime::Buffer<> &image, Halide::Runtime::Buffer<> &output) {
        std::vector<double> ms;
        if (cuda_) {
            ms = cuda_->time([&] { plan.apply(image, output, cuda_->stream()); });
        } else {
            plan.apply(image, output);
            for (int r = 0; r < reps_; r++) {
                const auto t0 = std::chrono::steady_clock::now();
                plan.apply(image, output);
                ms.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
            }
        }
        std::sort(ms.begin(), ms.end());
        return ms[ms.size() / 2];
    }

private:
    int reps_;
    std::optional<internal::CudaTimer> cuda_;
};

}  // namespace

Wisdom tune(const TuneOptions &options) {
    internal::check_device(options.device);
    const Device device = internal::resolve_device(options.device);
    const bool cuda = device == Device::cuda;
    TuneOptions o = options;
    if (o.sizes.empty()) {
        o.sizes =
            cuda ? std::vector<Extent2d>{{1024, 1024}, {4096, 4096}} : std::vector<Extent2d>{{256, 256}, {1024, 1024}};
    }
    if (o.kernels.empty()) {
        o.kernels = cuda ? std::vector<int>{1, 3, 5, 7, 9, 11, 15, 21, 31, 47, 63, 95, 127}
                         : std::vector<int>{1, 3, 5, 7, 9, 11, 15, 21, 31};
    }
    if (o.precisions.empty()) {
        o.precisions = {Precision::f64, Precision::f32, Precision::f16, Precision::f16f32};
    }
    if (o.modes.empty()) {
        o.modes = {Mode::same, Mode::valid};
    }
    if (o.algorithms.empty()) {
        for (int v : internal::algorithms_on(internal::Api::correlate2d, device)) {
            o.algorithms.push_back(static_cast<Algorithm>(v));
        }
    }
    for (const Extent2d &s : o.sizes) {
        if (s.width < 1 || s.height < 1) {
            throw Error(ErrorCode::invalid_argument, "tune: image sizes must be at least 1 x 1");
        }
    }
    for (int k : o.kernels) {
        if (k < 1) {
            throw Error(ErrorCode::invalid_argument, "tune: kernel sizes must be at least 1");
        }
    }
    for (Precision p : o.precisions) {
        internal::check_precision(p);
    }
    for (Mode m : o.modes) {
        internal::check_mode(m);
    }
    for (Algorithm a : o.algorithms) {
        if (a == Algorithm::automatic || !internal::valid_algorithm(internal::Api::correlate2d, static_cast<int>(a))) {
            throw Error(ErrorCode::invalid_argument, "tune: measure named algorithms, not auto; allowed: " +
                                                         internal::algorithm_list(internal::Api::correlate2d, device));
        }
    }
    std::sort(o.kernels.begin(), o.kernels.end());

    Wisdom wisdom;
    wisdom.build_id = build_info().build_id;
    wisdom.created = utc_now();
    wisdom.command = "tune";
    Wisdom::Section section;
    section.device = identify_device(device);
    Timer timer(device, o.reps);
    std::mt19937_64 rng(20261123);
    for (Precision p : o.precisions) {
        for (Mode m : o.modes) {
            for (const Extent2d &size : o.sizes) {
                Halide::Runtime::Buffer<> image = internal::storage_buffer(
                    uniform(size_t(size.width) * size_t(size.height), rng), size.width, size.height, 2, p);
                if (cuda && image.copy_to_device(cuda_device_interface()) != 0) {
                    throw Error(ErrorCode::device,
                                "tune: could not copy the image to the device: " + internal::take_last_runtime_error());
                }
                for (Algorithm a : o.algorithms) {
                    for (int k : o.kernels) {
                        if (m == Mode::valid && (k > size.width || k > size.height)) {
                            continue;
                        }
                        // Separable runs rank-1 kernels, low_rank rank-2 ones (a LoG's or a DoG's
                        // rank); the others any (their time does not depend on it).
                        const int rank = a == Algorithm::separable ? 1 : a == Algorithm::low_rank ? std::min(2, k) : 0;
                        std::vector<double> taps = uniform(size_t(k) * size_t(k), rng);
                        if (rank > 0) {
                            std::fill(taps.begin(), taps.end(), 0.0);
                            for (int t = 0; t < rank; t++) {
                                const std::vector<double> row = uniform(size_t(k), rng), col = uniform(size_t(k), rng);
                                for (int j = 0; j < k; j++) {
                                    for (int i = 0; i < k; i++) {
                                        taps[size_t(j) * size_t(k) + size_t(i)] += row[size_t(i)] * col[size_t(j)];
                                    }
                                }
                            }
                        }
                        Halide::Runtime::Buffer<> kernel = internal::storage_buffer(taps, k, k, 2, p);
                        Options po;
                        po.algorithm = a;
                        po.precision = p;
                        po.mode = m;
                        po.device = device;
                        po.stream = timer.stream();
                        std::optional<Plan> plan;
                        try {
                            plan.emplace(size, kernel, po);
                        } catch (const Error &e) {
                            if (e.code() == ErrorCode::unsupported) {
                                continue;  // outside the algorithm's limits: nothing to measure
                            }
                            throw;
                        }
                        Halide::Runtime::Buffer<> output = plan->allocate_output();
                        if (cuda && output.device_malloc(cuda_device_interface()) != 0) {
                            throw Error(ErrorCode::out_of_memory, "tune: could not allocate the output on the device");
                        }
                        const double ms = timer.median_ms(*plan, image, output);
                        section.measurements.push_back(
                            {a, p, m, size.width, size.height, k, k, ms, a == Algorithm::low_rank ? rank : 1});
                        if (o.progress) {
                            char line[160];
                            std::snprintf(line, sizeof line, "%-6s %-5s %5dx%-5d K %3d  %-24s %10.4f ms", to_string(p),
                                          to_string(m), size.width, size.height, k, to_string(a), ms);
                            o.progress(line);
                        }
                        if (ms > o.max_ms) {
                            break;  // larger kernels only take longer
                        }
                    }
                }
            }
        }
    }
    wisdom.sections.push_back(std::move(section));
    return wisdom;
}

}  // namespace halconv
