// Python object reprs carry memory addresses ("<function f at 0x7f3a...>"), which differ per
// process. Before a string enters a hash, each such address is replaced by "0x?" so that the
// same program hashes equally in every process; `hash` warns about strings that carried one.
#pragma once

#include <string>
#include <string_view>

namespace nrt {

// Replaces the hex digits of every " at 0x<hex>" inside a "<...>" repr with "?". Returns the
// canonical text; `*changed` tells whether anything was replaced.
std::string canonicalize_reprs(std::string_view text, bool* changed);

}  // namespace nrt
