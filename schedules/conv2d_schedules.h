// Named schedules for the direct 2D convolution (generators/conv2d_generator.cpp).
// The generator builds the algorithm and hands its stages here; the GeneratorParam
// `schedule` (a registry row's schedule, variants.cmake) picks the function from
// conv2d_schedules(), so schedules swap without touching the algorithm. This header
// also holds the GPU and CPU tiling helpers the other schedules share.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "Halide.h"
#include "geometry.h"
#include "schedule_table.h"

namespace halconv::sched {

// The stages of output(x, y) = sum_r kern(r) * padded(x + r.x - ox, y + r.y - oy).
struct Conv2dStages {
    Halide::Func output;             // the generator's output
    Halide::Func sum;                // accumulation, pure definition 0 plus one update over r
    Halide::Func padded;             // the image extended by the boundary rule
    Halide::Var x, y;                // pure variables of all three
    std::vector<Halide::Var> batch;  // after x and y: the image of a batch (halconv_conv2d_batch), or none
    Halide::RDom r;                  // kernel taps, extents k_width x k_height
    Halide::Expr k_width, k_height;
    Halide::Expr out_width, out_height;  // extents of the output buffer
    Halide::Expr near_image;             // every position read is within one fold of the image (remap_index)
    Halide::Type storage, accumulator;
    Halide::Target target;
};

// Every schedule of conv2d by name (the autoscheduled rows, cpu_auto and gpu_auto,
// have none: Halide's autoschedulers write theirs).
const ScheduleTable<Conv2dStages> &conv2d_schedules();

// CPU: `f` in strips of `rows` rows (loops yo, yi) run in parallel, vectorized along x.
void cpu_parallel_strips(Halide::Func f, const Halide::Var &x, const Halide::Var &y, const Halide::Var &yo,
                         const Halide::Var &yi, int rows, int vec);

// GPU: one thread per sample of `f`, in blocks of gpu_tile_width x gpu_tile_height
// threads; xi names the thread's x loop (to compute producers at).
//
// The GPU schedules put a tile's row on blockIdx.x (up to 2^31 - 1 blocks) and its column
// on blockIdx.y: CUDA allows only 65535 blocks along y, which the rows of a tall image
// exceed first (a 1 x 10^6 strip has 125000 tile rows); its columns reach it only past
// gpu_max_width samples. (Fusing both into blockIdx.x lifts that limit too, but the
// division that splits the index again cost 7 % on the fused edge pipeline and 37 % on
// the staged one, H100, 2026-11-26.)
//
// `batch` (none or one variable, after x and y) is the image of a batch, on blockIdx.z
// (up to 65535 images a launch).
void gpu_one_per_thread(Halide::Func f, const Halide::Var &x, const Halide::Var &y, const Halide::Var &xi,
                        const std::vector<Halide::Var> &batch = {});

// Loop names of the GPU tiling shared by the tiled schedules: blocks (yb, xb) of
// gpu_tile_width x gpu_tile_height threads (xi, yi), each thread running yt over the
// rows it computes. One set per output Func, so every specialization of that Func
// has the same loop names and producers can be computed at them.
struct GpuTileVars {
    explicit GpuTileVars(const Halide::Func &output) : block_level(output, yb), thread_level(output, xi) {}
    Halide::Var xb{"xb"}, yb{"yb"}, xi{"xi"}, yi{"yi"}, yr{"yr"}, yt{"yt"};
    Halide::LoopLevel block_level, thread_level;
};

// Tiles `stage` over (x, y): blocks of threads, each thread computing `rows`
// consecutive outputs of one column (unrolled), so vertical taps share loads. With
// rows > 1 the stage must be specialized on gpu_whole_tile. `batch` as for gpu_one_per_thread.
void gpu_tile_rows(Halide::Stage stage, const Halide::Var &x, const Halide::Var &y, int rows, const GpuTileVars &v,
                   const std::vector<Halide::Var> &batch = {});

// Whether the output covers at least one whole tile of `rows` rows per thread, the
// condition for gpu_tile_rows with rows > 1.
Halide::Expr gpu_whole_tile(const Halide::Expr &out_width, const Halide::Expr &out_height, int rows);

// Output rows each thread of a register-blocked tile computes: in general, and where
// the taps are unrolled (square 3x3 and 5x5 kernels).
inline constexpr int gpu_rows_per_thread = 4;
inline constexpr int gpu_rows_per_thread_unrolled = 8;

// Computes `sum` (pure 0 plus one update over `taps`) per thread of the tiled output,
// in registers holding up to max_rows rows, taps outermost so each coefficient is
// loaded once for all rows. Returns the update stage for further specialization.
Halide::Stage gpu_sum_in_registers(Halide::Func sum, const Halide::Var &x, const Halide::Var &y,
                                   const std::vector<Halide::VarOrRVar> &taps, int max_rows, const GpuTileVars &v);

// Spreads a stage computed per block over the block's threads, each thread taking
// gpu_loads_in_flight samples at a time (unrolled, so it issues that many independent
// loads before it needs one). An update's taps, if given, loop outside those samples.
inline constexpr int gpu_loads_in_flight = 8;
void gpu_spread_over_block(Halide::Stage stage, const Halide::Var &x, const Halide::Var &y,
                           const std::optional<Halide::RVar> &taps = std::nullopt);

// Computes f (a producer of the tiled output) per block, spread over the block's
// threads; Halide puts block-level GPU allocations in shared memory.
void gpu_stage_tile(Halide::Func f, const Halide::Var &x, const Halide::Var &y, const GpuTileVars &v);

}  // namespace halconv::sched
