#include "serializer/torch_export/import_pt2.h"

#include <algorithm>
#include <unordered_map>

#include "serializer/input_limits.h"
#include "core/schema_enums.h"
#include "serializer/torch_export/dtensor_parameters.h"
#include "serializer/torch_export/payload_config.h"
#include "serializer/torch_export/torch_saved_tensor.h"
#include "serializer/torch_export/torch_error_codes.h"

namespace nrt::torch_export {
namespace {

constexpr std::string_view kModelsDir = "models/";
constexpr std::string_view kWeightsDir = "data/weights/";
constexpr std::string_view kConstantsDir = "data/constants/";

bool starts_with(std::string_view s, std::string_view prefix) { return s.substr(0, prefix.size()) == prefix; }
bool ends_with(std::string_view s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.substr(s.size() - suffix.size()) == suffix;
}

Status refuse_legacy(const Pt2Reader& archive) {
  for (const auto& name : archive.raw_names()) {
    const std::string_view base = std::string_view(name).substr(name.rfind('/') == std::string::npos ? 0 : name.rfind('/') + 1);
    if (base == "serialized_exported_program.json" || base == "serialized_state_dict.json") {
      return make_error(codes::kLegacyArchive,
                        "this is a legacy torch.export archive (the layout of torch before 2.6: entry '" + name +
                            "' beside a pickled state dict); nrt reads the PT2 archive format of "
                            "torch.export.save in torch 2.6 and later: re-export the program");
    }
  }
  for (const auto& name : archive.names()) {
    for (const std::string_view dir : {kWeightsDir, kConstantsDir}) {
      if (!starts_with(name, dir) || !ends_with(name, ".pt") || name.find('/', dir.size()) != std::string::npos) {
        continue;
      }
      return make_error(codes::kLegacyArchive,
                        "entry '" + archive.root() + "/" + name +
                            "' is a legacy pickled weights file (torch before 2.6); nrt reads raw weights "
                            "listed in *_weights_config.json: re-export the program");
    }
  }
  return {};
}

Status check_format(const Pt2Reader& archive) {
  if (archive.root().empty()) {
    return make_error(codes::kArchiveCorrupt, "the archive's first entry '" + archive.raw_names().front() +
                                                  "' is not inside a folder; a .pt2 keeps everything under one root folder");
  }
  NRT_TRY(format, archive.read_text("archive_format", 64));
  if (*format != "pt2") {
    return make_error(codes::kArchiveCorrupt, "archive_format is '" + format->substr(0, 16) + "', not 'pt2'");
  }
  NRT_TRY(version, archive.read_text("archive_version", 64));
  if (*version != "0") {
    return make_error(codes::kArchiveCorrupt, "archive_version is '" + version->substr(0, 16) +
                                                  "'; nrt reads version 0 of the PT2 archive format");
  }
  return {};
}

// Bytes a strided view needs: (offset + sum((size-1) * stride) + 1) * element size; 0 if empty.
Result<uint64_t> view_bytes(const fb::TensorMetaT& meta, const std::string& where) {
  const size_t element = element_size(meta.dtype);
  if (element == 0) return make_error(codes::kWeightsConfigMismatch, where + ": dtype has no element size");
  if (meta.strides.size() != meta.sizes.size()) {
    return make_error(codes::kWeightsConfigMismatch, where + ": " + std::to_string(meta.sizes.size()) + " sizes but " +
                                                         std::to_string(meta.strides.size()) + " strides");
  }
  auto literal = [](const fb::SymDimT* dim) -> std::optional<int64_t> {
    if (dim == nullptr) return 0;
    if (!dim->expr.empty()) return std::nullopt;
    return dim->literal;
  };
  const auto offset = literal(meta.storage_offset.get());
  if (!offset || *offset < 0) {
    return make_error(codes::kWeightsConfigMismatch, where + ": storage offset is symbolic or negative");
  }
  uint64_t last = static_cast<uint64_t>(*offset);
  for (size_t d = 0; d < meta.sizes.size(); ++d) {
    const auto size = literal(meta.sizes[d].get());
    const auto stride = literal(meta.strides[d].get());
    if (!size || !stride || *size < 0 || *stride < 0) {
      return make_error(codes::kWeightsConfigMismatch, where + ": dimension " + std::to_string(d) +
                                                           " needs a non-negative literal size and stride");
    }
    if (*size == 0) return uint64_t{0};
    uint64_t reach = 0;
    if (__builtin_mul_overflow(static_cast<uint64_t>(*size - 1), static_cast<uint64_t>(*stride), &reach) ||
        __builtin_add_overflow(last, reach, &last)) {
      return make_error(codes::kWeightsConfigMismatch, where + ": extent overflows 64 bits");
    }
  }
  uint64_t bytes = 0;
  if (__builtin_add_overflow(last, uint64_t{1}, &bytes) || __builtin_mul_overflow(bytes, element, &bytes)) {
    return make_error(codes::kWeightsConfigMismatch, where + ": extent overflows 64 bits");
  }
  return bytes;
}

// Reads one payload config and its raw records into `result`.
class PayloadReader {
 public:
  PayloadReader(const Pt2Reader& archive, TorchImport* result, std::unordered_map<std::string, uint32_t>* fqns)
      : archive_(archive), result_(result), fqns_(fqns) {}

