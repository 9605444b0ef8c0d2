// A probe, not adopted: edge detection of seed 001 (generators/edges_generator.cpp) on the
// CPU in one pass, the CUDA kernel's walk (runtime_kernels/edges/edges_fused.cu) in plain
// C++: a task owns a tile of output columns and a strip of output rows and walks down it,
// keeping the last five rows of Gaussian row sums and the last three blurred rows of its
// tile in small rings, so that every intermediate stays in the L1 cache and each image
// row is read once per task. The loops over a row's columns are compiled for AVX-512, AVX2
// and the baseline (GCC's function multiversioning).
//
// Measured against the library's Halide schedule (cpu_fused) on the 2-core development
// machine, it is slower: 8.7-8.9 ms against 6.5-6.6 at 4096^2 on two threads, and 0.84
// against 0.69 ms at 1024^2 on one (bench/results/cpu/edges-2026-11-27/RUN.md). Its loops
// are as dense as Halide's, so keeping the stages in L1 saves less than the short rows'
// reads cost. Included by edges_cpu_sliding.cpp, which times it; -DEDGES_TILE=columns and
// -DEDGES_STRIP=rows set a task's shape.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <string>

#include "HalideRuntime.h"
#include "bands/band_slab.h"

// Versions of a column loop for AVX-512, AVX2 and the baseline x86-64, chosen when the
// program loads (GCC's function multiversioning); other compilers and CPUs build one.
#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__) && defined(__linux__)
#define HALCONV_CPU_CLONES __attribute__((target_clones("avx512f", "avx2", "default")))
#else
#define HALCONV_CPU_CLONES
#endif

namespace halconv::rk::edges {
namespace {

#ifndef EDGES_TILE
#define EDGES_TILE 512
#endif
#ifndef EDGES_STRIP
#define EDGES_STRIP 64
#endif
constexpr int tile_columns = EDGES_TILE;      // output columns a task walks: its rings fit in L1 (20 KB)
constexpr int strip_rows = EDGES_STRIP;       // output rows a task walks: 6 rows of apron per 64
constexpr int row_floats = tile_columns + 8;  // a ring row: the tile, the Laplacian's apron, the blur's
constexpr int radius = 2;                     // of the Gaussian
constexpr int constant = 0, nearest = 1;      // halconv::Boundary values
constexpr float g0 = 2.0f / 17, g1 = 4.0f / 17, g2 = 5.0f / 17, g3 = 4.0f / 17, g4 = 2.0f / 17;

// o[i] = the Gaussian along a row at p[i + 2], i < n (p holds n + 4 samples).
HALCONV_CPU_CLONES void row_sums(const float *__restrict p, float *__restrict o, int n) {
    for (int i = 0; i < n; i++) {
        o[i] = g0 * p[i] + g1 * p[i + 1] + g2 * p[i + 2] + g3 * p[i + 3] + g4 * p[i + 4];
    }
}

// o[i] = the Gaussian down a column of five rows of row sums.
HALCONV_CPU_CLONES void column_sums(const float *__restrict a, const float *__restrict b, const float *__restrict c,
                                    const float *__restrict d, const float *__restrict e, float *__restrict o, int n) {
    for (int i = 0; i < n; i++) {
        o[i] = g0 * a[i] + g1 * b[i] + g2 * c[i] + g3 * d[i] + g4 * e[i];
    }
}

// o[i] = 1 where the Laplacian at c[i + 1] (the rows above and below: u, d) exceeds t.
HALCONV_CPU_CLONES void threshold_laplacian(const float *__restrict u, const float *__restrict c,
                                            const float *__restrict d, float t, uint8_t *__restrict o, int n) {
    for (int i = 0; i < n; i++) {
        o[i] = std::fabs(u[i + 1] + c[i] + c[i + 2] + d[i + 1] - 4.0f * c[i + 1]) > t ? 1 : 0;
    }
}

struct Job {
    const float *image;
    int64_t image_stride;
    int64_t width, height;  // of the image
    uint8_t *out;
    int64_t out_stride;
    int64_t out_width, out_height;
    int64_t base_x, base_y;  // the image position of output (0, 0); outputs lie inside the image
    int boundary;
    float fill, threshold;
    int64_t tiles;  // along x; tasks are strips x tiles
};

int64_t ring_slot(int64_t i, int64_t n) {
    return ((i % n) + n) % n;
}

// One task: output rows [r0, r1) and columns [c0, c1) of the job.
class Walk {
public:
    Walk(const Job &j, int64_t c0, int64_t c1) : j_(j), c0_(c0), n_(int(c1 - c0)) {
        std::fill(std::begin(sum_rows_), std::end(sum_rows_), no_row);
        std::fill(std::begin(blur_rows_), std::end(blur_rows_), no_row);
        std::fill(fill_row_, fill_row_ + n_ + 2, j.fill);
        const int64_t x = j.base_x + c0 - radius - 1;  // the image column of the first sample read
        const int count = n_ + 2 * radius + 2;
        inside_ = x >= 0 && x + count <= j.width;
        first_inside_ = int(std::clamp<int64_t>(-x, 0, count));
        end_inside_ = int(std::clamp<int64_t>(j.width - x, first_inside_, count));
        for (int k = 0; k < count && !inside_; k++) {
            source_[k] = int(band_source_index(x + k, j.width, j.boundary));
        }
    }

