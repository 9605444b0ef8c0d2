// The one exception type halconv throws.
#pragma once

#include <stdexcept>
#include <string>

namespace halconv {

// What kind of failure an Error reports, for callers that branch on it.
enum class ErrorCode : int {
    invalid_argument,  // the call itself is malformed: buffers, shapes, types, option values, a non-finite kernel
    unsupported,       // a well-formed request the chosen algorithm or device cannot run (its limits, the device)
    device,            // the CUDA device or driver failed, or none is usable where one was required
    out_of_memory,     // host or device memory ran out
    io,                // a file could not be read or written, or its contents are not what was expected
    internal,          // a Halide runtime or pipeline failure that no validation foresaw
};

// Thrown for every rejected or failed call: the message says what was wrong and what is
// allowed. Nothing has been launched or written when validation throws.
class Error : public std::runtime_error {
public:
    Error(ErrorCode code, const std::string &message) : std::runtime_error("halconv: " + message), code_(code) {}
    ErrorCode code() const noexcept { return code_; }

private:
    ErrorCode code_;
};

// "invalid_argument", "unsupported", ...
const char *to_string(ErrorCode code);

}  // namespace halconv
