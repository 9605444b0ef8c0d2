// The recursive Gaussian on CUDA cores (halconv_rg.h), each axis in one of two ways.
//
// Whole lines (lines of up to whole_max_length samples, the usual case): one kernel per
// axis reads each line once into shared memory, finds every 32-sample segment's states
// from zero, carries them along the line by warp scans and, where a line spans several
// blocks, across a thread-block cluster through distributed shared memory, filters and
// writes the line once. Along y it writes the output, along x it filters the output in
// place.
//
// By segments (longer lines, or a device without room for the cluster): three kernels
// per axis over lines split into segments, the second axis read from the first's
// transposed result in scratch.
//
// Why hand-written: a recursion runs serially along its line, so Halide's GPU schedules
// can give it only a thread per line (Halide's apps/iir_blur: 4096 threads for a 4096^2
// image, far from filling a GPU); splitting the line into segments whose states are
// carried across needs the two-level scans below, which a Halide schedule cannot express.
//
// H100, 4096^2 f32: 0.25 ms at every sigma by whole lines, 0.27 ms by segments
// (bench/results/h100/recursive/RUN.md).
#include <cooperative_groups.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cstdint>
#include <string_view>

#include "common/extern_call.cuh"
#include "common/workspace.h"
#include "recursive/halconv_rg.h"
#include "recursive/recursive_layout.h"

