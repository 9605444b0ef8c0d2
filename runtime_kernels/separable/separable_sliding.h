// The separable correlation of the GPU's `sliding` variant (separable_sliding.cu) as the
// host plans it: the block shape and the shared-memory layout, in plain C++ so that the
// registry's limit (src/limits.cpp, CPU-only builds included) and the kernel's launcher
// apply one rule.
//
// A block owns a strip of `tile_columns` output columns and a band of output rows, which
// it walks down in chunks of `chunk_rows` rows (tile_columns x chunk_rows = 2048 outputs,
// 8 per thread):
//   1. the row pass sums the staged rows of the chunk (the boundary rule applied as they
//      were copied) along x into a ring of row sums;
//   2. the next chunk's rows are copied asynchronously into the stage buffer, while
//   3. the column pass sums the ring along y into the chunk's outputs, `lag` chunks behind
//      the row pass, so each row sum is computed once per band.
// One stage buffer, not two (the copy overlapping the row pass too): on the H100 two were
// no faster at equal residency and slower where their shared memory cost resident blocks
// or the wider strip (4096^2 f32, K = 63: 0.210-0.212 against 0.202-0.203 ms; K = 127:
// 0.416-0.426 with two at 64 columns against 0.384-0.396 with one at 128); and one takes
// kernels up to 193 taps in f32 where two stopped at 129
// (bench/results/h100/separable/one-stage-2026-11-27/).
// Both passes give each thread 8 consecutive outputs and slide a window of 8 samples
// through registers, loaded as vectors: the ring is stored by columns, so that a column
// pass thread's 8 rows lie side by side as a row pass thread's 8 columns do (the row pass
// writes its 8 sums apart, once per chunk, where the column pass had read its window's
// samples apart, one scalar load and address per sample and tap block).
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>

