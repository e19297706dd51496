#include "serializer/json_form.h"

#include <memory>

#include "flatbuffers/idl.h"
#include "flatbuffers/reflection.h"
#include "schema/nrt_bfbs.h"
#include "serializer/inline_data_text.h"
#include "serializer/json_printer.h"
#include "serializer/verify_program.h"

namespace nrt {
namespace {

// A parser with the schema loaded from the embedded binary schema.
Result<std::unique_ptr<flatbuffers::Parser>> make_parser() {
  flatbuffers::IDLOptions options;
  options.strict_json = true;
  options.indent_step = 2;
  options.output_enum_identifiers = true;
  options.allow_non_utf8 = true;  // strings are bytes; the printer escapes invalid UTF-8 as \xNN
  auto parser = std::make_unique<flatbuffers::Parser>(options);
  const auto schema = schema::binary_schema();
  if (!parser->Deserialize(schema.data(), schema.size())) {
    return make_error(ErrorCode::InvalidArgument, "embedded binary schema failed to load: " + parser->error_);
  }
  return parser;
}

// FlatBuffers' parser accepts a union tag without its value ("arg_type" but no "arg"); the
// object API would then hold a null member that packing dereferences. Returns the place of the
// first such union, or an empty string.
std::string find_empty_union(fb::Argument type, const void* arg, const std::string& place, int depth = 0) {
  if (type == fb::Argument::NONE) return "";
  if (arg == nullptr) return place;
  if (type != fb::Argument::StringToArgumentArg || depth > 64) return "";
  const auto* entries = static_cast<const fb::StringToArgumentArg*>(arg)->entries();
  for (uint32_t i = 0; entries && i < entries->size(); ++i) {
    const auto* e = entries->Get(i);
    auto found = find_empty_union(e->value_type(), e->value(), place + " entry " + std::to_string(i), depth + 1);
    if (!found.empty()) return found;
  }
  return "";
}

std::string find_empty_union(const fb::Program& program) {
  auto holders = [](const auto* list, const std::string& where) -> std::string {
    for (uint32_t i = 0; list && i < list->size(); ++i) {
      auto found = find_empty_union(list->Get(i)->arg_type(), list->Get(i)->arg(), where + " " + std::to_string(i));
      if (!found.empty()) return found;
    }
    return "";
  };
  for (uint32_t g = 0; program.graphs() && g < program.graphs()->size(); ++g) {
    const auto* graph = program.graphs()->Get(g);
    const std::string at = "graph " + std::to_string(g);
    std::string found = holders(graph->inputs(), at + " input");
    if (found.empty()) found = holders(graph->outputs(), at + " output");
    for (uint32_t n = 0; found.empty() && graph->nodes() && n < graph->nodes()->size(); ++n) {
      const auto* node = graph->nodes()->Get(n);
      found = holders(node->inputs(), at + " node " + std::to_string(n) + " argument");
      if (found.empty()) found = holders(node->outputs(), at + " node " + std::to_string(n) + " result");
    }
    if (found.empty() && graph->signature() && graph->signature()->inputs()) {
      const auto* specs = graph->signature()->inputs();
      for (uint32_t i = 0; found.empty() && i < specs->size(); ++i) {
        if (const auto* c = specs->Get(i)->constant()) {
          found = find_empty_union(c->arg_type(), c->arg(), at + " input spec " + std::to_string(i));
        }
      }
    }
    if (!found.empty()) return found;
  }
  return "";
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
  NRT_TRY(parser, make_parser());
  auto extracted = extract_inline_data(text);  // also the NUL-terminated copy the parser wants
  if (!extracted) return extracted.error();
  if (!(*parser)->ParseJson(extracted->text.c_str())) {
    return make_error(ErrorCode::JsonParse, (*parser)->error_);
  }
  const auto& builder = (*parser)->builder_;
  flatbuffers::Verifier verifier(builder.GetBufferPointer(), builder.GetSize());
  if (!fb::VerifyProgramBuffer(verifier)) {
    return make_error(ErrorCode::JsonParse, "the JSON did not produce a valid Program (missing file identifier?)");
  }
  const fb::Program* parsed = fb::GetProgram(builder.GetBufferPointer());
  if (const std::string place = find_empty_union(*parsed); !place.empty()) {
    return make_error(ErrorCode::MissingField, place + ": a union type is given without its value");
  }
  // Packing rewrites schema_version with this build's, so the text's own claim is checked here.
  const auto* version = parsed->schema_version();
  if (version == nullptr) return make_error(ErrorCode::MissingField, "program has no schema_version");
  if (version->major() != kSchemaMajor) {
    return make_error(ErrorCode::UnsupportedSchemaVersion,
                      "schema version " + std::to_string(version->major()) + "." + std::to_string(version->minor()) +
                          "; this build reads major version " + std::to_string(kSchemaMajor));
  }
  ProgramWithWeights out;
  parsed->UnPackTo(&out.program);
  for (auto& [index, bytes] : extracted->storages) {
    if (index < out.program.storages.size()) out.program.storages[index]->inline_data = std::move(bytes);
  }
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
