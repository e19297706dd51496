#include "serializer/torch_export/export_pt2.h"

#include <charconv>
#include <map>
#include <optional>
#include <unordered_map>

#include "serializer/checksum.h"
#include "serializer/torch_export/export_json.h"
#include "serializer/torch_export/payload_config.h"
#include "serializer/torch_export/pt2_archive.h"
#include "serializer/torch_export/torch_extras.h"

namespace nrt::torch_export {
namespace {

enum class Payload { kWeights, kConstants };

// Which config each weight (by fqn) belongs to, from the entry graph's signature.
std::unordered_map<std::string, Payload> payload_kinds(const fb::GraphT& graph) {
  std::unordered_map<std::string, Payload> kinds;
  if (!graph.signature) return kinds;
  for (const auto& spec : graph.signature->inputs) {
    switch (spec->kind) {
      case fb::InputKind::PARAMETER:
        kinds.emplace(spec->target, Payload::kWeights);
        break;
      case fb::InputKind::BUFFER:
        kinds.emplace(spec->target, spec->persistent ? Payload::kWeights : Payload::kConstants);
        break;
      case fb::InputKind::TENSOR_CONSTANT:
        kinds.emplace(spec->target, Payload::kConstants);
        break;
      default:
        break;
    }
  }
  return kinds;
}

std::unique_ptr<fb::TensorMetaT> copy_meta(const fb::TensorMetaT& meta) { return std::make_unique<fb::TensorMetaT>(meta); }

// 40 decimal digits from the archive's contents, in the spirit of PyTorch's serialization id.
std::string serialization_id(const std::vector<Pt2Entry>& entries) {
  std::string all;
  for (const auto& entry : entries) {
    const auto sum = checksum_of(entry.bytes);
    all.append(reinterpret_cast<const char*>(&sum), sizeof sum);
  }
  const auto sum = checksum_of({reinterpret_cast<const uint8_t*>(all.data()), all.size()});
  std::string id;
  for (const uint64_t half : {sum.low(), sum.high()}) {
    char digits[24];
    const auto end = std::to_chars(digits, digits + sizeof digits, half).ptr;
    id += std::string(20 - static_cast<size_t>(end - digits), '0') + std::string(digits, end);
  }
  return id;
}

}  // namespace

Result<std::vector<uint8_t>> export_pt2(const ProgramWithWeights& input, const Pt2ExportOptions& options) {
  const fb::ProgramT& program = input.program;
  std::vector<uint32_t> models;
  if (!options.model.empty()) {
    NRT_TRY(name, pick_entry_graph(program, options.model));
  }
  for (const uint32_t e : program.entry_points) {
    if (e >= program.graphs.size()) return make_error(ErrorCode::GraphIndexOutOfRange, "entry point " + std::to_string(e));
    const std::string& name = program.graphs[e]->name;
    if (!options.model.empty() && name != options.model) continue;
    if (name.empty() || name.find('/') != std::string::npos || name == "." || name == "..") {
      return make_error(ErrorCode::InvalidArgument, "entry graph name '" + name + "' cannot name a models/<name>.json entry");
    }
    models.push_back(e);
  }
  if (models.empty()) return make_error(ErrorCode::NoEntryPoint, "the program has no entry graph to export");
  if (input.storages.size() != program.storages.size()) {
    return make_error(ErrorCode::InvalidArgument, "the program has " + std::to_string(program.storages.size()) +
                                                      " storages but " + std::to_string(input.storages.size()) +
                                                      " byte buffers");
  }

  // Text and bytes the entries point into; node-based containers keep addresses stable.
  std::map<std::string, std::string> texts;
  std::vector<Pt2Entry> entries;
  auto add_text = [&](const std::string& name, std::string text) {
    auto& stored = texts[name] = std::move(text);
    entries.push_back({name, {reinterpret_cast<const uint8_t*>(stored.data()), stored.size()}});
  };

  std::map<std::pair<Payload, uint32_t>, std::string> records;  // (dir, storage) -> record name
  uint32_t next_weight = 0, next_tensor = 0;
  std::vector<bool> claimed(program.weights.size(), false);
  for (size_t m = 0; m < models.size(); ++m) {
    const fb::GraphT& graph = *program.graphs[models[m]];
    NRT_TRY(extras, find_extras(program, graph.name));
    const NoneStyle style = *extras ? (*extras)->style : NoneStyle{};
    const auto kinds = payload_kinds(graph);
    std::vector<PayloadEntry> configs[2];
    for (size_t w = 0; w < program.weights.size(); ++w) {
      const fb::WeightTensorT& weight = *program.weights[w];
      auto kind = kinds.find(weight.fqn);
      // Weights no signature names: the first model keeps them, in its weights config.
      if (kind == kinds.end() && (m != 0 || claimed[w])) continue;
      claimed[w] = true;
      const Payload payload = kind == kinds.end() ? Payload::kWeights : kind->second;
      if (weight.storage >= program.storages.size() || !weight.meta) {
        return make_error(ErrorCode::StorageIndexOutOfRange, "weight '" + weight.fqn + "' has no storage or metadata");
      }
      auto [record, added] = records.emplace(std::make_pair(payload, weight.storage), std::string());
      if (added) {
        record->second = payload == Payload::kWeights ? "weight_" + std::to_string(next_weight++)
                                                      : "tensor_" + std::to_string(next_tensor++);
        const auto& bytes = input.storages[weight.storage];
        entries.push_back({std::string(payload == Payload::kWeights ? "data/weights/" : "data/constants/") +
                               record->second,
                           {bytes.data(), bytes.size()}});
      }
      PayloadEntry entry;
      entry.fqn = weight.fqn;
      entry.path_name = record->second;
      entry.is_param = weight.is_parameter;
      entry.tensor_meta = copy_meta(*weight.meta);
      configs[payload == Payload::kWeights ? 0 : 1].push_back(std::move(entry));
    }
    for (const Payload payload : {Payload::kWeights, Payload::kConstants}) {
      NRT_TRY(text, write_payload_config(configs[payload == Payload::kWeights ? 0 : 1], style));
      add_text(payload == Payload::kWeights ? "data/weights/" + graph.name + "_weights_config.json"
                                            : "data/constants/" + graph.name + "_constants_config.json",
               std::move(*text));
    }
    NRT_TRY(json, export_torch_json(program, graph.name));
    add_text("models/" + graph.name + ".json", std::move(*json));
    add_text("data/sample_inputs/" + graph.name + ".pt", "");
  }
  add_text("archive_format", "pt2");
  add_text("archive_version", "0");
  add_text(".data/version", "6\n");  // PyTorch's zip container version for archives it writes
  add_text("byteorder", "little");
  add_text(".data/serialization_id", serialization_id(entries));
  return write_pt2_archive(options.root, entries);
}

}  // namespace nrt::torch_export
