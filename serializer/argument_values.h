// Which values an argument names: the one value of a single-reference argument (tensor, optional
// tensor, symbolic int/float/bool reference, custom object, generic value), and every value a
// defining slot (graph input, node output) defines, lists included.
#pragma once

#include <cstdint>
#include <vector>

#include "schema/nrt_generated.h"

namespace nrt {

// The value a single-reference argument names; -1 for None, literals, lists and constants.
int64_t single_value_of(fb::Argument type, const void* arg);

// The same for an argument held in the object API (fb::ArgumentUnion), as builders and
// importers fill signatures before anything is serialized.
int64_t single_value_of(const fb::ArgumentUnion& arg);

// The values a defining argument defines, in element order (-1 for an absent optional); empty
// for arguments that define nothing.
std::vector<int64_t> defined_values(fb::Argument type, const void* arg);

}  // namespace nrt
