// The contract between the generators, which call the hand-written kernels as Halide
// extern stages (generators/tensor_core_stage.h, generators/multichannel_gemm_generator.cpp),
// the kernels themselves (runtime_kernels/) and the library that plans them (src/): the
// entry points' names, the largest kernel the single-channel kernels take, and the channel
// pitch the multichannel stages read. Plain C++ (no CUDA, no Halide), so every side
// includes the same definitions.
#pragma once

#include <array>
#include <cstddef>
#include <string>
#include <string_view>

namespace halconv::rk::contract {

// Largest kernel edge, per axis, of the single-channel tensor-core kernels: they are
// instantiated for 1 .. 8 fragments of 16 kernel rows and columns.
inline constexpr int tensor_core_fragment = 16;
inline constexpr int tensor_core_max_kernel_edge = 8 * tensor_core_fragment;

// The single-channel tensor-core variants, named as the registry's algorithms
// (variants.cmake) and the generator's `variant` parameter.
inline constexpr std::array<std::string_view, 5> tensor_core_variants = {
    "im2tensor", "im2tensor_fused", "im2tensor_atomic", "diagonal_unroll", "diagonal_unroll_m32n8k16"};

// The multichannel GEMMs, named as the registry's algorithms and the generator's `gemm`
// parameter.
inline constexpr std::array<std::string_view, 2> multichannel_gemms = {"im2col", "implicit_gemm"};

// Whether `name` is one of `names` (a variant or GEMM list above).
template <size_t N>
bool contains(const std::array<std::string_view, N> &names, std::string_view name) {
    for (std::string_view n : names) {
        if (n == name) {
            return true;
        }
    }
    return false;
}

// The variants with float32 entry points (float32 samples split into float16 parts,
// runtime_kernels/common/split_f32.h); every variant has f16 and f16f32 ones.
inline constexpr std::array<std::string_view, 2> split_f32_variants = {"im2tensor_fused", "im2tensor_atomic"};

// Whether variant `variant` has an entry point of precision `precision` (a halconv
// precision name: f16, f16f32, f32).
inline bool tensor_core_takes(std::string_view variant, std::string_view precision) {
    return contains(tensor_core_variants, variant) && (precision == "f16" || precision == "f16f32" ||
                                                       (precision == "f32" && contains(split_f32_variants, variant)));
}

// Whether a variant's batch form runs a batch (x, y, n) in one launch: the Hopper wgmma
// kernel of im2tensor_fused / im2tensor_atomic over (image, band, tile) items, float16
// samples (f16, f16f32) on sm_90 (single_channel/im2tensor_fused_sm80.cu, run_batch).
// Its other entries run a batch's images one by one on one stream, which a plan's batch
// streams beat: a plan takes the batch form only where this holds (src/plan.cpp).
inline bool tensor_core_batch_in_one_launch(std::string_view variant, std::string_view precision, int sm_major,
                                            int sm_minor) {
    return (variant == "im2tensor_fused" || variant == "im2tensor_atomic") &&
           (precision == "f16" || precision == "f16f32") && sm_major == 9 && sm_minor == 0;
}

// Entry point of a single-channel variant: halconv_tc_<variant>_<precision>
// (single_channel/halconv_tc.h declares each one).
inline std::string tensor_core_entry(std::string_view variant, std::string_view precision) {
    return "halconv_tc_" + std::string(variant) + "_" + std::string(precision);
}

// Entry point of a multichannel GEMM: halconv_mc_<gemm>_<f32 | f16 | f16f32>
// (multichannel/halconv_mc.h).
inline std::string multichannel_entry(std::string_view gemm, std::string_view precision) {
    return "halconv_mc_" + std::string(gemm) + "_" + std::string(precision);
}

// Entry point of the FFT stage: halconv_fft_<form>_<precision> (fft/halconv_fft.h).
inline std::string fft_entry(std::string_view form, std::string_view precision) {
    return "halconv_fft_" + std::string(form) + "_" + std::string(precision);
}

// Entry point of a direct form on CUDA cores: halconv_conv2d_<form>_<precision>
// (conv2d/halconv_conv2d.h).
inline std::string conv2d_entry(std::string_view form, std::string_view precision) {
    return "halconv_conv2d_" + std::string(form) + "_" + std::string(precision);
}

// Entry point of a separable form on CUDA cores: halconv_sep_<form>_<precision>
// (separable/halconv_sep.h).
inline std::string separable_entry(std::string_view form, std::string_view precision) {
    return "halconv_sep_" + std::string(form) + "_" + std::string(precision);
}

// Entry point of the edge pipeline on CUDA: halconv_edges_<form>_f32 (edges/halconv_edges.h).
inline std::string edges_entry(std::string_view form) {
    return "halconv_edges_" + std::string(form) + "_f32";
}

// Entry point of the bilateral filter on tensor cores: halconv_bl_<layout>_<precision>
// (bilateral/halconv_bl.h).
inline std::string bilateral_entry(std::string_view layout, std::string_view precision) {
    return "halconv_bl_" + std::string(layout) + "_" + std::string(precision);
}

// Entry point of the recursive Gaussian on CUDA: halconv_rg_<form>_<precision>
// (recursive/halconv_rg.h).
inline std::string recursive_gaussian_entry(std::string_view form, std::string_view precision) {
    return "halconv_rg_" + std::string(form) + "_" + std::string(precision);
}

// Channels per pixel the multichannel stages read (the bounds query asks for channels
// 0 .. pitch - 1, the producer fills those past C with zeros). Written for integers (the
// kernels) and for Halide Exprs (the generators): pick(c, a, b) is c ? a : b.
//   im2col: C rounded up to 4, so that pixels load 4 channels at a time (seed 002's dpitch).
//   implicit_gemm: 2, 4, or C rounded up to 8, so that a pixel's channels are whole 4-,
//   8- or 16-byte vectors (the dense and chunked staging of multichannel/implicit_gemm.cuh).
template <typename Int>
Int im2col_channel_pitch(const Int &channels) {
    return (channels + 3) / 4 * 4;
}
template <typename Int, typename Pick>
Int implicit_gemm_channel_pitch(const Int &channels, Pick pick) {
    return pick(channels <= 2, Int(2), pick(channels <= 4, Int(4), (channels + 7) / 8 * 8));
}
inline int implicit_gemm_channel_pitch(int channels) {
    return implicit_gemm_channel_pitch(channels, [](bool c, int a, int b) { return c ? a : b; });
}

}  // namespace halconv::rk::contract
