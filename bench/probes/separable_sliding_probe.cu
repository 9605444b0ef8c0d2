// Stand-alone probe of the sliding separable kernel (runtime_kernels/separable/) and of the
// tensor-core experiments beside it (separable_tensor_core.cuh: 3xTF32;
// separable_tensor_core_f16.cuh: float16 parts; separable_dmma.cuh: float64 products of
// 2 or 4 tiles a warp): launched directly, checked against float64
// sums over every boundary, mode and flip (and images holding a NaN and infinities), and
// timed side by side.
// Build: nvcc -Iruntime_kernels -isystem <halide>/include -O3 -std=c++20 -arch=sm_90 <this> -o probe
#include <cstdio>
#include <random>
#include <vector>
#include <algorithm>
#include <cmath>
#include <string>
#include "separable/separable_sliding.cu"
#include "probe_support.cuh"
#include "separable_tensor_core.cuh"
#include "separable_tensor_core_f16.cuh"
#include "separable_dmma.cuh"

using namespace halconv::rk;
using namespace halconv::rk::sep;

static int64_t src_index(int64_t i, int64_t n, int b) { return band_source_index(i, n, b); }

struct Case { int w, h, kw, kh, ow, oh, ox, oy, boundary; bool flip; };

// What a case runs: the library's CUDA-core pass, or one of the tensor-core experiments
// where it takes the kernel (tf32: kw + kh >= 40; f16, dmma: every kernel that fits), else the CUDA-core pass.
enum class Variant { cuda_cores, tf32, f16, dmma, dmma4 };
const char *variant_name(Variant v) {
    return v == Variant::cuda_cores ? "CUDA cores"
           : v == Variant::tf32     ? "3xTF32"
           : v == Variant::f16      ? "f16 parts"
           : v == Variant::dmma     ? "float64 tensor cores, 2 tiles"
                                    : "float64 tensor cores, 4 tiles";
}

struct Chosen { Variant variant; TcLayout layout; };

// The CUDA-core pass's strip width when set (probe K SIZE cuda-cores TILE), else the library's
// choice (a forced width may need more shared memory than the library's budget).
int forced_tile = 0;

Chosen case_layout(const SlidingArgs<float, float> &p, Variant v) {
    int d = 0, per_block = 0, per_sm = 0;
    CK(cudaGetDevice(&d));
    CK(cudaDeviceGetAttribute(&per_block, cudaDevAttrMaxSharedMemoryPerBlockOptin, d));
    CK(cudaDeviceGetAttribute(&per_sm, cudaDevAttrMaxSharedMemoryPerMultiprocessor, d));
    if (v == Variant::tf32) return {v, tensor_core_layout(p.kw, p.kh, 4, size_t(per_block), size_t(per_sm))};
    if (v == Variant::f16) return {v, f16_layout(p.kw, p.kh, size_t(per_block), size_t(per_sm), 2)};
    if (v == Variant::dmma || v == Variant::dmma4) {
        TcLayout l;
        static_cast<SlidingLayout &>(l) = dmma_layout(p.kw, p.kh, v == Variant::dmma ? 2 : 4);
        if (l.total_bytes > size_t(per_block)) l.tile_columns = 0;
        return {v, l};
    }
    return {v, TcLayout{}};
}

cudaError_t launch_case(SlidingArgs<float, float> &p, const Chosen &c) {
    const TcLayout &tc = c.layout;
    if (tc.tile_columns == 0 && forced_tile == 128) return launch_planned<separable_sliding_kernel<float, float, float, 128>, 128>(p, threads, nullptr);
    if (tc.tile_columns == 0 && forced_tile == 64) return launch_planned<separable_sliding_kernel<float, float, float, 64>, 64>(p, threads, nullptr);
    if (tc.tile_columns == 0) {  // the library's choice of width
        dim3 grid;
        const cudaError_t e = plan<float, float, float>(p, &grid);
        return e != cudaSuccess ? e : launch_planned_pass<float, float, float>(p, grid, nullptr);
    }
    SlidingArgs<float, float> q = p;
    q.layout = tc;
    if (c.variant == Variant::dmma) return launch_dmma<float, 2>(q, nullptr);
    if (c.variant == Variant::dmma4) return launch_dmma<float, 4>(q, nullptr);
    if (c.variant == Variant::f16)
        return tc.tile_columns == 128 ? launch_f16_tile<float, 128>(q, tc.stages, nullptr)
                                      : launch_f16_tile<float, 64>(q, tc.stages, nullptr);
    return tc.tile_columns == 128 ? launch_tensor_core_tile<float, 128>(q, tc.stages, nullptr)
                                  : launch_tensor_core_tile<float, 64>(q, tc.stages, nullptr);
}

// Returns max relative error over checked outputs (all when few, else a sample).