    // Output row r of the tile.
    void row(int64_t r) {
        const int64_t y = j_.base_y + r;
        prefetch(y + radius + 2);
        const float *up = blurred(y - 1), *at = blurred(y), *down = blurred(y + 1);
        threshold_laplacian(up, at, down, j_.threshold, j_.out + r * j_.out_stride + c0_, n_);
    }

private:
    static constexpr int64_t no_row = std::numeric_limits<int64_t>::min();

    // Image row y (any integer) extended by the rule, the tile's samples from the blur's
    // first column's apron on.
    const float *samples(int64_t y) {
        const int64_t source = band_source_index(y, j_.height, j_.boundary);
        const int count = n_ + 2 * radius + 2;
        if (source < 0) {
            std::fill(row_copy_, row_copy_ + count, j_.fill);
            return row_copy_;
        }
        const float *line = j_.image + source * j_.image_stride;
        const int64_t x = j_.base_x + c0_ - radius - 1;  // the image column of sample 0
        if (inside_) {
            return line + x;
        }
        // The samples inside the image copied as they lie, the few beyond its sides by the rule.
        std::memcpy(row_copy_ + first_inside_, line + x + first_inside_,
                    size_t(end_inside_ - first_inside_) * sizeof(float));
        for (int k = 0; k < count; k++) {
            if (k == first_inside_) {
                k = end_inside_ - 1;
                continue;
            }
            row_copy_[k] = source_[k] < 0 ? j_.fill : line[source_[k]];
        }
        return row_copy_;
    }

    // Asks the cache for the samples of image row y, which the row after next reads: a
    // tile's row is too short for the hardware's prefetcher to find.
    void prefetch(int64_t y) {
        const int64_t source = band_source_index(y, j_.height, j_.boundary);
        if (source < 0) {
            return;
        }
        const float *line = j_.image + source * j_.image_stride;
        const int64_t first = std::max<int64_t>(0, j_.base_x + c0_ - radius - 1);
        const int64_t last = std::min<int64_t>(j_.width, j_.base_x + c0_ + n_ + radius + 1);
        for (int64_t x = first; x < last; x += 16) {
            __builtin_prefetch(line + x);
        }
        __builtin_prefetch(line + last - 1);
    }

    // The Gaussian's row sums of extended image row y, from the Laplacian's first column's.
    const float *row_sums_of(int64_t y) {
        const int64_t slot = ring_slot(y, 5);
        if (sum_rows_[slot] != y) {
            row_sums(samples(y), sums_[slot], n_ + 2);
            sum_rows_[slot] = y;
        }
        return sums_[slot];
    }

    // The blurred row the Laplacian reads at image row y (any integer): the blur extended by
    // the rule (constant: fill; nearest: the nearest blurred sample; reflect, mirror, wrap:
    // the blur of the extended image, which is the extended blur as the Gaussian is
    // symmetric).
    const float *blurred(int64_t y) {
        if (y < 0 || y >= j_.height) {
            if (j_.boundary == constant) {
                return fill_row_;
            }
            if (j_.boundary == nearest) {
                y = y < 0 ? 0 : j_.height - 1;
            }
        }
        const int64_t slot = ring_slot(y, 3);
        if (blur_rows_[slot] != y) {
            // Five consecutive rows take five distinct slots of their ring.
            const float *a = row_sums_of(y - 2), *b = row_sums_of(y - 1), *c = row_sums_of(y);
            const float *d = row_sums_of(y + 1), *e = row_sums_of(y + 2);
            float *o = blurs_[slot];
            column_sums(a, b, c, d, e, o, n_ + 2);
            if (j_.boundary == constant || j_.boundary == nearest) {
                // The columns beyond the image's sides (only at its edges) as the rule extends the blur.
                const int64_t x = j_.base_x + c0_ - 1;
                if (x < 0) {
                    o[0] = j_.boundary == constant ? j_.fill : o[1];
                }
                if (x + n_ + 1 >= j_.width) {
                    o[n_ + 1] = j_.boundary == constant ? j_.fill : o[n_];
                }
            }
            blur_rows_[slot] = y;
        }
        return blurs_[slot];
    }

