# halconv's registry of variants: the single source of truth for every AOT pipeline.
#
# A variant is one way to compute an algorithm on one device: a Halide generator
# (generators/) with one of its schedules (schedules/), built ahead of time for each of
# its precisions. CMake builds every row (cmake/halconv_registry.cmake); the public
# algorithm enums (halconv/algorithm.h), to_string, the dispatch table of src/, the CLI's
# --algorithm list, `halconv info`, the benchmark's variant list and the algorithms
# `auto` chooses from are all derived from these rows. Rows of one algorithm and device
# are alternatives in order: the first whose REQUIRES all hold runs.
#
#   halconv_api(<api> [ENUM <C++ enum>] [AUTOMATIC "<doc of its automatic value>"])
#   halconv_variant(<algorithm> <cpu|cuda> <generator> <schedule>
#                   [PRECISIONS f64 f32 f16 f16f32]   (default: the generator's)
#                   [MODES valid same full] [BOUNDARIES constant nearest reflect mirror wrap]
#                   [REQUIRES <limit>...]              (src/limits.cpp: rank1, tensor_core_kernel, ...)
#                   [AUTOSCHEDULER <Halide plugin> [PARAMS <name=value>...]]
#                   [API <api>]                        (default: the last halconv_api)
#                   [DOC "<one line, on the algorithm's first row, no semicolon>"])
#
# A schedule of your own (README, "Writing your own schedule"): a named function in the
# generator's schedules/*.cpp table, one halconv_variant line here, then
# `halconv_bench --variants <algorithm>`.

# ---- correlate2d / convolve2d: halconv::Algorithm ----
halconv_api(correlate2d ENUM Algorithm
    AUTOMATIC "the fastest variant that supports the request, by the device's measured costs (halconv/tuning.h)")

halconv_variant(naive cpu conv2d cpu_naive
    DOC "GPU: one thread per output pixel, CPU: a plain serial loop nest")
halconv_variant(naive cuda conv2d gpu_naive REQUIRES gpu_grid_width)

halconv_variant(shared_tiled cpu conv2d cpu_tiled
    DOC "GPU: tile + apron in shared memory, 1xT tiling, CPU: vectorized strips")
halconv_variant(shared_tiled cuda conv2d gpu_shared_tiled REQUIRES gpu_conv2d_tile gpu_grid_width)

halconv_variant(separable cpu separable cpu_separable REQUIRES rank1 cpu_separable_strip
    DOC "row pass then column pass (needs a rank-1 kernel, or the separable entry)")
halconv_variant(separable cpu separable cpu_separable_two_pass REQUIRES rank1)
# CUDA: the extern stages (runtime_kernels/separable/): 1D FFTs along lines (float32
# transforms) from 150 taps together (kw + kh; 200 on outputs under 1024^2), where they
# overtake the sliding pass, and wherever its ring of row sums does not fit (4096^2 f32:
# K = 255 in about 0.3 ms where the Halide schedules took tens); the sliding pass below;
# the Halide schedules for the rest.
# From kernels of tensor_core_min_taps together on large outputs, f32 on an sm_90 device:
# the two tensor-core line passes (runtime_kernels/separable/separable_tensor_core.h).
halconv_variant(separable cuda separable_cuda tensor_core PRECISIONS f32
    REQUIRES rank1 separable_tensor_core_fits separable_tensor_core_pays)
halconv_variant(separable cuda separable_cuda fft_lines PRECISIONS f32 f16 f16f32
    REQUIRES rank1 separable_fft_lines_fits separable_fft_lines_pays)
halconv_variant(separable cuda separable_cuda sliding REQUIRES rank1 separable_sliding_fits)
halconv_variant(separable cuda separable gpu_separable REQUIRES rank1 gpu_separable_tile gpu_grid_width)
halconv_variant(separable cuda separable gpu_separable_two_pass REQUIRES rank1 gpu_grid_width)

halconv_variant(autoscheduled cpu conv2d cpu_auto REQUIRES autoscheduled_scratch
    AUTOSCHEDULER Mullapudi2016 PARAMS autoscheduler.parallelism=16
    DOC "GPU: Anderson2021 autoscheduler, CPU: Mullapudi2016 autoscheduler")
