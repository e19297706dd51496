#include "testdata/program_builder.h"

#include <cmath>
#include <cstring>
#include <stdexcept>

#include "serializer/argument_values.h"

namespace nrt::testdata {

std::unique_ptr<fb::SymDimT> literal_dim(int64_t value) {
  auto dim = std::make_unique<fb::SymDimT>();
  dim->literal = value;
  return dim;
}

std::unique_ptr<fb::SymDimT> symbolic_dim(const std::string& expr, int64_t hint) {
  auto dim = std::make_unique<fb::SymDimT>();
  dim->expr = expr;
  dim->hint = hint;
  return dim;
}

fb::TensorMetaT tensor_meta(fb::ScalarType dtype, const std::vector<int64_t>& sizes) {
  fb::TensorMetaT meta;
  meta.dtype = dtype;
  std::vector<int64_t> strides(sizes.size(), 1);
  for (size_t i = sizes.size(); i-- > 1;) strides[i - 1] = strides[i] * std::max<int64_t>(sizes[i], 1);
  for (size_t i = 0; i < sizes.size(); ++i) {
    meta.sizes.push_back(literal_dim(sizes[i]));
    meta.strides.push_back(literal_dim(strides[i]));
  }
  meta.storage_offset = literal_dim(0);
  meta.device = std::make_unique<fb::DeviceT>();
  meta.device->type = fb::DeviceType::CPU;
  return meta;
}

namespace arg {
namespace {
template <typename T>
fb::ArgumentUnion make(T value) {
  fb::ArgumentUnion u;
  u.Set(std::move(value));
  return u;
}
}  // namespace

fb::ArgumentUnion none() { return make(fb::NoneArgT{}); }
fb::ArgumentUnion tensor(uint32_t value) {
  fb::TensorArgT a;
  a.value = value;
  return make(a);
}
fb::ArgumentUnion tensors(std::vector<uint32_t> values) {
  fb::TensorListArgT a;
  a.values = std::move(values);
  return make(a);
}
fb::ArgumentUnion optional_tensor(int32_t value) {
  fb::OptionalTensorArgT a;
  a.value = value;
  return make(a);
}
fb::ArgumentUnion optional_tensors(std::vector<int32_t> values) {
  fb::OptionalTensorListArgT a;
  a.values = std::move(values);
  return make(a);
}
fb::ArgumentUnion integer(int64_t v) {
  fb::IntArgT a;
  a.value = v;
  return make(a);
}
fb::ArgumentUnion integers(std::vector<int64_t> v) {
  fb::IntListArgT a;
  a.values = std::move(v);
  return make(a);
}
fb::ArgumentUnion real(double v) {
  fb::FloatArgT a;
  a.value = v;
  return make(a);
}
fb::ArgumentUnion reals(std::vector<double> v) {
  fb::FloatListArgT a;
  a.values = std::move(v);
  return make(a);
}
fb::ArgumentUnion string(std::string v) {
  fb::StringArgT a;
  a.value = std::move(v);
  return make(a);
}
fb::ArgumentUnion strings(std::vector<std::string> v) {
  fb::StringListArgT a;
  a.values = std::move(v);
  return make(a);
}
fb::ArgumentUnion boolean(bool v) {
  fb::BoolArgT a;
  a.value = v;
  return make(a);
}
fb::ArgumentUnion booleans(std::vector<bool> v) {
  fb::BoolListArgT a;
  a.values = std::move(v);
  return make(a);
}
fb::ArgumentUnion sym_int(int32_t value) {
  fb::SymIntArgT a;
  a.value = value;
  return make(a);
}
fb::ArgumentUnion sym_int_literal(int64_t v) {
  fb::SymIntArgT a;
  a.value = -1;
  a.literal = v;
  return make(a);
}
fb::ArgumentUnion sym_ints(std::vector<fb::SymIntItem> items) {
  fb::SymIntListArgT a;
  a.items = std::move(items);
  return make(a);
}
fb::ArgumentUnion sym_float(int32_t value) {
  fb::SymFloatArgT a;
  a.value = value;
  return make(a);
}
fb::ArgumentUnion sym_floats(std::vector<fb::SymFloatItem> items) {
  fb::SymFloatListArgT a;
  a.items = std::move(items);
  return make(a);
}
fb::ArgumentUnion sym_bool(int32_t value) {
  fb::SymBoolArgT a;
  a.value = value;
  return make(a);
}
fb::ArgumentUnion sym_bools(std::vector<fb::SymBoolItem> items) {
  fb::SymBoolListArgT a;
  a.items = std::move(items);
  return make(a);
}
fb::ArgumentUnion scalar_type(fb::ScalarType v) {
  fb::ScalarTypeArgT a;
  a.value = v;
  return make(a);
}
fb::ArgumentUnion memory_format(fb::MemoryFormat v) {
  fb::MemoryFormatArgT a;
  a.value = v;
  return make(a);
}
fb::ArgumentUnion layout(fb::Layout v) {
  fb::LayoutArgT a;
  a.value = v;
  return make(a);
}
fb::ArgumentUnion device(fb::DeviceType type, int32_t index) {
  fb::DeviceArgT a;
  a.value = std::make_unique<fb::DeviceT>();
  a.value->type = type;
  a.value->index = index;
  return make(std::move(a));
}
fb::ArgumentUnion graph(uint32_t graph_index) {
  fb::GraphArgT a;
  a.graph = graph_index;
  return make(a);
}
fb::ArgumentUnion custom_obj(uint32_t value, std::string class_fqn) {
  fb::CustomObjArgT a;
  a.value = value;
  a.class_fqn = std::move(class_fqn);
  return make(a);
}
fb::ArgumentUnion op(uint32_t op_index) {
  fb::OperatorArgT a;
  a.op = op_index;
  return make(a);
}
fb::ArgumentUnion complex(double real, double imag) {
  fb::ComplexArgT a;
  a.real = real;
  a.imag = imag;
  return make(a);
}
fb::ArgumentUnion nested_tensors(std::vector<std::vector<uint32_t>> lists) {
  fb::NestedTensorsArgT a;
  for (auto& values : lists) {
    auto list = std::make_unique<fb::TensorListArgT>();
    list->values = std::move(values);
    a.lists.push_back(std::move(list));
  }
  return make(std::move(a));
}
fb::ArgumentUnion int_lists(std::vector<std::vector<int64_t>> lists) {
  fb::IntListListArgT a;
  for (auto& values : lists) {
    auto list = std::make_unique<fb::IntListArgT>();
    list->values = std::move(values);
    a.lists.push_back(std::move(list));
  }
  return make(std::move(a));
}
fb::ArgumentUnion float_lists(std::vector<std::vector<double>> lists) {
  fb::FloatListListArgT a;
  for (auto& values : lists) {
    auto list = std::make_unique<fb::FloatListArgT>();
    list->values = std::move(values);
    a.lists.push_back(std::move(list));
  }
  return make(std::move(a));
}
fb::ArgumentUnion string_map(Args entries) {
  fb::StringToArgumentArgT a;
  for (auto& [key, value] : entries) {
    auto entry = std::make_unique<fb::StringToArgumentEntryT>();
    entry->key = key;
    entry->value = std::move(value);
    a.entries.push_back(std::move(entry));
  }
  return make(std::move(a));
}
fb::ArgumentUnion process_group(uint32_t group) {
  fb::ProcessGroupArgT a;
  a.group = group;
  return make(a);
}
fb::ArgumentUnion value(uint32_t value) {
  fb::ValueArgT a;
  a.value = value;
  return make(a);
}
}  // namespace arg

// ---------------------------------------------------------------------------------------------

uint32_t GraphBuilder::tensor(const std::string& name, fb::ScalarType dtype, const std::vector<int64_t>& sizes) {
  return tensor(name, tensor_meta(dtype, sizes));
}

uint32_t GraphBuilder::tensor(const std::string& name, fb::TensorMetaT meta) {
  uint32_t index = value(name, fb::ValueKind::TENSOR);
  graph_->values[index]->tensor = std::make_unique<fb::TensorMetaT>(std::move(meta));
  return index;
}

uint32_t GraphBuilder::dtensor(const std::string& name, fb::ScalarType dtype, const std::vector<int64_t>& local_sizes,
                               const std::vector<int64_t>& global_sizes, uint32_t mesh,
                               std::vector<fb::Placement> placements) {
  uint32_t index = value(name, fb::ValueKind::DTENSOR);
  auto& v = *graph_->values[index];
  v.tensor = std::make_unique<fb::TensorMetaT>(tensor_meta(dtype, local_sizes));
  v.dtensor = std::make_unique<fb::DTensorSpecT>();
  v.dtensor->mesh = mesh;
  v.dtensor->placements = std::move(placements);
  auto global = tensor_meta(dtype, global_sizes);
  v.dtensor->global_sizes = std::move(global.sizes);
  v.dtensor->global_strides = std::move(global.strides);
  return index;
}

uint32_t GraphBuilder::value(const std::string& name, fb::ValueKind kind) {
  auto v = std::make_unique<fb::ValueT>();
  v->name = name;
  v->kind = kind;
  const auto index = static_cast<uint32_t>(graph_->values.size());
  graph_->values.push_back(std::move(v));
  by_name_[name] = index;
  return index;
}

uint32_t GraphBuilder::sym_int(const std::string& name, const std::string& expr, int64_t hint) {
  uint32_t index = value(name, fb::ValueKind::SYM_INT);
  auto& v = *graph_->values[index];
  v.sym = std::make_unique<fb::SymInfoT>();
  v.sym->expr = expr;
  v.sym->int_hint = hint;
  return index;
}

uint32_t GraphBuilder::process_group(const std::string& name, int32_t group) {
  uint32_t index = value(name, fb::ValueKind::PROCESS_GROUP);
  graph_->values[index]->process_group = group;
  return index;
}

uint32_t GraphBuilder::custom_obj(const std::string& name, const std::string& class_fqn) {
  uint32_t index = value(name, fb::ValueKind::CUSTOM_OBJ);
  graph_->values[index]->class_fqn = class_fqn;
  return index;
}

uint32_t GraphBuilder::index_of(const std::string& name) const {
  auto it = by_name_.find(name);
  if (it == by_name_.end()) throw std::invalid_argument("no value named " + name);
  return it->second;
}

void GraphBuilder::set_tensor_meta(uint32_t value, fb::TensorMetaT meta) {
  graph_->values[value]->tensor = std::make_unique<fb::TensorMetaT>(std::move(meta));
}

void GraphBuilder::user_input(fb::ArgumentUnion defining) { input(std::move(defining), fb::InputKind::USER_INPUT); }

void GraphBuilder::input(fb::ArgumentUnion defining, fb::InputKind kind, const std::string& target, bool persistent) {
  if (graph_->signature) {
    auto spec = std::make_unique<fb::InputSpecT>();
    spec->kind = kind;
    spec->value = static_cast<int32_t>(single_value_of(defining));
    spec->target = target;
    spec->persistent = persistent;
    graph_->signature->inputs.push_back(std::move(spec));
  }
  auto holder = std::make_unique<fb::ArgumentHolderT>();
  holder->arg = std::move(defining);
  graph_->inputs.push_back(std::move(holder));
}

void GraphBuilder::constant_input(fb::ArgumentUnion constant, const std::string& name) {
  auto spec = std::make_unique<fb::InputSpecT>();
  spec->kind = fb::InputKind::CONSTANT_INPUT;
  spec->value = -1;
  spec->target = name;
  spec->constant = std::make_unique<fb::ArgumentHolderT>();
  spec->constant->arg = constant;
  graph_->signature->inputs.push_back(std::move(spec));
  auto holder = std::make_unique<fb::ArgumentHolderT>();
  holder->arg = std::move(constant);
  graph_->inputs.push_back(std::move(holder));
}

fb::NodeT& GraphBuilder::node(const std::string& name, uint32_t op, Args positional, Args keyword,
                              std::vector<fb::ArgumentUnion> outputs) {
  auto node = std::make_unique<fb::NodeT>();
  node->name = name;
  node->op = op;
  auto add = [&node](std::string arg_name, fb::ArgumentUnion arg, fb::ArgumentKind kind) {
    auto named = std::make_unique<fb::NamedArgumentT>();
    named->name = std::move(arg_name);
    named->arg = std::move(arg);
    named->kind = kind;
    node->inputs.push_back(std::move(named));
  };
  for (auto& [n, a] : positional) add(n, std::move(a), fb::ArgumentKind::POSITIONAL);
  for (auto& [n, a] : keyword) add(n, std::move(a), fb::ArgumentKind::KEYWORD);
  for (auto& out : outputs) {
    auto holder = std::make_unique<fb::ArgumentHolderT>();
    holder->arg = std::move(out);
    node->outputs.push_back(std::move(holder));
  }
  graph_->nodes.push_back(std::move(node));
  return *graph_->nodes.back();
}

void GraphBuilder::user_output(fb::ArgumentUnion arg) { output(std::move(arg), fb::OutputKind::USER_OUTPUT); }

void GraphBuilder::output(fb::ArgumentUnion arg, fb::OutputKind kind, const std::string& target) {
  if (graph_->signature) {
    auto spec = std::make_unique<fb::OutputSpecT>();
    spec->kind = kind;
    spec->value = static_cast<int32_t>(single_value_of(arg));
    spec->target = target;
    graph_->signature->outputs.push_back(std::move(spec));
  }
  auto holder = std::make_unique<fb::ArgumentHolderT>();
  holder->arg = std::move(arg);
  graph_->outputs.push_back(std::move(holder));
}

// ---------------------------------------------------------------------------------------------

ProgramBuilder::ProgramBuilder(std::string producer) { result_.program.producer = std::move(producer); }

uint32_t ProgramBuilder::op(const std::string& name, const std::string& overload) {
  const std::string key = name + "." + overload;
  auto it = ops_.find(key);
  if (it != ops_.end()) return it->second;
  auto op = std::make_unique<fb::OperatorT>();
  op->name = name;
  op->overload = overload;
  const auto index = static_cast<uint32_t>(result_.program.operators.size());
  result_.program.operators.push_back(std::move(op));
  ops_[key] = index;
  return index;
}

uint32_t ProgramBuilder::storage(std::vector<uint8_t> bytes) {
  result_.program.storages.push_back(std::make_unique<fb::StorageT>());
  result_.storages.push_back(std::move(bytes));
  return static_cast<uint32_t>(result_.storages.size() - 1);
}

void ProgramBuilder::weight(const std::string& fqn, uint32_t storage, fb::TensorMetaT meta, bool is_parameter) {
  auto w = std::make_unique<fb::WeightTensorT>();
  w->fqn = fqn;
  w->storage = storage;
  w->meta = std::make_unique<fb::TensorMetaT>(std::move(meta));
  w->is_parameter = is_parameter;
  result_.program.weights.push_back(std::move(w));
}

uint32_t ProgramBuilder::mesh(const std::string& name, std::vector<int64_t> shape, std::vector<int32_t> ranks,
                              std::vector<std::string> dim_names) {
  auto m = std::make_unique<fb::DeviceMeshT>();
  m->name = name;
  m->device_type = fb::DeviceType::CUDA;
  m->shape = std::move(shape);
  m->ranks = std::move(ranks);
  m->dim_names = std::move(dim_names);
  result_.program.meshes.push_back(std::move(m));
  return static_cast<uint32_t>(result_.program.meshes.size() - 1);
}

uint32_t ProgramBuilder::group(const std::string& name, std::vector<int32_t> ranks, const std::string& backend,
                               int32_t mesh, int32_t mesh_dim) {
  auto g = std::make_unique<fb::ProcessGroupT>();
  g->name = name;
  g->ranks = std::move(ranks);
  g->backend = backend;
  g->mesh = mesh;
  g->mesh_dim = mesh_dim;
  result_.program.process_groups.push_back(std::move(g));
  return static_cast<uint32_t>(result_.program.process_groups.size() - 1);
}

GraphBuilder ProgramBuilder::graph(const std::string& name, bool entry_point) {
  auto g = std::make_unique<fb::GraphT>();
  g->name = name;
  if (entry_point) {
    g->signature = std::make_unique<fb::SignatureT>();
    result_.program.entry_points.push_back(static_cast<uint32_t>(result_.program.graphs.size()));
  }
  result_.program.graphs.push_back(std::move(g));
  return GraphBuilder(result_.program.graphs.back().get());
}

uint32_t ProgramBuilder::graph_index(const std::string& name) const {
  for (uint32_t i = 0; i < result_.program.graphs.size(); ++i) {
    if (result_.program.graphs[i]->name == name) return i;
  }
  throw std::invalid_argument("no graph named " + name);
}

void ProgramBuilder::metadata(const std::string& key, const std::string& value) {
  auto kv = std::make_unique<fb::KeyValueT>();
  kv->key = key;
  kv->value = value;
  result_.program.metadata.push_back(std::move(kv));
}

void ProgramBuilder::range_constraint(const std::string& symbol, int64_t min, int64_t max) {
  auto rc = std::make_unique<fb::RangeConstraintT>();
  rc->symbol = symbol;
  rc->min = min;
  rc->max = max;
  result_.program.range_constraints.push_back(std::move(rc));
}

ProgramWithWeights ProgramBuilder::finish() { return std::move(result_); }

std::vector<uint8_t> pattern_f32(size_t count, float scale) {
  std::vector<uint8_t> bytes(count * sizeof(float));
  for (size_t i = 0; i < count; ++i) {
    // A fixed, platform-independent pattern in [-scale, scale].
    const float v = scale * static_cast<float>(static_cast<int>((i * 37 + 11) % 201) - 100) / 100.0f;
    std::memcpy(bytes.data() + i * sizeof(float), &v, sizeof(float));
  }
  return bytes;
}

}  // namespace nrt::testdata
