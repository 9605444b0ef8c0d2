// The CPU's sustained rate of 512-bit and 256-bit fused multiply-adds (ten independent
// chains, so latency does not bound them) and of unaligned 512-bit loads from L1, per cycle
// of a dependent integer add chain: what bounds a vector kernel on this machine. On the
// 2-core development VM (AMD EPYC, AVX-512) it read 0.33-0.35 zmm FMA, 0.52-0.54 ymm FMA
// and 0.29-0.30 zmm loads per cycle at 3.66 GHz (bench/results/cpu/edges-2026-11-27/RUN.md).
// Build: g++ -O2 -march=native bench/probes/cpu_vector_rate.cpp -o cpu_vector_rate
#include <immintrin.h>

#include <chrono>
#include <cstdio>

namespace {

template <class F>
double seconds(F &&f) {
    const auto a = std::chrono::steady_clock::now();
    f();
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - a).count();
}

// Fused multiply-adds of vector type V per cycle: ten independent chains, n rounds.
template <typename V, typename Set, typename Fma>
double fma_per_cycle(Set set, Fma fma, long n, double hz) {
    V v[10];
    for (int k = 0; k < 10; k++) v[k] = set(1.0f + float(k) * 1e-3f);
    const V m = set(0.999999f), c = set(1e-7f);
    const double s = seconds([&] {
        for (long i = 0; i < n; i++) {
            for (int k = 0; k < 10; k++) v[k] = fma(v[k], m, c);
            asm volatile("" ::"v"(v[0]), "v"(v[1]), "v"(v[2]), "v"(v[3]), "v"(v[4]), "v"(v[5]), "v"(v[6]), "v"(v[7]),
                         "v"(v[8]), "v"(v[9]));
        }
    });
    return 10.0 * double(n) / s / hz;
}

}  // namespace

int main() {
    constexpr long n = 100000000L;
    long x = 0;
    const double hz = 1e9 * 10 / seconds([&] {
                          for (long i = 0; i < 1000000000L; i++) {
                              asm volatile("add $1, %0" : "+r"(x));
                          }
                      }) /
                      10;
    std::printf("dependent add chain: %.2f GHz\n", hz / 1e9);
    std::printf("zmm FMA per cycle: %.2f\n",
                fma_per_cycle<__m512>([](float x) { return _mm512_set1_ps(x); },
                                      [](__m512 a, __m512 b, __m512 c) { return _mm512_fmadd_ps(a, b, c); }, n, hz));
    std::printf("ymm FMA per cycle: %.2f\n",
                fma_per_cycle<__m256>([](float x) { return _mm256_set1_ps(x); },
                                      [](__m256 a, __m256 b, __m256 c) { return _mm256_fmadd_ps(a, b, c); }, n, hz));
    {
        alignas(64) static float buf[4096];
        for (int i = 0; i < 4096; i++) buf[i] = float(i);
        __m512 acc[8];
        for (int k = 0; k < 8; k++) acc[k] = _mm512_setzero_ps();
        const long rounds = n / 256;
        const double s = seconds([&] {
            for (long r = 0; r < rounds; r++) {
                for (int i = 0; i < 4096 - 16 * 8; i += 16 * 8) {
                    for (int k = 0; k < 8; k++) acc[k] = _mm512_add_ps(acc[k], _mm512_loadu_ps(buf + i + k * 16 + 1));
                }
                asm volatile("" ::"v"(acc[0]));
            }
        });
        alignas(64) float lanes[16];
        float t = 0;
        for (int k = 0; k < 8; k++) {
            _mm512_store_ps(lanes, acc[k]);
            for (const float lane : lanes) t += lane;
        }
        std::printf("zmm unaligned L1 loads per cycle: %.2f (sum %g)\n", double(rounds) * 31 * 8 / s / hz, double(t));
    }
    return 0;
}