# 132 = the H100's SM count; Anderson2021's default (16) starves it. H100, 4096x4096
# f32 (bench/results/h100/core-f32-4096.csv): K=3 0.775 ms, K=15 2.14 ms, K=31 6.52 ms.
halconv_variant(autoscheduled cuda conv2d gpu_auto REQUIRES autoscheduled_scratch
    AUTOSCHEDULER Anderson2021 PARAMS autoscheduler.parallelism=132)

# Tensor cores (seed 000, seed 003): float16 operands, kernels up to tensor_core_max_kernel;
# f32 (float32 samples split into float16 parts, runtime_kernels/common/split_f32.h) on
# the variants runtime_kernels/contract.h lists in split_f32_variants (the generator
# refuses another).
halconv_variant(im2tensor cuda tensor_core im2tensor PRECISIONS f16 f16f32 REQUIRES tensor_core_kernel gpu_grid_width
    DOC "tensor cores: P = K^T S into device memory, then the diagonal sums (two kernels)")
halconv_variant(im2tensor_fused cuda tensor_core im2tensor_fused PRECISIONS f16 f16f32 f32 REQUIRES tensor_core_kernel gpu_grid_width
    DOC "tensor cores: P-blocks in shared memory, partial sums in a small buffer, recombined")
halconv_variant(im2tensor_atomic cuda tensor_core im2tensor_atomic PRECISIONS f16 f16f32 f32 REQUIRES tensor_core_kernel gpu_grid_width
    DOC "tensor cores: as im2tensor_fused, the partial sums added atomically into the output")
halconv_variant(diagonal_unroll cuda tensor_core diagonal_unroll PRECISIONS f16 f16f32 REQUIRES tensor_core_kernel gpu_grid_width
    DOC "tensor cores: seed 003's diagonal kernel-image-loop unrolling, WMMA m16n16k16")
halconv_variant(diagonal_unroll_m32n8k16 cuda tensor_core diagonal_unroll_m32n8k16 PRECISIONS f16 f16f32 REQUIRES tensor_core_kernel gpu_grid_width
    DOC "tensor cores: diagonal unrolling with WMMA m32n8k16 (32 kernel columns x 8 image columns)")

# FFT convolution (overlap-save): a row per transform size T (the schedule column);
# limit fft_tile lets through only the T that costs least for the kernel and output.
# Transform sizes: f32, the default precision, has every power of two from 64 to 1024;
# f64, f16 and f16f32 (f32 transforms of f16 data) have 256 (kernels up to 256): each
# row and precision is a pipeline of ~50 s of Halide compilation (CI builds each twice).
halconv_variant(fft cpu fft 64 PRECISIONS f32 REQUIRES fft_tile
    DOC "overlap-save: T x T tiles of the image transformed, times the kernel's spectrum, transformed back")
halconv_variant(fft cpu fft 128 PRECISIONS f32 REQUIRES fft_tile)
halconv_variant(fft cpu fft 256 REQUIRES fft_tile)
halconv_variant(fft cpu fft 512 PRECISIONS f32 REQUIRES fft_tile)
halconv_variant(fft cpu fft 1024 PRECISIONS f32 REQUIRES fft_tile)
# CUDA: cuFFT extern stages (runtime_kernels/fft/halconv_fft.h), one row for every tile size:
# the stage picks the tiling at run time, and tiles holding NaN or Inf it sums directly.
halconv_variant(fft cuda cufft overlap_save REQUIRES cufft_kernel cufft_library gpu_grid_width)

# A kernel of numerical rank r <= max_low_rank (halconv.h; its SVD, rank-1 test's tolerance)
# as r separable passes summed: r (kw + kh) multiply-adds per output.
halconv_variant(low_rank cpu low_rank cpu_low_rank REQUIRES low_rank cpu_separable_strip
    DOC "r separable passes summed, for a kernel of small numerical rank r (its SVD): a LoG or DoG is rank 2")
