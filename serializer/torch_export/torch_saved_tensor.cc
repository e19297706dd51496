#include "serializer/torch_export/torch_saved_tensor.h"

#include <algorithm>
#include <array>
#include <cstring>
#include <map>

#include "core/schema_enums.h"
#include "serializer/input_limits.h"
#include "serializer/pickle_writer.h"
#include "serializer/torch_export/pt2_archive.h"

namespace nrt::torch_export {
namespace {

using pickle::Kind;
using pickle::kNoNode;
using pickle::Pickle;

struct DtypeName {
  std::string_view dtype;    // torch.<dtype>, as a pickled dtype names it
  std::string_view storage;  // torch.<Storage>, as a typed storage's persistent id names it
  fb::ScalarType type;
};

constexpr std::array<DtypeName, 12> kDtypes = {{
    {"torch.float32", "torch.FloatStorage", fb::ScalarType::FLOAT32},
    {"torch.float64", "torch.DoubleStorage", fb::ScalarType::FLOAT64},
    {"torch.float16", "torch.HalfStorage", fb::ScalarType::FLOAT16},
    {"torch.bfloat16", "torch.BFloat16Storage", fb::ScalarType::BFLOAT16},
    {"torch.int64", "torch.LongStorage", fb::ScalarType::INT64},
    {"torch.int32", "torch.IntStorage", fb::ScalarType::INT32},
    {"torch.int16", "torch.ShortStorage", fb::ScalarType::INT16},
    {"torch.int8", "torch.CharStorage", fb::ScalarType::INT8},
    {"torch.uint8", "torch.ByteStorage", fb::ScalarType::UINT8},
    {"torch.bool", "torch.BoolStorage", fb::ScalarType::BOOL},
    {"torch.complex64", "torch.ComplexFloatStorage", fb::ScalarType::COMPLEX64},
    {"torch.complex128", "torch.ComplexDoubleStorage", fb::ScalarType::COMPLEX128},
}};

constexpr std::string_view kRebuildTensor = "torch._utils._rebuild_tensor_v2";
constexpr std::string_view kRebuildParameter = "torch._utils._rebuild_parameter";
constexpr std::string_view kRebuildParameterWithState = "torch._utils._rebuild_parameter_with_state";
constexpr std::string_view kRebuildFromType = "torch._tensor._rebuild_from_type_v2";
constexpr std::string_view kRebuildWrapperSubclass = "torch._utils._rebuild_wrapper_subclass";
constexpr std::string_view kDTensor = "torch.distributed.tensor.DTensor";
constexpr std::string_view kDTensorSpec = "torch.distributed.tensor._dtensor_spec.DTensorSpec";
constexpr std::string_view kTensorMeta = "torch.distributed.tensor._dtensor_spec.TensorMeta";
constexpr std::string_view kDeviceMesh = "torch.distributed.device_mesh.DeviceMesh";
constexpr std::string_view kMeshLayout = "torch.distributed._mesh_layout._MeshLayout";
constexpr std::string_view kFlatLayout = "torch.distributed._mesh_layout._FlatLayout";
constexpr std::string_view kShard = "torch.distributed.tensor.placement_types.Shard";
constexpr std::string_view kStridedShard = "torch.distributed.tensor.placement_types._StridedShard";
constexpr std::string_view kReplicate = "torch.distributed.tensor.placement_types.Replicate";
constexpr std::string_view kPartial = "torch.distributed.tensor.placement_types.Partial";
constexpr std::string_view kSize = "torch.Size";
constexpr std::string_view kGetLayout = "torch.serialization._get_layout";
constexpr std::string_view kDevice = "torch.device";

constexpr AllowedGlobal kAllowed[] = {
    {kRebuildTensor, "rebuilds a strided tensor from a storage, offset, sizes and strides (every torch.save of a tensor)"},
    {kRebuildParameter, "wraps a saved tensor as an nn.Parameter (torch.save of a parameter)"},
    {kRebuildParameterWithState, "the same for a parameter with extra attributes (the state is ignored)"},
    {kRebuildFromType, "rebuilds a tensor subclass from its rebuild function and state (DTensor parameters)"},
    {kRebuildWrapperSubclass, "the rebuild function of wrapper subclasses: dtype, global sizes, strides, device"},
    {kDTensor, "the subclass a DTensor parameter is rebuilt as"},
    {kDTensorSpec, "a DTensor's spec: mesh, placements, global tensor meta"},
    {kTensorMeta, "the global shape, strides and dtype in a DTensorSpec"},
    {"torch.distributed.tensor._dtensor_spec.ShardOrderEntry", "the shard order a DTensorSpec records (read, not needed)"},
    {kDeviceMesh, "the mesh a DTensor lives on: device type, layout, rank map, dim names, group names, rank"},
    {kMeshLayout, "a mesh's layout: one flat layout per mesh dim"},
    {kFlatLayout, "one mesh dim's extent and stride into the rank map"},
    {kShard, "placement Shard(dim)"},
    {kStridedShard, "placement _StridedShard(dim, split_factor) (FSDP over TP)"},
    {kReplicate, "placement Replicate()"},
    {kPartial, "placement Partial(reduce_op)"},
    {kSize, "torch.Size of a TensorMeta"},
    {kGetLayout, "the tensor layout by name (only torch.strided is accepted)"},
    {kDevice, "the device a tensor was saved from"},
    {"collections.OrderedDict", "the backward-hooks argument of _rebuild_tensor_v2 (always empty)"},
    {"torch.float32", "dtype"},
    {"torch.float64", "dtype"},
    {"torch.float16", "dtype"},
    {"torch.bfloat16", "dtype"},
    {"torch.int64", "dtype"},
    {"torch.int32", "dtype"},
    {"torch.int16", "dtype"},
    {"torch.int8", "dtype"},
    {"torch.uint8", "dtype"},
    {"torch.bool", "dtype"},
    {"torch.complex64", "dtype"},
    {"torch.complex128", "dtype"},
    {"torch.FloatStorage", "typed storage class of a persistent id (its dtype)"},
    {"torch.DoubleStorage", "typed storage class"},
    {"torch.HalfStorage", "typed storage class"},
    {"torch.BFloat16Storage", "typed storage class"},
    {"torch.LongStorage", "typed storage class (also a mesh's rank map)"},
    {"torch.IntStorage", "typed storage class (a mesh's rank map)"},
    {"torch.ShortStorage", "typed storage class"},
    {"torch.CharStorage", "typed storage class"},
    {"torch.ByteStorage", "typed storage class"},
    {"torch.BoolStorage", "typed storage class"},
    {"torch.ComplexFloatStorage", "typed storage class"},
    {"torch.ComplexDoubleStorage", "typed storage class"},
};

// Bounds for what a saved tensor may claim (the storages themselves are zip records, bounded by
// the archive reader).
constexpr size_t kMaxRank = 64;

class Interpreter {
 public:
  Interpreter(const Pickle& p, const Pt2Reader& zip, const std::string& what) : p_(p), zip_(zip), what_(what) {}