namespace halconv::rk::rg {
namespace {

constexpr int columns_per_warp = 32;
// Warps (segments) per block of the states and filter kernels.
template <typename A>
constexpr int block_warps = rg::warps_per_block(int(sizeof(A)));
constexpr int carry_lines = 32;  // the carry kernel's block: lines ...
constexpr int carry_groups = 8;  // ... by runs of a line's segments, folded in parallel
constexpr int boundary_constant = 0, boundary_nearest = 1, boundary_mirror = 3;
static_assert(segment % columns_per_warp == 0, "a warp writes a segment's tile in rows of 32");

template <typename A>
struct Cx {
    A re, im;
};
template <typename A>
__device__ inline Cx<A> operator*(Cx<A> a, Cx<A> b) {
    return {a.re * b.re - a.im * b.im, a.re * b.im + a.im * b.re};
}
template <typename A>
__device__ inline Cx<A> operator+(Cx<A> a, Cx<A> b) {
    return {a.re + b.re, a.im + b.im};
}
template <typename A>
__device__ inline Cx<A> scale(Cx<A> a, A r) {
    return {a.re * r, a.im * r};
}
// p x + v for a real v: the step of every recursion.
template <typename A>
__device__ inline Cx<A> step(Cx<A> p, Cx<A> x, A v) {
    // Four fused operations: as written out, the compiler left the + v unfused.
    return {fma(p.re, x.re, fma(-p.im, x.im, v)), fma(p.re, x.im, p.im * x.re)};
}
// sum + Re(w x).
template <typename A>
__device__ inline A add_real(A sum, Cx<A> w, Cx<A> x) {
    return fma(w.re, x.re, fma(-w.im, x.im, sum));
}

template <typename A>
__host__ __device__ inline A to_acc(A v) {
    return v;
}
__host__ __device__ inline float to_acc(__half v) {
    return __half2float(v);
}

// One axis: `lines` lines of `length` samples; line x's sample n at in[n * in_stride + x].
template <typename In, typename A, typename Out>
struct Pass {
    const In *in;
    int64_t in_stride;
    int lines, length, segments;
    Out *out;  // sample n of line x at out[x * out_stride + n]: transposed
    int64_t out_stride;
    A *states;  // states[(segment * states_per_segment + c) * lines + x]
    A *extra;   // extra[c * lines + x]: segment 0's anticausal state at 1, the last's causal at length - 2
    const double *coefficients;  // the axis's coefficients_per_axis
    const double *powers;        // powers[c + power_components * i], i < power_entries
    int power_entries;
    int rule;  // the axis's boundary (mirror on one sample already nearest)
    A fill;
};

template <typename A>
__device__ inline Cx<A> coefficient(const double *c, int k, Value v) {
    return {A(c[coefficient_index(k, v, 0)]), A(c[coefficient_index(k, v, 1)])};
}
template <typename A>
__device__ inline Cx<A> power(const double *powers, int entries, int k, int64_t i) {
    const int64_t at = i < entries - 1 ? i : entries - 1;
    return {A(powers[power_components * at + 2 * k]), A(powers[power_components * at + 2 * k + 1])};
}

// A segment's samples, read as they are used.
template <typename In, typename A>
struct Loads {
    const In *base;
    int64_t stride;
    __device__ A operator()(int j) const { return to_acc(base[int64_t(j) * stride]); }
};

// The causal end state and the anticausal start state of `len` samples, both from zero,
// in one pass (the latter as sum_j p^j x[j], the powers kept as they go, so that no sample
// is held), and mirror's second-sample states: the causal one at len - 2 and
// sum_{j >= 1} p^(j-1) x[j].
template <typename A, typename Samples>
__device__ inline void zero_start_states(const Samples &x, int len, const Cx<A> (&pole)[poles], Cx<A> (&causal)[poles],
                                         Cx<A> (&causal1)[poles], Cx<A> (&anti)[poles], Cx<A> (&anti1)[poles]) {
    Cx<A> power[poles], previous[poles];
#pragma unroll
    for (int k = 0; k < poles; k++) {
        power[k] = {A(1), A(0)};
        previous[k] = {A(0), A(0)};
    }
#pragma unroll
    for (int j = 0; j < len; j++) {
        const A v = x(j);
#pragma unroll
        for (int k = 0; k < poles; k++) {
            causal[k] = step(pole[k], causal[k], v);
            if (j == len - 2) {
                causal1[k] = causal[k];
            }
            anti[k] = anti[k] + scale(power[k], v);
            anti1[k] = anti1[k] + scale(previous[k], v);
            previous[k] = power[k];
            power[k] = power[k] * pole[k];
        }
    }
}

// Each segment's causal end state and anticausal start state, both from zero, and the
// two second-sample states mirror needs.
template <typename In, typename A, typename Out>
__global__ void __launch_bounds__(columns_per_warp *block_warps<A>) segment_states(Pass<In, A, Out> p) {
    const int x = blockIdx.x * columns_per_warp + threadIdx.x;
    const int seg = blockIdx.y * block_warps<A> + threadIdx.y;
    if (x >= p.lines || seg >= p.segments) {
        return;
    }
    const int start = seg * segment;
    const int len = min(segment, p.length - start);
    Cx<A> pole[poles], causal[poles], anti[poles], anti1[poles], causal1[poles];
#pragma unroll
    for (int k = 0; k < poles; k++) {
        pole[k] = coefficient<A>(p.coefficients, k, Value::pole);
        causal[k] = anti[k] = anti1[k] = causal1[k] = {A(0), A(0)};
    }
    const In *base = p.in + int64_t(start) * p.in_stride + x;
    if (len == segment) {
        zero_start_states(Loads<In, A>{base, p.in_stride}, segment, pole, causal, causal1, anti, anti1);
    } else {
        zero_start_states(Loads<In, A>{base, p.in_stride}, len, pole, causal, causal1, anti, anti1);
    }
    A *s = p.states + int64_t(seg) * states_per_segment * p.lines + x;
#pragma unroll
    for (int k = 0; k < poles; k++) {
        s[int64_t(2 * k) * p.lines] = causal[k].re;
        s[int64_t(2 * k + 1) * p.lines] = causal[k].im;
        s[int64_t(2 * poles + 2 * k) * p.lines] = anti[k].re;
        s[int64_t(2 * poles + 2 * k + 1) * p.lines] = anti[k].im;
    }
    if (p.rule == boundary_mirror && seg == 0) {
#pragma unroll
        for (int k = 0; k < poles; k++) {
            p.extra[int64_t(2 * k) * p.lines + x] = anti1[k].re;
            p.extra[int64_t(2 * k + 1) * p.lines + x] = anti1[k].im;
        }
    }
    if (p.rule == boundary_mirror && seg == p.segments - 1) {
#pragma unroll
        for (int k = 0; k < poles; k++) {
            p.extra[int64_t(2 * poles + 2 * k) * p.lines + x] = causal1[k].re;
            p.extra[int64_t(2 * poles + 2 * k + 1) * p.lines + x] = causal1[k].im;
        }
    }
}

// Per line and pole: the states carried into each segment, with the boundary's states S
// and T (recursive_layout.h) added, written over the segment's own. A line's segments are
// split into carry_groups runs, each folded by a thread of its own; the runs' totals meet
// in shared memory, so that a thread folds at most segments / carry_groups states.
template <typename In, typename A, typename Out>
__global__ void __launch_bounds__(carry_lines *carry_groups) carry_states(Pass<In, A, Out> p) {
    __shared__ Cx<A> causal_total[carry_groups][carry_lines], anti_total[carry_groups][carry_lines];
    // Mirror's: the causal zero state entering the last segment, the anticausal one entering the first.
    __shared__ Cx<A> entering[2][carry_lines];
    const int lane = threadIdx.x, g = threadIdx.y, k = blockIdx.y;
    const int x = blockIdx.x * carry_lines + lane;
    const bool line = x < p.lines;  // the others still reach the barriers
    const int last = p.segments - 1;
    const int last_len = p.length - last * segment;
    const bool mirror = p.rule == boundary_mirror;
    const int per = (p.segments + carry_groups - 1) / carry_groups;
    const auto first_of = [&](int group) { return min(group * per, p.segments); };
    const int first = first_of(g), end = first_of(g + 1);
    const Cx<A> pole_full = power<A>(p.powers, p.power_entries, k, segment);
    const Cx<A> pole_last = power<A>(p.powers, p.power_entries, k, last_len);
    const auto across = [&](int seg) { return seg == last ? pole_last : pole_full; };
    // p^(samples of run `group`): what a state crossing the whole run is multiplied by.
    const auto across_run = [&](int group) {
        const int64_t from = int64_t(first_of(group)) * segment, to = int64_t(first_of(group + 1)) * segment;
        return power<A>(p.powers, p.power_entries, k, min(to, int64_t(p.length)) - min(from, int64_t(p.length)));
    };
    const auto state = [&](int seg, int c) -> A & {
        return p.states[(int64_t(seg) * states_per_segment + c) * p.lines + x];
    };
    const auto causal_of = [&](int seg) { return Cx<A>{state(seg, 2 * k), state(seg, 2 * k + 1)}; };
    const auto anti_of = [&](int seg) {
        return Cx<A>{state(seg, 2 * poles + 2 * k), state(seg, 2 * poles + 2 * k + 1)};
    };
    const Cx<A> zero{A(0), A(0)};

    // The run's own states from zero.
    Cx<A> c = zero, a = zero;
    if (line) {
        for (int seg = first; seg < end; seg++) {
            c = c * across(seg) + causal_of(seg);
        }
        for (int seg = end - 1; seg >= first; seg--) {
            a = a * across(seg) + anti_of(seg);
        }
    }
    causal_total[g][lane] = c;
    anti_total[g][lane] = a;
    __syncthreads();
    // The zero states entering this run (from the runs before it, after it) and the line's totals.
    Cx<A> into = zero, line_causal = zero;
    for (int r = 0; r < carry_groups; r++) {
        if (r == g) {
            into = line_causal;
        }
        line_causal = line_causal * across_run(r) + causal_total[r][lane];
    }
    Cx<A> back_into = zero, line_anti = zero;
    for (int r = carry_groups - 1; r >= 0; r--) {
        if (r == g) {
            back_into = line_anti;
        }
        line_anti = line_anti * across_run(r) + anti_total[r][lane];
    }
    Cx<A> head = line_anti, tail = line_causal;
    if (mirror) {
        if (line && first <= last && last < end) {
            Cx<A> cc = into;
            for (int seg = first; seg < last; seg++) {
                cc = cc * across(seg) + causal_of(seg);
            }
            entering[0][lane] = cc;
        }
        if (line && first == 0 && end > 0) {
            Cx<A> aa = back_into;
            for (int seg = end - 1; seg >= 1; seg--) {
                aa = aa * across(seg) + anti_of(seg);
            }
            entering[1][lane] = aa;
        }
        __syncthreads();
        if (line) {
            const int first_len = min(segment, p.length);
            head = entering[1][lane] * power<A>(p.powers, p.power_entries, k, first_len - 1) +
                   Cx<A>{p.extra[int64_t(2 * k) * p.lines + x], p.extra[int64_t(2 * k + 1) * p.lines + x]};
            tail = entering[0][lane] * power<A>(p.powers, p.power_entries, k, last_len - 1) +
                   Cx<A>{p.extra[int64_t(2 * poles + 2 * k) * p.lines + x],
                         p.extra[int64_t(2 * poles + 2 * k + 1) * p.lines + x]};
        }
    }
    if (!line) {
        return;
    }
    const Cx<A> g_k = coefficient<A>(p.coefficients, k, Value::gain);
    Cx<A> s, t;
    if (p.rule == boundary_constant) {
        s = t = scale(g_k, p.fill);
    } else if (p.rule == boundary_nearest) {
        s = scale(g_k, to_acc(p.in[x]));
        t = scale(g_k, to_acc(p.in[int64_t(p.length - 1) * p.in_stride + x]));
    } else {
        const Cx<A> wh = coefficient<A>(p.coefficients, k, Value::head_weight);
        const Cx<A> wt = coefficient<A>(p.coefficients, k, Value::tail_weight);
        s = g_k * (wh * head + wt * tail);
        t = g_k * (wh * tail + wt * head);
    }
    // The carried states: Y[start - 1] = Y0[start - 1] + p^start S, Z[end + 1] = Z0[end + 1] + p^(N-1-end) T.
    c = into;
    for (int seg = first; seg < end; seg++) {
        const Cx<A> own = causal_of(seg);
        const Cx<A> carried = c + power<A>(p.powers, p.power_entries, k, int64_t(seg) * segment) * s;
        state(seg, 2 * k) = carried.re;
        state(seg, 2 * k + 1) = carried.im;
        c = c * across(seg) + own;
    }
    a = back_into;
    for (int seg = end - 1; seg >= first; seg--) {
        const Cx<A> own = anti_of(seg);
        const int len = seg == last ? last_len : segment;
        const Cx<A> carried =
            a + power<A>(p.powers, p.power_entries, k, int64_t(p.length) - int64_t(seg) * segment - len) * t;
        state(seg, 2 * poles + 2 * k) = carried.re;
        state(seg, 2 * poles + 2 * k + 1) = carried.im;
        a = a * across(seg) + own;
    }
}

template <typename Out, typename A>
__device__ inline Out to_out(A v) {
    return Out(v);
}

// Per warp of the filter kernel: its segment's sums, 32 columns each (a row padded to 33
// so that neither a lane's column nor a row read across lanes conflicts).
template <typename A>
using FilterTile = A[segment][columns_per_warp + 1];
template <typename A>
constexpr size_t filter_shared_bytes = sizeof(FilterTile<A>) * block_warps<A>;

// Each segment filtered from its carried states: the anticausal pass up its column into
// the warp's tile, then the causal pass down it, each reading the samples as it goes (the
// second read finds them in L2), and the sums written transposed, in rows. Holding the
// samples in shared memory too halved the blocks per SM and was slower.
template <typename In, typename A, typename Out>
__global__ void __launch_bounds__(columns_per_warp *block_warps<A>) filter_segments(Pass<In, A, Out> p) {
    extern __shared__ __align__(16) unsigned char filter_shared[];
    FilterTile<A> &tile = reinterpret_cast<FilterTile<A> *>(filter_shared)[threadIdx.y];
    const int x0 = blockIdx.x * columns_per_warp;
    const int x = x0 + threadIdx.x;
    const int seg = blockIdx.y * block_warps<A> + threadIdx.y;
    if (seg >= p.segments) {
        return;  // the whole warp
    }
    const int start = seg * segment;
    const int len = min(segment, p.length - start);
    if (x < p.lines) {
        Cx<A> pole[poles], weight[poles], wp[poles], causal[poles], anti[poles];
        const A *s = p.states + int64_t(seg) * states_per_segment * p.lines + x;
#pragma unroll
        for (int k = 0; k < poles; k++) {
            pole[k] = coefficient<A>(p.coefficients, k, Value::pole);
            weight[k] = coefficient<A>(p.coefficients, k, Value::weight);
            // W[n] = p Z[n + 1]: the anticausal sums take the weights times p.
            wp[k] = weight[k] * pole[k];
            causal[k] = {s[int64_t(2 * k) * p.lines], s[int64_t(2 * k + 1) * p.lines]};
            anti[k] = {s[int64_t(2 * poles + 2 * k) * p.lines], s[int64_t(2 * poles + 2 * k + 1) * p.lines]};
        }
        const int64_t stride = p.in_stride;
        const In *in = p.in + int64_t(start + len - 1) * stride + x;
#pragma unroll 8
        for (int j = len - 1; j >= 0; j--, in -= stride) {
            const A v = to_acc(*in);
            A sum = A(0);
#pragma unroll
            for (int k = 0; k < poles; k++) {
                sum += wp[k].re * anti[k].re - wp[k].im * anti[k].im;
                anti[k] = step(pole[k], anti[k], v);
            }
            tile[j][threadIdx.x] = 2 * sum;
        }
        in = p.in + int64_t(start) * stride + x;
#pragma unroll 8
        for (int j = 0; j < len; j++, in += stride) {
            const A v = to_acc(*in);
            A sum = A(0);
#pragma unroll
            for (int k = 0; k < poles; k++) {
                causal[k] = step(pole[k], causal[k], v);
                sum += weight[k].re * causal[k].re - weight[k].im * causal[k].im;
            }
            tile[j][threadIdx.x] += 2 * sum;
        }
    }
    __syncwarp();
    Out *out = p.out + int64_t(x0) * p.out_stride + start;
    for (int c = 0; c < columns_per_warp && x0 + c < p.lines; c++, out += p.out_stride) {
#pragma unroll
        for (int i = 0; i < segment / columns_per_warp; i++) {
            const int j = threadIdx.x + i * columns_per_warp;
            if (j < len) {
                out[j] = to_out<Out>(tile[j][c]);
            }
        }
    }
}

// ---- Whole lines: each line read once and written once, held in shared memory while
// its segments' states are carried by warp shuffles and, across a cluster's blocks, by
// distributed shared memory.

// Per thread, a segment of whole_segment samples; per warp, a line's chunk of 32
// segments; per block, whole_lines lines; per line, a cluster of up to whole_max_ranks
// blocks side by side along it (the portable cluster size).
constexpr int whole_segment = 32;
constexpr int whole_chunk = whole_segment * 32;
constexpr int whole_lines = 8;
constexpr int whole_max_ranks = 8;
constexpr int whole_max_length = whole_chunk * whole_max_ranks;
// Shared memory pitches: a segment's odd pitch lets a warp's lanes read their segments
// without bank conflicts; a line's pitch of 4 (mod 32) lets a column load's 8 lines x 4
// samples fall into distinct banks.
constexpr int whole_segment_pitch = whole_segment + 1;
constexpr int whole_line_pitch = 32 * whole_segment_pitch + 4;
// Blocks per SM the registers are capped for (float64 holds twice the registers).
template <typename A>
constexpr int whole_blocks_per_sm = sizeof(A) == 8 ? 1 : 3;

// What a block's chunk of a line tells the cluster's other blocks.
template <typename A>
struct ChunkTotals {
    Cx<A> causal[poles];  // the causal state at the chunk's last sample, from zero at its first
    Cx<A> anti[poles];    // sum over the chunk of p^(n - first) x[n]
    // Mirror's: on the first block, sum over its chunk of p^(n - 1) x[n] for n >= 1 ...
    Cx<A> head1[poles];
    // ... on the last, the causal state at the line's next-to-last sample, from zero at the chunk's first.
    Cx<A> tail1[poles];
    A first, last;  // the line's first sample (first block), its last (last block)
};
// Per chunk of a line and pole, the powers of the pole that the gathering lanes weigh
// the chunk's totals by, and per pole the boundary rule's coefficients: block constants,
// read once per block from their float64 tables (read for every group of lines, the lanes
// waited on those loads).
template <typename A>
struct ChunkWeights {
    Cx<A> head, tail;     // into the line's head and tail sums
    Cx<A> before, after;  // into the states carried into this block's chunk
};
template <typename A>
struct RuleValues {
    Cx<A> gain, head_weight, tail_weight;
};
// Per line and pole, what a warp's pole lanes find for the whole warp.
template <typename A>
struct LineCarries {
    Cx<A> causal, anti, s, t;  // from the chunks before, after this one; the boundary states
};

template <typename In, typename A, typename Out>
struct LinePass {
    const In *in;
    int64_t in_line, in_sample;  // strides: sample n of line i at in[i * in_line + n * in_sample]
    Out *out;
    int64_t out_line, out_sample;
    int lines, length, ranks;
    const double *coefficients;  // the axis's coefficients_per_axis
    const double *powers;
    int power_entries;
    int rule;
    A fill;
};

template <typename A>
__device__ inline Cx<A> shfl_up(Cx<A> v, int d) {
    return {__shfl_up_sync(~0u, v.re, d), __shfl_up_sync(~0u, v.im, d)};
}
template <typename A>
__device__ inline Cx<A> shfl_down(Cx<A> v, int d) {
    return {__shfl_down_sync(~0u, v.re, d), __shfl_down_sync(~0u, v.im, d)};
}

// The cluster's pieces; a block alone where the architecture has no clusters (the host
// launches clusters only on sm_90 and later).
__device__ inline void cluster_sync() {
#if __CUDA_ARCH__ >= 900
    cooperative_groups::this_cluster().sync();
#else
    __syncthreads();
#endif
}
template <typename T>
__device__ inline const T *in_block(const T *p, int rank) {
#if __CUDA_ARCH__ >= 900
    return cooperative_groups::this_cluster().map_shared_rank(p, unsigned(rank));
#else
    (void)rank;
    return p;
#endif
}

// Moves a block's chunk of its lines between global memory and the shared one: along
// the lines where their samples are adjacent (the block's threads cover a quarter of a
// line's chunk at a time), else across them (32 samples of each of its lines at a time:
// a column's lines). A thread's loads are issued in batches before they are stored, so
// that DRAM sees many at once (one at a time, the first version took twice as long).
template <bool Load, bool Along, typename G, typename A>
__device__ inline void move_chunk(G *global, int64_t line_stride, int64_t sample_stride, int first_line, int lines,
                                  int first_sample, int length, A *shared) {
    constexpr int threads = whole_lines * 32, batch = 8;
    const int tid = threadIdx.y * 32 + threadIdx.x;
    const int line_room = lines - first_line, sample_room = length - first_sample;
    G *const origin = global + int64_t(first_line) * line_stride + int64_t(first_sample) * sample_stride;
    const auto move = [&](G *at, bool inside, A &slot, A &v) {
        if constexpr (Load) {
            v = inside ? to_acc(*at) : A(0);
        } else if (inside) {
            *at = to_out<G>(slot);
        }
    };
    A v[batch];
    if constexpr (Along) {
        // Sample tid + threads q of each line: the pointers stepped a batch of lines at a
        // time, the quarters' offsets constant (threads is a whole number of segments), and
        // which quarters lie inside the line tested once.
        constexpr int quarters = whole_chunk / threads, lines_per_batch = batch / quarters;
        static_assert(threads % whole_segment == 0, "a quarter's shared offset is constant");
        constexpr int quarter_slots = threads + threads / whole_segment;
        bool quarter_inside[quarters];
#pragma unroll
        for (int q = 0; q < quarters; q++) {
            quarter_inside[q] = tid + threads * q < sample_room;
        }
        G *at = origin + tid;
        A *slot = shared + tid + tid / whole_segment;
#pragma unroll 1
        for (int l0 = 0; l0 < whole_lines;
             l0 += lines_per_batch, at += lines_per_batch * line_stride, slot += lines_per_batch * whole_line_pitch) {
#pragma unroll
            for (int i = 0; i < batch; i++) {
                const int dl = i / quarters, q = i % quarters;
                move(at + dl * line_stride + threads * q, l0 + dl < line_room && quarter_inside[q],
                     slot[dl * whole_line_pitch + quarter_slots * q], v[i]);
            }
            if constexpr (Load) {
#pragma unroll
                for (int i = 0; i < batch; i++) {
                    slot[(i / quarters) * whole_line_pitch + quarter_slots * (i % quarters)] = v[i];
                }
            }
        }
    } else {
        // Sample n0 + per_step j of line l: a step of per_step samples is one segment, so
        // its slot is n0 + (segment pitch) j; the global pointer stepped a sample-step at a
        // time (a product per sample had cost more than the moves themselves).
        constexpr int per_step = threads / whole_lines;
        static_assert(per_step == whole_segment, "a step's slots lie one segment pitch apart");
        const int l = tid % whole_lines, n0 = tid / whole_lines;
        const int64_t step_stride = per_step * sample_stride;
        const bool line_inside = l < line_room;
        G *at = origin + int64_t(l) * line_stride + int64_t(n0) * sample_stride;
        A *slot = shared + l * whole_line_pitch + n0;
#pragma unroll 1
        for (int b = 0; b < whole_chunk / per_step; b += batch, slot += batch * whole_segment_pitch) {
#pragma unroll
            for (int i = 0; i < batch; i++, at += step_stride) {
                move(at, line_inside && n0 + per_step * (b + i) < sample_room, slot[i * whole_segment_pitch], v[i]);
            }
            if constexpr (Load) {
#pragma unroll
                for (int i = 0; i < batch; i++) {
                    slot[i * whole_segment_pitch] = v[i];
                }
            }
        }
    }
}
template <bool Load, typename G, typename A>
__device__ inline void move_chunk(G *global, int64_t line_stride, int64_t sample_stride, int first_line, int lines,
                                  int first_sample, int length, A *shared) {
    if (sample_stride == 1) {
        move_chunk<Load, true>(global, line_stride, sample_stride, first_line, lines, first_sample, length, shared);
    } else {
        move_chunk<Load, false>(global, line_stride, sample_stride, first_line, lines, first_sample, length, shared);
    }
}

// Each line filtered whole: the block's warps take a line each, its lanes a segment
// each; the segments' states from zero are carried along the chunk by warp scans and
// across the cluster's chunks through the blocks' published totals.
template <typename In, typename A, typename Out>
__global__ void __launch_bounds__(whole_lines * 32, whole_blocks_per_sm<A>) filter_lines(LinePass<In, A, Out> p) {
    extern __shared__ __align__(16) unsigned char line_shared[];
    // The block's chunks of its lines, then their results: a thread's segment of each at
    // mine and result.
    A *samples = reinterpret_cast<A *>(line_shared);
    A *results = samples + whole_lines * whole_line_pitch;
    ChunkTotals<A> *totals = reinterpret_cast<ChunkTotals<A> *>(results + whole_lines * whole_line_pitch);
    LineCarries<A>(*carries)[poles] = reinterpret_cast<LineCarries<A>(*)[poles]>(totals + whole_lines);
    // p^(32 d), d = 0 .. 32, per pole: the scans' and the segments' steps, gathered from
    // the float64 table once per block.
    Cx<A>(*steps)[33] = reinterpret_cast<Cx<A>(*)[33]>(carries + whole_lines);
    ChunkWeights<A>(*chunk_weights)[poles] = reinterpret_cast<ChunkWeights<A>(*)[poles]>(steps + poles);
    RuleValues<A> *const rule_values = reinterpret_cast<RuleValues<A> *>(chunk_weights + whole_max_ranks);
    const int rank = blockIdx.x, last_rank = p.ranks - 1;
    const int w = threadIdx.y, s = threadIdx.x;
    const int n_len = p.length;
    const int chunk_start = rank * whole_chunk;
    const int chunk_end = min(chunk_start + whole_chunk, n_len);
    const int start = chunk_start + s * whole_segment;
    const int len = max(0, min(whole_segment, n_len - start));
    const bool holds_end = len > 0 && start + len == n_len;
    const int segment_at = w * whole_line_pitch + s * whole_segment_pitch;
    A *const mine = samples + segment_at;
    A *const result = results + segment_at;
    // The coefficients once, in registers: read inside the loops, each sample reloaded
    // them (the compiler cannot tell the shared stores from them).
    Cx<A> pole[poles], weight[poles], wp[poles];
#pragma unroll
    for (int k = 0; k < poles; k++) {
        pole[k] = coefficient<A>(p.coefficients, k, Value::pole);
        weight[k] = coefficient<A>(p.coefficients, k, Value::weight);
        // W[n] = p Z[n + 1]: the anticausal sums take the weights times p.
        wp[k] = weight[k] * pole[k];
    }
    // By value: a reference to the kernel's parameters would copy them to local memory.
    const double *const power_table = p.powers;
    const int power_entries = p.power_entries;
    const auto pw = [=](int k, int64_t i) { return power<A>(power_table, power_entries, k, i); };
    for (int i = threadIdx.y * 32 + threadIdx.x; i < poles * 33; i += whole_lines * 32) {
        steps[i / 33][i % 33] = pw(i / 33, int64_t(whole_segment) * (i % 33));
    }
    const bool mirror = p.rule == boundary_mirror;
    for (int i = threadIdx.y * 32 + threadIdx.x; i < p.ranks * poles; i += whole_lines * 32) {
        const int r = i / poles, k = i % poles;
        const int r_start = r * whole_chunk, r_end = min(r_start + whole_chunk, n_len);
        const Cx<A> zero{A(0), A(0)};
        ChunkWeights<A> &cw = chunk_weights[r][k];
        // Mirror's first and last chunks bring their own sums (head1, tail1).
        cw.head = mirror ? (r == 0 ? zero : pw(k, r_start - 1)) : pw(k, r_start);
        cw.tail = mirror ? (r == last_rank ? zero : pw(k, n_len - 1 - r_end)) : pw(k, n_len - r_end);
        cw.before = r < rank ? pw(k, chunk_start - r_end) : zero;  // read only for r < rank
        cw.after = r > rank ? pw(k, r_start - chunk_end) : zero;   // ... and r > rank
        if (r == 0) {
            rule_values[k] = {coefficient<A>(p.coefficients, k, Value::gain),
                              coefficient<A>(p.coefficients, k, Value::head_weight),
                              coefficient<A>(p.coefficients, k, Value::tail_weight)};
        }
    }
    // A segment's distances from the line's ends as a block's power times a step (gathered
    // from the table per segment, they slowed the pass as sigma, and the table, grew):
    // p^start = p^chunk_start p^(32 s), and p^(N - end) = tail_power p^(32 (L - 1 - s)) for
    // the segments before the one holding the line's end, L (32 where the line goes on past
    // the chunk), 1 for segment L itself.
    const int end_lane = rank == last_rank ? (n_len - 1 - chunk_start) / whole_segment : 32;
    Cx<A> start_power[poles], tail_power[poles];
#pragma unroll
    for (int k = 0; k < poles; k++) {
        start_power[k] = pw(k, chunk_start);
        tail_power[k] =
            rank == last_rank ? pw(k, n_len - chunk_start - whole_segment * end_lane) : pw(k, n_len - chunk_end);
    }
    const int groups = (p.lines + whole_lines - 1) / whole_lines;
    // Every block of a cluster shares blockIdx.y, so all take the same groups.
    for (int group = blockIdx.y; group < groups; group += gridDim.y) {
        const int first_line = group * whole_lines;
        move_chunk<true>(p.in, p.in_line, p.in_sample, first_line, p.lines, chunk_start, n_len, samples);
        __syncthreads();
        // The segment's own states from zero: the causal one at its last sample and the
        // anticausal sum_j p^j x[j]; by the recursions where the segment is the line's
        // partial last one. Samples are read from shared memory as they are used: held in
        // registers, they doubled the registers a thread needs.
        Cx<A> own_causal[poles], own_anti[poles];
#pragma unroll
        for (int k = 0; k < poles; k++) {
            own_causal[k] = own_anti[k] = {A(0), A(0)};
        }
#pragma unroll 8
        for (int j = 0; j < len; j++) {
            const A v = mine[j];
#pragma unroll
            for (int k = 0; k < poles; k++) {
                own_causal[k] = step(pole[k], own_causal[k], v);
            }
        }
#pragma unroll 8
        for (int j = len - 1; j >= 0; j--) {
            const A v = mine[j];
#pragma unroll
            for (int k = 0; k < poles; k++) {
                own_anti[k] = step(pole[k], own_anti[k], v);
            }
        }
        Cx<A> causal[poles], anti[poles];
        ChunkTotals<A> &total = totals[w];
#pragma unroll
        for (int k = 0; k < poles; k++) {
            const Cx<A> c = own_causal[k], a = own_anti[k];
            Cx<A> ci = c, ai = a;
#pragma unroll
            for (int d = 1; d < 32; d *= 2) {
                // Crossing d whole segments multiplies by p^(32 d): every segment but the
                // line's last is whole, and no later lane's sum reaches back past it.
                const Cx<A> across = steps[k][d];
                const Cx<A> up = shfl_up(ci, d), down = shfl_down(ai, d);
                if (s >= d) {
                    ci = ci + up * across;
                }
                if (s + d < 32) {
                    ai = ai + down * across;
                }
            }
            Cx<A> before = shfl_up(ci, 1), after = shfl_down(ai, 1);
            if (s == 0) {
                before = {A(0), A(0)};
            }
            if (s == 31) {
                after = {A(0), A(0)};
            }
            if (holds_end || (s == 31 && rank != last_rank)) {
                total.causal[k] = before * pw(k, len) + c;
            }
            if (holds_end && mirror) {
                // The causal state at the line's next-to-last sample: one lane per line.
                Cx<A> c1{A(0), A(0)};
                for (int j = 0; j + 1 < len; j++) {
                    c1 = step(pole[k], c1, mine[j]);
                }
                total.tail1[k] = c1 + before * pw(k, len - 1);
            }
            if (s == 0) {
                total.anti[k] = ai;
                if (rank == 0 && mirror) {
                    // The sum over n >= 1 of p^(n - 1) x[n]: one lane per line.
                    Cx<A> a1{A(0), A(0)};
                    for (int j = len - 1; j >= 1; j--) {
                        a1 = step(pole[k], a1, mine[j]);
                    }
                    total.head1[k] = a1 + after * pw(k, whole_segment - 1);
                }
            }
            causal[k] = before;
            anti[k] = after;
        }
        if (rank == 0 && s == 0) {
            total.first = mine[0];
        }
        if (holds_end) {
            total.last = mine[len - 1];
        }
        cluster_sync();
        // A lane per pole gathers the other chunks' totals and the line's boundary states.
        if (s < poles) {
            const int k = s;
            const Cx<A> zero{A(0), A(0)};
            Cx<A> before = zero, after = zero, head = zero, tail = zero;
            for (int r = 0; r < p.ranks; r++) {
                const ChunkTotals<A> &t = *in_block(&totals[w], r);
                const ChunkWeights<A> &cw = chunk_weights[r][k];
                const Cx<A> tc = t.causal[k], ta = t.anti[k];
                head = head + (mirror && r == 0 ? t.head1[k] : ta * cw.head);
                tail = tail + (mirror && r == last_rank ? t.tail1[k] : tc * cw.tail);
                if (r < rank) {
                    before = before + tc * cw.before;
                }
                if (r > rank) {
                    after = after + ta * cw.after;
                }
            }
            const Cx<A> g = rule_values[k].gain;
            LineCarries<A> &lc = carries[w][k];
            lc.causal = before;
            lc.anti = after;
            if (p.rule == boundary_constant) {
                lc.s = lc.t = scale(g, p.fill);
            } else if (p.rule == boundary_nearest) {
                lc.s = scale(g, in_block(&totals[w], 0)->first);
                lc.t = scale(g, in_block(&totals[w], last_rank)->last);
            } else {
                const Cx<A> wh = rule_values[k].head_weight, wt = rule_values[k].tail_weight;
                lc.s = g * (wh * head + wt * tail);
                lc.t = g * (wh * tail + wt * head);
            }
        }
        __syncwarp();
        // The states carried into the segment: Y[start - 1] and Z[end] (recursive_layout.h).
#pragma unroll
        for (int k = 0; k < poles; k++) {
            const LineCarries<A> &lc = carries[w][k];
            const Cx<A> to_end = s < end_lane ? tail_power[k] * steps[k][max(0, end_lane - 1 - s)] : Cx<A>{A(1), A(0)};
            causal[k] = causal[k] + lc.causal * steps[k][s] + start_power[k] * steps[k][s] * lc.s;
            anti[k] = anti[k] + lc.anti * steps[k][31 - s] + to_end * lc.t;
        }
        // The filter: the anticausal sums into the results, then the causal ones added.
#pragma unroll 8
        for (int j = len - 1; j >= 0; j--) {
            const A v = mine[j];
            A sum = A(0);
#pragma unroll
            for (int k = 0; k < poles; k++) {
                sum = add_real(sum, wp[k], anti[k]);
                anti[k] = step(pole[k], anti[k], v);
            }
            result[j] = 2 * sum;
        }
#pragma unroll 8
        for (int j = 0; j < len; j++) {
            const A v = mine[j];
            A sum = A(0);
#pragma unroll
            for (int k = 0; k < poles; k++) {
                causal[k] = step(pole[k], causal[k], v);
                sum = add_real(sum, weight[k], causal[k]);
            }
            result[j] += 2 * sum;
        }
        // The other blocks' reads of this block's totals are done (the next group writes
        // them), and this block's sums are in shared memory.
        cluster_sync();
        move_chunk<false>(p.out, p.out_line, p.out_sample, first_line, p.lines, chunk_start, n_len, results);
        __syncthreads();
    }
}

template <typename A>
constexpr size_t whole_shared_bytes = 2 * sizeof(A) * whole_lines *whole_line_pitch +
                                      sizeof(ChunkTotals<A>) * whole_lines + sizeof(LineCarries<A>) * whole_lines *poles
                                      + sizeof(Cx<A>) * poles * 33 + sizeof(ChunkWeights<A>) * whole_max_ranks *poles +
                                      sizeof(RuleValues<A>) * poles;

// The launch of filter_lines over `groups` groups of lines of `ranks` chunks: a cluster of
// `ranks` blocks along x where a line has several (`attribute` holds its dimension and
// must outlive the configuration). The grid takes no more groups at a time than the
// `resident` clusters the device holds at once, each block looping over its share, so
// that a block gathers its constants (steps, chunk weights) once for several groups.
template <typename A>
cudaLaunchConfig_t line_launch(int ranks, int groups, int resident, cudaStream_t stream,
                               cudaLaunchAttribute *attribute) {
    attribute->id = cudaLaunchAttributeClusterDimension;
    attribute->val.clusterDim.x = unsigned(ranks);
    attribute->val.clusterDim.y = attribute->val.clusterDim.z = 1;
    cudaLaunchConfig_t config{};
    config.gridDim = dim3(unsigned(ranks), unsigned(std::min({groups, std::max(resident, 1), 65535})));
    config.blockDim = dim3(32, whole_lines);
    config.dynamicSmemBytes = whole_shared_bytes<A>;
    config.stream = stream;
    config.attrs = attribute;
    config.numAttrs = ranks > 1 ? 1 : 0;
    return config;
}

// How many clusters of a line of `length` the current device holds at once, 0 where it
// does not take the line whole: a line longer than whole_max_length, a block's shared
// memory that does not fit, or a line of several chunks without a cluster (sm_90 and
// later) finding a place.
template <typename In, typename A, typename Out>
int resident_clusters(int length) {
    if (length > whole_max_length) {
        return 0;
    }
    const int ranks = (length + whole_chunk - 1) / whole_chunk;
    constexpr int cached_devices = 64;
    // Per device and cluster size: 0 not yet asked, else 1 + the count.
    static std::array<std::array<std::atomic<int>, whole_max_ranks + 1>, cached_devices> known{};
    int device = 0;
    if (cudaGetDevice(&device) != cudaSuccess || device < 0 || device >= cached_devices) {
        return 0;
    }
    std::atomic<int> &answer = known[size_t(device)][size_t(ranks)];
    if (const int v = answer.load(std::memory_order_acquire); v != 0) {
        return v - 1;
    }
    // The kernel's attributes on this device are set here, where a length is first taken
    // (run_lines launches only what this took): its opt-in shared memory, and the largest
    // carveout (the default one left room for fewer blocks than the registers allow).
    constexpr auto kernel = filter_lines<In, A, Out>;
    DeviceFacts facts;
    int clusters = 0;
    if (device_facts(&facts) == cudaSuccess && size_t(facts.smem_limit) >= whole_shared_bytes<A> &&
        (ranks == 1 || facts.major >= 9) && allow_opt_in_shared_memory<kernel>() == cudaSuccess &&
        cudaFuncSetAttribute(kernel, cudaFuncAttributePreferredSharedMemoryCarveout, cudaSharedmemCarveoutMaxShared) ==
            cudaSuccess) {
        if (ranks > 1) {
            cudaLaunchAttribute attribute{};
            const cudaLaunchConfig_t config = line_launch<A>(ranks, 1, 1, nullptr, &attribute);
            if (cudaOccupancyMaxActiveClusters(&clusters, kernel, &config) != cudaSuccess) {
                (void)cudaGetLastError();  // a refusal is an answer here, not an error to report later
                clusters = 0;
            }
        } else {
            int per_sm = 0;
            if (cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel, whole_lines * 32,
                                                              whole_shared_bytes<A>) != cudaSuccess) {
                (void)cudaGetLastError();
                per_sm = 0;
            }
            clusters = per_sm * facts.sms;
        }
    }
    clusters = std::max(clusters, 0);
    answer.store(1 + clusters, std::memory_order_release);
    return clusters;
}
template <typename In, typename A, typename Out>
bool takes_whole(int length) {
    return resident_clusters<In, A, Out>(length) > 0;
}

// Which axes of a width x height image the current device filters by whole lines, with
// samples S, sums A and output O: what run() does and the workspace query reports.
template <typename S, typename A, typename O>
struct WholeAxes {
    bool x, y;
    WholeAxes(int width, int height) : x(takes_whole<A, A, O>(width)), y(takes_whole<S, A, A>(height)) {}
    bool via_scratch() const { return !x || !y; }
};

template <typename S, typename A, typename O>
size_t workspace_for(int width, int height) {
    return WholeAxes<S, A, O>(width, height).via_scratch() ? workspace_bytes(width, height, int(sizeof(A))) : 0;
}

// Launches a pass whose length takes_whole took on the current device.
template <typename In, typename A, typename Out>
cudaError_t run_lines(const LinePass<In, A, Out> &p, cudaStream_t stream) {
    cudaLaunchAttribute attribute{};
    const cudaLaunchConfig_t config = line_launch<A>(p.ranks, (p.lines + whole_lines - 1) / whole_lines,
                                                     resident_clusters<In, A, Out>(p.length), stream, &attribute);
    return cudaLaunchKernelEx(&config, filter_lines<In, A, Out>, p);
}

template <typename In, typename A, typename Out>
cudaError_t run_pass(const Pass<In, A, Out> &p, cudaStream_t stream) {
    constexpr int warps = block_warps<A>;
    const dim3 block(columns_per_warp, warps);
    const dim3 grid(unsigned((p.lines + columns_per_warp - 1) / columns_per_warp),
                    unsigned((p.segments + warps - 1) / warps));
    constexpr auto filter = filter_segments<In, A, Out>;
    if (const cudaError_t e = allow_opt_in_shared_memory<filter>(); e != cudaSuccess) {
        return e;
    }
    segment_states<<<grid, block, 0, stream>>>(p);
    carry_states<<<dim3(unsigned((p.lines + carry_lines - 1) / carry_lines), poles), dim3(carry_lines, carry_groups), 0,
                   stream>>>(p);
    filter<<<grid, block, filter_shared_bytes<A>, stream>>>(p);
    return cudaGetLastError();
}

template <typename S, typename A, typename O>
int run(halide_buffer_t *in, halide_buffer_t *coefficients, halide_buffer_t *powers, int32_t boundary, double fill,
        halide_buffer_t *out, const char *name) {
    if (out->is_bounds_query()) {
        return 0;  // the whole image and both tables, as given
    }
    void *const uc = nullptr;
    if (in->dim[0].stride != 1 || out->dim[0].stride != 1 || coefficients->dim[0].stride != 1 ||
        powers->dim[0].stride != 1 || powers->dim[1].stride != power_components) {
        return fail(uc, name, "buffers must be dense along x (and the powers dense)");
    }
    const int width = in->dim[0].extent, height = in->dim[1].extent;
    if (out->dim[0].extent != width || out->dim[1].extent != height ||
        coefficients->dim[0].extent != coefficients_per_axis) {
        return fail(uc, name, "the output must have the image's extent, the coefficients the layout's");
    }
    if (width <= 0 || height <= 0) {
        return 0;
    }
    cudaStream_t stream = nullptr;
    if (int e = inputs_to_device(uc, {in, coefficients, powers}, out, &stream); e != 0) {
        return e;
    }
    // Each axis whole where its lines fit (whole_max_length), else by segments. The
    // segments' passes read and write lines along the transposed scratch's rows, so an
    // axis by segments makes the other write or read that scratch too.
    const WholeAxes<S, A, O> whole(width, height);
    const bool whole_y = whole.y, whole_x = whole.x, via_scratch = whole.via_scratch();
    Scratch scratch(stream);
    A *transposed = nullptr, *states = nullptr, *extra = nullptr;
    cudaError_t e = cudaSuccess;
    if (via_scratch) {
        const int64_t state_count =
            states_per_segment * std::max(int64_t(width) * segments_of(height), int64_t(height) * segments_of(width));
        e = scratch.take(size_t(width) * size_t(height) * sizeof(A), &transposed);
        if (e == cudaSuccess) {
            e = scratch.take(size_t(state_count) * sizeof(A), &states);
        }
        if (e == cudaSuccess) {
            e = scratch.take(size_t(2 * poles * 2) * size_t(std::max(width, height)) * sizeof(A), &extra);
        }
    }
    const S *image = reinterpret_cast<const S *>(uintptr_t(in->device));
    O *result = reinterpret_cast<O *>(uintptr_t(out->device));
    const int64_t in_stride = in->dim[1].stride, out_stride = out->dim[1].stride;
    const double *coef = reinterpret_cast<const double *>(uintptr_t(coefficients->device));
    const double *pow = reinterpret_cast<const double *>(uintptr_t(powers->device));
    const int entries = powers->dim[1].extent;
    const auto rule_of = [&](int length) {
        return boundary == boundary_mirror && length == 1 ? boundary_nearest : int(boundary);
    };
    const auto ranks_of = [](int length) { return (length + whole_chunk - 1) / whole_chunk; };
    const A fill_acc = to_acc(to_storage<S>(fill));
    // Along y: the image's columns are the lines; into the output (both axes whole) or
    // the transposed scratch (x-major).
    if (e == cudaSuccess && whole_y) {
        LinePass<S, A, A> down{.in = image,
                               .in_line = 1,
                               .in_sample = in_stride,
                               .out = via_scratch ? transposed : result,
                               .out_line = via_scratch ? height : 1,
                               .out_sample = via_scratch ? 1 : out_stride,
                               .lines = width,
                               .length = height,
                               .ranks = ranks_of(height),
                               .coefficients = coef + coefficients->dim[1].stride,
                               .powers = pow + powers->dim[2].stride,
                               .power_entries = entries,
                               .rule = rule_of(height),
                               .fill = fill_acc};
        e = run_lines(down, stream);
    } else if (e == cudaSuccess) {
        const Pass<S, A, A> down{.in = image,
                                 .in_stride = in_stride,
                                 .lines = width,
                                 .length = height,
                                 .segments = int(segments_of(height)),
                                 .out = transposed,
                                 .out_stride = height,
                                 .states = states,
                                 .extra = extra,
                                 .coefficients = coef + coefficients->dim[1].stride,
                                 .powers = pow + powers->dim[2].stride,
                                 .power_entries = entries,
                                 .rule = rule_of(height),
                                 .fill = fill_acc};
        e = run_pass(down, stream);
    }
    // Along x: the image's rows, from the output in place (each block reads its part of
    // its lines before it writes them) or from the transposed scratch.
    if (e == cudaSuccess && whole_x) {
        LinePass<A, A, O> across{.in = via_scratch ? transposed : result,
                                 .in_line = via_scratch ? 1 : out_stride,
                                 .in_sample = via_scratch ? height : 1,
                                 .out = result,
                                 .out_line = out_stride,
                                 .out_sample = 1,
                                 .lines = height,
                                 .length = width,
                                 .ranks = ranks_of(width),
                                 .coefficients = coef,
                                 .powers = pow,
                                 .power_entries = entries,
                                 .rule = rule_of(width),
                                 .fill = fill_acc};
        e = run_lines(across, stream);
    } else if (e == cudaSuccess) {
        const Pass<A, A, O> across{.in = transposed,
                                   .in_stride = height,
                                   .lines = height,
                                   .length = width,
                                   .segments = int(segments_of(width)),
                                   .out = result,
                                   .out_stride = out_stride,
                                   .states = states,
                                   .extra = extra,
                                   .coefficients = coef,
                                   .powers = pow,
                                   .power_entries = entries,
                                   .rule = rule_of(width),
                                   .fill = fill_acc};
        e = run_pass(across, stream);
    }
    const cudaError_t released = scratch.release();
    return finish_extern_call(uc, name, "recursive Gaussian", e != cudaSuccess ? e : released, out);
}

}  // namespace
}  // namespace halconv::rk::rg

