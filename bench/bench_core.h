// The benchmark's host-side pieces, apart from any GPU so the test suite checks them:
// kernel-size sweeps, the float64 gold correlation, seed 000's accuracy measure and
// the CSV/JSON result tables.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace halconv::bench {

// Seed 000's kernel sizes for the sweep: every odd K from 1 to 63, then every 8th to 127.
std::vector<int> kernel_sweep();

// "sweep" (the list above), or comma-separated positive integers; throws halconv::Error.
std::vector<int> parse_kernels(const std::string &text);

struct Size {
    int width = 0, height = 0;
};

// Comma-separated sizes, each N (square) or WxH; throws halconv::Error.
std::vector<Size> parse_sizes(const std::string &text);

// A dense row-major float64 plane.
struct Plane {
    int width = 0, height = 0;
    std::vector<double> data;

    Plane() = default;
    Plane(int w, int h) : width(w), height(h), data(size_t(w) * size_t(h), 0.0) {}
    double &at(int x, int y) { return data[size_t(y) * size_t(width) + size_t(x)]; }
    double at(int x, int y) const { return data[size_t(y) * size_t(width) + size_t(x)]; }
};

// Valid correlation out(x, y) = sum_ij image(x + i, y + j) kernel(i, j) in float64, plain
// loops over `threads` threads: the gold every variant is compared with.
Plane correlate_valid_gold(const Plane &image, const Plane &kernel, int threads);

// One output sample of the same correlation (for spot checks of large outputs).
double correlate_valid_at(const Plane &image, const Plane &kernel, int x, int y);

// Absolute percentage errors of seed 000 eq. (20): |p - r| / r * 100, 0 where r = 0.
struct ApeSummary {
    double median = 0, p95 = 0, max = 0;  // percent; median is seed 000's MAPE
};
ApeSummary ape_summary(const Plane &reference, const std::vector<double> &values);

// A table of results written as CSV (header + rows) and as JSON (metadata object +
// array of row objects, numeric cells as JSON numbers, empty cells as null).
class Table {
public:
    explicit Table(std::vector<std::string> columns);

    // Starts a row; cells are then set by column name (unset ones stay empty).
    void add_row();
    void set(const std::string &column, const std::string &text);
    void set(const std::string &column, double value);
    void set(const std::string &column, int64_t value);

    size_t rows() const { return rows_.size(); }
    const std::string &cell(size_t row, const std::string &column) const;

    std::string csv() const;
    // metadata: name/value pairs written first, as strings.
    std::string json(const std::vector<std::pair<std::string, std::string>> &metadata) const;

private:
    struct Cell {
        std::string text;
        bool numeric = false;
    };
    size_t index_of(const std::string &column) const;

    std::vector<std::string> columns_;
    std::vector<std::vector<Cell>> rows_;
};

// Writes text to path through a temporary file and a rename (no half-written results).
void write_text_file(const std::string &path, const std::string &text);

}  // namespace halconv::bench