  Result<SavedTensor> root() {
    const uint32_t r = p_.root();
    if (p_.is_object_of(r, kRebuildTensor)) return plain(r);
    if (p_.is_object_of(r, kRebuildParameter) || p_.is_object_of(r, kRebuildParameterWithState)) {
      NRT_TRY(args, args_of(r, 3, "a parameter"));
      NRT_TRY(tensor, plain((*args)[0]));
      if (auto grad = p_.as_int((*args)[1])) tensor->meta.requires_grad = *grad != 0;
      return std::move(*tensor);
    }
    if (p_.is_object_of(r, kRebuildFromType)) return subclass(r);
    return bad("the pickle's value is " + describe(r) + ", not a tensor torch.save writes");
  }

 private:
  Error bad(const std::string& why) const { return make_error(ErrorCode::PickleMalformed, what_ + ": " + why); }

  std::string describe(uint32_t n) const {
    const auto& node = p_.node(n);
    if (node.kind == Kind::kObject) return "an object made by " + p_.node(node.callee).text;
    static constexpr std::string_view kNames[] = {"None", "a bool", "an int", "a big int", "a float", "a string", "bytes",
                                                  "a tuple", "a list", "a dict", "a set", "a global", "an object",
                                                  "a persistent id"};
    return std::string(kNames[static_cast<size_t>(node.kind)]);
  }

  Result<std::span<const uint32_t>> args_of(uint32_t object, size_t at_least, const std::string& what) const {
    auto args = p_.as_sequence(p_.node(object).args);
    if (!args || args->size() < at_least) {
      return bad(what + " is rebuilt from " + std::to_string(args ? args->size() : 0) + " arguments; " +
                 std::to_string(at_least) + " expected");
    }
    return *args;
  }

  Result<int64_t> integer(uint32_t n, const std::string& what) const {
    auto v = p_.as_int(n);
    if (!v) return bad(what + " is " + describe(n) + ", not an int");
    return *v;
  }

  Result<std::vector<int64_t>> ints(uint32_t n, const std::string& what, size_t max_count = kMaxRank) const {
    uint32_t seq = n;
    if (p_.is_object_of(n, kSize)) {  // torch.Size((...))
      auto args = p_.as_sequence(p_.node(n).args);
      if (!args || args->size() != 1) return bad(what + ": torch.Size without its tuple");
      seq = (*args)[0];
    }
    auto items = p_.as_sequence(seq);
    if (!items) return bad(what + " is " + describe(n) + ", not a tuple of ints");
    if (items->size() > max_count) return bad(what + " has " + std::to_string(items->size()) + " entries (at most " + std::to_string(max_count) + ")");
    std::vector<int64_t> out;
    for (uint32_t i : *items) {
      NRT_TRY(v, integer(i, what));
      out.push_back(*v);
    }
    return out;
  }

  // A state's field: BUILD's dict, or the (dict, slots) pair tensors pickle.
  std::optional<uint32_t> field(uint32_t object, std::string_view key) const {
    const uint32_t state = p_.node(object).state;
    return field_of_state(state, key);
  }
  std::optional<uint32_t> field_of_state(uint32_t state, std::string_view key) const {
    if (state == kNoNode) return std::nullopt;
    if (auto pair = p_.as_sequence(state)) {
      for (uint32_t part : *pair) {
        if (auto v = p_.dict_get(part, key)) return v;
      }
      return std::nullopt;
    }
    return p_.dict_get(state, key);
  }
  Result<uint32_t> required(uint32_t object, std::string_view key, const std::string& what) const {
    auto v = field(object, key);
    if (!v) return bad(what + " has no '" + std::string(key) + "'");
    return *v;
  }

