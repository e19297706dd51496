// The binary FlatBuffers schema of schema/nrt.fbs (flatc -b --schema --bfbs-builtins), embedded
// at build time. The JSON form parses and prints through it.
#pragma once
#include <span>

namespace nrt::schema {
std::span<const unsigned char> binary_schema();
}
