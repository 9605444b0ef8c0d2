// The recursive Gaussian on CUDA cores (halconv_rg.h): three kernels per axis over lines
// split into segments, the second axis read from the first's transposed result.
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
// Warps (segments) per block: a warp's tile of segment x 33 sums stays within the 48 KiB
// of static shared memory for float64 too.
template <typename A>
constexpr int warps_per_block = sizeof(A) == 8 ? 2 : 4;
constexpr int fold_threads = 128;
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
__device__ inline A to_acc(A v) {
    return v;
}
__device__ inline float to_acc(__half v) {
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

// Each segment's causal end state and anticausal start state, both from zero, and the
// two second-sample states mirror needs.
template <typename In, typename A, typename Out>
__global__ void __launch_bounds__(columns_per_warp *warps_per_block<A>) segment_states(Pass<In, A, Out> p) {
    const int x = blockIdx.x * columns_per_warp + threadIdx.x;
    const int seg = blockIdx.y * warps_per_block<A> + threadIdx.y;
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
    const bool mirror = p.rule == boundary_mirror;
    for (int j = 0; j < len; j++) {
        const A v = to_acc(p.in[int64_t(start + j) * p.in_stride + x]);
#pragma unroll
        for (int k = 0; k < poles; k++) {
            causal[k] = step(pole[k], causal[k], v);
            anti[k] = anti[k] + scale(power<A>(p.powers, p.power_entries, k, j), v);
            if (mirror && j >= 1) {
                anti1[k] = anti1[k] + scale(power<A>(p.powers, p.power_entries, k, j - 1), v);
            }
            if (j == len - 2) {
                causal1[k] = causal[k];
            }
        }
    }
    A *s = p.states + int64_t(seg) * states_per_segment * p.lines + x;
#pragma unroll
    for (int k = 0; k < poles; k++) {
        s[int64_t(2 * k) * p.lines] = causal[k].re;
        s[int64_t(2 * k + 1) * p.lines] = causal[k].im;
        s[int64_t(2 * poles + 2 * k) * p.lines] = anti[k].re;
        s[int64_t(2 * poles + 2 * k + 1) * p.lines] = anti[k].im;
    }
    if (mirror && seg == 0) {
#pragma unroll
        for (int k = 0; k < poles; k++) {
            p.extra[int64_t(2 * k) * p.lines + x] = anti1[k].re;
            p.extra[int64_t(2 * k + 1) * p.lines + x] = anti1[k].im;
        }
    }
    if (mirror && seg == p.segments - 1) {
#pragma unroll
        for (int k = 0; k < poles; k++) {
            p.extra[int64_t(2 * poles + 2 * k) * p.lines + x] = causal1[k].re;
            p.extra[int64_t(2 * poles + 2 * k + 1) * p.lines + x] = causal1[k].im;
        }
    }
}

// Per line and pole: the states carried into each segment, with the boundary's states
// S and T (recursive_layout.h) added, written over the segment's own states.
template <typename In, typename A, typename Out>
__global__ void __launch_bounds__(fold_threads) carry_states(Pass<In, A, Out> p) {
    const int x = blockIdx.x * fold_threads + threadIdx.x;
    if (x >= p.lines) {
        return;
    }
    const int last = p.segments - 1;
    const int last_len = p.length - last * segment;
    const bool mirror = p.rule == boundary_mirror;
    for (int k = 0; k < poles; k++) {
        const Cx<A> pole_full = power<A>(p.powers, p.power_entries, k, segment);
        const Cx<A> pole_last = power<A>(p.powers, p.power_entries, k, last_len);
        const auto state = [&](int seg, int c) -> A & {
            return p.states[(int64_t(seg) * states_per_segment + c) * p.lines + x];
        };
        const auto causal_of = [&](int seg) { return Cx<A>{state(seg, 2 * k), state(seg, 2 * k + 1)}; };
        const auto anti_of = [&](int seg) {
            return Cx<A>{state(seg, 2 * poles + 2 * k), state(seg, 2 * poles + 2 * k + 1)};
        };
        // From zero: the whole line's sums, and the states entering the last and first segments.
        Cx<A> c{A(0), A(0)}, before_last{A(0), A(0)};
        for (int seg = 0; seg <= last; seg++) {
            if (seg == last) {
                before_last = c;
            }
            c = c * (seg == last ? pole_last : pole_full) + causal_of(seg);
        }
        Cx<A> a{A(0), A(0)}, before_first{A(0), A(0)};
        for (int seg = last; seg >= 0; seg--) {
            if (seg == 0) {
                before_first = a;
            }
            a = a * (seg == last ? pole_last : pole_full) + anti_of(seg);
        }
        Cx<A> head = a, tail = c;
        if (mirror) {
            const int first_len = min(segment, p.length);
            head = before_first * power<A>(p.powers, p.power_entries, k, first_len - 1) +
                   Cx<A>{p.extra[int64_t(2 * k) * p.lines + x], p.extra[int64_t(2 * k + 1) * p.lines + x]};
            tail = before_last * power<A>(p.powers, p.power_entries, k, last_len - 1) +
                   Cx<A>{p.extra[int64_t(2 * poles + 2 * k) * p.lines + x],
                         p.extra[int64_t(2 * poles + 2 * k + 1) * p.lines + x]};
        }
        const Cx<A> g = coefficient<A>(p.coefficients, k, Value::gain);
        Cx<A> s, t;
        if (p.rule == boundary_constant) {
            s = t = scale(g, p.fill);
        } else if (p.rule == boundary_nearest) {
            s = scale(g, to_acc(p.in[x]));
            t = scale(g, to_acc(p.in[int64_t(p.length - 1) * p.in_stride + x]));
        } else {
            const Cx<A> wh = coefficient<A>(p.coefficients, k, Value::head_weight);
            const Cx<A> wt = coefficient<A>(p.coefficients, k, Value::tail_weight);
            s = g * (wh * head + wt * tail);
            t = g * (wh * tail + wt * head);
        }
        // The carried states: Y[start - 1] = Y0[start - 1] + p^start S, Z[end + 1] = Z0[end + 1] + p^(N-1-end) T.
        c = {A(0), A(0)};
        for (int seg = 0; seg <= last; seg++) {
            const Cx<A> own = causal_of(seg);
            const Cx<A> carried = c + power<A>(p.powers, p.power_entries, k, int64_t(seg) * segment) * s;
            state(seg, 2 * k) = carried.re;
            state(seg, 2 * k + 1) = carried.im;
            c = c * (seg == last ? pole_last : pole_full) + own;
        }
        a = {A(0), A(0)};
        for (int seg = last; seg >= 0; seg--) {
            const Cx<A> own = anti_of(seg);
            const int len = seg == last ? last_len : segment;
            const Cx<A> carried =
                a + power<A>(p.powers, p.power_entries, k, int64_t(p.length) - int64_t(seg) * segment - len) * t;
            state(seg, 2 * poles + 2 * k) = carried.re;
            state(seg, 2 * poles + 2 * k + 1) = carried.im;
            a = a * (seg == last ? pole_last : pole_full) + own;
        }
    }
}

template <typename Out, typename A>
__device__ inline Out to_out(A v) {
    return Out(v);
}

// Each segment filtered from its carried states; a warp's 32 columns x segment rows go
// through shared memory so that the transposed result is written in rows.
template <typename In, typename A, typename Out>
__global__ void __launch_bounds__(columns_per_warp *warps_per_block<A>) filter_segments(Pass<In, A, Out> p) {
    __shared__ A tiles[warps_per_block<A>][segment][columns_per_warp + 1];
    A(*tile)[columns_per_warp + 1] = tiles[threadIdx.y];
    const int x0 = blockIdx.x * columns_per_warp;
    const int x = x0 + threadIdx.x;
    const int seg = blockIdx.y * warps_per_block<A> + threadIdx.y;
    if (seg >= p.segments) {
        return;  // the whole warp
    }
    const int start = seg * segment;
    const int len = min(segment, p.length - start);
    if (x < p.lines) {
        Cx<A> pole[poles], weight[poles], state[poles];
        const A *s = p.states + int64_t(seg) * states_per_segment * p.lines + x;
#pragma unroll
        for (int k = 0; k < poles; k++) {
            pole[k] = coefficient<A>(p.coefficients, k, Value::pole);
            weight[k] = coefficient<A>(p.coefficients, k, Value::weight);
            state[k] = {s[int64_t(2 * k) * p.lines], s[int64_t(2 * k + 1) * p.lines]};
        }
        for (int j = 0; j < len; j++) {
            const A v = to_acc(p.in[int64_t(start + j) * p.in_stride + x]);
            A sum = A(0);
#pragma unroll
            for (int k = 0; k < poles; k++) {
                state[k] = step(pole[k], state[k], v);
                sum += weight[k].re * state[k].re - weight[k].im * state[k].im;
            }
            tile[j][threadIdx.x] = 2 * sum;
        }
        // W[n] = p Z[n + 1]: the weights times p, with Z carried from past the segment.
        Cx<A> wp[poles];
#pragma unroll
        for (int k = 0; k < poles; k++) {
            wp[k] = weight[k] * pole[k];
            state[k] = {s[int64_t(2 * poles + 2 * k) * p.lines], s[int64_t(2 * poles + 2 * k + 1) * p.lines]};
        }
        for (int j = len - 1; j >= 0; j--) {
            A sum = A(0);
#pragma unroll
            for (int k = 0; k < poles; k++) {
                sum += wp[k].re * state[k].re - wp[k].im * state[k].im;
            }
            tile[j][threadIdx.x] += 2 * sum;
            const A v = to_acc(p.in[int64_t(start + j) * p.in_stride + x]);
#pragma unroll
            for (int k = 0; k < poles; k++) {
                state[k] = step(pole[k], state[k], v);
            }
        }
    }
    __syncwarp();
    for (int c = 0; c < columns_per_warp && x0 + c < p.lines; c++) {
        for (int j = threadIdx.x; j < len; j += columns_per_warp) {
            p.out[int64_t(x0 + c) * p.out_stride + start + j] = to_out<Out>(tile[j][c]);
        }
    }
}

template <typename In, typename A, typename Out>
cudaError_t run_pass(const Pass<In, A, Out> &p, cudaStream_t stream) {
    constexpr int warps = warps_per_block<A>;
    const dim3 block(columns_per_warp, warps);
    const dim3 grid(unsigned((p.lines + columns_per_warp - 1) / columns_per_warp),
                    unsigned((p.segments + warps - 1) / warps));
    segment_states<<<grid, block, 0, stream>>>(p);
    carry_states<<<unsigned((p.lines + fold_threads - 1) / fold_threads), fold_threads, 0, stream>>>(p);
    filter_segments<<<grid, block, 0, stream>>>(p);
    return cudaGetLastError();
}

// fill rounded to the storage type S, as the pipelines' other stages round it.
template <typename S>
double fill_in_storage(double fill) {
    if constexpr (sizeof(S) == 2) {
        return double(__half2float(__float2half_rn(float(fill))));
    } else {
        return double(S(fill));
    }
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
    const A fill_acc = A(fill_in_storage<S>(fill));
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