  Status read(std::string_view dir, const std::string& config_name) {
    const std::string config_path = std::string(dir) + config_name;
    const std::string where = archive_.root() + "/" + config_path;
    NRT_TRY(text, archive_.read_text(config_path, kMaxTorchJsonBytes));
    NRT_TRY(entries, read_payload_config(*text, where, &result_->warnings));
    // A record is read only as far as the tensors that view it reach: a record that inflates to
    // more is neither allocated nor written out (a small archive cannot make a huge program).
    for (const auto& entry : *entries) {
      if (!entry.tensor_meta) continue;
      auto needed = view_bytes(*entry.tensor_meta, where);
      if (!needed) continue;  // add() reports it
      uint64_t& reach = reach_[std::string(dir) + entry.path_name];
      reach = std::max(reach, *needed);
    }
    for (auto& entry : *entries) {
      NRT_RETURN_IF_ERROR(add(dir, where, std::move(entry)));
    }
    return {};
  }

 private:
  Status add(std::string_view dir, const std::string& config, PayloadEntry entry) {
    const std::string record = std::string(dir) + entry.path_name;
    const std::string where = config + " entry '" + entry.fqn + "' (" + archive_.root() + "/" + record + ")";
    if (starts_with(entry.path_name, "custom_obj_") || starts_with(entry.path_name, "opaque_obj_") ||
        (entry.use_pickle && !entry.tensor_meta)) {
      return make_error(codes::kPickledPayload, where + ": a pickled TorchBind or opaque custom object; nrt reads "
                                                        "tensors and DTensors only");
    }
    if (!entry.tensor_meta) return make_error(codes::kWeightsConfigMismatch, where + ": no tensor_meta for a raw tensor");
    if (entry.path_name.empty() || entry.path_name.find('/') != std::string::npos) {
      return make_error(codes::kWeightsConfigMismatch, where + ": path_name '" + entry.path_name + "' is not a record name");
    }
    if (entry.use_pickle) return add_pickled(record, where, std::move(entry));
    auto& program = result_->program;
    uint32_t storage = 0;
    const uint64_t reach = reach_[record];
    auto recorded = archive_.size(record);
    if (!recorded) return make_error(recorded.error().code, where + ": " + recorded.error().message);
    auto cached = storages_.find(record);
    if (cached == storages_.end() || program.storages[cached->second].size() < reach) {
      // First use, or a later model's tensors reach further into a record an earlier one read.
      auto bytes = archive_.read_prefix(record, reach);
      if (!bytes) return make_error(bytes.error().code, where + ": " + bytes.error().message);
      if (*recorded > reach) {
        result_->warnings.push_back(archive_.root() + "/" + record + " holds " + std::to_string(*recorded) +
                                    " bytes; its tensors use the first " + std::to_string(reach) +
                                    ", the rest is not read");
      }
      if (cached != storages_.end()) {
        storage = cached->second;
        program.storages[storage] = std::move(*bytes);
      } else {
        storage = static_cast<uint32_t>(program.storages.size());
        program.storages.push_back(std::move(*bytes));
        program.program.storages.push_back(std::make_unique<fb::StorageT>());
        storages_.emplace(record, storage);
      }
    } else {
      storage = cached->second;
    }
    const uint64_t held = program.storages[storage].size();
    const size_t element = element_size(entry.tensor_meta->dtype);
    if (element != 0 && *recorded % element != 0) {
      return make_error(codes::kWeightsConfigMismatch, where + ": the record holds " + std::to_string(*recorded) +
                                                           " bytes, not a whole number of " + std::to_string(element) +
                                                           "-byte elements");
    }
    NRT_TRY(needed, view_bytes(*entry.tensor_meta, where));
    if (*needed > held) {
      return make_error(codes::kWeightsConfigMismatch, where + ": the tensor's sizes and strides need " +
                                                           std::to_string(*needed) + " bytes but the record holds " +
                                                           std::to_string(held));
    }
    if (!fqns_->emplace(entry.fqn, static_cast<uint32_t>(program.program.weights.size())).second) {
      return make_error(codes::kDuplicateName, where + ": another payload has the same name");
    }
    auto weight = std::make_unique<fb::WeightTensorT>();
    weight->fqn = entry.fqn;
    weight->storage = storage;
    weight->meta = std::move(entry.tensor_meta);
    weight->is_parameter = entry.is_param;
    program.program.weights.push_back(std::move(weight));
    return {};
  }

