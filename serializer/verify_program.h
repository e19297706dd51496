// nrt's semantic checks on a Program the FlatBuffers verifier has accepted: schema version, every
// index in range, every enum value known, storages inside the weight segment (overflow-checked),
// tensor views inside their storage, SSA (each value defined once, before use), reference kinds
// consistent with the values they name, signatures matching graph inputs/outputs, DTensor
// placements valid for their mesh and tensor rank, process group ranks valid. With
// `options.deep`, storage checksums too. The first failure is returned with its code and place.
#pragma once

#include <cstdint>
#include <span>

#include "schema/nrt_generated.h"
#include "core/error.h"
#include "serializer/verify_options.h"

namespace nrt {

inline constexpr uint16_t kSchemaMajor = 1;
inline constexpr uint16_t kSchemaMinor = 0;

// `flatbuffer_size` bounds the work (see WorkBudget in the .cc: shared vectors cannot make the
// checks quadratic); `segment` is the weight segment of the file the program came from (empty
// for none).
Status verify_program(const fb::Program& program, uint64_t flatbuffer_size, std::span<const uint8_t> segment,
                      const VerifyOptions& options);

}  // namespace nrt
