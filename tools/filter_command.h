// The halconv tool's commands beside demo (see halconv_cli.cpp).
#pragma once

#include <string>
#include <vector>

#include "halconv/error.h"

namespace halconv::cli {

// A command line that cannot be run as given: exit status 2 (other errors: 1).
class UsageError : public Error {
public:
    using Error::Error;
};

// halconv filter IN... OUT --kernel SPEC [options]; returns the exit status.
int filter_command(const std::vector<std::string> &args);

}  // namespace halconv::cli
