#include "fft_schedules.h"

#include "conv2d_schedules.h"

namespace halconv::sched {

namespace {

using Halide::Func;
using Halide::LoopLevel;
using Halide::TailStrategy;
using Halide::Var;

// A transform stage over all of [0, T) in both dimensions, k split into its butterfly's
// (blk, t, l) and i into vectors: per (blk, l, vector of i) the radix's outputs t are
// unrolled side by side, so their selects fold and they share their loads and sums.
void schedule_stage(const gen::fft::Stage &st, int vec, const LoopLevel &at) {
    Var kk{"kk"}, blk{"blk"}, t{"t"}, l{"l"}, io{"io"}, ii{"ii"};
    Func f = st.func;
    f.compute_at(at)
        .bound(st.i, 0, st.n)
        .bound(st.k, 0, st.n)
        .split(st.k, kk, l, st.q, TailStrategy::RoundUp)
        .split(kk, blk, t, st.radix, TailStrategy::RoundUp)
        .split(st.i, io, ii, vec, TailStrategy::RoundUp)
        .reorder(ii, t, io, l, blk)
        .vectorize(ii)
        .unroll(t);
}

// f(u, v) = source(v, u) in blocks of vec x vec: each block read as vec dense vectors
// into a small buffer (source's wrapper), then written transposed from registers.
void schedule_transpose(Func f, Func source, int tile, int vec, const LoopLevel &at) {
    Var u = f.args()[0], v = f.args()[1], ui{"ui"}, vi{"vi"};
    f.compute_at(at)
        .bound(u, 0, tile)
        .bound(v, 0, tile)
        .tile(u, v, ui, vi, vec, vec, TailStrategy::RoundUp)
        .vectorize(ui)
        .unroll(vi);
    Func block = source.in(f);
    block.compute_at(f, u).vectorize(block.args()[0]).unroll(block.args()[1]);
}

}  // namespace

void schedule_fft_cpu(FftStages &s) {
    const int vec = s.target.natural_vector_size(s.work);
    Var xo{"xo"}, yo{"yo"}, xi{"xi"}, yi{"yi"}, pair{"pair"};
    // The last vector of a row is guarded (predicated): rounded up, it would reach into
    // the next pair of tiles, whose transforms bounds inference would then add to this
    // one's; shifted inwards, it would start before the output where a pair holds fewer
    // outputs than a vector (kernels almost as wide as the transform).
    s.output.split(s.y, yo, yi, s.step_y, TailStrategy::GuardWithIf)
        .split(s.x, xo, xi, 2 * s.step_x, TailStrategy::GuardWithIf)
        .reorder(xi, yi, xo, yo)
        .fuse(xo, yo, pair)
        .parallel(pair)
        .vectorize(xi, vec, TailStrategy::GuardWithIf);
    const LoopLevel per_pair(s.output, pair);
    for (size_t n = 0; n < s.transforms.size(); n++) {
        const bool kernel = static_cast<int>(n) < s.kernel_transforms;
        s.transforms[n].twiddle.compute_root();
        for (const gen::fft::Stage &st : s.transforms[n].stages) {
            schedule_stage(st, vec, kernel ? LoopLevel::root() : per_pair);
        }
    }
    for (size_t n = 0; n < s.transposes.size(); n++) {
        schedule_transpose(s.transposes[n], s.transforms[2 * n].result(), s.tile, vec,
                           n == 0 ? LoopLevel::root() : per_pair);
    }
    s.spectrum.compute_root().vectorize(s.spectrum.args()[0], vec);
}

}  // namespace halconv::sched