  Result<fb::ScalarType> dtype(uint32_t n, const std::string& what) const {
    const auto& node = p_.node(n);
    if (node.kind == Kind::kGlobal) {
      for (const auto& d : kDtypes) {
        if (node.text == d.dtype) return d.type;
      }
    }
    return bad(what + " is " + describe(n) + ", not a dtype");
  }

  // A persistent id ('storage', <T>Storage, key, location, numel) -> the record's bytes.
  Result<std::vector<uint8_t>> storage(uint32_t n, fb::ScalarType* type) {
    const auto& node = p_.node(n);
    if (node.kind != Kind::kPersistentId) return bad("a tensor's storage is " + describe(n) + ", not a persistent id");
    auto id = p_.as_sequence(node.args);
    if (!id || id->size() != 5 || p_.as_string((*id)[0]) != std::optional<std::string_view>("storage")) {
      return make_error(ErrorCode::PickleStorageInvalid, what_ + ": a persistent id that is not ('storage', type, key, location, numel)");
    }
    const auto& cls = p_.node((*id)[1]);
    const DtypeName* found = nullptr;
    for (const auto& d : kDtypes) {
      if (cls.kind == Kind::kGlobal && cls.text == d.storage) found = &d;
    }
    if (found == nullptr) return bad("a storage of type " + describe((*id)[1]) + " is not read");
    auto key = p_.as_string((*id)[2]);
    NRT_TRY(numel, integer((*id)[4], "a storage's element count"));
    if (!key || key->empty() || key->find('/') != std::string_view::npos || *numel < 0) {
      return make_error(ErrorCode::PickleStorageInvalid, what_ + ": a storage key that is not a record name");
    }
    const std::string record = "data/" + std::string(*key);
    if (!zip_.has(record)) {
      return make_error(ErrorCode::PickleStorageInvalid,
                        what_ + ": the pickle names storage '" + std::string(*key) + "' but the zip has no record '" +
                            zip_.root() + "/" + record + "'");
    }
    NRT_TRY(size, zip_.size(record));
    const uint64_t element = element_size(found->type);
    uint64_t expected = 0;
    if (__builtin_mul_overflow(static_cast<uint64_t>(*numel), element, &expected) || expected != *size) {
      return make_error(ErrorCode::PickleStorageInvalid,
                        what_ + ": storage '" + std::string(*key) + "' is " + std::to_string(*numel) + " elements of " +
                            std::to_string(element) + " bytes but its record holds " + std::to_string(*size) + " bytes");
    }
    *type = found->type;
    auto cached = storages_.find(record);
    if (cached != storages_.end()) return cached->second;
    NRT_TRY(bytes, zip_.read(record, *size));
    storages_.emplace(record, *bytes);
    return std::move(*bytes);
  }

  // _rebuild_tensor_v2(storage, storage_offset, size, stride, requires_grad, backward_hooks[, metadata])
  Result<SavedTensor> plain(uint32_t n) {
    if (!p_.is_object_of(n, kRebuildTensor)) return bad("a tensor is " + describe(n) + ", not a strided tensor");
    NRT_TRY(args, args_of(n, 5, "a tensor"));
    SavedTensor out;
    fb::ScalarType type = fb::ScalarType::UNKNOWN;
    NRT_TRY(bytes, storage((*args)[0], &type));
    NRT_TRY(offset, integer((*args)[1], "a tensor's storage offset"));
    NRT_TRY(sizes, ints((*args)[2], "a tensor's sizes"));
    NRT_TRY(strides, ints((*args)[3], "a tensor's strides"));
    if (sizes->size() != strides->size()) return bad("a tensor has " + std::to_string(sizes->size()) + " sizes but " + std::to_string(strides->size()) + " strides");
    // The view must lie inside the storage.
    const uint64_t element = element_size(type);
    const uint64_t numel = element ? bytes->size() / element : 0;
    if (*offset < 0) return make_error(ErrorCode::PickleStorageInvalid, what_ + ": a negative storage offset");
    uint64_t last = static_cast<uint64_t>(*offset);
    bool empty = false;
    for (size_t d = 0; d < sizes->size(); ++d) {
      if ((*sizes)[d] < 0 || (*strides)[d] < 0) return bad("a negative size or stride");
      empty |= (*sizes)[d] == 0;
    }
    for (size_t d = 0; d < sizes->size() && !empty; ++d) {
      uint64_t reach = 0;
      if (__builtin_mul_overflow(static_cast<uint64_t>((*sizes)[d] - 1), static_cast<uint64_t>((*strides)[d]), &reach) ||
          __builtin_add_overflow(last, reach, &last)) {
        return make_error(ErrorCode::PickleStorageInvalid, what_ + ": a view whose extent overflows");
      }
    }
    if (!empty && last >= numel) {
      return make_error(ErrorCode::PickleStorageInvalid, what_ + ": the tensor's view reaches element " + std::to_string(last) +
                                                             " of a storage of " + std::to_string(numel));
    }
    out.meta.dtype = type;
    for (int64_t s : *sizes) out.meta.sizes.push_back(literal(s));
    for (int64_t s : *strides) out.meta.strides.push_back(literal(s));
    out.meta.storage_offset = literal(*offset);
    if (auto grad = p_.as_int((*args)[4])) out.meta.requires_grad = *grad != 0;
    out.storage = std::move(*bytes);
    return out;
  }