    const Job &j_;
    int64_t c0_;
    int n_;
    bool inside_ = false;                    // every sample's column inside the image: rows read in place
    int first_inside_ = 0, end_inside_ = 0;  // else the samples [first, end) inside it
    int64_t sum_rows_[5], blur_rows_[3];
    alignas(64) float sums_[5][row_floats];
    alignas(64) float blurs_[3][row_floats];
    alignas(64) float fill_row_[row_floats];
    alignas(64) float row_copy_[row_floats];
    int source_[row_floats];  // the image column of each sample (-1: fill), where not inside
};

int task(void *, int index, uint8_t *closure) {
    const Job &j = *reinterpret_cast<const Job *>(closure);
    const int64_t strip = index / j.tiles, t = index % j.tiles;
    const int64_t c0 = t * tile_columns, c1 = std::min(c0 + tile_columns, j.out_width);
    const int64_t r0 = strip * strip_rows, r1 = std::min(r0 + strip_rows, j.out_height);
    Walk walk(j, c0, c1);
    for (int64_t r = r0; r < r1; r++) {
        walk.row(r);
    }
    return 0;
}

int run(halide_buffer_t *in, int32_t boundary, float fill, float threshold, halide_buffer_t *out) {
    const char *name = "edges_sliding_cpu";
    if (out->is_bounds_query()) {
        return 0;  // the whole image, as given: the boundary rule is applied here
    }
    const auto fail = [&](const char *what) {
        halide_error(nullptr, (std::string(name) + ": " + what).c_str());
        return int(halide_error_code_generic_error);
    };
    if (in->dim[0].stride != 1 || out->dim[0].stride != 1) {
        return fail("buffers must be dense along x (dim 0 stride 1)");
    }
    const int64_t out_w = out->dim[0].extent, out_h = out->dim[1].extent;
    if (out_w <= 0 || out_h <= 0) {
        return 0;
    }
    if (out->dim[0].min < in->dim[0].min || out->dim[1].min < in->dim[1].min ||
        out->dim[0].min + out_w > int64_t(in->dim[0].min) + in->dim[0].extent ||
        out->dim[1].min + out_h > int64_t(in->dim[1].min) + in->dim[1].extent) {
        return fail("the output region must lie inside the image");
    }
    Job j{};
    j.image = reinterpret_cast<const float *>(in->host);
    j.image_stride = in->dim[1].stride;
    j.width = in->dim[0].extent;
    j.height = in->dim[1].extent;
    j.out = out->host;
    j.out_stride = out->dim[1].stride;
    j.out_width = out_w;
    j.out_height = out_h;
    j.base_x = int64_t(out->dim[0].min) - in->dim[0].min;
    j.base_y = int64_t(out->dim[1].min) - in->dim[1].min;
    j.boundary = boundary;
    j.fill = fill;
    j.threshold = threshold;
    j.tiles = (out_w + tile_columns - 1) / tile_columns;
    const int64_t tasks = (out_h + strip_rows - 1) / strip_rows * j.tiles;
    if (tasks > std::numeric_limits<int>::max()) {
        return fail("the image has more than 2^31 tasks of 64 x 512 outputs");
    }
    return halide_do_par_for(nullptr, task, 0, int(tasks), reinterpret_cast<uint8_t *>(&j));
}

}  // namespace
}  // namespace halconv::rk::edges

// The probe's entry: the edges generator's definition for `out` (uint8) read from `in`
// (float32, the same coordinates; the output inside the image), the tasks run by Halide's
// thread pool. Returns 0 or a halide_error_code.
int edges_sliding_cpu(halide_buffer_t *in, int32_t boundary, float fill, float threshold, halide_buffer_t *out) {
    return halconv::rk::edges::run(in, boundary, fill, threshold, out);
}
