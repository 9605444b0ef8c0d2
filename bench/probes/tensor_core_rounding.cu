// Probe: how a tensor core's float32 accumulation rounds (issue 21's f32 split depends on
// it; model in tests/test_split_f32.cpp). Per case one mma.sync.m16n8k16 and, on sm_90a,
// one wgmma.m64n128k16 (f16 x f16 + f32), every operand zero but row 0 of A and column 0
// of B, so output (0, 0) is
//     c + sum over k < 16 of a[k]·b[k]  (exact products, exactly representable operands)
// and is compared with the sum rounded to nearest and toward zero. Then blocks of 16
// products of split_f32.h's parts: fixed_six's must come back exact, floating_three's
// show how often a block truncates.
//   nvcc -O2 -std=c++17 -gencode arch=compute_90a,code=sm_90a -I runtime_kernels -I tests
//   bench/probes/tensor_core_rounding.cu -o probe && ./probe
#include <cuda_fp16.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <random>

#include "common/split_f32.h"
#include "common/wgmma.cuh"
#include "tensor_core_model.h"

namespace {

struct Case {
    const char *what;
    float c;
    float a[16], b[16];  // A(0, k), B(k, 0)
};

__device__ unsigned pack(float lo, float hi) {
    const __half2 h = __floats2half2_rn(lo, hi);
    return *reinterpret_cast<const unsigned *>(&h);
}

// Lanes 0..3 hold row 0 of A and column 0 of B, lane 0 C(0, 0) in c[0] (PTX ISA,
// mma.m16n8k16 fragment layouts, g = lane / 4, t = lane % 4): a[0] = A(g, 2t..2t+1),
// a[2] = A(g, 2t+8..2t+9), b[0] = B(2t..2t+1, g), b[1] = B(2t+8..2t+9, g), c[0] = C(g, 2t).
__global__ void one_mma(Case k, float *d) {
    const unsigned lane = threadIdx.x;
    unsigned a[4] = {0, 0, 0, 0}, b[2] = {0, 0};
    float c[4] = {0.f, 0.f, 0.f, 0.f};
    if (lane < 4) {
        const unsigned t = lane;
        a[0] = pack(k.a[2 * t], k.a[2 * t + 1]);
        a[2] = pack(k.a[2 * t + 8], k.a[2 * t + 9]);
        b[0] = pack(k.b[2 * t], k.b[2 * t + 1]);
        b[1] = pack(k.b[2 * t + 8], k.b[2 * t + 9]);
    }
    if (lane == 0) {
        c[0] = k.c;
    }
    asm volatile(
        "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, "
        "{%0,%1,%2,%3};\n"
        : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
    if (lane == 0) {
        *d = c[0];
    }
}

// The same sum through wgmma, A (64 x 16) and B (16 x 128) k-major in shared memory
// without swizzle: element (row, k) of either at core matrix (row / 8, k / 8), stored
// 128 bytes per core matrix, k-adjacent ones 128 bytes apart (LBO), row-adjacent 256 (SBO).
__global__ void one_wgmma(Case k, float *d) {
    __shared__ __align__(128) __half a[64 * 16], b[128 * 16];
    for (int i = threadIdx.x; i < 64 * 16; i += blockDim.x) {
        a[i] = __float2half(0.0f);
    }
    for (int i = threadIdx.x; i < 128 * 16; i += blockDim.x) {
        b[i] = __float2half(0.0f);
    }
    __syncthreads();
    if (threadIdx.x < 16) {  // A(0, k) and B(k, 0): core matrix k / 8, element k % 8 of its row 0
        const int k_at = threadIdx.x;
        a[(k_at / 8) * 64 + k_at % 8] = __float2half_rn(k.a[k_at]);
        b[(k_at / 8) * 64 + k_at % 8] = __float2half_rn(k.b[k_at]);
    }
    __syncthreads();
    asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
    __syncthreads();
    float acc[64] = {};
    if (threadIdx.x == 0) {
        acc[0] = k.c;  // D(0, 0) of warp 0, lane 0
    }
    const auto address = [](const void *p) { return uint32_t(__cvta_generic_to_shared(p)); };
    halconv::rk::wgmma_fence();
    halconv::rk::wgmma_m64n128k16(acc, halconv::rk::wgmma_descriptor(address(a), 128, 256),
                                  halconv::rk::wgmma_descriptor(address(b), 128, 256), true);
    halconv::rk::wgmma_commit();
    halconv::rk::wgmma_wait<0>();
    if (threadIdx.x == 0) {
        *d = acc[0];
    }
}

using halconv::test::tensor_core::toward_zero;

Case two_products(const char *what, float c, float a0, float b0, float a1, float b1) {
    Case k{what, c, {}, {}};
    k.a[0] = a0, k.b[0] = b0, k.a[1] = a1, k.b[1] = b1;
    return k;
}

// Runs a case through both instructions: got[0] from mma, got[1] from wgmma.
bool run(const Case &k, float *d, float got[2]) {
    one_mma<<<1, 32>>>(k, d);
    one_wgmma<<<1, 128>>>(k, d + 1);
    if (cudaMemcpy(got, d, 2 * sizeof(float), cudaMemcpyDeviceToHost) != cudaSuccess) {
        std::printf("CUDA error: %s\n", cudaGetErrorString(cudaGetLastError()));
        return false;
    }
    return true;
}

double exact_sum(const Case &k) {
    double e = k.c;
    for (int i = 0; i < 16; i++) {
        e += double(k.a[i]) * k.b[i];
    }
    return e;
}

namespace split = halconv::rk::split_f32;

constexpr int first_bits = 22, last_bits = 27;  // the fit: tensor_core::fraction_bits is the one that agrees

// Random 16-product blocks of one weight's parts: per instruction, how many came back
// exact and how many truncated. part(p, which) picks hi, mid or lo.
bool blocks(const char *what, split::Scheme s, int a_part, int b_part, bool with_c, float *d) {
    std::mt19937 gen(2026);
    std::uniform_real_distribution<float> value(-32767.0f, 32767.0f);  // scaled values, |v| < 2^15
    const auto part = [](const split::Parts &p, int which) { return which == 0 ? p.hi : which == 1 ? p.mid : p.lo; };
    int exact[2] = {0, 0}, truncated[2] = {0, 0}, other[2] = {0, 0};
    double worst_ulps[2] = {0.0, 0.0};                  // |got - exact| in ulps of the float32 result
    int model_agrees[last_bits - first_bits + 1] = {};  // blocks where the model = both results, by fraction bits
    const int n = 2000;
    for (int i = 0; i < n; i++) {
        // A C of the size of a block's sum, as a chained accumulator holds.
        Case k{what, with_c ? float(double(value(gen)) * value(gen) * 4.0) : 0.0f, {}, {}};
        for (int j = 0; j < 16; j++) {
            // Every 10th block at the extreme: all 16 values at the largest magnitude.
            const float x = i % 10 == 0 ? 32767.9f : value(gen), y = i % 10 == 0 ? 32767.9f : value(gen);
            k.a[j] = part(split::split(x, s), a_part);
            k.b[j] = part(split::split(y, s), b_part);
        }
        float got[2];
        if (!run(k, d, got)) {
            return false;
        }
        const double e = exact_sum(k);
        for (int bits = first_bits; bits <= last_bits; bits++) {
            const float m = halconv::test::tensor_core::sum(k.c, k.a, k.b, 16, bits);
            model_agrees[bits - first_bits] += m == got[0] && m == got[1];
        }
        for (int r = 0; r < 2; r++) {
            (double(got[r]) == e ? exact : got[r] == toward_zero(e) ? truncated : other)[r]++;
            const float tz = toward_zero(e);
            const double ulp = double(std::nextafter(tz, INFINITY)) - tz;
            worst_ulps[r] = std::max(worst_ulps[r], std::fabs(double(got[r]) - e) / ulp);
        }
    }
    for (int r = 0; r < 2; r++) {
        std::printf("%-40s %-5s %d blocks: exact %d, truncated %d, other %d; worst error %.2f ulp\n", what,
                    r == 0 ? "mma" : "wgmma", n, exact[r], truncated[r], other[r], worst_ulps[r]);
    }
    std::printf("%-40s tests/tensor_core_model.h agrees with both, by fraction bits:", what);
    for (int bits = first_bits; bits <= last_bits; bits++) {
        std::printf(" %d: %d", bits, model_agrees[bits - first_bits]);
    }
    std::printf("\n");
    return true;
}

}  // namespace

int main() {
    const float u = 0x1p-12f;  // 1.5u · u = 0.75 ulp(1); 1.25u · u = 0.625 ulp(1); 0.5 ulp ties
    const Case cases[] = {
        two_products("C=1, product 0.75 ulp", 1.0f, 1.5f * u, u, 0.0f, 0.0f),
        two_products("C=-1, product -0.75 ulp", -1.0f, -1.5f * u, u, 0.0f, 0.0f),
        two_products("C=1, product 0.625 ulp", 1.0f, 1.25f * u, u, 0.0f, 0.0f),
        two_products("C=1, product 0.5 ulp (tie, even is 1)", 1.0f, 1.0f * u, u, 0.0f, 0.0f),
        two_products("C=1+ulp, product 0.5 ulp (tie, even is 1+2ulp)", 1.0f + 0x1p-23f, 1.0f * u, u, 0.0f, 0.0f),
        two_products("C=0, 1 + 0.75 ulp inside the block", 0.0f, 1.0f, 1.0f, 1.5f * u, u),
        two_products("C=0, -1 - 0.75 ulp inside the block", 0.0f, -1.0f, 1.0f, -1.5f * u, u),
        two_products("C=0, 1 + 0.625 ulp inside the block", 0.0f, 1.0f, 1.0f, 1.25f * u, u),
        two_products("C=1, 1 + 0.75 ulp(2) inside the block", 1.0f, 1.0f, 1.0f, 3.0f * u, u),
    };
    float *d = nullptr;
    cudaMalloc(&d, 2 * sizeof(float));
    cudaDeviceProp prop{};
    cudaGetDeviceProperties(&prop, 0);
    std::printf("device: %s (sm_%d%d)\n", prop.name, prop.major, prop.minor);
    for (const Case &k : cases) {
        float got[2] = {};
        if (!run(k, d, got)) {
            return 1;
        }
        const double exact = exact_sum(k);
        const float rn = float(exact), rz = toward_zero(exact);
        const float model = halconv::test::tensor_core::sum(k.c, k.a, k.b, 16);
        for (int i = 0; i < 2; i++) {
            std::printf("%-48s %-5s exact %.10a  got %.10a  nearest %s  toward-zero %s  model %s\n", k.what,
                        i == 0 ? "mma" : "wgmma", exact, double(got[i]), got[i] == rn ? "yes" : "no ",
                        got[i] == rz ? "yes" : "no ", got[i] == model ? "yes" : "no ");
        }
    }
    const bool ok = blocks("fixed_six hi x hi", split::Scheme::fixed_six, 0, 0, false, d) &&
                    blocks("fixed_six mid x hi", split::Scheme::fixed_six, 1, 0, false, d) &&
                    blocks("fixed_six lo x mid", split::Scheme::fixed_six, 2, 1, false, d) &&
                    blocks("floating_three hi x hi", split::Scheme::floating_three, 0, 0, false, d) &&
                    blocks("floating_three hi x mid", split::Scheme::floating_three, 0, 1, false, d) &&
                    blocks("floating_three hi x hi + C", split::Scheme::floating_three, 0, 0, true, d);
    cudaFree(d);
    return ok ? 0 : 1;
}