  static std::unique_ptr<fb::SymDimT> literal(int64_t v) {
    auto d = std::make_unique<fb::SymDimT>();
    d->literal = v;
    return d;
  }

  // _rebuild_from_type_v2(_rebuild_wrapper_subclass, DTensor, (DTensor, dtype, size, stride,
  // storage_offset, layout, device, requires_grad), state)
  Result<SavedTensor> subclass(uint32_t r) {
    NRT_TRY(args, args_of(r, 4, "a tensor subclass"));
    const auto& func = p_.node((*args)[0]);
    const auto& type = p_.node((*args)[1]);
    if (func.kind != Kind::kGlobal || func.text != kRebuildWrapperSubclass || type.kind != Kind::kGlobal ||
        type.text != kDTensor) {
      return bad("a tensor subclass other than a DTensor (" + describe((*args)[1]) + ")");
    }
    auto wrapper = p_.as_sequence((*args)[2]);
    if (!wrapper || wrapper->size() < 8) return bad("a DTensor's wrapper arguments are not (cls, dtype, size, stride, offset, layout, device, requires_grad)");
    NRT_TRY(global_type, dtype((*wrapper)[1], "a DTensor's dtype"));
    NRT_TRY(global_sizes, ints((*wrapper)[2], "a DTensor's global sizes"));
    NRT_TRY(global_strides, ints((*wrapper)[3], "a DTensor's global strides"));
    const uint32_t layout = (*wrapper)[5];
    if (p_.is_object_of(layout, kGetLayout)) {
      auto name = p_.as_sequence(p_.node(layout).args);
      if (!name || name->size() != 1 || p_.as_string((*name)[0]) != std::optional<std::string_view>("torch.strided")) {
        return bad("a DTensor whose layout is not torch.strided");
      }
    }
    const uint32_t state = (*args)[3];
    auto local = field_of_state(state, "_local_tensor");
    auto spec = field_of_state(state, "_spec");
    if (!local || !spec) return bad("a DTensor's state lacks '_local_tensor' or '_spec'");
    NRT_TRY(tensor, plain(*local));
    if (tensor->meta.dtype != *global_type) return bad("a DTensor's local tensor has another dtype than the DTensor");
    if (auto grad = p_.as_int((*wrapper)[7])) tensor->meta.requires_grad = *grad != 0;
    NRT_TRY(saved, dtensor_spec(*spec));
    if (saved->global_sizes != *global_sizes) return bad("a DTensor's spec and wrapper disagree on its global sizes");
    saved->global_strides = *global_strides;
    tensor->dtensor = std::move(*saved);
    return std::move(*tensor);
  }

  Result<SavedDTensorSpec> dtensor_spec(uint32_t spec) {
    if (!p_.is_object_of(spec, kDTensorSpec)) return bad("a DTensor's '_spec' is " + describe(spec));
    SavedDTensorSpec out;
    NRT_TRY(meta, required(spec, "tensor_meta", "the DTensorSpec"));
    if (!p_.is_object_of(*meta, kTensorMeta)) return bad("the DTensorSpec's tensor_meta is " + describe(*meta));
    NRT_TRY(meta_args, args_of(*meta, 3, "a TensorMeta"));
    NRT_TRY(sizes, ints((*meta_args)[0], "the global sizes"));
    out.global_sizes = *sizes;
    NRT_TRY(mesh, required(spec, "mesh", "the DTensorSpec"));
    NRT_RETURN_IF_ERROR(device_mesh(*mesh, out));
    NRT_TRY(placements, required(spec, "placements", "the DTensorSpec"));
    auto items = p_.as_sequence(*placements);
    if (!items || items->size() != out.mesh_shape.size()) {
      return bad("the DTensorSpec has " + std::to_string(items ? items->size() : 0) + " placements for a " +
                 std::to_string(out.mesh_shape.size()) + "-D mesh");
    }
    for (uint32_t item : *items) {
      NRT_TRY(placement, placement_of(item));
      out.placements.push_back(*placement);
    }
    return out;
  }

