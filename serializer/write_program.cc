#include "serializer/write_program.h"

#include <array>
#include <functional>

#include "flatbuffers/flatbuffers.h"
#include "serializer/atomic_file.h"
#include "serializer/checksum.h"
#include "serializer/container.h"
#include "serializer/input_limits.h"
#include "serializer/verify_program.h"

namespace nrt {
namespace {

using Sink = std::function<Status(std::span<const uint8_t>)>;

Status write_zeros(const Sink& sink, uint64_t count) {
  static const std::array<uint8_t, 4096> kZeros{};
  while (count > 0) {
    const uint64_t n = count < kZeros.size() ? count : kZeros.size();
    NRT_RETURN_IF_ERROR(sink({kZeros.data(), n}));
    count -= n;
  }
  return {};
}

Status emit_program(fb::ProgramT program, StorageSpans storages, const Sink& sink) {
  if (program.storages.size() != storages.size()) {
    return make_error(ErrorCode::InvalidArgument, "program lists " + std::to_string(program.storages.size()) +
                                                      " storages but " + std::to_string(storages.size()) +
                                                      " byte ranges were given");
  }
  program.schema_version = std::make_unique<fb::Version>(kSchemaMajor, kSchemaMinor);
  uint64_t cursor = 0;
  std::vector<uint64_t> offsets(storages.size());
  for (size_t i = 0; i < storages.size(); ++i) {
    auto& storage = *program.storages[i];
    if (!storage.inline_data.empty()) {
      return make_error(ErrorCode::InlineDataMismatch,
                        "storage " + std::to_string(i) + " still holds inline data; pass its bytes separately");
    }
    uint32_t alignment = storage.alignment < kDefaultStorageAlignment ? kDefaultStorageAlignment : storage.alignment;
    if ((alignment & (alignment - 1)) != 0 || alignment > kMaxStorageAlignment) {
      return make_error(ErrorCode::StorageMisaligned, "storage " + std::to_string(i) + " alignment " +
                                                          std::to_string(alignment) + " is not a power of two up to " +
                                                          std::to_string(kMaxStorageAlignment));
    }
    if (!align_up(cursor, alignment, &cursor)) {
      return make_error(ErrorCode::InvalidArgument, "weight segment exceeds 64-bit offsets");
    }
    storage.alignment = alignment;
    storage.offset = cursor;
    storage.size = storages[i].size();
    storage.checksum = std::make_unique<fb::Checksum128>(checksum_of(storages[i]));
    offsets[i] = cursor;
    cursor += storages[i].size();
  }

  flatbuffers::FlatBufferBuilder builder(1 << 16);
  fb::FinishProgramBuffer(builder, fb::Program::Pack(builder, &program));
  const uint64_t fb_size = builder.GetSize();
  if (fb_size > kMaxFlatbufferSize) {
    return make_error(ErrorCode::InvalidArgument, "program metadata exceeds the 2 GiB FlatBuffer limit");
  }
  ContainerLayout layout;
  layout.flatbuffer_offset = kContainerHeaderSize;
  layout.flatbuffer_size = fb_size;
  if (!storages.empty()) {
    align_up(layout.flatbuffer_offset + fb_size, kSegmentAlignment, &layout.segment_offset);
    layout.segment_size = cursor;
  }
  const auto header = encode_container_header(layout);
  NRT_RETURN_IF_ERROR(sink(header));
  NRT_RETURN_IF_ERROR(sink({builder.GetBufferPointer(), builder.GetSize()}));
  uint64_t written = layout.flatbuffer_offset + fb_size;
  if (storages.empty()) return {};
  NRT_RETURN_IF_ERROR(write_zeros(sink, layout.segment_offset - written));
  uint64_t segment_cursor = 0;
  for (size_t i = 0; i < storages.size(); ++i) {
    NRT_RETURN_IF_ERROR(write_zeros(sink, offsets[i] - segment_cursor));
    NRT_RETURN_IF_ERROR(sink(storages[i]));
    segment_cursor = offsets[i] + storages[i].size();
  }
  return {};
}

}  // namespace

Result<std::vector<uint8_t>> serialize_program(fb::ProgramT program, StorageSpans storages) {
  std::vector<uint8_t> out;
  Status status = emit_program(std::move(program), storages, [&out](std::span<const uint8_t> bytes) {
    out.insert(out.end(), bytes.begin(), bytes.end());
    return Status{};
  });
  if (!status) return status.error();
  return out;
}

Status write_program_file(const std::string& path, fb::ProgramT program, StorageSpans storages) {
  NRT_TRY(file, AtomicFile::create(path));
  Status status = emit_program(std::move(program), storages,
                               [&file](std::span<const uint8_t> bytes) { return file->write(bytes); });
  if (!status) return status;
  return file->commit();
}

}  // namespace nrt