// nonfinite: a NaN, +inf and -inf planted in the image; every output must then be NaN,
// infinite or finite as the float64 sum is (and within the bound where finite).
double run_case(const Case &c, bool time_it, float *ms_out, Variant variant, bool nonfinite = false) {
    std::mt19937 rng(c.w * 131 + c.kw);
    std::uniform_real_distribution<float> d(-1.f, 1.f);
    std::vector<float> img(size_t(c.w) * c.h), rt(c.kw), ct(c.kh);
    for (auto &v : img) v = d(rng);
    for (auto &v : rt) v = d(rng);
    for (auto &v : ct) v = d(rng);
    if (nonfinite) {
        img[size_t(c.h / 3) * c.w + c.w / 4] = NAN;
        img[size_t(c.h / 2) * c.w + c.w / 2] = INFINITY;
        img[size_t(2 * c.h / 3) * c.w + (3 * c.w) / 4] = -INFINITY;
    }
    float *dimg, *dout, *drt, *dct;
    CK(cudaMalloc(&dimg, img.size() * 4)); CK(cudaMalloc(&dout, size_t(c.ow) * c.oh * 4));
    CK(cudaMalloc(&drt, c.kw * 4)); CK(cudaMalloc(&dct, c.kh * 4));
    CK(cudaMemcpy(dimg, img.data(), img.size() * 4, cudaMemcpyHostToDevice));
    CK(cudaMemcpy(drt, rt.data(), c.kw * 4, cudaMemcpyHostToDevice));
    CK(cudaMemcpy(dct, ct.data(), c.kh * 4, cudaMemcpyHostToDevice));
    CK(cudaMemset(dout, 0xff, size_t(c.ow) * c.oh * 4));
    SlidingArgs<float, float> p{};
    p.layout = forced_tile ? sliding_layout_for(forced_tile, c.kw, c.kh, 4) : sliding_layout(c.kw, c.kh, 4);
    if (p.layout.tile_columns == 0) {
        printf("  K %dx%d does not fit the sliding pass\n", c.kw, c.kh);
        exit(1);
    }
    p.image = dimg; p.image_stride = c.w; p.image_width = c.w; p.image_height = c.h;
    p.out = dout; p.out_stride = c.ow; p.out_width = c.ow; p.out_height = c.oh;
    p.row_taps = drt; p.col_taps = dct; p.kw = c.kw; p.kh = c.kh; p.flip = c.flip;
    p.boundary = c.boundary; p.fill = 0.25f; p.base_x = -c.ox; p.base_y = -c.oy;
    const Chosen tc = case_layout(p, variant);
    CK(launch_case(p, tc));
    CK(cudaDeviceSynchronize());
    if (time_it) {
        cudaEvent_t a, b; cudaEventCreate(&a); cudaEventCreate(&b);
        std::vector<float> t;
        for (int r = 0; r < 25; r++) {
            cudaEventRecord(a);
            CK(launch_case(p, tc));
            cudaEventRecord(b); cudaEventSynchronize(b);
            float ms; cudaEventElapsedTime(&ms, a, b); if (r >= 5) t.push_back(ms);
        }
        std::sort(t.begin(), t.end());
        *ms_out = t[t.size() / 2];
    }
    std::vector<float> out(size_t(c.ow) * c.oh);
    CK(cudaMemcpy(out.data(), dout, out.size() * 4, cudaMemcpyDeviceToHost));
    auto sample = [&](int64_t x, int64_t y) -> double {
        const int64_t a = src_index(x, c.w, c.boundary), b = src_index(y, c.h, c.boundary);
        return a < 0 || b < 0 ? double(0.25f) : double(img[size_t(b) * c.w + a]);
    };
    const int64_t total = int64_t(c.ow) * c.oh;
    const int checks = int(std::min<int64_t>(total, 20000));
    double worst = 0;
    std::uniform_int_distribution<int64_t> pick(0, total - 1);
    for (int n = 0; n < checks; n++) {
        const int64_t idx = total <= 20000 ? n : pick(rng);
        const int64_t x = idx % c.ow, y = idx / c.ow;
        double s = 0, m = 0;
        for (int j = 0; j < c.kh; j++) {
            double r = 0, rm = 0;
            for (int i = 0; i < c.kw; i++) {
                const double v = sample(x + i - c.ox, y + j - c.oy) * rt[c.flip ? c.kw - 1 - i : i];
                r += v; rm += std::fabs(v);
            }
            s += ct[c.flip ? c.kh - 1 - j : j] * r; m += std::fabs(ct[c.flip ? c.kh - 1 - j : j]) * rm;
        }
        const double got = out[idx];
        if (!std::isfinite(s) || !std::isfinite(got)) {
            const bool same = std::isnan(s) ? std::isnan(got) : got == s;
            if (!same) { worst = 1e9; break; }
            continue;
        }
        const double err = std::fabs(got - s) / std::max(m, 1e-30);
        if (!(err <= 1e300)) { worst = 1e9; break; }
        worst = std::max(worst, err);
    }
    cudaFree(dimg); cudaFree(dout); cudaFree(drt); cudaFree(dct);
    return worst;
}

