// A tensor or DTensor saved by torch.save: the zip a `use_pickle` weight record of a .pt2 holds
// (`archive/data.pkl`, storages as `archive/data/<key>`, `byteorder`, ...). The pickle is read by
// the restricted reader (serializer/pickle_reader.h) against kTorchSaveAllowlist; the tree it
// gives is interpreted here, never executed: torch._utils._rebuild_tensor_v2 and
// _rebuild_parameter give a plain tensor, torch._tensor._rebuild_from_type_v2 over
// _rebuild_wrapper_subclass with torch.distributed.tensor.DTensor a DTensor (its local tensor, and
// from its DTensorSpec the placements, global shape, and the device mesh: shape, rank map, dim
// names, the process group name of each mesh dim, and the saving rank with its coordinate).
//
// A storage's persistent id ('storage', <T>Storage, key, location, numel) must name a record
// `data/<key>` of the same zip whose size is numel times the element size (NRT-E913), and the
// tensor's view must lie inside it.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "core/error.h"
#include "schema/nrt_generated.h"
#include "serializer/pickle_reader.h"

namespace nrt::torch_export {

struct AllowedGlobal {
  std::string_view name;    // "module.name"
  std::string_view reason;  // why torch.save's pickles name it
};
// Every global a torch.save pickle of a tensor or DTensor may name, with its reason.
std::span<const AllowedGlobal> torch_save_allowlist();
const pickle::Allowlist& torch_save_allowset();

struct SavedDTensorSpec {
  std::vector<fb::Placement> placements;   // one per mesh dim
  std::vector<int64_t> global_sizes;
  std::vector<int64_t> global_strides;
  std::vector<int64_t> mesh_shape;
  std::vector<int32_t> mesh_ranks;         // row-major over mesh_shape
  std::vector<std::string> dim_names;      // empty or one per mesh dim
  std::vector<std::string> dim_group_names;  // torch's process group name per mesh dim, or empty
  fb::DeviceType device_type = fb::DeviceType::CPU;
  int64_t rank = -1;                       // the rank that saved it
  std::vector<int64_t> coordinate;         // that rank's mesh coordinate
};

struct SavedTensor {
  fb::TensorMetaT meta;           // the local tensor: dtype, sizes, strides, storage offset, requires_grad
  std::vector<uint8_t> storage;   // the whole storage the local tensor views
  std::optional<SavedDTensorSpec> dtensor;
};

// `what` names the record in messages.
Result<SavedTensor> read_saved_tensor(std::vector<uint8_t> zip_bytes, const std::string& what);

// The torch.save zip of a DTensor parameter, as torch.export.save writes one per rank:
// `archive/data.pkl` (protocol 2, the globals of the allowlist only), the local tensor's storage
// as `archive/data/0`, the mesh's rank map as `archive/data/1` (int32). `tensor.meta` views
// `tensor.storage`; `tensor.dtensor` must be set. torch.export.load reads it back as a DTensor.
Result<std::vector<uint8_t>> write_saved_dtensor(const SavedTensor& tensor);

}  // namespace nrt::torch_export
