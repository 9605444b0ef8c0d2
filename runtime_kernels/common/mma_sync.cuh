// Raw tensor-core instructions (PTX mma.sync m16n8k16 and ldmatrix) for the kernels
// whose epilogue works on the accumulators in registers: WMMA leaves the fragment
// layout unspecified, PTX documents it (PTX ISA, "Matrix Fragments for mma.m16n8k16").
//
// Per lane: g = lane / 4, t = lane % 4.
//   A (16x16, row-major): a[0] = A(g, 2t..2t+1), a[1] = A(g+8, 2t..), a[2] = A(g, 2t+8..),
//                         a[3] = A(g+8, 2t+8..)
//   B (16x8, col-major):  b[0] = B(2t..2t+1, g), b[1] = B(2t+8..2t+9, g)
//   C (16x8, f32):        c[0..1] = C(g, 2t..2t+1), c[2..3] = C(g+8, 2t..2t+1)
#pragma once

#include <cuda_fp16.h>

#include <cstdint>

namespace halconv::rk {

// Row pitch (halfs) for shared-memory matrices read with ldmatrix: rows 16-byte aligned
// and an odd number of 16-byte units apart, so the eight rows of each 8x8 matrix land in
// eight different bank groups (no conflicts).
inline int ldmatrix_pitch(int n) {
    const int m = (n + 7) / 8;
    return (m % 2 == 1 ? m : m + 1) * 8;
}

__device__ inline uint32_t shared_address(const void *p) {
    return static_cast<uint32_t>(__cvta_generic_to_shared(p));
}

// Four 8x8 f16 matrices, transposed on the way: lane L gives the shared address of row
// L % 8 of matrix L / 8, and r[m] receives matrix m with lane (g, t) holding its
// elements (2t, g) and (2t + 1, g).
__device__ inline void ldmatrix_x4_trans(uint32_t (&r)[4], uint32_t address) {
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0, %1, %2, %3}, [%4];\n"
                 : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
                 : "r"(address));
}

// Four 8x8 f16 matrices as stored: lane L gives the shared address of row L % 8 of
// matrix L / 8, and r[m] receives matrix m with lane (g, t) holding its elements (g, 2t)
// and (g, 2t + 1): the A fragment of a row-major 16x16 tile, or B fragments of a 16x8
// tile stored with k contiguous.
__device__ inline void ldmatrix_x4(uint32_t (&r)[4], uint32_t address) {
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];\n"
                 : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
                 : "r"(address));
}

// d += A B with A 16x16 and B 16x8 in f16, d in f32.
__device__ inline void mma_m16n8k16(float (&d)[4], const uint32_t (&a)[4], uint32_t b0, uint32_t b1) {
    asm volatile(
        "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, "
        "{%0, %1, %2, %3};\n"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
}

}  // namespace halconv::rk
