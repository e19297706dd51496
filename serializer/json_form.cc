#include "serializer/json_form.h"

#include <memory>

#include "flatbuffers/idl.h"
#include "flatbuffers/reflection.h"
#include "schema/nrt_bfbs.h"
#include "serializer/json_printer.h"

namespace nrt {
namespace {

// A parser with the schema loaded from the embedded binary schema.
Result<std::unique_ptr<flatbuffers::Parser>> make_parser() {
  flatbuffers::IDLOptions options;
  options.strict_json = true;
  options.indent_step = 2;
  options.output_enum_identifiers = true;
  auto parser = std::make_unique<flatbuffers::Parser>(options);
  const auto schema = schema::binary_schema();
  if (!parser->Deserialize(schema.data(), schema.size())) {
    return make_error(ErrorCode::InvalidArgument, "embedded binary schema failed to load: " + parser->error_);
  }
  return parser;
}

}  // namespace

ProgramWithWeights unpack_program(const ProgramFile& file) {
  ProgramWithWeights out;
  file.program().UnPackTo(&out.program);
  out.storages.reserve(out.program.storages.size());
  for (uint32_t i = 0; i < out.program.storages.size(); ++i) {
    auto bytes = file.storage_bytes(i);
    out.storages.emplace_back(bytes.begin(), bytes.end());
  }
  return out;
}

Result<std::string> program_to_json(const ProgramFile& file) {
  fb::ProgramT program;
  file.program().UnPackTo(&program);
  for (uint32_t i = 0; i < program.storages.size(); ++i) {
    auto bytes = file.storage_bytes(i);
    program.storages[i]->inline_data.assign(bytes.begin(), bytes.end());
    program.storages[i]->offset = 0;
  }
  flatbuffers::FlatBufferBuilder builder(1 << 16);
  fb::FinishProgramBuffer(builder, fb::Program::Pack(builder, &program));

  const auto schema = schema::binary_schema();
  return print_json(*reflection::GetSchema(schema.data()), builder.GetBufferPointer());
}

Result<ProgramWithWeights> program_from_json(std::string_view text) {
  auto parser = make_parser();
  if (!parser) return parser.error();
  const std::string source(text);  // the parser wants a NUL-terminated buffer
  if (!(*parser)->ParseJson(source.c_str())) {
    return make_error(ErrorCode::JsonParse, (*parser)->error_);
  }
  const auto& builder = (*parser)->builder_;
  flatbuffers::Verifier verifier(builder.GetBufferPointer(), builder.GetSize());
  if (!fb::VerifyProgramBuffer(verifier)) {
    return make_error(ErrorCode::JsonParse, "the JSON did not produce a valid Program (missing file identifier?)");
  }
  ProgramWithWeights out;
  fb::GetProgram(builder.GetBufferPointer())->UnPackTo(&out.program);
  for (size_t i = 0; i < out.program.storages.size(); ++i) {
    auto& storage = *out.program.storages[i];
    if (storage.size != 0 && storage.size != storage.inline_data.size()) {
      return make_error(ErrorCode::InlineDataMismatch,
                        "storage " + std::to_string(i) + " declares " + std::to_string(storage.size) + " bytes but its inline_data holds " +
                            std::to_string(storage.inline_data.size()));
    }
    out.storages.push_back(std::move(storage.inline_data));
    storage.inline_data.clear();
  }
  return out;
}

}  // namespace nrt
