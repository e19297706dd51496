#include "tests/verify/sample_program.h"

#include <memory>
#include <span>
#include <string>
#include <utility>

#include "serializer/write_program.h"

namespace nrt::testing {
namespace {

using fb::ArgumentUnion;

template <typename T>
ArgumentUnion make_arg(T member) {
  ArgumentUnion u;
  u.Set(std::move(member));
  return u;
}

ArgumentUnion tensor_arg(uint32_t value) {
  fb::TensorArgT a;
  a.value = value;
  return make_arg(a);
}

std::unique_ptr<fb::SymDimT> dim(int64_t literal) {
  auto d = std::make_unique<fb::SymDimT>();
  d->literal = literal;
  return d;
}

// Contiguous f32 metadata on the CPU.
std::unique_ptr<fb::TensorMetaT> f32(const std::vector<int64_t>& sizes) {
  auto meta = std::make_unique<fb::TensorMetaT>();
  meta->dtype = fb::ScalarType::FLOAT32;
  int64_t stride = 1;
  std::vector<int64_t> strides(sizes.size());
  for (size_t i = sizes.size(); i-- > 0;) {
    strides[i] = stride;
    stride *= sizes[i];
  }
  for (size_t i = 0; i < sizes.size(); ++i) {
    meta->sizes.push_back(dim(sizes[i]));
    meta->strides.push_back(dim(strides[i]));
  }
  meta->storage_offset = dim(0);
  meta->device = std::make_unique<fb::DeviceT>();
  meta->device->type = fb::DeviceType::CPU;
  return meta;
}

std::unique_ptr<fb::ValueT> tensor_value(const std::string& name, const std::vector<int64_t>& sizes) {
  auto v = std::make_unique<fb::ValueT>();
  v->name = name;
  v->kind = fb::ValueKind::TENSOR;
  v->tensor = f32(sizes);
  return v;
}

std::unique_ptr<fb::ArgumentHolderT> holder(ArgumentUnion arg) {
  auto h = std::make_unique<fb::ArgumentHolderT>();
  h->arg = std::move(arg);
  return h;
}

std::unique_ptr<fb::NamedArgumentT> named(const std::string& name, ArgumentUnion arg,
                                          fb::ArgumentKind kind = fb::ArgumentKind::POSITIONAL) {
  auto n = std::make_unique<fb::NamedArgumentT>();
  n->name = name;
  n->arg = std::move(arg);
  n->kind = kind;
  return n;
}

std::unique_ptr<fb::NodeT> node(const std::string& name, uint32_t op) {
  auto n = std::make_unique<fb::NodeT>();
  n->name = name;
  n->op = op;
  return n;
}

std::unique_ptr<fb::InputSpecT> input_spec(fb::InputKind kind, int32_t value, const std::string& target = "") {
  auto s = std::make_unique<fb::InputSpecT>();
  s->kind = kind;
  s->value = value;
  s->target = target;
  return s;
}

std::vector<uint8_t> byte_pattern(size_t n, uint8_t seed) {
  std::vector<uint8_t> bytes(n);
  for (size_t i = 0; i < n; ++i) bytes[i] = static_cast<uint8_t>(seed + 37 * i);
  return bytes;
}

// The node whose inputs carry one argument of most union members (operand of 'relu').
void add_argument_zoo(fb::NodeT& n) {
  fb::IntListArgT ints;
  ints.values = {1, -2, 3};
  n.inputs.push_back(named("ints", make_arg(ints), fb::ArgumentKind::KEYWORD));
  fb::FloatArgT real;
  real.value = 0.5;
  n.inputs.push_back(named("alpha", make_arg(real), fb::ArgumentKind::KEYWORD));
  fb::StringArgT str;
  str.value = "tanh";
  n.inputs.push_back(named("approximate", make_arg(str), fb::ArgumentKind::KEYWORD));
  fb::StringListArgT strs;
  strs.values = {"a", "bc"};
  n.inputs.push_back(named("names", make_arg(strs), fb::ArgumentKind::KEYWORD));
  fb::SymIntListArgT sym_ints;
  sym_ints.items = {fb::SymIntItem(5, 0), fb::SymIntItem(-1, 4)};
  n.inputs.push_back(named("shape", make_arg(sym_ints), fb::ArgumentKind::KEYWORD));
  fb::SymIntArgT sym_int;
  sym_int.value = 5;
  n.inputs.push_back(named("n", make_arg(sym_int), fb::ArgumentKind::KEYWORD));
  fb::ScalarTypeArgT dtype;
  dtype.value = fb::ScalarType::BFLOAT16;
  n.inputs.push_back(named("dtype", make_arg(dtype), fb::ArgumentKind::KEYWORD));
  fb::MemoryFormatArgT memory_format;
  memory_format.value = fb::MemoryFormat::CHANNELS_LAST;
  n.inputs.push_back(named("memory_format", make_arg(memory_format), fb::ArgumentKind::KEYWORD));
  fb::LayoutArgT layout;
  layout.value = fb::Layout::STRIDED;
  n.inputs.push_back(named("layout", make_arg(layout), fb::ArgumentKind::KEYWORD));
  fb::DeviceArgT device;
  device.value = std::make_unique<fb::DeviceT>();
  device.value->type = fb::DeviceType::CUDA;
  device.value->index = 1;
  n.inputs.push_back(named("device", make_arg(std::move(device)), fb::ArgumentKind::KEYWORD));
  fb::BoolListArgT bools;
  bools.values = {true, false};
  n.inputs.push_back(named("mask", make_arg(bools), fb::ArgumentKind::KEYWORD));
  fb::OptionalTensorListArgT optionals;
  optionals.values = {3, -1};
  n.inputs.push_back(named("maybe", make_arg(optionals), fb::ArgumentKind::KEYWORD));
  fb::OperatorArgT op;
  op.op = 4;
  n.inputs.push_back(named("combine", make_arg(op), fb::ArgumentKind::KEYWORD));
  fb::ComplexArgT complex;
  complex.real = 1.0;
  complex.imag = -2.0;
  n.inputs.push_back(named("phase", make_arg(complex), fb::ArgumentKind::KEYWORD));
  fb::IntListListArgT int_lists;
  auto l = std::make_unique<fb::IntListArgT>();
  l->values = {7, 8};
  int_lists.lists.push_back(std::move(l));
  n.inputs.push_back(named("blocks", make_arg(std::move(int_lists)), fb::ArgumentKind::KEYWORD));
  fb::StringToArgumentArgT map;
  auto entry = std::make_unique<fb::StringToArgumentEntryT>();
  entry->key = "inner";
  entry->value = tensor_arg(3);
  map.entries.push_back(std::move(entry));
  n.inputs.push_back(named("options", make_arg(std::move(map)), fb::ArgumentKind::KEYWORD));
  n.inputs.push_back(named("unused", make_arg(fb::NoneArgT{}), fb::ArgumentKind::KEYWORD));
}

std::unique_ptr<fb::GraphT> main_graph() {
  auto g = std::make_unique<fb::GraphT>();
  g->name = "main";
  g->values.push_back(tensor_value("x", {2, 8}));
  g->values.push_back(tensor_value("w", {4, 8}));
  g->values.push_back(tensor_value("b", {4}));
  g->values.push_back(tensor_value("y", {2, 4}));
  {
    auto r = std::make_unique<fb::ValueT>();
    r->name = "r";
    r->kind = fb::ValueKind::DTENSOR;
    r->tensor = f32({2, 2});
    r->dtensor = std::make_unique<fb::DTensorSpecT>();
    r->dtensor->mesh = 0;
    r->dtensor->placements = {fb::Placement(fb::PlacementKind::REPLICATE, fb::ReduceOp::SUM, 0, 0),
                              fb::Placement(fb::PlacementKind::SHARD, fb::ReduceOp::SUM, 1, 0)};
    r->dtensor->global_sizes.push_back(dim(2));
    r->dtensor->global_sizes.push_back(dim(4));
    r->dtensor->global_strides.push_back(dim(4));
    r->dtensor->global_strides.push_back(dim(1));
    g->values.push_back(std::move(r));
  }
  {
    auto s = std::make_unique<fb::ValueT>();
    s->name = "s";
    s->kind = fb::ValueKind::SYM_INT;
    s->sym = std::make_unique<fb::SymInfoT>();
    s->sym->expr = "s0";
    s->sym->int_hint = 2;
    g->values.push_back(std::move(s));
  }
  {
    auto pg = std::make_unique<fb::ValueT>();
    pg->name = "pg";
    pg->kind = fb::ValueKind::PROCESS_GROUP;
    pg->process_group = 0;
    g->values.push_back(std::move(pg));
  }
  g->values.push_back(tensor_value("z", {2, 4}));
  g->values.push_back(tensor_value("out", {2, 4}));

  g->inputs.push_back(holder(tensor_arg(0)));
  g->inputs.push_back(holder(tensor_arg(1)));
  g->inputs.push_back(holder(tensor_arg(2)));
  fb::SymIntArgT s_input;
  s_input.value = 5;
  g->inputs.push_back(holder(make_arg(s_input)));
  fb::ValueArgT pg_input;
  pg_input.value = 6;
  g->inputs.push_back(holder(make_arg(pg_input)));

  auto linear = node("linear", 0);
  linear->inputs.push_back(named("input", tensor_arg(0)));
  linear->inputs.push_back(named("weight", tensor_arg(1)));
  fb::OptionalTensorArgT bias;
  bias.value = 2;
  linear->inputs.push_back(named("bias", make_arg(bias)));
  linear->outputs.push_back(holder(tensor_arg(3)));
  auto trace = std::make_unique<fb::KeyValueT>();
  trace->key = "stack_trace";
  trace->value = "File \"model.py\", line 12, in forward";
  linear->metadata.push_back(std::move(trace));
  g->nodes.push_back(std::move(linear));

  auto relu = node("relu", 1);
  relu->inputs.push_back(named("self", tensor_arg(3)));
  add_argument_zoo(*relu);
  relu->outputs.push_back(holder(tensor_arg(4)));
  g->nodes.push_back(std::move(relu));

  auto all_reduce = node("all_reduce", 2);
  all_reduce->inputs.push_back(named("input", tensor_arg(4)));
  fb::StringArgT reduce_op;
  reduce_op.value = "sum";
  all_reduce->inputs.push_back(named("reduce_op", make_arg(reduce_op)));
  fb::ProcessGroupArgT group;
  group.group = 0;
  all_reduce->inputs.push_back(named("group", make_arg(group)));
  fb::ValueArgT group_value;
  group_value.value = 6;
  all_reduce->inputs.push_back(named("group_value", make_arg(group_value), fb::ArgumentKind::KEYWORD));
  all_reduce->outputs.push_back(holder(tensor_arg(7)));
  g->nodes.push_back(std::move(all_reduce));

  auto call = node("call_body", 3);
  fb::GraphArgT body;
  body.graph = 1;
  call->inputs.push_back(named("subgraph", make_arg(body)));
  fb::TensorListArgT operands;
  operands.values = {7, 3};
  call->inputs.push_back(named("operands", make_arg(operands)));
  call->outputs.push_back(holder(tensor_arg(8)));
  call->outputs.push_back(holder(make_arg(fb::NoneArgT{})));
  g->nodes.push_back(std::move(call));

  g->outputs.push_back(holder(tensor_arg(8)));

  g->signature = std::make_unique<fb::SignatureT>();
  g->signature->inputs.push_back(input_spec(fb::InputKind::USER_INPUT, 0));
  g->signature->inputs.push_back(input_spec(fb::InputKind::PARAMETER, 1, "linear.weight"));
  g->signature->inputs.push_back(input_spec(fb::InputKind::PARAMETER, 2, "linear.bias"));
  g->signature->inputs.push_back(input_spec(fb::InputKind::USER_INPUT, 5));
  g->signature->inputs.push_back(input_spec(fb::InputKind::USER_INPUT, 6));
  auto out = std::make_unique<fb::OutputSpecT>();
  out->kind = fb::OutputKind::USER_OUTPUT;
  out->value = 8;
  g->signature->outputs.push_back(std::move(out));
  return g;
}

std::unique_ptr<fb::GraphT> body_graph() {
  auto g = std::make_unique<fb::GraphT>();
  g->name = "body";
  g->values.push_back(tensor_value("a", {2, 4}));
  g->values.push_back(tensor_value("c", {2, 4}));
  g->values.push_back(tensor_value("d", {2, 4}));
  g->inputs.push_back(holder(tensor_arg(0)));
  g->inputs.push_back(holder(tensor_arg(1)));
  auto add = node("add", 4);
  add->inputs.push_back(named("self", tensor_arg(0)));
  add->inputs.push_back(named("other", tensor_arg(1)));
  add->outputs.push_back(holder(tensor_arg(2)));
  g->nodes.push_back(std::move(add));
  g->outputs.push_back(holder(tensor_arg(2)));
  return g;
}

}  // namespace

ProgramWithWeights make_sample_program() {
  ProgramWithWeights out;
  fb::ProgramT& p = out.program;
  p.producer = "nrt tests/verify sample";
  for (auto [name, overload] : {std::pair{"aten::linear", "default"},
                                {"aten::relu", "default"},
                                {"_c10d_functional::all_reduce", "default"},
                                {"higher_order::invoke_subgraph", ""},
                                {"aten::add", "Tensor"}}) {
    auto op = std::make_unique<fb::OperatorT>();
    op->name = name;
    op->overload = overload;
    p.operators.push_back(std::move(op));
  }

  auto mesh = std::make_unique<fb::DeviceMeshT>();
  mesh->name = "dp_tp";
  mesh->shape = {2, 2};
  mesh->dim_names = {"dp", "tp"};
  mesh->ranks = {0, 1, 2, 3};
  p.meshes.push_back(std::move(mesh));

  auto tp0 = std::make_unique<fb::ProcessGroupT>();
  tp0->name = "tp0";
  tp0->ranks = {0, 1};
  tp0->backend = "gloo";
  tp0->mesh = 0;
  tp0->mesh_dim = 1;
  p.process_groups.push_back(std::move(tp0));
  auto world = std::make_unique<fb::ProcessGroupT>();
  world->name = "world";
  world->ranks = {0, 1, 2, 3};
  world->backend = "gloo";
  p.process_groups.push_back(std::move(world));

  out.storages.push_back(byte_pattern(128, 1));
  out.storages.push_back(byte_pattern(16, 2));
  for (size_t i = 0; i < out.storages.size(); ++i) p.storages.push_back(std::make_unique<fb::StorageT>());
  auto weight = std::make_unique<fb::WeightTensorT>();
  weight->fqn = "linear.weight";
  weight->storage = 0;
  weight->meta = f32({4, 8});
  weight->is_parameter = true;
  p.weights.push_back(std::move(weight));
  auto bias = std::make_unique<fb::WeightTensorT>();
  bias->fqn = "linear.bias";
  bias->storage = 1;
  bias->meta = f32({4});
  bias->is_parameter = true;
  p.weights.push_back(std::move(bias));

  p.graphs.push_back(main_graph());
  p.graphs.push_back(body_graph());
  p.entry_points = {0};

  auto range = std::make_unique<fb::RangeConstraintT>();
  range->symbol = "s0";
  range->min = 1;
  range->max = 64;
  p.range_constraints.push_back(std::move(range));
  auto meta = std::make_unique<fb::KeyValueT>();
  meta->key = "torch_version";
  meta->value = "2.5.0";
  p.metadata.push_back(std::move(meta));
  return out;
}

Result<std::vector<uint8_t>> serialize(const ProgramWithWeights& program) {
  std::vector<std::span<const uint8_t>> spans(program.storages.begin(), program.storages.end());
  return serialize_program(program.program, spans);
}

Result<ProgramFile> serialize_and_open(const ProgramWithWeights& program, const VerifyOptions& options) {
  NRT_TRY(bytes, serialize(program));
  return ProgramFile::from_bytes(std::move(*bytes), options);
}

}  // namespace nrt::testing