halconv_variant(low_rank cpu low_rank cpu_low_rank_two_pass REQUIRES low_rank)
# CUDA: the separable sliding extern stage once per term where its ring fits, the Halide
# schedules beyond (H100, 4096^2 f32 LoG K = 31: gpu_low_rank 1.08 ms, bench/results/h100/low_rank).
halconv_variant(low_rank cuda low_rank_cuda sliding REQUIRES low_rank separable_sliding_fits)
halconv_variant(low_rank cuda low_rank gpu_low_rank REQUIRES low_rank gpu_low_rank_tile gpu_grid_width)
halconv_variant(low_rank cuda low_rank gpu_low_rank_two_pass REQUIRES low_rank gpu_grid_width)

# Direct on CUDA cores for small kernels: a hand-written extern stage (runtime_kernels/conv2d/),
# the boundary rule applied inside it; CUDA only.
halconv_variant(sliding cuda conv2d_cuda sliding REQUIRES conv2d_sliding_kernel
    DOC "GPU, kernels up to 7x7: each thread slides down its columns, a ring of row sums in registers, the next rows copied ahead")

# ---- multichannel_correlate2d / convolve2d: halconv::MultichannelAlgorithm ----
halconv_api(multichannel ENUM MultichannelAlgorithm
    AUTOMATIC "CUDA: implicit_gemm for f16 and f16f32, im2col for f32, direct for f64 and on the CPU")

halconv_variant(direct cpu multichannel cpu_direct
    DOC "a Halide pipeline summing channels x taps per output (CPU and CUDA)")
halconv_variant(direct cuda multichannel gpu_direct)
halconv_variant(im2col cuda multichannel_gemm im2col PRECISIONS f32 f16 f16f32 REQUIRES cublas_for_f32
    DOC "CUDA: seed 002's im2col into a bounded buffer, then a GEMM with the N kernels (f16 on tensor cores, f32 cuBLAS)")
halconv_variant(implicit_gemm cuda multichannel_gemm implicit_gemm PRECISIONS f16 f16f32
    DOC "CUDA, f16 and f16f32: the GEMM on tensor cores reading the image staged in shared memory (no buffer)")

# ---- detect_edges: halconv::Staging ----
halconv_api(edges ENUM Staging)

halconv_variant(fused cpu edges cpu_fused
    DOC "every stage computed per tile, intermediates in cache / shared memory")
halconv_variant(fused cuda edges_cuda fused)
halconv_variant(staged cpu edges cpu_staged
    DOC "stage by stage, each intermediate a whole image in memory")
halconv_variant(staged cuda edges gpu_staged)

# ---- unsharp_mask (the device decides) ----
halconv_api(unsharp)

halconv_variant(tiled cpu unsharp cpu_tiled DOC "the blur as a Halide sum over float16 operands")
halconv_variant(tensor_core cuda unsharp gpu_tensor_core DOC "the blur on tensor cores (im2tensor_fused extern stage)")

# ---- gaussian_blur with GaussianMethod::recursive (the device decides) ----
# Sums in the precision's accumulator (f16 arithmetic would not carry the recursion);
# the output is the image's extent (mode same).
halconv_api(recursive_gaussian)

halconv_variant(recursive cpu recursive_gaussian cpu_strips MODES same
    DOC "Deriche's parallel form, three complex poles per axis, boundary states in closed form")
halconv_variant(recursive cuda recursive_gaussian_cuda segments MODES same)

# ---- bilateral_filter: halconv::BilateralAlgorithm ----
# seed 003's linear time-variant filter; mode same (the image's extent).
halconv_api(bilateral ENUM BilateralAlgorithm AUTOMATIC "direct on every device")

halconv_variant(direct cpu bilateral cpu_tiled MODES same
    DOC "the window's weighted sums on CUDA cores / CPU vectors (GPU: the tile and its apron in shared memory)")
halconv_variant(direct cuda bilateral gpu_tiled MODES same REQUIRES gpu_bilateral_tile gpu_grid_width)
halconv_variant(kernel_image_unroll cuda bilateral_tensor_core kernel_image_m32n8k16 MODES same REQUIRES gpu_grid_width
    DOC "tensor cores, f16f32: seed 003's kernel-image-loop unrolling (WMMA m32n8k16), numerator and denominator as products with the spatial weights")