namespace halconv::rk::sep {

inline constexpr int sliding_threads = 256;
inline constexpr int sliding_outputs_per_thread = 8;
// Outputs of one chunk: a row-pass thread per 8 columns of a row, a column-pass thread per
// 8 rows of a column.
inline constexpr int sliding_chunk_outputs = sliding_threads * sliding_outputs_per_thread;
// The strip widths, widest first: 128 columns halve the apron each strip stages again
// over 64; 64 (with chunks twice as tall) for kernels whose ring does not fit at 128, and
// where its twice as many strips fill the GPU with fewer bands (small images,
// sliding_split).
inline constexpr int sliding_tile_widths[] = {128, 64};
// Shared memory a block may use: what every sm_80+ GPU can give a block (sm_86 / sm_89
// opt in to 99 KB), so that the registry's answer does not depend on the device.
inline constexpr size_t sliding_shared_budget = size_t(96) << 10;

struct SlidingLayout {
    int tile_columns = 0;  // 0: the kernel does not fit
    int chunk_rows = 0;
    int lag = 0;         // chunks the column pass runs behind the row pass
    int ring_rows = 0;   // row sums held: the rows one chunk of outputs reads, in whole chunks
    int ring_pitch = 0;  // elements between ring columns (the ring is stored by columns)
    // (taps_bytes: each tap list padded to a multiple of 8)
    int stage_width = 0;  // staged columns: the strip, its kernel apron, the window's look-ahead
    int stage_pitch = 0;  // elements between staged rows
    size_t taps_bytes = 0, ring_bytes = 0, stage_bytes = 0, total_bytes = 0;
};

// Elements of `bytes` each per row such that rows start an odd multiple of 16 bytes
// apart: the 16-byte accesses of eight consecutive rows (a quarter warp) then hit
// distinct banks.
inline int64_t sliding_pitch(int64_t elements, int bytes) {
    const int64_t sixteens = (elements * bytes + 15) / 16;
    return (sixteens | 1) * 16 / bytes;
}

// Bytes of a sum: float64 samples sum in float64, float32 and float16 ones in float32.
constexpr int sliding_accumulator_bytes(int storage_bytes) {
    return storage_bytes == 8 ? 8 : 4;
}

// The layout of a strip of `tile_columns` for a kw x kh kernel whose samples are
// storage_bytes wide (8 for f64, 4 for f32, 2 for f16 / f16f32).
inline SlidingLayout sliding_layout_for(int tile_columns, int64_t kw, int64_t kh, int storage_bytes) {
    const int accumulator_bytes = sliding_accumulator_bytes(storage_bytes);
    SlidingLayout l;
    if (kw < 1 || kh < 1 || kw > (int64_t(1) << 20) || kh > (int64_t(1) << 20)) {
        l.total_bytes = SIZE_MAX;
        return l;
    }
    const int64_t chunk = sliding_chunk_outputs / tile_columns;
    const int64_t lag = (kh - 1 + chunk - 1) / chunk;
    l.tile_columns = tile_columns;
    l.chunk_rows = int(chunk);
    l.lag = int(lag);
    l.ring_rows = int((lag + 1) * chunk);
    l.ring_pitch = int(sliding_pitch(l.ring_rows, accumulator_bytes));
    // Output column j of the strip reads staged columns j .. j + kw - 1; a thread's window
    // loads whole blocks of 8, up to the block after its last tap's.
    l.stage_width = int(tile_columns + (kw + 7) / 8 * 8);
    l.stage_pitch = int(sliding_pitch(l.stage_width, storage_bytes));
    const auto aligned = [](size_t b) { return (b + 127) / 128 * 128; };
    l.taps_bytes = aligned(size_t((kw + 7) / 8 * 8 + (kh + 7) / 8 * 8) * size_t(accumulator_bytes));
    l.ring_bytes = aligned(size_t(tile_columns) * size_t(l.ring_pitch) * size_t(accumulator_bytes));
    l.stage_bytes = aligned(size_t(chunk) * size_t(l.stage_pitch) * size_t(storage_bytes));
    l.total_bytes = l.taps_bytes + l.ring_bytes + l.stage_bytes;
    return l;
}

// The widest strip whose layout fits the budget; tile_columns 0 when none does.
inline SlidingLayout sliding_layout(int64_t kw, int64_t kh, int storage_bytes) {
    SlidingLayout l;
    for (int tile : sliding_tile_widths) {
        l = sliding_layout_for(tile, kw, kh, storage_bytes);
        if (l.total_bytes <= sliding_shared_budget) {
            return l;
        }
    }
    l.tile_columns = 0;
    return l;
}

inline bool sliding_fits(int64_t kw, int64_t kh, int storage_bytes) {
    return sliding_layout(kw, kh, storage_bytes).tile_columns != 0;
}

// The split of each strip's output rows into bands (a block each) for a grid of `strips`
// strips on `sm_count` SMs that hold `per_sm` blocks each: the band count, at most 65535
// (CUDA's grid y) and at most the strip's chunks, and the time the model below predicts
// for it (in units of a tap summed over a chunk, to compare layouts). Each distinct band
// height is scored and the best taken; the model was fitted to sweeps of every band
// height and both strip widths on the H100 (f32, f16, f64; 512^2 to 8192^2, K = 3 to 193:
// bench/results/h100/separable/bands-2026-11-27/):
//   - a block's work is its chunks' row and column sums, its first `lag` chunks the row
//     sums only (in taps; a chunk's copy and barriers count 16 taps, plus 32 per strip
//     width of apron columns it copies beside the strip; a lag chunk's 4);
//   - the busiest SM runs ceil(blocks / SMs) of them in waves of per_sm, a wave of m
//     blocks at min(1, m / 2.5) of the SM's rate (fewer blocks leave its issue slots idle);
//   - blocks resident together walk their bands in step, copying and summing at the same
//     time, so one wave of long bands overlaps copies with sums worse than several waves
//     of shorter ones: 20 % more for one wave, 20 % / waves for more.
// Against the fastest split of the sweeps its choices (of width and bands) cost 1.5 % on
// (geometric) average and 10 % at worst; the rule it replaced (the widest strip; waves x
// a block's work, at most 4 waves) cost 4.7 % and 39 % on the bands alone.
struct SlidingSplit {
    int bands = 1;
    double cost = 0;
};

inline SlidingSplit sliding_split(int64_t strips, int64_t out_height, const SlidingLayout &l, int64_t kw, int64_t kh,
                                  int per_sm, int sm_count) {
    SlidingSplit best;
    const int64_t chunks = (out_height + l.chunk_rows - 1) / l.chunk_rows;
    if (strips < 1 || chunks < 1 || per_sm < 1 || sm_count < 1 || l.tile_columns < 1) {
        return best;
    }
    constexpr double saturating_blocks = 2.5, copy_taps = 16, apron_taps = 32, lag_copy_taps = 4, in_step = 0.2;
    constexpr int64_t most_waves = 8;  // the sweeps' range
    const int64_t resident = int64_t(per_sm) * sm_count;
    const int64_t most = std::min<int64_t>({chunks, 65535, std::max<int64_t>(1, most_waves * resident / strips)});
    const double chunk_work = double(kw + kh) + copy_taps + apron_taps * double(kw) / double(l.tile_columns);
    for (int64_t asked = 1, last = 0; asked <= most; asked++) {
        const int64_t per_band = (chunks + asked - 1) / asked;
        const int64_t bands = (chunks + per_band - 1) / per_band;  // the grid those bands give
        if (bands == last) {
            continue;
        }
        last = bands;
        const int64_t blocks = strips * bands;
        const int64_t busiest = (blocks + sm_count - 1) / sm_count;
        // The busiest SM's waves, each in units of one block's work at the SM's full rate.
        const int64_t partial = busiest % per_sm;
        const double span = double(busiest / per_sm) * std::max(double(per_sm), saturating_blocks) +
                            (partial > 0 ? std::max(double(partial), saturating_blocks) : 0.0);
        const double work = double(per_band) * chunk_work + double(l.lag) * (double(kw) + lag_copy_taps);
        const double waves = double(blocks) / double(resident);
        const double cost = span * work * (1 + in_step / std::max(1.0, waves));
        if (best.cost == 0 || cost < best.cost) {
            best = {int(bands), cost};
        }
    }
    return best;
}

}  // namespace halconv::rk::sep