using halconv::rk::rg::run;

extern "C" {

size_t halconv_rg_workspace_bytes(const char *precision, int32_t width, int32_t height) {
    using halconv::rk::rg::workspace_for;
    const std::string_view p = precision;
    return p == "f64"      ? workspace_for<double, double, double>(width, height)
           : p == "f32"    ? workspace_for<float, float, float>(width, height)
           : p == "f16f32" ? workspace_for<__half, float, float>(width, height)
                           : SIZE_MAX;
}

int halconv_rg_segments_f64(halide_buffer_t *in, halide_buffer_t *coefficients, halide_buffer_t *powers,
                            int32_t boundary, double fill, halide_buffer_t *out) {
    return run<double, double, double>(in, coefficients, powers, boundary, fill, out, "halconv_rg_segments_f64");
}
int halconv_rg_segments_f32(halide_buffer_t *in, halide_buffer_t *coefficients, halide_buffer_t *powers,
                            int32_t boundary, double fill, halide_buffer_t *out) {
    return run<float, float, float>(in, coefficients, powers, boundary, fill, out, "halconv_rg_segments_f32");
}
int halconv_rg_segments_f16f32(halide_buffer_t *in, halide_buffer_t *coefficients, halide_buffer_t *powers,
                               int32_t boundary, double fill, halide_buffer_t *out) {
    return run<__half, float, float>(in, coefficients, powers, boundary, fill, out, "halconv_rg_segments_f16f32");
}

}  // extern "C"
