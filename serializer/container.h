// The .nrt container: a 64-byte header, the FlatBuffer (root Program, identifier "NRT1"), then
// one weight segment holding every storage's bytes. docs/FORMAT.md gives the byte-level layout.
//
//   offset 0   magic "NRTC" | u32 container_version | u64 header_size (64)
//              u64 flatbuffer_offset | u64 flatbuffer_size | u64 segment_offset | u64 segment_size
//              u64 reserved[2] (zero)
//   offset 64  FlatBuffer (8-byte aligned, at most 2 GiB)
//   segment    page-aligned; storages at `segment_offset + Storage.offset`, each aligned to
//              Storage.alignment (>= 64); offset and size both 0 when there are no weights
//
// All integers little-endian. The segment is addressed with 64-bit offsets, so weights may exceed
// FlatBuffers' 2 GiB limit.
#pragma once

#include <array>
#include <cstdint>
#include <span>

#include "core/error.h"

namespace nrt {

inline constexpr std::array<char, 4> kContainerMagic = {'N', 'R', 'T', 'C'};
inline constexpr uint32_t kContainerVersion = 1;
inline constexpr uint64_t kContainerHeaderSize = 64;
inline constexpr uint64_t kSegmentAlignment = 4096;
inline constexpr uint32_t kDefaultStorageAlignment = 64;
// FlatBuffers 2.0.8 uses 32-bit offsets: nothing inside the FlatBuffer may exceed 2 GiB.
inline constexpr uint64_t kMaxFlatbufferSize = (uint64_t{1} << 31) - 2;  // Verifier asserts size < 2^31-1

struct ContainerLayout {
  uint64_t flatbuffer_offset = 0;
  uint64_t flatbuffer_size = 0;
  uint64_t segment_offset = 0;
  uint64_t segment_size = 0;
};

// True when `bytes` starts with the container magic (content sniffing for `convert`).
bool has_container_magic(std::span<const uint8_t> bytes);

// Reads and range-checks the header against the real file size.
Result<ContainerLayout> parse_container_header(std::span<const uint8_t> file);

std::array<uint8_t, kContainerHeaderSize> encode_container_header(const ContainerLayout& layout);

// Rounds `value` up to a multiple of `alignment` (a power of two); false on overflow.
bool align_up(uint64_t value, uint64_t alignment, uint64_t* out);

}  // namespace nrt
