#include "edges_schedules.h"

#include "conv2d_schedules.h"

namespace halconv::sched {

using Halide::TailStrategy;
using Halide::Var;

namespace {

// Strips of 32 rows in parallel; each strip computes the padded input, both Gaussian
// passes (with their 3-row aprons) into strip-sized buffers that stay in cache, and
// the Laplacian and threshold inline.
void schedule_edges_cpu_fused(EdgesStages &s) {
    const int vec = s.target.natural_vector_size(Halide::Float(32));
    Var yo{"yo"}, yi{"yi"};
    cpu_parallel_strips(s.output, s.x, s.y, yo, yi, 32, vec);
    for (Halide::Func f : {s.padded, s.blur_x, s.blur}) {
        f.compute_at(s.output, yo).vectorize(s.x, vec, TailStrategy::GuardWithIf);
    }
}

// Each stage over the whole image into memory: Gaussian rows, Gaussian columns,
// Laplacian, then the threshold.
void schedule_edges_cpu_staged(EdgesStages &s) {
    const int vec = s.target.natural_vector_size(Halide::Float(32));
    Var yo{"yo"}, yi{"yi"};
    for (Halide::Func f : {s.blur_x, s.blur, s.laplacian, s.output}) {
        cpu_parallel_strips(f.compute_root(), s.x, s.y, yo, yi, 8, vec);
    }
}

// One kernel: each block stages the padded input, the Gaussian rows and the Gaussian
// columns of its tile plus aprons in shared memory; each thread then thresholds the
// Laplacian of 4 consecutive outputs of one column (1 on images smaller than a tile
// or under 4 samples across).
void schedule_edges_gpu_fused(EdgesStages &s) {
    const GpuTileVars v(s.output);
    gpu_tile_rows(s.output.specialize(s.near_image && gpu_whole_tile(s.out_width, s.out_height, gpu_rows_per_thread)),
                  s.x, s.y, gpu_rows_per_thread, v);
    gpu_tile_rows(s.output, s.x, s.y, 1, v);
    for (Halide::Func f : {s.padded, s.blur_x, s.blur}) {
        gpu_stage_tile(f, s.x, s.y, v);
    }
    // Staged extents of the largest tile: the Laplacian reads 1 sample around it, the
    // Gaussian 2 more per axis. Bounding the storage by them makes each shared buffer
    // a constant size; otherwise the image-edge clamps make Halide size it on the host
    // by visiting every block before each launch (8192^2: 2.6 ms, most of the call).
    const int w = gpu_tile_width, h = gpu_tile_height * gpu_rows_per_thread;
    s.blur.bound_storage(s.x, w + 2).bound_storage(s.y, h + 2);
    s.blur_x.bound_storage(s.x, w + 2).bound_storage(s.y, h + 6);
    s.padded.bound_storage(s.x, w + 6).bound_storage(s.y, h + 6);
}

// Four kernels, each stage a whole image in device memory.
void schedule_edges_gpu_staged(EdgesStages &s) {
    for (Halide::Func f : {s.blur_x, s.blur, s.laplacian, s.output}) {
        gpu_one_per_thread(f.compute_root(), s.x, s.y, Var{"xi"});
    }
}

}  // namespace

const ScheduleTable<EdgesStages> &edges_schedules() {
    static const ScheduleTable<EdgesStages> table = {
        {"cpu_fused", schedule_edges_cpu_fused},
        {"cpu_staged", schedule_edges_cpu_staged},
        {"gpu_fused", schedule_edges_gpu_fused},
        {"gpu_staged", schedule_edges_gpu_staged},
    };
    return table;
}

}  // namespace halconv::sched
