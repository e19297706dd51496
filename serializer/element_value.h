// Reads one stored element as a double, for comparisons (diff's max absolute difference).
// Little-endian storage, as the format defines. nullopt for dtypes without a real value
// (complex, quantized, bits, float8 kinds).
#pragma once

#include <cstdint>
#include <optional>

#include "schema/nrt_generated.h"

namespace nrt {

std::optional<double> element_as_double(fb::ScalarType dtype, const uint8_t* data);

// IEEE binary16 and bfloat16 bit patterns to float.
float half_to_float(uint16_t bits);
float bfloat16_to_float(uint16_t bits);

}  // namespace nrt
