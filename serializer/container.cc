#include "serializer/container.h"

#include <cstring>
#include <string>

namespace nrt {
namespace {

uint64_t load_le64(const uint8_t* p) {
  uint64_t v = 0;
  for (int i = 7; i >= 0; --i) v = (v << 8) | p[i];
  return v;
}

uint32_t load_le32(const uint8_t* p) {
  return uint32_t{p[0]} | uint32_t{p[1]} << 8 | uint32_t{p[2]} << 16 | uint32_t{p[3]} << 24;
}

void store_le64(uint8_t* p, uint64_t v) {
  for (int i = 0; i < 8; ++i) p[i] = static_cast<uint8_t>(v >> (8 * i));
}

void store_le32(uint8_t* p, uint32_t v) {
  for (int i = 0; i < 4; ++i) p[i] = static_cast<uint8_t>(v >> (8 * i));
}

}  // namespace

bool align_up(uint64_t value, uint64_t alignment, uint64_t* out) {
  uint64_t sum = 0;
  if (__builtin_add_overflow(value, alignment - 1, &sum)) return false;
  *out = sum & ~(alignment - 1);
  return true;
}

bool has_container_magic(std::span<const uint8_t> bytes) {
  return bytes.size() >= 4 && std::memcmp(bytes.data(), kContainerMagic.data(), 4) == 0;
}

Result<ContainerLayout> parse_container_header(std::span<const uint8_t> file) {
  const uint64_t file_size = file.size();
  if (file_size < kContainerHeaderSize) {
    return make_error(ErrorCode::FileTooSmall, "file has " + std::to_string(file_size) +
                                                   " bytes; the container header alone needs 64");
  }
  if (!has_container_magic(file)) {
    return make_error(ErrorCode::BadMagic, "bytes 0..3 are not \"NRTC\"; not an .nrt file");
  }
  const uint8_t* h = file.data();
  const uint32_t version = load_le32(h + 4);
  if (version != kContainerVersion) {
    return make_error(ErrorCode::UnsupportedContainerVersion,
                      "container version " + std::to_string(version) + " at byte 4; this build reads version " +
                          std::to_string(kContainerVersion));
  }
  const uint64_t header_size = load_le64(h + 8);
  if (header_size != kContainerHeaderSize) {
    return make_error(ErrorCode::UnsupportedContainerVersion,
                      "header size " + std::to_string(header_size) + " at byte 8; expected 64");
  }
  ContainerLayout layout;
  layout.flatbuffer_offset = load_le64(h + 16);
  layout.flatbuffer_size = load_le64(h + 24);
  layout.segment_offset = load_le64(h + 32);
  layout.segment_size = load_le64(h + 40);

  uint64_t fb_end = 0;
  if (layout.flatbuffer_offset < kContainerHeaderSize || layout.flatbuffer_offset % 8 != 0 ||
      layout.flatbuffer_size < 8 || layout.flatbuffer_size > kMaxFlatbufferSize ||
      __builtin_add_overflow(layout.flatbuffer_offset, layout.flatbuffer_size, &fb_end) || fb_end > file_size) {
    return make_error(ErrorCode::FlatbufferOutOfRange,
                      "FlatBuffer at offset " + std::to_string(layout.flatbuffer_offset) + " with size " +
                          std::to_string(layout.flatbuffer_size) + " (header bytes 16..31) does not fit a file of " +
                          std::to_string(file_size) + " bytes");
  }
  if (layout.segment_offset == 0 && layout.segment_size == 0) return layout;  // no weights
  uint64_t seg_end = 0;
  if (layout.segment_offset % kSegmentAlignment != 0 || layout.segment_offset < fb_end ||
      __builtin_add_overflow(layout.segment_offset, layout.segment_size, &seg_end) || seg_end > file_size) {
    return make_error(ErrorCode::SegmentOutOfRange,
                      "weight segment at offset " + std::to_string(layout.segment_offset) + " with size " +
                          std::to_string(layout.segment_size) + " (header bytes 32..47) must be page-aligned, after the "
                          "FlatBuffer (ends at " + std::to_string(fb_end) + ") and inside a file of " +
                          std::to_string(file_size) + " bytes");
  }
  return layout;
}

std::array<uint8_t, kContainerHeaderSize> encode_container_header(const ContainerLayout& layout) {
  std::array<uint8_t, kContainerHeaderSize> h{};
  std::memcpy(h.data(), kContainerMagic.data(), 4);
  store_le32(h.data() + 4, kContainerVersion);
  store_le64(h.data() + 8, kContainerHeaderSize);
  store_le64(h.data() + 16, layout.flatbuffer_offset);
  store_le64(h.data() + 24, layout.flatbuffer_size);
  store_le64(h.data() + 32, layout.segment_offset);
  store_le64(h.data() + 40, layout.segment_size);
  return h;
}

}  // namespace nrt