  // A tensor or DTensor saved by torch.save (torch_saved_tensor.h): its storage becomes one nrt
  // storage, the weight its local tensor; a DTensor's spec is kept for apply_dtensor_parameters.
  Status add_pickled(const std::string& record, const std::string& where, PayloadEntry entry) {
    auto bytes = archive_.read(record);
    if (!bytes) return make_error(bytes.error().code, where + ": " + bytes.error().message);
    NRT_TRY(saved, read_saved_tensor(std::move(*bytes), where));
    const fb::TensorMetaT& config = *entry.tensor_meta;
    std::vector<int64_t> config_sizes;
    for (const auto& d : config.sizes) config_sizes.push_back(d ? d->literal : 0);
    std::vector<int64_t> local_sizes;
    for (const auto& d : saved->meta.sizes) local_sizes.push_back(d->literal);
    const std::vector<int64_t>& expected = saved->dtensor ? saved->dtensor->global_sizes : local_sizes;
    if (config.dtype != saved->meta.dtype || config_sizes != expected) {
      return make_error(codes::kWeightsConfigMismatch,
                        where + ": the config's tensor_meta disagrees with the pickled " +
                            (saved->dtensor ? "DTensor's global" : "tensor's") + " dtype or sizes");
    }
    if (!fqns_->emplace(entry.fqn, static_cast<uint32_t>(result_->program.program.weights.size())).second) {
      return make_error(codes::kDuplicateName, where + ": another payload has the same name");
    }
    auto& program = result_->program;
    const auto storage = static_cast<uint32_t>(program.storages.size());
    program.storages.push_back(std::move(saved->storage));
    program.program.storages.push_back(std::make_unique<fb::StorageT>());
    auto weight = std::make_unique<fb::WeightTensorT>();
    weight->fqn = entry.fqn;
    weight->storage = storage;
    weight->meta = std::make_unique<fb::TensorMetaT>(std::move(saved->meta));
    if (config.device) weight->meta->device = std::make_unique<fb::DeviceT>(*config.device);
    weight->is_parameter = entry.is_param;
    if (saved->dtensor) {
      weight->shard_coordinate = saved->dtensor->coordinate;
      if (!dtensor_parameters_.empty() && dtensor_parameters_.begin()->second.rank != saved->dtensor->rank) {
        return make_error(codes::kWeightsConfigMismatch,
                          where + ": saved by rank " + std::to_string(saved->dtensor->rank) + " but '" +
                              dtensor_parameters_.begin()->first + "' by rank " +
                              std::to_string(dtensor_parameters_.begin()->second.rank) + "; one archive holds one rank's shards");
      }
      dtensor_parameters_.emplace(entry.fqn, std::move(*saved->dtensor));
    }
    program.program.weights.push_back(std::move(weight));
    return {};
  }

 public:
  const DTensorParameters& dtensor_parameters() const { return dtensor_parameters_; }

