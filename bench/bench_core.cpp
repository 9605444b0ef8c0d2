#include "bench_core.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <nlohmann/json.hpp>
#include <sstream>
#include <thread>

#include "halconv/error.h"

namespace halconv::bench {

std::vector<int> kernel_sweep() {
    std::vector<int> k;
    for (int i = 1; i <= 63; i += 2) {
        k.push_back(i);
    }
    for (int i = 71; i <= 127; i += 8) {
        k.push_back(i);
    }
    return k;
}

namespace {

std::vector<std::string> split(const std::string &text, char separator) {
    std::vector<std::string> items;
    std::stringstream s(text);
    std::string item;
    while (std::getline(s, item, separator)) {
        items.push_back(item);
    }
    return items;
}

int positive_int(const std::string &text, const std::string &what) {
    size_t used = 0;
    long value = 0;
    try {
        value = std::stol(text, &used);
    } catch (const std::exception &) {
        used = 0;
    }
    if (text.empty() || used != text.size() || value < 1 || value > 1 << 20) {
        throw Error(ErrorCode::invalid_argument,
                    "bad " + what + " '" + text + "'; allowed: an integer from 1 to 1048576");
    }
    return static_cast<int>(value);
}

}  // namespace

std::vector<int> parse_kernels(const std::string &text) {
    if (text == "sweep") {
        return kernel_sweep();
    }
    std::vector<int> k;
    for (const std::string &item : split(text, ',')) {
        k.push_back(positive_int(item, "kernel size"));
    }
    if (k.empty()) {
        throw Error(ErrorCode::invalid_argument, "no kernel sizes given; allowed: 'sweep' or a list such as 3,15,31");
    }
    return k;
}

std::vector<Size> parse_sizes(const std::string &text) {
    std::vector<Size> sizes;
    for (const std::string &item : split(text, ',')) {
        const size_t x = item.find('x');
        if (x == std::string::npos) {
            const int n = positive_int(item, "image size");
            sizes.push_back({n, n});
        } else {
            sizes.push_back(
                {positive_int(item.substr(0, x), "image width"), positive_int(item.substr(x + 1), "image height")});
        }
    }
    if (sizes.empty()) {
        throw Error(ErrorCode::invalid_argument, "no image sizes given; allowed: a list such as 1024,4096,3840x2160");
    }
    return sizes;
}

Plane correlate_valid_gold(const Plane &image, const Plane &kernel, int threads) {
    const int ow = image.width - kernel.width + 1, oh = image.height - kernel.height + 1;
    if (ow < 1 || oh < 1) {
        throw Error(ErrorCode::invalid_argument, "gold correlation: kernel larger than the image");
    }
    Plane out(ow, oh);
    auto rows = [&](int first, int step) {
        std::vector<double> acc(static_cast<size_t>(ow));
        for (int y = first; y < oh; y += step) {
            std::fill(acc.begin(), acc.end(), 0.0);
            for (int j = 0; j < kernel.height; j++) {
                const double *in_row = &image.data[size_t(y + j) * size_t(image.width)];
                for (int i = 0; i < kernel.width; i++) {
                    const double w = kernel.at(i, j);
                    const double *in = in_row + i;
                    for (int x = 0; x < ow; x++) {
                        acc[size_t(x)] += in[x] * w;
                    }
                }
            }
            std::copy(acc.begin(), acc.end(), out.data.begin() + std::ptrdiff_t(y) * ow);
        }
    };
    const int n = std::max(1, std::min(threads, oh));
    std::vector<std::thread> pool;
    for (int t = 0; t < n; t++) {
        pool.emplace_back(rows, t, n);
    }
    for (std::thread &t : pool) {
        t.join();
    }
    return out;
}

double correlate_valid_at(const Plane &image, const Plane &kernel, int x, int y) {
    double sum = 0.0;
    for (int j = 0; j < kernel.height; j++) {
        for (int i = 0; i < kernel.width; i++) {
            sum += image.at(x + i, y + j) * kernel.at(i, j);
        }
    }
    return sum;
}

ApeSummary ape_summary(const Plane &reference, const std::vector<double> &values) {
    if (values.size() != reference.data.size() || values.empty()) {
        throw Error(ErrorCode::invalid_argument, "accuracy: " + std::to_string(values.size()) +
                                                     " values for a reference of " +
                                                     std::to_string(reference.data.size()));
    }
    std::vector<double> ape(values.size());
    for (size_t i = 0; i < values.size(); i++) {
        const double r = reference.data[i];
        // A NaN or Inf result is an infinite error, not a missing one.
        ape[i] = r == 0.0 ? 0.0 : std::isfinite(values[i]) ? std::abs(values[i] - r) / std::abs(r) * 100.0 : INFINITY;
    }
    ApeSummary s;
    auto nth = [&](double q) {
        const size_t k = std::min(ape.size() - 1, size_t(q * double(ape.size() - 1) + 0.5));
        std::nth_element(ape.begin(), ape.begin() + std::ptrdiff_t(k), ape.end());
        return ape[k];
    };
    s.median = nth(0.5);
    s.p95 = nth(0.95);
    s.max = *std::max_element(ape.begin(), ape.end());
    return s;
}

Table::Table(std::vector<std::string> columns) : columns_(std::move(columns)) {}

void Table::add_row() {
    rows_.emplace_back(columns_.size());
}

size_t Table::index_of(const std::string &column) const {
    const auto it = std::find(columns_.begin(), columns_.end(), column);
    if (it == columns_.end()) {
        throw Error(ErrorCode::invalid_argument, "result table has no column '" + column + "'");
    }
    return size_t(it - columns_.begin());
}

void Table::set(const std::string &column, const std::string &text) {
    if (rows_.empty()) {
        throw Error(ErrorCode::invalid_argument, "result table: set() before add_row()");
    }
    rows_.back()[index_of(column)] = {text, false};
}

void Table::set(const std::string &column, double value) {
    set(column, std::string());
    if (std::isfinite(value)) {
        char text[32];
        std::snprintf(text, sizeof text, "%.6g", value);
        rows_.back()[index_of(column)] = {text, true};
    }
}

void Table::set(const std::string &column, int64_t value) {
    set(column, std::string());
    rows_.back()[index_of(column)] = {std::to_string(value), true};
}

const std::string &Table::cell(size_t row, const std::string &column) const {
    return rows_.at(row)[index_of(column)].text;
}

namespace {

std::string csv_field(const std::string &text) {
    if (text.find_first_of(",\"\n") == std::string::npos) {
        return text;
    }
    std::string quoted = "\"";
    for (char c : text) {
        quoted += c == '"' ? std::string("\"\"") : std::string(1, c);
    }
    return quoted + "\"";
}

}  // namespace

std::string Table::csv() const {
    std::string out;
    for (size_t c = 0; c < columns_.size(); c++) {
        out += (c ? "," : "") + csv_field(columns_[c]);
    }
    out += "\n";
    for (const auto &row : rows_) {
        for (size_t c = 0; c < row.size(); c++) {
            out += (c ? "," : "") + csv_field(row[c].text);
        }
        out += "\n";
    }
    return out;
}

std::string Table::json(const std::vector<std::pair<std::string, std::string>> &metadata) const {
    nlohmann::ordered_json doc = nlohmann::ordered_json::object();
    for (const auto &[name, value] : metadata) {
        doc[name] = value;
    }
    nlohmann::ordered_json rows = nlohmann::ordered_json::array();
    for (const auto &row : rows_) {
        nlohmann::ordered_json object = nlohmann::ordered_json::object();
        for (size_t c = 0; c < columns_.size(); c++) {
            const Cell &cell = row[c];
            // Numbers as the CSV writes them (the text set() formatted), empty cells as null.
            object[columns_[c]] = cell.text.empty() ? nlohmann::ordered_json()
                                  : cell.numeric    ? nlohmann::ordered_json::parse(cell.text)
                                                    : nlohmann::ordered_json(cell.text);
        }
        rows.push_back(std::move(object));
    }
    doc["rows"] = std::move(rows);
    return doc.dump(2) + "\n";
}

void write_text_file(const std::string &path, const std::string &text) {
    const std::string temporary = path + ".partial";
    std::FILE *f = std::fopen(temporary.c_str(), "wb");
    if (f == nullptr) {
        throw Error(ErrorCode::invalid_argument, "cannot write " + path);
    }
    const bool written = std::fwrite(text.data(), 1, text.size(), f) == text.size();
    if (std::fclose(f) != 0 || !written || std::rename(temporary.c_str(), path.c_str()) != 0) {
        std::remove(temporary.c_str());
        throw Error(ErrorCode::invalid_argument, "cannot write " + path);
    }
}

}  // namespace halconv::bench