  Result<fb::Placement> placement_of(uint32_t n) const {
    if (p_.is_object_of(n, kReplicate)) return fb::Placement(fb::PlacementKind::REPLICATE, fb::ReduceOp::SUM, 0, 0);
    if (p_.is_object_of(n, kShard) || p_.is_object_of(n, kStridedShard)) {
      const bool strided = p_.is_object_of(n, kStridedShard);
      NRT_TRY(dim_node, required(n, "dim", "a Shard placement"));
      NRT_TRY(dim, integer(*dim_node, "a Shard's dim"));
      int64_t factor = 0;
      if (strided) {
        NRT_TRY(sf, required(n, "split_factor", "a _StridedShard placement"));
        NRT_TRY(value, integer(*sf, "a _StridedShard's split_factor"));
        factor = *value;
      }
      if (*dim < 0 || *dim >= static_cast<int64_t>(kMaxRank) || factor < 0 || factor > INT32_MAX) {
        return bad("a Shard placement's dim or split factor is out of range");
      }
      return fb::Placement(strided ? fb::PlacementKind::STRIDED_SHARD : fb::PlacementKind::SHARD, fb::ReduceOp::SUM,
                           static_cast<int32_t>(*dim), static_cast<int32_t>(factor));
    }
    if (p_.is_object_of(n, kPartial)) {
      std::string_view op = "sum";
      if (auto r = field(n, "reduce_op")) {
        auto text = p_.as_string(*r);
        if (!text) return bad("a Partial's reduce_op is not a string");
        op = *text;
      }
      static constexpr std::pair<std::string_view, fb::ReduceOp> kOps[] = {
          {"sum", fb::ReduceOp::SUM}, {"avg", fb::ReduceOp::AVG}, {"product", fb::ReduceOp::PRODUCT},
          {"min", fb::ReduceOp::MINIMUM}, {"max", fb::ReduceOp::MAXIMUM}};
      for (const auto& [name, value] : kOps) {
        if (op == name) return fb::Placement(fb::PlacementKind::PARTIAL, value, 0, 0);
      }
      return bad("a Partial placement with reduce_op '" + std::string(op.substr(0, 32)) + "'");
    }
    return bad("a placement is " + describe(n));
  }

