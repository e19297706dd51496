// libFuzzer target: arbitrary text as torch.export ExportedProgram JSON, and as the other JSON
// documents the torch.export importer reads (a .pt2 weights config, nrt's torch extras). Each
// must give a clean error or a result. An imported program that verifies must export, and
// importing that export must give the same program again (the round-trip property: a difference
// traps). Built and run by scripts/fuzz.sh; seeds: ../shared/conformance/torch_export/*.json.
#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

#include "serializer/program_file.h"
#include "serializer/torch_export/export_json.h"
#include "serializer/torch_export/import_json.h"
#include "serializer/torch_export/payload_config.h"
#include "serializer/torch_export/torch_extras.h"
#include "serializer/write_program.h"

namespace {

std::vector<uint8_t> serialized(const nrt::ProgramWithWeights& p) {
  std::vector<std::span<const uint8_t>> spans(p.storages.begin(), p.storages.end());
  auto bytes = nrt::serialize_program(p.program, spans);
  return bytes ? *bytes : std::vector<uint8_t>{};
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  std::vector<std::string> warnings;
  (void)nrt::torch_export::read_payload_config(text, "config", &warnings);
  (void)nrt::torch_export::extras_from_json(text);

  auto imported = nrt::torch_export::import_torch_json(text);
  if (!imported) return 0;
  const auto bytes = serialized(imported->program);
  if (bytes.empty()) return 0;
  auto file = nrt::ProgramFile::from_bytes(bytes);
  if (!file) return 0;
  auto exported = nrt::torch_export::export_torch_json(imported->program.program, "model");
  if (!exported) __builtin_trap();  // everything the importer builds has a torch form
  auto again = nrt::torch_export::import_torch_json(*exported);
  if (!again || serialized(again->program) != bytes) __builtin_trap();
  return 0;
}
