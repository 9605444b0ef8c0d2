// The halconv tool's commands beside demo (see halconv_cli.cpp).
#pragma once

#include <string>
#include <vector>

namespace halconv::cli {

// Each takes the arguments after the command name and returns the exit status; a
// malformed command line throws UsageError (cli_common.h), other failures halconv::Error.

// halconv filter IN... OUT --kernel SPEC [options]
int filter_command(const std::vector<std::string> &args);
// halconv edges IN... OUT [--threshold T] [options]
int edges_command(const std::vector<std::string> &args);
// halconv unsharp IN... OUT (--sigma S | --kernel SPEC) [--amount A] [options]
int unsharp_command(const std::vector<std::string> &args);
// halconv bilateral IN... OUT --sigma-spatial S --sigma-range R [--radius N] [options]
int bilateral_command(const std::vector<std::string> &args);
// halconv info
int info_command(const std::vector<std::string> &args);
// halconv bench-quick [--device D] [--sizes ...] [--kernels ...]
int bench_quick_command(const std::vector<std::string> &args);
// halconv tune [--device D] [--sizes ...] [--kernels ...] [--precisions ...] [--output PATH]
int tune_command(const std::vector<std::string> &args);

}  // namespace halconv::cli
