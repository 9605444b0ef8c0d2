// Kernel specifications as the halconv tool takes them (--kernel SPEC): a named kernel
// with parameters, or a file. Internal, like image_io.h.
//   gaussian:sigma=S[,size=K]  normalized to sum 1; size defaults to 2 ceil(3 S) + 1
//   box:K                      K x K, every tap 1 / K^2
//   laplacian                  [0 1 0; 1 -4 1; 0 1 0]
//   sobel-x, sobel-y           [-1 0 1; -2 0 2; -1 0 1] and its transpose
//   log:sigma=S[,size=K]       Laplacian of Gaussian, zero-sum; size defaults to 2 ceil(4 S) + 1
//   random:K[,seed=N]          uniform in [0, 1); seed defaults to 1 (reproducible)
//   FILE.txt                   rows of numbers separated by whitespace or commas, one per line
//   FILE.fits                  a 2D FITS image (NAXIS1 = kernel width)
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace halconv::io {

struct KernelTaps {
    int width = 0;
    int height = 0;
    std::vector<double> taps;  // (x, y) at taps[y * width + x]
};

// Largest kernel edge, generated (size=, box:, random:) or read from a file.
inline constexpr int max_spec_kernel_edge = 1024;
// Largest kernel text file read: the largest kernel with 32 characters per number
// (checked before the file is read).
inline constexpr uint64_t max_kernel_text_bytes = uint64_t(max_spec_kernel_edge) * max_spec_kernel_edge * 32;

// Throws halconv::Error saying what was wrong and what is allowed.
KernelTaps parse_kernel_spec(const std::string &spec);

// A kernel text file's contents (name for messages).
KernelTaps parse_kernel_text(const std::string &name, const std::string &text);

}  // namespace halconv::io
