// libFuzzer target: arbitrary bytes as a .pt2 archive. Opening, reading every entry (bounded)
// and importing must give a clean error or a result; an imported program that verifies must
// export to a .pt2 that imports to the same program again (a difference traps). Built and run
// by scripts/fuzz.sh; seeds: testdata/torch/*/model.pt2.
#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "serializer/program_file.h"
#include "serializer/torch_export/export_pt2.h"
#include "serializer/torch_export/import_pt2.h"
#include "serializer/torch_export/pt2_archive.h"
#include "serializer/write_program.h"

namespace {

std::vector<uint8_t> serialized(const nrt::ProgramWithWeights& p) {
  std::vector<std::span<const uint8_t>> spans(p.storages.begin(), p.storages.end());
  auto bytes = nrt::serialize_program(p.program, spans);
  return bytes ? *bytes : std::vector<uint8_t>{};
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  auto reader = nrt::torch_export::Pt2Reader::from_bytes(std::vector<uint8_t>(data, data + size));
  if (!reader) return 0;
  for (const auto& name : reader->names()) (void)reader->read(name, 1 << 20);
  auto imported = nrt::torch_export::import_pt2(*reader);
  if (!imported) return 0;
  // A per-rank DTensor archive's program exports back as torch's per-rank archive, except where its
  // dtype has no torch.save storage class nrt writes (a clean error, not a bug).
  bool shards = false;
  for (const auto& w : imported->program.program.weights) shards |= !w->shard_coordinate.empty();
  const auto bytes = serialized(imported->program);
  if (bytes.empty() || !nrt::ProgramFile::from_bytes(bytes)) return 0;
  auto archive = nrt::torch_export::export_pt2(imported->program, {});
  if (!archive && shards) return 0;
  if (!archive) __builtin_trap();
  auto again_reader = nrt::torch_export::Pt2Reader::from_bytes(std::move(*archive));
  if (!again_reader) __builtin_trap();
  auto again = nrt::torch_export::import_pt2(*again_reader);
  if (!again || serialized(again->program) != bytes) __builtin_trap();
  return 0;
}