// Every case of the sweep, each also with non-finite samples, through `variant`; returns
// the failures. Shard s of n takes every n-th case from the s-th (processes side by side:
// the float64 sums on the CPU take most of the time).
int check(Variant variant, int shard = 0, int shards = 1) {
    int bad = 0, n = 0, cases = 0;
    double worst_ratio = 0;
    const int ks[][2] = {{1,1},{3,3},{8,8},{9,17},{31,7},{63,63},{127,127},{127,3},{3,127},{13,250},{100,90},{131,131},{151,151},{193,193},{160,180},
                         {20,20},{21,19},{33,9},{41,1},{1,41},{64,64},{65,65},{95,95}};
    const int sizes[][2] = {{333,517},{64,32},{45,40},{1,300},{300,1},{1000,70}};
    for (auto &k : ks) for (auto &s : sizes) for (int mode = 0; mode < 3; mode++) {
        Case c{s[0], s[1], k[0], k[1], 0, 0, 0, 0, n % 5, n % 2 == 1}; n++;
        if (mode == 0) { c.ow = s[0]; c.oh = s[1]; c.ox = (k[0] - 1) / 2; c.oy = (k[1] - 1) / 2; }
        else if (mode == 1) { c.ow = s[0] - k[0] + 1; c.oh = s[1] - k[1] + 1; if (c.ow < 1 || c.oh < 1) continue; }
        else { c.ow = s[0] + k[0] - 1; c.oh = s[1] + k[1] - 1; c.ox = k[0] - 1; c.oy = k[1] - 1; }
        if (!sliding_fits(c.kw, c.kh, 4)) continue;
        if ((n - 1) % shards != shard) continue;
        for (bool nonfinite : {false, true}) {
            if (nonfinite && (c.w < 4 || c.h < 4)) continue;
            float ms;
            const double e = run_case(c, false, &ms, variant, nonfinite);
            const bool ok = e <= (c.kw + c.kh + 4) * 6e-8;
            cases++;
            if (!ok) { bad++; printf("FAIL %s %dx%d K %dx%d mode %d boundary %d flip %d nonfinite %d: %.3g\n", variant_name(variant), c.w, c.h, c.kw, c.kh, mode, c.boundary, int(c.flip), int(nonfinite), e); }
            worst_ratio = std::max(worst_ratio, e / ((c.kw + c.kh + 4) * 6e-8));
        }
    }
    printf("%s: %d cases, %d failed; largest error / bound %.3f\n", variant_name(variant), cases, bad, worst_ratio);
    return bad;
}

Variant variant_named(const std::string &v) {
    return v == "cuda-cores" ? Variant::cuda_cores : v == "tf32" ? Variant::tf32 : v == "dmma" ? Variant::dmma : v == "dmma4" ? Variant::dmma4 : Variant::f16;
}

int main(int argc, char **argv) {
    if ((argc == 3 || argc == 5) && std::string(argv[1]) == "check") {  // probe check VARIANT [SHARD SHARDS]
        return check(variant_named(argv[2]), argc == 5 ? atoi(argv[3]) : 0, argc == 5 ? atoi(argv[4]) : 1) != 0;
    }
    if (argc >= 3) {  // one timed case: probe K SIZE [cuda-cores [TILE]|tf32|f16|dmma|dmma4] (for a profiler)
        if (argc == 5) forced_tile = atoi(argv[4]);
        const int k = atoi(argv[1]), size = atoi(argv[2]);
        Case c{size, size, k, k, size, size, (k - 1) / 2, (k - 1) / 2, 2, false};
        float ms = 0;
        const std::string v = argc > 3 ? argv[3] : "f16";
        const double e = run_case(c, true, &ms, variant_named(v));
        printf("%d^2 K=%3d  %.4f ms  err %.2g\n", size, k, ms, e);
        return 0;
    }
    printf("correctness (max |err| / sum|terms|; bound ~ (kw + kh) 2^-24):\n");
    const int bad = check(Variant::tf32) + check(Variant::f16);
    printf("time (same mode, reflect, f32, median of 20, ms):\n");
    for (int size : {4096, 8192}) for (int k : {7, 15, 21, 31, 63, 95, 127, 129, 131, 151, 193}) {
        Case c{size, size, k, k, size, size, (k - 1) / 2, (k - 1) / 2, 2, false};
        float ms = 0, tf_ms = 0, core_ms = 0;
        const double e = run_case(c, true, &ms, Variant::f16);
        const double tf_e = run_case(c, true, &tf_ms, Variant::tf32);
        const double core_e = run_case(c, true, &core_ms, Variant::cuda_cores);
        const double floor_ms = 2.0 * size * size * 4 / 3.0e12 * 1e3;
        printf("%d^2 K=%3d  f16 parts %.4f ms, 3xTF32 %.4f, CUDA cores %.4f  (memory floor %.4f; FMA floor %.4f)  err %.2g / %.2g / %.2g\n",
               size, k, ms, tf_ms, core_ms, floor_ms, 2.0 * k * size * size / 33.5e12 * 1e3, e, tf_e, core_e);
    }
    return bad != 0;
}
