// Tiling geometry of the tiled schedules, shared by schedules/ (which build the tiles)
// and src/ (which checks a request against them before anything runs): one fit test
// for both. The templates take int64_t (src/) or Halide::Expr (schedules/), so this
// header needs neither Halide.h nor the runtime. Internal: not installed.
#pragma once

#include <cstdint>

namespace halconv {

// A GPU thread block is gpu_tile_width x gpu_tile_height threads and stages its input
// tile plus apron in at most gpu_shared_budget_bytes of shared memory (Halide launches
// with the default 48 KB dynamic shared-memory limit; the rest is headroom).
inline constexpr int gpu_tile_width = 32;
inline constexpr int gpu_tile_height = 8;
inline constexpr int gpu_shared_budget_bytes = 46 * 1024;
// Output rows per strip of the CPU separable schedule; taller kernels (whose apron
// would more than double the row pass per strip) run the two-pass schedule.
inline constexpr int cpu_separable_strip_rows = 32;
// Output rows per strip of the CPU direct-sum schedule: each strip stages its apron's
// K - 1 rows again.
inline constexpr int cpu_direct_strip_rows = 32;
// Smallest output extent per axis the autoscheduled pipelines are run on: their tiles
// assume outputs at least this large, so smaller outputs are computed into a scratch of
// this size per axis and cropped.
inline constexpr int autoscheduled_min_extent = 512;
// CUDA launches at most this many blocks along a grid's y and z axes (2^31 - 1 along x).
inline constexpr int gpu_max_grid_y = 65535;
// The GPU schedules put tile rows on blockIdx.x and tile columns on blockIdx.y
// (conv2d_schedules.h): any height, and up to this many samples across, for the output
// and each stage before it (the output's width plus the kernel's, less one).
inline constexpr long long gpu_max_width = (long long)gpu_max_grid_y * gpu_tile_width;
// Whether an output `width` wide filtered by a kernel `kernel_width` wide stays within it.
constexpr bool gpu_grid_fits_width(long long width, long long kernel_width) {
    return width + kernel_width - 1 <= gpu_max_width;
}
// That scratch may take up to this many bytes, or 4 times the output's own: a thin
// image (1 x 10^6) would otherwise need a scratch 512 times its size.
inline constexpr long long autoscheduled_scratch_floor_bytes = 64ll << 20;

// Bytes of one staged row of a GPU tile: gpu_tile_width outputs plus the kernel's
// apron of storage_bytes samples, plus extra_bytes_per_row (the separable row-pass
// results kept beside it).
template <typename T>
auto gpu_staged_row_bytes(const T &k_width, int storage_bytes, int extra_bytes_per_row) {
    return (gpu_tile_width + k_width - 1) * storage_bytes + extra_bytes_per_row;
}

// Whether a GPU tile of gpu_tile_height * rows output rows, with k_height - 1 apron
// rows of staged_bytes_per_row each, fits gpu_shared_budget_bytes (seed 001 eq. 6-8
// with the tiles stacked vertically).
template <typename T>
auto gpu_tile_fits(const T &staged_bytes_per_row, const T &k_height, int rows) {
    return (gpu_tile_height * rows + k_height - 1) * staged_bytes_per_row <= gpu_shared_budget_bytes;
}

}  // namespace halconv
