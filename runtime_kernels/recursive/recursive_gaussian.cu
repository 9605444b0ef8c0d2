// The recursive Gaussian on CUDA cores (halconv_rg.h): three kernels per axis over lines
// split into segments, the second axis read from the first's transposed result.
//
// Why hand-written: a recursion runs serially along its line, so Halide's GPU schedules
// can give it only a thread per line (Halide's apps/iir_blur: 4096 threads for a 4096^2
// image, far from filling a GPU); splitting the line into segments whose states are
// carried across needs the two-level scan below, which a Halide schedule cannot express.
//
// H100, 4096^2 f32, per axis (Nsight Compute, 2026-11-26): segment states 46 us, carry
// 15 us, filter 85 us (56 registers, 32 % of the warps active). The whole blur: 0.27 ms
// at every sigma (bench/results/h100/recursive/RUN.md).
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <algorithm>

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
    return {p.re * x.re - p.im * x.im + v, p.re * x.im + p.im * x.re};
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
    Scratch scratch(stream);
    A *transposed = nullptr, *states = nullptr, *extra = nullptr;
    const int64_t state_count =
        states_per_segment * std::max(int64_t(width) * segments_of(height), int64_t(height) * segments_of(width));
    cudaError_t e = scratch.take(size_t(width) * size_t(height) * sizeof(A), &transposed);
    if (e == cudaSuccess) {
        e = scratch.take(size_t(state_count) * sizeof(A), &states);
    }
    if (e == cudaSuccess) {
        e = scratch.take(size_t(2 * poles * 2) * size_t(std::max(width, height)) * sizeof(A), &extra);
    }
    const double *coef = reinterpret_cast<const double *>(uintptr_t(coefficients->device));
    const double *pow = reinterpret_cast<const double *>(uintptr_t(powers->device));
    const int entries = powers->dim[1].extent;
    const auto rule_of = [&](int length) {
        return boundary == boundary_mirror && length == 1 ? boundary_nearest : int(boundary);
    };
    const A fill_acc = to_acc(to_storage<S>(fill));
    if (e == cudaSuccess) {
        // Along y: the image's columns are the lines; the result transposed (x-major).
        const Pass<S, A, A> down{.in = reinterpret_cast<const S *>(uintptr_t(in->device)),
                                 .in_stride = in->dim[1].stride,
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
    if (e == cudaSuccess) {
        // Along x: the transposed result's columns are the image's rows; transposed back.
        const Pass<A, A, O> across{.in = transposed,
                                   .in_stride = height,
                                   .lines = height,
                                   .length = width,
                                   .segments = int(segments_of(width)),
                                   .out = reinterpret_cast<O *>(uintptr_t(out->device)),
                                   .out_stride = out->dim[1].stride,
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
