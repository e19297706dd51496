// One reading of the numbers people type into environment variables and flags, the same rules
// everywhere: the whole text is the number (no spaces around it), a variable that is set but
// empty is an error rather than the default (unset it for the default), and an error says the
// real reason — not a number, or past which bound (issue 25, class 6).
#pragma once

#include <cstdint>
#include <string_view>

#include "core/error.h"

namespace nrt {

// An integer in [min, max]; `what` names the variable or flag in the error (NRT-E104).
Result<int64_t> parse_integer_text(std::string_view what, std::string_view text, int64_t min, int64_t max);

// A finite number in [min, max].
Result<double> parse_number_text(std::string_view what, std::string_view text, double min, double max);

// A switch: 1 or true, 0 or false.
Result<bool> parse_switch_text(std::string_view what, std::string_view text);

}  // namespace nrt