  Status device_mesh(uint32_t mesh, SavedDTensorSpec& out) {
    if (!p_.is_object_of(mesh, kDeviceMesh)) return bad("the DTensorSpec's mesh is " + describe(mesh));
    NRT_TRY(device, required(mesh, "_device_type", "the DeviceMesh"));
    auto device_name = p_.as_string(*device);
    if (!device_name) return bad("the DeviceMesh's _device_type is not a string");
    if (*device_name == "cpu") {
      out.device_type = fb::DeviceType::CPU;
    } else if (*device_name == "cuda") {
      out.device_type = fb::DeviceType::CUDA;
    } else {
      return bad("a DeviceMesh of device type '" + std::string(device_name->substr(0, 32)) + "'");
    }
    // The layout: one flat layout (extent, stride into the rank map) per mesh dim.
    NRT_TRY(layout, required(mesh, "_layout", "the DeviceMesh"));
    if (!p_.is_object_of(*layout, kMeshLayout)) return bad("the DeviceMesh's _layout is " + describe(*layout));
    NRT_TRY(axes_node, required(*layout, "axes", "the mesh layout"));
    auto axes = p_.as_sequence(*axes_node);
    if (!axes || axes->empty() || axes->size() > kMaxMeshDims) return bad("the mesh layout has no axes, or more than 16");
    std::vector<int64_t> strides;
    int64_t ranks = 1;
    for (uint32_t axis : *axes) {
      if (!p_.is_object_of(axis, kFlatLayout)) return bad("a mesh axis is " + describe(axis));
      NRT_TRY(shape_node, required(axis, "shape", "a mesh axis"));
      NRT_TRY(stride_node, required(axis, "stride", "a mesh axis"));
      NRT_TRY(shape, ints(*shape_node, "a mesh axis' shape"));
      NRT_TRY(stride, ints(*stride_node, "a mesh axis' stride"));
      if (shape->size() != 1 || stride->size() != 1) {
        return make_error(ErrorCode::NotSupported, what_ + ": a mesh dim laid out over several strides (a flattened mesh) is not read");
      }
      if ((*shape)[0] < 1 || (*stride)[0] < 0 || __builtin_mul_overflow(ranks, (*shape)[0], &ranks) || ranks > static_cast<int64_t>(kMaxMeshRanks)) {
        return bad("a mesh axis of extent " + std::to_string((*shape)[0]) + " (a mesh holds 1 to 2^20 ranks)");
      }
      out.mesh_shape.push_back((*shape)[0]);
      strides.push_back((*stride)[0]);
    }
    // The rank map: a tensor of ranks the layout indexes.
    NRT_TRY(map_node, required(mesh, "_rank_map", "the DeviceMesh"));
    NRT_TRY(map, plain(*map_node));
    if (map->meta.dtype != fb::ScalarType::INT32 && map->meta.dtype != fb::ScalarType::INT64) {
      return bad("the DeviceMesh's _rank_map is not an integer tensor");
    }
    const size_t element = element_size(map->meta.dtype);
    auto rank_at = [&](uint64_t index) -> std::optional<int64_t> {
      // The rank map is a flat view: element `index` of it.
      const int64_t offset = map->meta.storage_offset ? map->meta.storage_offset->literal : 0;
      const int64_t stride = map->meta.strides.empty() ? 1 : map->meta.strides[0]->literal;
      const int64_t count = map->meta.sizes.empty() ? 1 : map->meta.sizes[0]->literal;
      if (map->meta.sizes.size() > 1 || static_cast<int64_t>(index) >= count) return std::nullopt;
      const uint64_t at = (static_cast<uint64_t>(offset) + index * static_cast<uint64_t>(stride)) * element;
      if (at + element > map->storage.size()) return std::nullopt;
      if (element == 4) {
        int32_t v;
        std::memcpy(&v, map->storage.data() + at, 4);
        return v;
      }
      int64_t v;
      std::memcpy(&v, map->storage.data() + at, 8);
      return v;
    };
    std::vector<int64_t> coordinate(out.mesh_shape.size(), 0);
    for (int64_t flat = 0; flat < ranks; ++flat) {
      uint64_t index = 0;
      for (size_t d = 0; d < coordinate.size(); ++d) index += static_cast<uint64_t>(coordinate[d] * strides[d]);
      auto rank = rank_at(index);
      if (!rank || *rank < 0 || *rank >= static_cast<int64_t>(kMaxMeshRanks)) {
        return bad("the DeviceMesh's rank map has no valid rank at index " + std::to_string(index));
      }
      out.mesh_ranks.push_back(static_cast<int32_t>(*rank));
      for (size_t d = coordinate.size(); d-- > 0;) {  // row-major increment
        if (++coordinate[d] < out.mesh_shape[d]) break;
        coordinate[d] = 0;
      }
    }
    if (auto names = field(mesh, "_mesh_dim_names"); names && p_.node(*names).kind != Kind::kNone) {
      NRT_RETURN_IF_ERROR(strings(*names, "the mesh dim names", &out.dim_names));
      if (out.dim_names.size() != out.mesh_shape.size()) return bad("the DeviceMesh has a dim name count other than its dims");
    }
    if (auto groups = field(mesh, "_dim_group_names"); groups && p_.node(*groups).kind != Kind::kNone) {
      NRT_RETURN_IF_ERROR(strings(*groups, "the mesh's group names", &out.dim_group_names));
      const bool listable = std::none_of(out.dim_group_names.begin(), out.dim_group_names.end(),
                                         [](const std::string& n) { return n.empty() || n.find(',') != std::string::npos; });
      if (out.dim_group_names.size() != out.mesh_shape.size() || !listable) out.dim_group_names.clear();
    }
    NRT_TRY(rank_node, required(mesh, "_rank", "the DeviceMesh"));
    NRT_TRY(rank, integer(*rank_node, "the DeviceMesh's _rank"));
    out.rank = *rank;
    NRT_TRY(coordinate_node, required(mesh, "_coordinate_on_dim", "the DeviceMesh"));
    NRT_TRY(saved_coordinate, ints(*coordinate_node, "the DeviceMesh's _coordinate_on_dim", kMaxMeshDims));
    out.coordinate = *saved_coordinate;
    if (out.coordinate.size() != out.mesh_shape.size()) return bad("the DeviceMesh's coordinate has another length than its shape");
    int64_t flat = 0;
    for (size_t d = 0; d < out.coordinate.size(); ++d) {
      if (out.coordinate[d] < 0 || out.coordinate[d] >= out.mesh_shape[d]) return bad("the DeviceMesh's coordinate lies outside it");
      flat = flat * out.mesh_shape[d] + out.coordinate[d];
    }
    if (out.mesh_ranks[static_cast<size_t>(flat)] != out.rank) {
      return bad("the DeviceMesh says rank " + std::to_string(out.rank) + " but its coordinate holds rank " +
                 std::to_string(out.mesh_ranks[static_cast<size_t>(flat)]));
    }
    return {};
  }

  Status strings(uint32_t n, const std::string& what, std::vector<std::string>* out) const {
    auto items = p_.as_sequence(n);
    if (!items || items->size() > kMaxMeshDims) return bad(what + " are not a short tuple or list of strings");
    for (uint32_t i : *items) {
      auto s = p_.as_string(i);
      if (!s || s->size() > 256) return bad(what + " are not strings");
      out->emplace_back(*s);
    }
    return {};
  }

