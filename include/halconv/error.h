// The one exception type halconv throws.
#pragma once

#include <stdexcept>
#include <string>

namespace halconv {

// Thrown for every rejected call: the message says what was wrong and what is allowed.
// Nothing has been launched or written when validation throws.
class Error : public std::runtime_error {
public:
    explicit Error(const std::string &message) : std::runtime_error("halconv: " + message) {}
};

}  // namespace halconv
