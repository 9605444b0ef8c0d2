// Throughput of the float64 tensor-core instructions (mma.sync .f64) on this GPU:
// independent chains of products per warp, for the m8n8k4 shape (sm_80) and sm_90's
// m16n8k4, m16n8k8 and m16n8k16, at several block sizes.
// Build: nvcc -O3 -gencode arch=compute_90,code=sm_90 bench/probes/dmma_rate.cu -o dmma_rate
#include <cuda_runtime.h>

#include <cstdio>

namespace {

constexpr int chains = 8;  // independent accumulators per thread

template <int Shape>
__global__ void rate(double *out, int iters) {
    double a[8], b[4], c[chains][4];
    for (int i = 0; i < 8; i++) a[i] = threadIdx.x * 1e-3 + i;
    for (int i = 0; i < 4; i++) b[i] = 1e-3 * i;
    for (int j = 0; j < chains; j++)
        for (int i = 0; i < 4; i++) c[j][i] = 0;
    for (int it = 0; it < iters; it++) {
#pragma unroll
        for (int j = 0; j < chains; j++) {
            if constexpr (Shape == 0) {
                asm volatile("mma.sync.aligned.m8n8k4.row.col.f64.f64.f64.f64 {%0,%1}, {%2}, {%3}, {%0,%1};"
                             : "+d"(c[j][0]), "+d"(c[j][1])
                             : "d"(a[j]), "d"(b[0]));
            } else if constexpr (Shape == 1) {
                asm volatile(
                    "mma.sync.aligned.m16n8k4.row.col.f64.f64.f64.f64 {%0,%1,%2,%3}, {%4,%5}, {%6}, {%0,%1,%2,%3};"
                    : "+d"(c[j][0]), "+d"(c[j][1]), "+d"(c[j][2]), "+d"(c[j][3])
                    : "d"(a[j]), "d"(a[(j + 1) & 7]), "d"(b[0]));
            } else if constexpr (Shape == 2) {
                asm volatile(
                    "mma.sync.aligned.m16n8k8.row.col.f64.f64.f64.f64 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, "
                    "{%0,%1,%2,%3};"
                    : "+d"(c[j][0]), "+d"(c[j][1]), "+d"(c[j][2]), "+d"(c[j][3])
                    : "d"(a[j]), "d"(a[(j + 1) & 7]), "d"(a[(j + 2) & 7]), "d"(a[(j + 3) & 7]), "d"(b[0]), "d"(b[1]));
            } else {
                asm volatile(
                    "mma.sync.aligned.m16n8k16.row.col.f64.f64.f64.f64 {%0,%1,%2,%3}, {%4,%5,%6,%7,%8,%9,%10,%11}, "
                    "{%12,%13,%14,%15}, {%0,%1,%2,%3};"
                    : "+d"(c[j][0]), "+d"(c[j][1]), "+d"(c[j][2]), "+d"(c[j][3])
                    : "d"(a[0]), "d"(a[1]), "d"(a[2]), "d"(a[3]), "d"(a[4]), "d"(a[5]), "d"(a[6]), "d"(a[7]), "d"(b[0]),
                      "d"(b[1]), "d"(b[2]), "d"(b[3]));
            }
        }
    }
    double s = 0;
    for (int j = 0; j < chains; j++)
        for (int i = 0; i < 4; i++) s += c[j][i];
    out[blockIdx.x * blockDim.x + threadIdx.x] = s;
}

template <int Shape>
void run(const char *name, double fma_per_mma, int blocks, int threads) {
    double *out = nullptr;
    if (cudaMalloc(&out, sizeof(double) * blocks * threads) != cudaSuccess) {
        printf("%-10s: no memory\n", name);
        return;
    }
    const int iters = 4096;
    rate<Shape><<<blocks, threads>>>(out, 16);
    cudaEvent_t a, b;
    cudaEventCreate(&a);
    cudaEventCreate(&b);
    cudaEventRecord(a);
    rate<Shape><<<blocks, threads>>>(out, iters);
    cudaEventRecord(b);
    cudaEventSynchronize(b);
    const cudaError_t e = cudaGetLastError();
    float ms = 0;
    cudaEventElapsedTime(&ms, a, b);
    const double flops = 2.0 * fma_per_mma * chains * iters * (double(blocks) * threads / 32);
    if (e != cudaSuccess) {
        printf("%-10s blocks %4d threads %4d: %s\n", name, blocks, threads, cudaGetErrorString(e));
    } else {
        printf("%-10s blocks %4d threads %4d: %.3f ms, %.1f TFLOPS\n", name, blocks, threads, ms, flops / ms / 1e9);
    }
    cudaFree(out);
}

}  // namespace

int main() {
    int sms = 0;
    cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0);
    for (int threads : {128, 256, 512}) {
        run<0>("m8n8k4", 256, 4 * sms, threads);
        run<1>("m16n8k4", 512, 4 * sms, threads);
        run<2>("m16n8k8", 1024, 4 * sms, threads);
        run<3>("m16n8k16", 2048, 4 * sms, threads);
    }
    return 0;
}