  const Pickle& p_;
  const Pt2Reader& zip_;
  const std::string& what_;
  std::map<std::string, std::vector<uint8_t>> storages_;
};

}  // namespace

std::span<const AllowedGlobal> torch_save_allowlist() { return kAllowed; }

const pickle::Allowlist& torch_save_allowset() {
  static const pickle::Allowlist set = [] {
    pickle::Allowlist s;
    for (const auto& g : kAllowed) s.emplace(g.name);
    return s;
  }();
  return set;
}

namespace {

void split_global(std::string_view full, std::string_view* module, std::string_view* name) {
  const size_t dot = full.rfind('.');
  *module = full.substr(0, dot);
  *name = full.substr(dot + 1);
}

void write_global(pickle::PickleWriter& w, std::string_view full) {
  std::string_view module, name;
  split_global(full, &module, &name);
  w.global(module, name);
}

void int_tuple(pickle::PickleWriter& w, const std::vector<int64_t>& values) {
  w.begin();
  for (int64_t v : values) w.integer(v);
  w.end_tuple();
}

std::string_view dtype_global(fb::ScalarType type, bool storage) {
  for (const auto& d : kDtypes) {
    if (d.type == type) return storage ? d.storage : d.dtype;
  }
  return {};
}

// _rebuild_tensor_v2(('storage', <T>Storage, key, 'cpu', numel), offset, sizes, strides, requires_grad, OrderedDict())
void rebuild_tensor(pickle::PickleWriter& w, fb::ScalarType type, const std::string& key, int64_t numel, int64_t offset,
                    const std::vector<int64_t>& sizes, const std::vector<int64_t>& strides, bool requires_grad) {
  write_global(w, kRebuildTensor);
  w.begin();
  w.begin();
  w.string("storage");
  write_global(w, dtype_global(type, true));
  w.string(key);
  w.string("cpu");
  w.integer(numel);
  w.end_tuple();
  w.persistent_id();
  w.integer(offset);
  int_tuple(w, sizes);
  int_tuple(w, strides);
  w.boolean(requires_grad);
  w.global("collections", "OrderedDict");
  w.begin();
  w.end_tuple();
  w.reduce();
  w.end_tuple();
  w.reduce();
}

// NEWOBJ of a class with no arguments, then BUILD with the dict the caller writes between.
void new_object(pickle::PickleWriter& w, std::string_view cls) {
  write_global(w, cls);
  w.begin();
  w.end_tuple();
  w.newobj();
  w.begin();  // the state dict's items follow; end with end_dict() and build()
}

std::vector<int64_t> literals(const std::vector<std::unique_ptr<fb::SymDimT>>& dims) {
  std::vector<int64_t> out;
  for (const auto& d : dims) out.push_back(d ? d->literal : 0);
  return out;
}

}  // namespace

Result<std::vector<uint8_t>> write_saved_dtensor(const SavedTensor& tensor) {
  if (!tensor.dtensor) return make_error(ErrorCode::InvalidArgument, "write_saved_dtensor: not a DTensor");
  const SavedDTensorSpec& d = *tensor.dtensor;
  const fb::ScalarType type = tensor.meta.dtype;
  if (dtype_global(type, false).empty()) {
    return make_error(ErrorCode::NotSupported, std::string("a DTensor of dtype ") + std::string(short_name(type)) +
                                                   " has no torch.save storage class nrt writes");
  }
  const size_t element = element_size(type);
  const auto sizes = literals(tensor.meta.sizes);
  const auto strides = literals(tensor.meta.strides);
  const int64_t offset = tensor.meta.storage_offset ? tensor.meta.storage_offset->literal : 0;
  const size_t ndim = d.mesh_shape.size();
  pickle::PickleWriter w;
  write_global(w, kRebuildFromType);
  w.begin();
  write_global(w, kRebuildWrapperSubclass);
  write_global(w, kDTensor);
  w.begin();  // the wrapper's arguments
  write_global(w, kDTensor);
  write_global(w, dtype_global(type, false));
  int_tuple(w, d.global_sizes);
  int_tuple(w, d.global_strides);
  w.integer(0);
  w.global("torch.serialization", "_get_layout");
  w.begin();
  w.string("torch.strided");
  w.end_tuple();
  w.reduce();
  w.global("torch", "device");
  w.begin();
  w.string(d.device_type == fb::DeviceType::CUDA ? "cuda" : "cpu");
  w.end_tuple();
  w.reduce();
  w.boolean(tensor.meta.requires_grad);
  w.end_tuple();
  // The state: ({'_is_param': ...}, {'_local_tensor': ..., '_spec': ...})
  w.begin();
  w.begin();
  w.string("_is_param");
  w.boolean(tensor.meta.requires_grad);
  w.end_dict();
  w.begin();
  w.string("_local_tensor");
  rebuild_tensor(w, type, "0", static_cast<int64_t>(tensor.storage.size() / std::max<size_t>(element, 1)), offset, sizes,
                 strides, tensor.meta.requires_grad);
  w.string("_spec");
  new_object(w, kDTensorSpec);
  w.string("mesh");
  new_object(w, kDeviceMesh);
  w.string("_device_type");
  w.string(d.device_type == fb::DeviceType::CUDA ? "cuda" : "cpu");
  w.string("_layout");
  new_object(w, kMeshLayout);
  w.string("axes");
  w.begin();
  int64_t stride = 1;
  std::vector<int64_t> strides_of(ndim, 1);
  for (size_t k = ndim; k-- > 0;) {
    strides_of[k] = stride;
    stride *= d.mesh_shape[k];
  }
  for (size_t k = 0; k < ndim; ++k) {
    new_object(w, kFlatLayout);
    w.string("shape");
    int_tuple(w, {d.mesh_shape[k]});
    w.string("stride");
    int_tuple(w, {strides_of[k]});
    w.end_dict();
    w.build();
  }
  w.end_tuple();
  w.end_dict();
  w.build();
  w.string("_rank_map");
  rebuild_tensor(w, fb::ScalarType::INT32, "1", static_cast<int64_t>(d.mesh_ranks.size()), 0,
                 {static_cast<int64_t>(d.mesh_ranks.size())}, {1}, false);
  w.string("_mesh_dim_names");
  if (d.dim_names.empty()) {
    w.none();
  } else {
    w.begin();
    for (const auto& n : d.dim_names) w.string(n);
    w.end_tuple();
  }
  w.string("_root_mesh");
  w.none();
  w.string("_preserve_rank_order");
  w.boolean(false);
  w.string("_flatten_rank_map");
  w.begin();
  for (int32_t r : d.mesh_ranks) w.integer(r);
  w.end_tuple();
  w.string("_thread_id");
  w.none();
  w.string("_flatten_mapping");
  w.begin();
  w.end_dict();
  w.string("_dim_group_names");
  w.begin();
  for (const auto& n : d.dim_group_names) w.string(n);
  w.end_list();
  w.string("_rank");
  w.integer(d.rank);
  w.string("_coordinate_on_dim");
  int_tuple(w, d.coordinate);
  w.string("_hash");
  w.none();
  w.end_dict();
  w.build();
  w.string("placements");
  w.begin();
  for (const auto& p : d.placements) {
    switch (p.kind()) {
      case fb::PlacementKind::REPLICATE:
        new_object(w, kReplicate);
        break;
      case fb::PlacementKind::SHARD:
        new_object(w, kShard);
        w.string("dim");
        w.integer(p.dim());
        break;
      case fb::PlacementKind::STRIDED_SHARD:
        new_object(w, kStridedShard);
        w.string("dim");
        w.integer(p.dim());
        w.string("split_factor");
        w.integer(p.split_factor());
        break;
      case fb::PlacementKind::PARTIAL: {
        new_object(w, kPartial);
        w.string("reduce_op");
        static constexpr std::string_view kOps[] = {"sum", "avg", "product", "min", "max"};
        const auto op = static_cast<size_t>(p.reduce_op());
        w.string(op < std::size(kOps) ? kOps[op] : "sum");
        break;
      }
    }
    w.end_dict();
    w.build();
  }
  w.end_tuple();
  w.string("tensor_meta");
  write_global(w, kTensorMeta);
  w.begin();
  w.global("torch", "Size");
  w.begin();
  int_tuple(w, d.global_sizes);
  w.end_tuple();
  w.reduce();
  int_tuple(w, d.global_strides);
  write_global(w, dtype_global(type, false));
  w.end_tuple();
  w.newobj();
  // shard_order: per sharded tensor dim, the mesh dims sharding it in order.
  w.string("shard_order");
  w.begin();
  std::map<int32_t, std::vector<int64_t>> order;
  for (size_t k = 0; k < d.placements.size(); ++k) {
    if (d.placements[k].kind() == fb::PlacementKind::SHARD) order[d.placements[k].dim()].push_back(static_cast<int64_t>(k));
  }
  for (const auto& [dim, mesh_dims] : order) {
    w.global("torch.distributed.tensor._dtensor_spec", "ShardOrderEntry");
    w.begin();
    w.integer(dim);
    int_tuple(w, mesh_dims);
    w.end_tuple();
    w.newobj();
  }
  w.end_tuple();
  w.string("use_strided_shard_as_shard_order");
  w.boolean(false);
  w.string("_hash");
  w.none();
  w.end_dict();
  w.build();
  w.end_dict();  // the slots dict
  w.end_tuple();  // the state pair
  w.end_tuple();  // _rebuild_from_type_v2's arguments
  w.reduce();
  const std::vector<uint8_t> pkl = w.finish();

  std::vector<uint8_t> rank_map(d.mesh_ranks.size() * 4);
  std::memcpy(rank_map.data(), d.mesh_ranks.data(), rank_map.size());
  const std::string format_version = "1", alignment = "64", byteorder = "little", version = "3\n";
  auto text = [](const std::string& t) { return std::span<const uint8_t>(reinterpret_cast<const uint8_t*>(t.data()), t.size()); };
  const std::vector<Pt2Entry> entries = {
      {"data.pkl", pkl},
      {".format_version", text(format_version)},
      {".storage_alignment", text(alignment)},
      {"byteorder", text(byteorder)},
      {"data/0", tensor.storage},
      {"data/1", rank_map},
      {"version", text(version)},
  };
  return write_pt2_archive("archive", entries);
}

Result<SavedTensor> read_saved_tensor(std::vector<uint8_t> zip_bytes, const std::string& what) {
  auto zip = Pt2Reader::from_bytes(std::move(zip_bytes));
  if (!zip) return make_error(zip.error().code, what + " (a torch.save zip): " + zip.error().message);
  if (zip->has("byteorder")) {
    NRT_TRY(order, zip->read_text("byteorder", 16));
    if (*order != "little") return make_error(ErrorCode::NotSupported, what + ": storages saved " + order->substr(0, 8) + "-endian");
  }
  if (!zip->has("data.pkl")) {
    return make_error(ErrorCode::ArchiveEntryMissing, what + ": the torch.save zip has no '" + zip->root() + "/data.pkl'");
  }
  NRT_TRY(bytes, zip->read("data.pkl", kMaxTorchJsonBytes));
  const std::string where = what + " (" + zip->root() + "/data.pkl)";
  NRT_TRY(tree, pickle::read_pickle(*bytes, torch_save_allowset(), where));
  return Interpreter(*tree, *zip, where).root();
}

}  // namespace nrt::torch_export
