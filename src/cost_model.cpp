#include "cost_model.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>

#include "internal.h"

namespace halconv::internal {

namespace {

double output_pixels(Mode mode, double w, double h, double kw, double kh) {
    switch (mode) {
        case Mode::valid:
            return std::max(w - kw + 1, 1.0) * std::max(h - kh + 1, 1.0);
        case Mode::same:
            return w * h;
        case Mode::full:
            return (w + kw - 1) * (h + kh - 1);
    }
    return w * h;
}

struct Point {
    double x, y;  // log of the argument, log of the time
};

struct Slopes {
    double min, max;
};

// y at x on the piecewise-linear curve through `points` (sorted by x, distinct x);
// beyond the ends the nearest segment's slope, clamped to `below` before the first point
// and to `above` after the last, continues (a single point continues with `single_slope`).
double interpolate(const std::vector<Point> &points, double x, Slopes below, Slopes above, double single_slope) {
    if (points.size() == 1) {
        return points[0].y + single_slope * (x - points[0].x);
    }
    const auto slope = [](const Point &a, const Point &b) { return (b.y - a.y) / (b.x - a.x); };
    if (x <= points.front().x) {
        const double s = std::clamp(slope(points[0], points[1]), below.min, below.max);
        return points.front().y + s * (x - points.front().x);
    }
    if (x >= points.back().x) {
        const size_t n = points.size();
        const double s = std::clamp(slope(points[n - 2], points[n - 1]), above.min, above.max);
        return points.back().y + s * (x - points.back().x);
    }
    for (size_t i = 1; i < points.size(); i++) {
        if (x <= points[i].x) {
            const double t = (x - points[i - 1].x) / (points[i].x - points[i - 1].x);
            return points[i - 1].y + t * (points[i].y - points[i - 1].y);
        }
    }
    return points.back().y;
}

// Points sorted by x, equal x merged (their mean y).
std::vector<Point> curve(std::vector<Point> points) {
    std::sort(points.begin(), points.end(), [](const Point &a, const Point &b) { return a.x < b.x; });
    std::vector<Point> merged;
    std::vector<int> counts;
    for (const Point &p : points) {
        if (!merged.empty() && std::abs(merged.back().x - p.x) < 1e-12) {
            merged.back().y = (merged.back().y * counts.back() + p.y) / (counts.back() + 1);
            counts.back()++;
        } else {
            merged.push_back(p);
            counts.push_back(1);
        }
    }
    return merged;
}

std::string ms_text(double ms) {
    char text[32];
    std::snprintf(text, sizeof text, ms < 10 ? "%.3g ms" : "%.1f ms", ms);
    return text;
}

}  // namespace

std::optional<double> predict_ms(const std::vector<Measurement> &measurements, Algorithm algorithm,
                                 const AutoRequest &r) {
    std::vector<const Measurement *> rows;
    for (const Measurement &m : measurements) {
        if (m.algorithm == algorithm && m.precision == r.precision && m.ms > 0) {
            rows.push_back(&m);
        }
    }
    if (rows.empty()) {
        return std::nullopt;
    }
    // Prefer the requested mode; full is nearest to same (both extend the image).
    for (Mode preferred : {r.mode, r.mode == Mode::full ? Mode::same : r.mode}) {
        std::vector<const Measurement *> of_mode;
        for (const Measurement *m : rows) {
            if (m->mode == preferred) {
                of_mode.push_back(m);
            }
        }
        if (!of_mode.empty()) {
            rows = of_mode;
            break;
        }
    }
    const double kw = r.kernel.width, kh = r.kernel.height;
    const double k = std::log(std::sqrt(kw * kh));
    // Per image size: time over log K, each point moved to the requested mode.
    std::map<double, std::vector<Point>> by_size;
    for (const Measurement *m : rows) {
        const double w = m->image_width, h = m->image_height, mkw = m->kernel_width, mkh = m->kernel_height;
        const double ranks = algorithm == Algorithm::low_rank ? double(r.kernel_rank) / m->kernel_rank : 1.0;
        const double scale = ranks * output_pixels(r.mode, w, h, mkw, mkh) / output_pixels(m->mode, w, h, mkw, mkh);
        by_size[w * h].push_back({std::log(std::sqrt(mkw * mkh)), std::log(m->ms * scale)});
    }
    std::vector<Point> over_size;
    for (auto &[pixels, points] : by_size) {
        over_size.push_back({std::log(pixels), interpolate(curve(points), k, {0.0, 2.5}, {0.0, 2.5}, 1.0)});
    }
    // Beyond the largest image measured, time grows at least with the pixel count: the
    // fixed costs that flatten the curve between small images are already paid there
    // (a CPU table of 256² and 1024² once predicted autoscheduled's 2048² call with a
    // 1x1 kernel at 1.07 ms, which takes 4-5 ms, and Auto took it over shared_tiled).
    const double pixels = double(r.image.width) * double(r.image.height) * double(r.images);
    return std::exp(interpolate(curve(over_size), std::log(pixels), {0.0, 1.25}, {1.0, 1.25}, 1.0));
}

AutoChoice choose_fastest(const std::vector<AutoCandidate> &candidates, const AutoRequest &r, const CostTable &table) {
    std::vector<std::pair<double, size_t>> predicted;
    AutoRequest one_image = r;
    one_image.images = 1;
    for (size_t i = 0; i < candidates.size(); i++) {
        const bool together = r.images == 1 || candidates[i].batch_in_one_launch;
        if (const std::optional<double> ms =
                predict_ms(table.measurements, candidates[i].algorithm, together ? r : one_image)) {
            predicted.push_back({together ? *ms : *ms * r.images, i});
        }
    }
    AutoChoice choice;
    if (predicted.empty()) {
        // No measurements: the order of the first releases.
        size_t best = 0;
        int best_rank = 1 << 30;
        for (size_t i = 0; i < candidates.size(); i++) {
            const Algorithm a = candidates[i].algorithm;
            const int rank = a == Algorithm::separable      ? 0
                             : a == Algorithm::shared_tiled ? 1
                             : a == Algorithm::naive        ? 2
                                                            : 3;
            if (rank < best_rank) {
                best_rank = rank;
                best = i;
            }
        }
        choice.index = best;
        choice.reason = std::string("no measurements of ") + to_string(r.precision) + " on " +
                        describe(table.measured_on) + " (" + table.source +
                        "): the static order separable (rank-1), shared_tiled, naive";
        return choice;
    }
    std::stable_sort(predicted.begin(), predicted.end(),
                     [](const auto &a, const auto &b) { return a.first < b.first; });
    choice.index = predicted.front().second;
    std::string ranking;
    for (size_t i = 0; i < predicted.size() && i < 3; i++) {
        ranking += std::string(i ? ", " : "") + to_string(candidates[predicted[i].second].algorithm) + " " +
                   ms_text(predicted[i].first);
    }
    choice.reason = "auto: fastest predicted for " + shape_text(r.image.width, r.image.height) +
                    (r.images > 1 ? " x " + std::to_string(r.images) + " images" : "") + ", kernel " +
                    shape_text(r.kernel.width, r.kernel.height) + ", " + to_string(r.precision) + ", " +
                    to_string(r.mode) + " (" + ranking + ") by the " + table.source;
    return choice;
}

}  // namespace halconv::internal