 private:
  DTensorParameters dtensor_parameters_;
  const Pt2Reader& archive_;
  TorchImport* result_;
  std::unordered_map<std::string, uint32_t>* fqns_;
  std::unordered_map<std::string, uint32_t> storages_;  // record -> storage
  std::unordered_map<std::string, uint64_t> reach_;     // record -> bytes its tensors reach
};

}  // namespace

Result<TorchImport> import_pt2(const Pt2Reader& archive, const std::string& model) {
  NRT_RETURN_IF_ERROR(refuse_legacy(archive));
  NRT_RETURN_IF_ERROR(check_format(archive));

  std::vector<std::string> models;
  for (const auto& name : archive.names()) {
    if (starts_with(name, kModelsDir) && ends_with(name, ".json") && name.size() > kModelsDir.size() + 5) {
      std::string m = name.substr(kModelsDir.size(), name.size() - kModelsDir.size() - 5);
      if (m.find('/') == std::string::npos) models.push_back(std::move(m));
    }
  }
  if (models.empty()) {
    return make_error(codes::kArchiveEntryMissing, "the archive has no models/<name>.json under '" + archive.root() + "/'");
  }
  if (!model.empty()) {
    if (std::find(models.begin(), models.end(), model) == models.end()) {
      std::string names;
      for (const auto& m : models) names += (names.empty() ? "'" : ", '") + m + "'";
      return make_error(ErrorCode::InvalidArgument, "the archive has no model '" + model + "' (it has " + names + ")");
    }
    models = {model};
  }

  TorchImport result;
  std::unordered_map<std::string, uint32_t> fqns;
  PayloadReader weights(archive, &result, &fqns), constants(archive, &result, &fqns);
  for (const auto& m : models) {
    const std::string json_path = std::string(kModelsDir) + m + ".json";
    NRT_TRY(text, archive.read_text(json_path, kMaxTorchJsonBytes));
    if (Status s = add_exported_program(*text, m, &result.program.program, &result.warnings); !s) {
      return make_error(s.error().code, archive.root() + "/" + json_path + ": " + s.error().message);
    }
    NRT_RETURN_IF_ERROR(weights.read(kWeightsDir, m + "_weights_config.json"));
    NRT_RETURN_IF_ERROR(constants.read(kConstantsDir, m + "_constants_config.json"));
  }
  for (const PayloadReader* payloads : {&weights, &constants}) {
    if (Status s = apply_dtensor_parameters(payloads->dtensor_parameters(), &result.program.program); !s) {
      return make_error(s.error().code, archive.root() + ": " + s.error().message);
    }
  }

  // What the archive holds beyond models and payloads is not part of an nrt program.
  bool sample_inputs = false, extra = false, aoti = false;
  for (const auto& name : archive.names()) {
    // An empty record (what nrt writes) stands for "no example inputs": nothing is lost.
    sample_inputs |= starts_with(name, "data/sample_inputs/") && archive.size(name).ok() && *archive.size(name) > 0;
    extra |= starts_with(name, "extra/");
    aoti |= starts_with(name, "data/aotinductor/");
  }
  if (sample_inputs) result.warnings.push_back("data/sample_inputs/ (pickled example inputs) is not imported");
  if (extra) result.warnings.push_back("extra/ files are not imported");
  if (aoti) result.warnings.push_back("data/aotinductor/ artifacts are not imported");

  // Signature targets without data (torch.export.load would fail on them too).
  for (const uint32_t e : result.program.program.entry_points) {
    const auto& graph = *result.program.program.graphs[e];
    if (!graph.signature) continue;
    for (const auto& spec : graph.signature->inputs) {
      const bool needs_data = spec->kind == fb::InputKind::PARAMETER || spec->kind == fb::InputKind::BUFFER ||
                              spec->kind == fb::InputKind::TENSOR_CONSTANT;
      if (needs_data && !fqns.count(spec->target)) {
        result.warnings.push_back(graph.name + ": input '" + spec->target + "' has no payload in the archive");
      }
    }
  }
  return result;
}

Result<TorchImport> import_pt2_file(const std::string& path, const std::string& model) {
  auto archive = Pt2Reader::open(path);
  if (!archive) return make_error(archive.error().code, path + ": " + archive.error().message);
  auto result = import_pt2(*archive, model);
  if (!result) return make_error(result.error().code, path + ": " + result.error().message);
  return result;
}

}  // namespace nrt::torch_export
