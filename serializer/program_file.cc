#include "serializer/program_file.h"

#include "flatbuffers/flatbuffers.h"
#include "serializer/regular_file.h"
#include "serializer/schema_access.h"
#include "serializer/verify_program.h"

namespace nrt {
namespace {

// A table needs at least 4 bytes, so the buffer size bounds the table count; the budget only
// stops pathological buffers from costing more than a linear walk.
flatbuffers::Verifier::Options verifier_options(uint64_t size) {
  flatbuffers::Verifier::Options options;
  options.max_depth = 64;
  options.max_tables = static_cast<flatbuffers::uoffset_t>(size / 4 + 1024);
  options.check_alignment = true;
  return options;
}

Result<const fb::Program*> verify_flatbuffer(std::span<const uint8_t> file, const ContainerLayout& layout) {
  const uint8_t* fb_start = file.data() + layout.flatbuffer_offset;
  const size_t fb_size = layout.flatbuffer_size;
  if (!flatbuffers::BufferHasIdentifier(fb_start, fb::ProgramIdentifier())) {
    return make_error(ErrorCode::BadFileIdentifier,
                      "FlatBuffer at offset " + std::to_string(layout.flatbuffer_offset) +
                          " lacks the file identifier \"NRT1\" (bytes 4..7 of the FlatBuffer)");
  }
  flatbuffers::Verifier verifier(fb_start, fb_size, verifier_options(fb_size));
  if (!fb::VerifyProgramBuffer(verifier)) {
    return make_error(ErrorCode::FlatbufferInvalid,
                      "FlatBuffers verifier rejected the Program at offset " +
                          std::to_string(layout.flatbuffer_offset) + " (" + std::to_string(fb_size) +
                          " bytes): an offset, size, nesting depth or required field is out of bounds");
  }
  return fb::GetProgram(fb_start);
}

}  // namespace

Result<ProgramFile> ProgramFile::verify(std::shared_ptr<const void> owner, std::span<const uint8_t> bytes,
                                        const VerifyOptions& options) {
  NRT_TRY(layout, parse_container_header(bytes));
  NRT_TRY(program, verify_flatbuffer(bytes, *layout));
  auto segment = bytes.subspan(layout->segment_offset, layout->segment_size);
  NRT_RETURN_IF_ERROR(verify_program(**program, layout->flatbuffer_size, segment, options));

  ProgramFile file;
  file.owner_ = std::move(owner);
  file.bytes_ = bytes;
  file.layout_ = *layout;
  file.program_ = *program;
  return file;
}

Result<ProgramFile> ProgramFile::open(const std::string& path, const VerifyOptions& options) {
  NRT_TRY(mapping, MappedFile::open(path));
  const std::span<const uint8_t> bytes = (*mapping)->bytes();
  auto file = verify(*mapping, bytes, options);
  if (!file) return make_error(file.error().code, path + ": " + file.error().message);
  file->mapped_ = true;
  return file;
}

Result<ProgramFile> ProgramFile::from_bytes(std::vector<uint8_t> bytes, const VerifyOptions& options) {
  auto owned = std::make_shared<std::vector<uint8_t>>(std::move(bytes));
  std::span<const uint8_t> view(owned->data(), owned->size());
  return verify(owned, view, options);
}

Result<ProgramFile> ProgramFile::with_program(const ProgramFile& original, const fb::ProgramT& program,
                                              const VerifyOptions& options) {
  flatbuffers::FlatBufferBuilder builder(1 << 16);
  fb::FinishProgramBuffer(builder, fb::Program::Pack(builder, &program));
  auto bytes = std::make_shared<std::vector<uint8_t>>(builder.GetBufferPointer(),
                                                      builder.GetBufferPointer() + builder.GetSize());
  flatbuffers::Verifier verifier(bytes->data(), bytes->size(), verifier_options(bytes->size()));
  if (!fb::VerifyProgramBuffer(verifier)) {
    return make_error(ErrorCode::FlatbufferInvalid, "the rewritten Program does not verify as a FlatBuffer");
  }
  const fb::Program* rewritten = fb::GetProgram(bytes->data());
  const auto* before = original.program_->storages();
  const auto* after = rewritten->storages();
  bool same = vector_size(before) == vector_size(after);
  for (uint32_t i = 0; same && i < vector_size(before); ++i) {
    same = before->Get(i)->offset() == after->Get(i)->offset() && before->Get(i)->size() == after->Get(i)->size();
  }
  if (!same) return make_error(ErrorCode::Internal, "the rewritten Program changed the storage table");
  auto segment = original.bytes_.subspan(original.layout_.segment_offset, original.layout_.segment_size);
  NRT_RETURN_IF_ERROR(verify_program(*rewritten, bytes->size(), segment, options));
  ProgramFile file = original;
  file.rewritten_ = std::move(bytes);
  file.program_ = rewritten;
  return file;
}

Status ProgramFile::check(const VerifyOptions& options) const {
  if (rewritten_) {
    auto segment = bytes_.subspan(layout_.segment_offset, layout_.segment_size);
    return verify_program(*program_, rewritten_->size(), segment, options);
  }
  NRT_RETURN_IF_ERROR(verify(owner_, bytes_, options));
  return Status::Ok();
}

std::span<const uint8_t> ProgramFile::flatbuffer_bytes() const {
  if (rewritten_) return {rewritten_->data(), rewritten_->size()};
  return bytes_.subspan(layout_.flatbuffer_offset, layout_.flatbuffer_size);
}

std::span<const uint8_t> ProgramFile::storage_bytes(uint32_t index) const {
  const auto* storage = program_->storages()->Get(index);
  return bytes_.subspan(layout_.segment_offset + storage->offset(), storage->size());
}

}  // namespace nrt
