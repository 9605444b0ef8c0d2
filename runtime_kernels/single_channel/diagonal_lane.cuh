// The diagonal sums of skewed 16 x 16 product tiles taken in registers, shared by the
// fused im2tensor kernels (mma.sync, im2tensor_fused_sm80.cu; wgmma, im2tensor_fused_sm90.cu):
// both hold a tile as the m16n8 accumulator fragments of common/mma_sync.cuh.
#pragma once

#include <cstdint>

namespace halconv::rk::tc {

// A product tile T (16 kernel columns i x 16 image columns c) is held as two m16n8 C
// fragments, h = 0 (columns 0..7) and h = 1 (8..15). Output 16J + d sums T_J along
// the cyclic diagonal (c - i) mod 16 = d: elements with c >= i from T_J (upper), the
// others from T_{J+1} (lower). Lane (g, t) holds eight elements on four cyclic
// diagonals e0 + {0, 1, 8, 9}, e0 = (2t - g) mod 16, two per diagonal, so it adds its
// pairs itself; the eight partials of each diagonal are then gathered through a small
// per-warp buffer: each lane scatters its four partials (rank r of 8 per diagonal) to
// [r / 4][row][diagonal][r % 4], and the lane of (row, diagonal) reads its partials
// with two 16-byte loads that cover 512 contiguous bytes per warp.
constexpr int diagonal_shift[4] = {0, 1, 8, 9};

constexpr int diagonal_of(int lane, int slot) {
    return (2 * (lane & 3) - (lane >> 2) + diagonal_shift[slot]) & 15;
}

constexpr int reduce_half_floats = 128;                // ranks 0..3 or 4..7 of two rows
constexpr int reduce_floats = 2 * reduce_half_floats;  // per warp
constexpr int reduce_row_floats = 64;                  // one row's 16 diagonals x 4 ranks

struct DiagonalScatter {
    uint8_t offset[32][4];  // of row 0's partial, in floats
};

// Ranks are chosen per store instruction (one slot, all lanes) so that no two lanes hit
// the same bank; every diagonal must receive exactly eight partials.
constexpr DiagonalScatter make_diagonal_scatter() {
    DiagonalScatter s{};
    unsigned ranks_taken[16] = {};
    for (int slot = 0; slot < 4; slot++) {
        unsigned banks_taken = 0;
        for (int lane = 0; lane < 32; lane++) {
            const int d = diagonal_of(lane, slot);
            auto bank = [d](int r) { return (4 * d + (r & 3)) & 31; };
            int pick = -1;
            for (int r = 0; r < 8 && pick < 0; r++) {
                if (!(ranks_taken[d] >> r & 1u) && !(banks_taken >> bank(r) & 1u)) {
                    pick = r;
                }
            }
            for (int r = 0; r < 8 && pick < 0; r++) {
                if (!(ranks_taken[d] >> r & 1u)) {
                    pick = r;
                }
            }
            if (pick < 0) {
                throw "a diagonal received more than eight partials";
            }
            ranks_taken[d] |= 1u << pick;
            banks_taken |= 1u << bank(pick);
            s.offset[lane][slot] = uint8_t((pick >> 2) * reduce_half_floats + 4 * d + (pick & 3));
        }
    }
    for (unsigned taken : ranks_taken) {
        if (taken != 0xffu) {
            throw "a diagonal received fewer than eight partials";
        }
    }
    return s;
}

static __constant__ const DiagonalScatter diagonal_scatter = make_diagonal_scatter();

// This lane's part of the diagonal sums: where its partials go and which of its
// same-side pairs lie on or above the main diagonal.
struct DiagonalLane {
    int offset[4];
    bool upper0, upper1;

    __device__ explicit DiagonalLane(int lane) {
#pragma unroll
        for (int s = 0; s < 4; s++) {
            offset[s] = diagonal_scatter.offset[lane][s];
        }
        const int g = lane >> 2, t = lane & 3;
        upper0 = 2 * t >= g;
        upper1 = 2 * t + 1 >= g;
    }

    // Splits tile `acc` into its four per-lane diagonal partials: returns carry + the
    // lower parts (output chunk J - 1 when acc is T_J) and leaves the upper parts in
    // carry. A zero acc (after the strip's last tile) flushes the carry.
    __device__ void split(const float (&acc)[2][4], float (&carry)[4], float (&total)[4]) const {
        const float s0 = acc[0][0] + acc[1][2], s1 = acc[0][1] + acc[1][3];
        total[0] = carry[0] + (upper0 ? 0.f : s0);
        total[1] = carry[1] + (upper1 ? 0.f : s1);
        total[2] = carry[2] + acc[0][2];
        total[3] = carry[3] + acc[0][3];
        carry[0] = upper0 ? s0 : 0.f;
        carry[1] = upper1 ? s1 : 0.f;
        carry[2] = acc[1][0];
        carry[3] = acc[1][1];
    }

    // Scatters two rows' partials (q = 0, 1) and returns, for lane L, the diagonal sum
    // L % 16 of row L / 16.
    __device__ float gather(float *buffer, const float (&total0)[4], const float (&total1)[4], int lane) const {
        scatter(buffer, total0, total1);
        __syncwarp();
        const float sum = collect(buffer, lane);
        __syncwarp();
        return sum;
    }

    // gather in two halves, for callers that scatter several pairs into buffers of their
    // own before one __syncwarp and collect them all after it.
    __device__ void scatter(float *buffer, const float (&total0)[4], const float (&total1)[4]) const {
#pragma unroll
        for (int s = 0; s < 4; s++) {
            buffer[offset[s]] = total0[s];
            buffer[reduce_row_floats + offset[s]] = total1[s];
        }
    }
    __device__ static float collect(const float *buffer, int lane) {
        const float *mine = buffer + 4 * lane;  // row lane / 16, diagonal lane % 16
        const float4 u = *reinterpret_cast<const float4 *>(mine);
        const float4 v = *reinterpret_cast<const float4 *>(mine + reduce_half_floats);
        return ((u.x + u.y) + (u.z + u.w)) + ((v.x + v.y) + (v.z + v.w));
    }
};

}  // namespace halconv::rk::tc
