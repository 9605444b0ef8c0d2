// The direct correlation of the GPU's `sliding` algorithm (conv2d_sliding.cu) as the host
// plans it, in plain C++ so that the registry's limit (src/limits.cpp, CPU-only builds
// included) and the kernel's launcher apply one rule.
//
// A block of `sliding_threads` threads owns a strip of output columns (`columns` per
// thread) and a band of `band_rows` output rows. Each thread walks down its columns: it
// reads every input row of the band once (its samples and the kernel's apron), multiplies
// it into the kh rows of outputs that read it (a ring of sums in registers, the taps in
// registers) and stores the output row that row completes. The rows come ahead of the
// sums in one of two ways:
//   - staged (4- and 8-byte samples): each warp copies its strip's rows with cp.async
//     into a ring of `rows_ahead` rows of its own in shared memory, rows_ahead - 1 rows
//     ahead; copies in flight hold no registers, and a warp waits only for its own;
//   - in registers (float16 samples, which cp.async cannot copy one by one): each thread
//     loads its samples `rows_ahead` rows ahead from global memory, neighbouring threads'
//     loads meeting in L1.
// No block-wide barrier either way.
#pragma once

#include <cstdint>
#include <iterator>

namespace halconv::rk::conv2d {

// The kernel is instantiated for square kernels of these edges, and once more for any
// kernel up to the largest (placed in a square of that edge, the taps outside it
// skipped: slower, as it passes over the skipped taps). The largest is the registry's
// limit (conv2d_sliding_kernel): past it the multiply-adds, not the memory, bound a
// direct pass on CUDA cores, and the tensor-core, separable and FFT algorithms take over.
inline constexpr int sliding_kernel_buckets[] = {1, 3, 5, 7};
inline constexpr int sliding_max_kernel_edge = sliding_kernel_buckets[std::size(sliding_kernel_buckets) - 1];
inline constexpr int sliding_threads = 128;
// CUDA's grid limit along y, where the bands go.
inline constexpr int64_t sliding_max_bands = 65535;

inline bool sliding_kernel_fits(int64_t kw, int64_t kh) {
    return kw >= 1 && kh >= 1 && kw <= sliding_max_kernel_edge && kh <= sliding_max_kernel_edge;
}

// The shape of one instantiation. H100, 4096^2 and 64 x 1024^2, measured by
// bench/probes/conv2d_sliding_probe.cu over 1 / 2 / 4 / 8 columns, 2 ... 12 rows ahead,
// bands of 8 ... 128 rows and register caps (bench/results/h100/sliding/RUN.md): short
// bands (many blocks, many waves) beat one wave of long ones by 10-30 %; staged rows beat
// rows in registers by 10-40 % (f32 K = 3: 0.89 of the memory floor against 0.78).
struct SlidingShape {
    bool staged;     // rows copied into shared memory (else loaded into registers)
    int columns;     // outputs per thread along x
    int rows_ahead;  // staged: the ring's rows; in registers: rows loaded ahead of the sums
    int min_blocks;  // blocks per SM the registers are capped for (__launch_bounds__)
    int band_rows;   // output rows per block on a large grid (sliding_band_rows)
};

// For square bucket x bucket kernels (exact) or any kernel in the largest bucket, of
// samples storage_bytes wide (8 f64, 4 f32, 2 f16 and f16f32).
constexpr SlidingShape sliding_shape(int bucket, bool exact, int storage_bytes) {
    const int band = !exact || bucket == sliding_max_kernel_edge ? 32 : bucket == 5 ? 16 : 8;
    if (storage_bytes >= 4) {
        // float64 sums take twice the registers: half the columns.
        return {true, storage_bytes == 8 ? 2 : 4, exact && bucket == 3 ? 6 : 8, 1, band};
    }
    if (exact && bucket == 1) {
        return {false, 4, 4, 1, 8};
    }
    if (exact && bucket == 3) {
        return {false, 2, 2, 8, 8};
    }
    if (exact && bucket == 5) {
        return {false, 2, 4, 1, 24};
    }
    return {false, 4, 2, 1, 24};
}

// Blocks the launcher wants per SM: a small image's grid is cut into shorter bands until
// it has this many, a large one keeps its shape's bands. (One 1024^2 image in 8-row
// bands is 256 blocks for an H100's 132 SMs; in 4-row bands its f32 3 x 3 kernel ran 6 %
// faster in bench/probes, within a library call's fixed costs.)
inline constexpr int sliding_blocks_per_sm = 8;
inline constexpr int sliding_min_band_rows = 2;

// Output rows per band for an output of out_height rows in `columns_of_blocks` strips
// times images on a device of `sms` SMs: the shape's, shorter (down to
// sliding_min_band_rows) where that leaves the device short of blocks, longer where the
// bands would exceed the grid.
inline int64_t sliding_band_rows(int64_t out_height, int64_t columns_of_blocks, int sms, int shape_band_rows) {
    const int64_t wanted = int64_t(sms) * sliding_blocks_per_sm;
    const int64_t bands = (wanted + columns_of_blocks - 1) / columns_of_blocks;
    int64_t rows = (out_height + bands - 1) / bands;
    rows = rows > shape_band_rows ? shape_band_rows : rows < sliding_min_band_rows ? sliding_min_band_rows : rows;
    const int64_t fewest = (out_height + sliding_max_bands - 1) / sliding_max_bands;
    return fewest > rows ? fewest : rows;
}

}  // namespace halconv::rk::conv2d
