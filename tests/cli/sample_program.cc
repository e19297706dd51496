#include "tests/cli/sample_program.h"

#include <cmath>
#include <cstring>
#include <limits>
#include <memory>
#include <span>
#include <utility>
#include <vector>

#include "serializer/write_program.h"

namespace nrt::testing {
namespace {

template <typename T>
fb::ArgumentUnion arg_of(T value) {
  fb::ArgumentUnion u;
  u.Set(std::move(value));
  return u;
}

fb::ArgumentUnion tensor(uint32_t value) {
  fb::TensorArgT a;
  a.value = value;
  return arg_of(std::move(a));
}

fb::ArgumentUnion tensors(std::vector<uint32_t> values) {
  fb::TensorListArgT a;
  a.values = std::move(values);
  return arg_of(std::move(a));
}

fb::ArgumentUnion value_ref(uint32_t value) {
  fb::ValueArgT a;
  a.value = value;
  return arg_of(std::move(a));
}

fb::ArgumentUnion int_arg(int64_t value) {
  fb::IntArgT a;
  a.value = value;
  return arg_of(std::move(a));
}

fb::ArgumentUnion float_arg(double value) {
  fb::FloatArgT a;
  a.value = value;
  return arg_of(std::move(a));
}

fb::ArgumentUnion string_arg(std::string value) {
  fb::StringArgT a;
  a.value = std::move(value);
  return arg_of(std::move(a));
}

fb::ArgumentUnion bool_arg(bool value) {
  fb::BoolArgT a;
  a.value = value;
  return arg_of(std::move(a));
}

fb::ArgumentUnion sym_int(int32_t value, int64_t literal = 0) {
  fb::SymIntArgT a;
  a.value = value;
  a.literal = literal;
  return arg_of(std::move(a));
}

std::unique_ptr<fb::SymDimT> dim(int64_t literal) {
  auto d = std::make_unique<fb::SymDimT>();
  d->literal = literal;
  return d;
}

std::unique_ptr<fb::SymDimT> dim(std::string expr, int64_t hint) {
  auto d = std::make_unique<fb::SymDimT>();
  d->expr = std::move(expr);
  d->hint = hint;
  return d;
}

using Dims = std::vector<std::unique_ptr<fb::SymDimT>>;

template <typename... D>
Dims dims(D... d) {
  Dims out;
  (out.push_back(std::move(d)), ...);
  return out;
}

std::unique_ptr<fb::TensorMetaT> meta(fb::ScalarType dtype, Dims sizes) {
  auto m = std::make_unique<fb::TensorMetaT>();
  m->dtype = dtype;
  m->sizes = std::move(sizes);
  return m;
}

// Contiguous strides for literal sizes (weights need them).
std::unique_ptr<fb::TensorMetaT> weight_meta(fb::ScalarType dtype, std::vector<int64_t> sizes) {
  auto m = std::make_unique<fb::TensorMetaT>();
  m->dtype = dtype;
  int64_t stride = 1;
  m->strides.resize(sizes.size());
  for (size_t i = sizes.size(); i-- > 0;) {
    m->strides[i] = dim(stride);
    stride *= sizes[i];
  }
  for (int64_t s : sizes) m->sizes.push_back(dim(s));
  return m;
}

std::unique_ptr<fb::ArgumentHolderT> holder(fb::ArgumentUnion arg) {
  auto h = std::make_unique<fb::ArgumentHolderT>();
  h->arg = std::move(arg);
  return h;
}

std::unique_ptr<fb::NamedArgumentT> positional(fb::ArgumentUnion arg, std::string name = "") {
  auto n = std::make_unique<fb::NamedArgumentT>();
  n->name = std::move(name);
  n->arg = std::move(arg);
  n->kind = fb::ArgumentKind::POSITIONAL;
  return n;
}

std::unique_ptr<fb::NamedArgumentT> keyword(std::string name, fb::ArgumentUnion arg) {
  auto n = positional(std::move(arg), std::move(name));
  n->kind = fb::ArgumentKind::KEYWORD;
  return n;
}

// Graph and operator tables with name lookups, so nodes read like the text they print as.
class GraphBuilder {
 public:
  GraphBuilder(fb::ProgramT& program, std::string name) : program_(program) {
    graph_ = std::make_unique<fb::GraphT>();
    graph_->name = std::move(name);
  }

  uint32_t value(std::string name, fb::ValueKind kind, std::unique_ptr<fb::TensorMetaT> tensor = nullptr) {
    auto v = std::make_unique<fb::ValueT>();
    v->name = std::move(name);
    v->kind = kind;
    v->tensor = std::move(tensor);
    graph_->values.push_back(std::move(v));
    return static_cast<uint32_t>(graph_->values.size() - 1);
  }

  fb::ValueT& at(uint32_t index) { return *graph_->values[index]; }

  fb::NodeT& node(const std::string& op, const std::string& overload,
                  std::vector<std::unique_ptr<fb::NamedArgumentT>> inputs,
                  std::vector<fb::ArgumentUnion> outputs) {
    auto n = std::make_unique<fb::NodeT>();
    n->op = operator_index(op, overload);
    n->inputs = std::move(inputs);
    for (auto& out : outputs) n->outputs.push_back(holder(std::move(out)));
    graph_->nodes.push_back(std::move(n));
    return *graph_->nodes.back();
  }

  void input(fb::ArgumentUnion arg) { graph_->inputs.push_back(holder(std::move(arg))); }
  void output(fb::ArgumentUnion arg) { graph_->outputs.push_back(holder(std::move(arg))); }
  fb::GraphT& graph() { return *graph_; }
  std::unique_ptr<fb::GraphT> release() { return std::move(graph_); }

  uint32_t operator_index(const std::string& name, const std::string& overload) {
    for (size_t i = 0; i < program_.operators.size(); ++i) {
      if (program_.operators[i]->name == name && program_.operators[i]->overload == overload) {
        return static_cast<uint32_t>(i);
      }
    }
    auto op = std::make_unique<fb::OperatorT>();
    op->name = name;
    op->overload = overload;
    program_.operators.push_back(std::move(op));
    return static_cast<uint32_t>(program_.operators.size() - 1);
  }

 private:
  fb::ProgramT& program_;
  std::unique_ptr<fb::GraphT> graph_;
};

template <typename... T>
std::vector<std::unique_ptr<fb::NamedArgumentT>> args(T... a) {
  std::vector<std::unique_ptr<fb::NamedArgumentT>> out;
  (out.push_back(std::move(a)), ...);
  return out;
}

template <typename... T>
std::vector<fb::ArgumentUnion> results(T... a) {
  std::vector<fb::ArgumentUnion> out;
  (out.push_back(std::move(a)), ...);
  return out;
}

std::unique_ptr<fb::InputSpecT> input_spec(fb::InputKind kind, int32_t value, std::string target = "") {
  auto spec = std::make_unique<fb::InputSpecT>();
  spec->kind = kind;
  spec->value = value;
  spec->target = std::move(target);
  return spec;
}

std::unique_ptr<fb::OutputSpecT> output_spec(fb::OutputKind kind, int32_t value, std::string target = "") {
  auto spec = std::make_unique<fb::OutputSpecT>();
  spec->kind = kind;
  spec->value = value;
  spec->target = std::move(target);
  return spec;
}

void add_weight(fb::ProgramT& program, std::string fqn, uint32_t storage, std::unique_ptr<fb::TensorMetaT> meta,
                bool is_parameter) {
  auto w = std::make_unique<fb::WeightTensorT>();
  w->fqn = std::move(fqn);
  w->storage = storage;
  w->meta = std::move(meta);
  w->is_parameter = is_parameter;
  program.weights.push_back(std::move(w));
}

std::vector<uint8_t> float_bytes(size_t count, float start) {
  std::vector<uint8_t> bytes(count * sizeof(float));
  for (size_t i = 0; i < count; ++i) {
    const float v = start + static_cast<float>(i) * 0.5f;
    std::memcpy(bytes.data() + i * sizeof(float), &v, sizeof v);
  }
  return bytes;
}

std::unique_ptr<fb::KeyValueT> key_value(std::string key, std::string value) {
  auto kv = std::make_unique<fb::KeyValueT>();
  kv->key = std::move(key);
  kv->value = std::move(value);
  return kv;
}

constexpr uint32_t kBodyGraph = 1;

std::unique_ptr<fb::GraphT> body_graph(fb::ProgramT& program) {
  GraphBuilder g(program, "body");
  const uint32_t a = g.value("a", fb::ValueKind::TENSOR, meta(fb::ScalarType::FLOAT32, dims(dim("s0", 8), dim(64))));
  const uint32_t neg = g.value("neg", fb::ValueKind::TENSOR, meta(fb::ScalarType::FLOAT32, dims(dim("s0", 8), dim(64))));
  g.input(tensor(a));
  g.node("aten::neg", "default", args(positional(tensor(a), "self")), results(tensor(neg)));
  g.output(tensor(neg));
  return g.release();
}

std::unique_ptr<fb::GraphT> main_graph(fb::ProgramT& program) {
  using K = fb::ValueKind;
  using S = fb::ScalarType;
  GraphBuilder g(program, "main");

  const uint32_t x = g.value("x", K::TENSOR, meta(S::FLOAT32, dims(dim("s0", 8), dim(16))));
  const uint32_t w = g.value("p_fc_weight", K::TENSOR, meta(S::FLOAT32, dims(dim(16), dim(64))));
  const uint32_t b = g.value("p_fc_bias", K::TENSOR, meta(S::FLOAT32, dims(dim(64))));
  const uint32_t buf = g.value("b_running_mean", K::TENSOR, meta(S::FLOAT32, dims(dim(64))));
  const uint32_t dt = g.value("dt", K::DTENSOR, meta(S::BFLOAT16, dims(dim(4), dim(64))));
  {
    auto spec = std::make_unique<fb::DTensorSpecT>();
    spec->mesh = 0;
    spec->placements = {fb::Placement(fb::PlacementKind::SHARD, fb::ReduceOp::SUM, 0, 0),
                        fb::Placement(fb::PlacementKind::PARTIAL, fb::ReduceOp::SUM, 0, 0)};
    spec->global_sizes = dims(dim(8), dim(64));
    g.at(dt).dtensor = std::move(spec);
  }
  const uint32_t obj = g.value("obj", K::CUSTOM_OBJ);
  g.at(obj).class_fqn = "__torch__.torch.classes.test.Counter";

  const uint32_t mm = g.value("mm", K::TENSOR, meta(S::FLOAT32, dims(dim("s0", 8), dim(64))));
  const uint32_t add = g.value("add", K::TENSOR, meta(S::FLOAT32, dims(dim("s0", 8), dim(64))));
  const uint32_t relu = g.value("relu", K::TENSOR, meta(S::FLOAT32, dims(dim("s0", 8), dim(64))));
  const uint32_t sym_size = g.value("sym_size_int", K::SYM_INT);
  const uint32_t sym_float = g.value("sym_float", K::SYM_FLOAT);
  const uint32_t sym_bool = g.value("sym_bool", K::SYM_BOOL);
  const uint32_t reduced = g.value("all_reduce", K::DTENSOR, meta(S::BFLOAT16, dims(dim(4), dim(64))));
  {
    auto spec = std::make_unique<fb::DTensorSpecT>();
    spec->mesh = 0;
    spec->placements = {fb::Placement(fb::PlacementKind::STRIDED_SHARD, fb::ReduceOp::SUM, 0, 2),
                        fb::Placement(fb::PlacementKind::REPLICATE, fb::ReduceOp::SUM, 0, 0)};
    spec->global_sizes = dims(dim(8), dim(64));
    g.at(reduced).dtensor = std::move(spec);
  }
  const uint32_t split_0 = g.value("split_0", K::TENSOR, meta(S::FLOAT32, dims(dim(4), dim(64))));
  const uint32_t split_1 = g.value("split_1", K::TENSOR, meta(S::FLOAT32, dims(dim(4), dim(64))));
  const uint32_t group = g.value("group", K::PROCESS_GROUP);
  g.at(group).process_group = 0;
  const uint32_t maybe = g.value("maybe", K::OPTIONAL_TENSOR, meta(S::INT64, dims(dim(64))));
  const uint32_t list = g.value("list", K::TENSOR_LIST);
  g.at(list).elements.push_back(meta(S::FLOAT16, dims(dim(2))));
  g.at(list).elements.push_back(meta(S::FLOAT16, dims(dim(3))));
  const uint32_t cond_0 = g.value("cond_0", K::TENSOR, meta(S::FLOAT32, dims(dim("s0", 8), dim(64))));
  const uint32_t moved = g.value("moved", K::TENSOR, meta(S::FLOAT32, dims(dim(64))));
  {
    auto device = std::make_unique<fb::DeviceT>();
    device->type = fb::DeviceType::CUDA;
    device->index = 0;
    g.at(moved).tensor->device = std::move(device);
  }
  const uint32_t everything = g.value("everything", K::TENSOR, meta(S::FLOAT32, dims(dim(1))));

  g.input(tensor(x));
  g.input(tensor(w));
  g.input(tensor(b));
  g.input(tensor(buf));
  g.input(tensor(dt));
  {
    fb::CustomObjArgT a;
    a.value = obj;
    a.class_fqn = "__torch__.torch.classes.test.Counter";
    g.input(arg_of(std::move(a)));
  }
  g.input(float_arg(0.5));  // a constant input

  g.node("aten::mm", "default", args(positional(tensor(x), "self"), positional(tensor(w), "mat2")), results(tensor(mm)))
      .metadata.push_back(key_value("stack_trace", "File model.py, line 3"));
  g.node("aten::add", "Tensor", args(positional(tensor(mm), "self"), positional(tensor(b), "other"),
                                     keyword("alpha", int_arg(1))),
         results(tensor(add)));
  g.node("aten::relu", "default", args(positional(tensor(add), "self")), results(tensor(relu)));
  g.node("aten::sym_size", "int", args(positional(tensor(x), "self"), positional(int_arg(0), "dim")),
         results(sym_int(static_cast<int32_t>(sym_size))));
  {
    fb::SymFloatArgT f;
    f.value = static_cast<int32_t>(sym_float);
    g.node("test::sym_float", "default", args(positional(sym_int(static_cast<int32_t>(sym_size)))),
           results(arg_of(std::move(f))));
    fb::SymBoolArgT sb;
    sb.value = static_cast<int32_t>(sym_bool);
    g.node("test::sym_bool", "default", args(positional(sym_int(static_cast<int32_t>(sym_size)))),
           results(arg_of(std::move(sb))));
  }
  g.node("_c10d_functional::all_reduce", "default",
         args(positional(tensor(dt), "input"), positional(string_arg("sum"), "reduce_op"),
              positional(string_arg("tp0"), "group_name")),
         results(tensor(reduced)));
  g.node("aten::split", "Tensor", args(positional(tensor(relu), "self"), positional(int_arg(4), "split_size")),
         results(tensors({split_0, split_1})));
  // A node without results, and a string that needs escaping.
  g.node("aten::_assert_async", "msg",
         args(positional(tensor(relu), "self"), positional(string_arg("it's\n\"fine\"\x1b[0m"), "assert_msg")), {});
  g.node("test::new_group", "default", args(positional(string_arg("tp0"))), results(value_ref(group)));
  {
    fb::OptionalTensorArgT maybe_out;
    maybe_out.value = static_cast<int32_t>(maybe);
    fb::NoneArgT unused;
    g.node("test::maybe", "default", args(positional(tensor(b))), results(arg_of(std::move(maybe_out)), arg_of(unused)));
  }
  g.node("test::make_list", "default", {}, results(value_ref(list)));
  {
    fb::SymBoolArgT pred;
    pred.literal = true;
    fb::GraphArgT true_branch;
    true_branch.graph = kBodyGraph;
    fb::GraphArgT false_branch;
    false_branch.graph = kBodyGraph;
    g.node("higher_order::cond", "",
           args(positional(arg_of(std::move(pred)), "pred"), positional(arg_of(std::move(true_branch)), "true_fn"),
                positional(arg_of(std::move(false_branch)), "false_fn"), positional(tensors({relu}), "operands")),
           results(tensors({cond_0})));
  }
  {
    fb::ScalarTypeArgT dtype;
    dtype.value = S::FLOAT32;
    fb::LayoutArgT layout;
    layout.value = fb::Layout::STRIDED;
    fb::DeviceArgT device;
    device.value = std::make_unique<fb::DeviceT>();
    device.value->type = fb::DeviceType::CUDA;
    device.value->index = 0;
    fb::MemoryFormatArgT format;
    format.value = fb::MemoryFormat::CONTIGUOUS;
    g.node("aten::_to_copy", "default",
           args(positional(tensor(b), "self"), keyword("dtype", arg_of(std::move(dtype))),
                keyword("layout", arg_of(std::move(layout))), keyword("device", arg_of(std::move(device))),
                keyword("pin_memory", bool_arg(false)), keyword("memory_format", arg_of(std::move(format)))),
           results(tensor(moved)));
  }

  // One node that uses every remaining kind of constant and reference.
  std::vector<std::unique_ptr<fb::NamedArgumentT>> all;
  all.push_back(positional(tensor(relu), "self"));
  all.push_back(keyword("none", arg_of(fb::NoneArgT{})));
  all.push_back(keyword("i", int_arg(-3)));
  {
    fb::IntListArgT a;
    a.values = {1, 2, 9007199254740993};
    all.push_back(keyword("ints", arg_of(std::move(a))));
  }
  all.push_back(keyword("f", float_arg(0.1)));
  all.push_back(keyword("tiny", float_arg(1e-05)));
  all.push_back(keyword("big", float_arg(1e16)));
  all.push_back(keyword("whole", float_arg(3.0)));
  all.push_back(keyword("neg_zero", float_arg(-0.0)));
  all.push_back(keyword("nan", float_arg(std::numeric_limits<double>::quiet_NaN())));
  all.push_back(keyword("inf", float_arg(std::numeric_limits<double>::infinity())));
  all.push_back(keyword("ninf", float_arg(-std::numeric_limits<double>::infinity())));
  {
    fb::FloatListArgT a;
    a.values = {1.0, 2.5, -0.001};
    all.push_back(keyword("floats", arg_of(std::move(a))));
  }
  {
    fb::StringListArgT a;
    a.values = {"a", "b c"};
    all.push_back(keyword("strings", arg_of(std::move(a))));
  }
  all.push_back(keyword("sym", sym_int(static_cast<int32_t>(sym_size))));
  all.push_back(keyword("sym_literal", sym_int(-1, 7)));
  {
    fb::SymIntListArgT a;
    a.items = {fb::SymIntItem(static_cast<int32_t>(sym_size), 0), fb::SymIntItem(-1, 64)};
    all.push_back(keyword("sym_ints", arg_of(std::move(a))));
  }
  {
    fb::BoolListArgT a;
    a.values = {true, false};
    all.push_back(keyword("bools", arg_of(std::move(a))));
  }
  {
    fb::SymBoolArgT a;
    a.value = static_cast<int32_t>(sym_bool);
    all.push_back(keyword("sym_bool", arg_of(std::move(a))));
    fb::SymBoolListArgT l;
    l.items = {fb::SymBoolItem(-1, false), fb::SymBoolItem(static_cast<int32_t>(sym_bool), false)};
    all.push_back(keyword("sym_bools", arg_of(std::move(l))));
  }
  {
    fb::OptionalTensorListArgT a;
    a.values = {static_cast<int32_t>(x), -1};
    all.push_back(keyword("optional_tensors", arg_of(std::move(a))));
  }
  {
    fb::GraphArgT a;
    a.graph = kBodyGraph;
    all.push_back(keyword("subgraph", arg_of(std::move(a))));
  }
  {
    fb::CustomObjArgT a;
    a.value = obj;
    a.class_fqn = "__torch__.torch.classes.test.Counter";
    all.push_back(keyword("obj", arg_of(std::move(a))));
  }
  {
    fb::OperatorArgT a;
    a.op = g.operator_index("aten::mm", "default");
    all.push_back(keyword("op", arg_of(std::move(a))));
  }
  {
    fb::SymFloatArgT a;
    a.value = static_cast<int32_t>(sym_float);
    all.push_back(keyword("sym_float", arg_of(std::move(a))));
    fb::SymFloatArgT lit;
    lit.literal = 2.5;
    all.push_back(keyword("sym_float_literal", arg_of(std::move(lit))));
    fb::SymFloatListArgT l;
    l.items = {fb::SymFloatItem(-1, 1.5), fb::SymFloatItem(static_cast<int32_t>(sym_float), 0.0)};
    all.push_back(keyword("sym_floats", arg_of(std::move(l))));
  }
  {
    fb::OptionalTensorArgT some;
    some.value = static_cast<int32_t>(b);
    all.push_back(keyword("optional", arg_of(std::move(some))));
    fb::OptionalTensorArgT none;
    all.push_back(keyword("optional_none", arg_of(std::move(none))));
  }
  {
    fb::ComplexArgT c;
    c.real = 1.0;
    c.imag = -2.5;
    all.push_back(keyword("complex", arg_of(std::move(c))));
    fb::ComplexArgT imaginary;
    imaginary.real = 0.0;
    imaginary.imag = 2.0;
    all.push_back(keyword("imaginary", arg_of(std::move(imaginary))));
  }
  {
    fb::NestedTensorsArgT a;
    auto first = std::make_unique<fb::TensorListArgT>();
    first->values = {x};
    auto second = std::make_unique<fb::TensorListArgT>();
    second->values = {w, b};
    a.lists.push_back(std::move(first));
    a.lists.push_back(std::move(second));
    all.push_back(keyword("nested", arg_of(std::move(a))));
  }
  {
    fb::IntListListArgT a;
    auto first = std::make_unique<fb::IntListArgT>();
    first->values = {1, 2};
    auto second = std::make_unique<fb::IntListArgT>();
    second->values = {3};
    a.lists.push_back(std::move(first));
    a.lists.push_back(std::move(second));
    all.push_back(keyword("int_lists", arg_of(std::move(a))));
  }
  {
    fb::StringToArgumentArgT a;
    auto k = std::make_unique<fb::StringToArgumentEntryT>();
    k->key = "k";
    k->value = int_arg(1);
    auto m = std::make_unique<fb::StringToArgumentEntryT>();
    m->key = "m";
    m->value = tensor(x);
    a.entries.push_back(std::move(k));
    a.entries.push_back(std::move(m));
    all.push_back(keyword("map", arg_of(std::move(a))));
  }
  {
    fb::FloatListListArgT a;
    auto first = std::make_unique<fb::FloatListArgT>();
    first->values = {0.25};
    a.lists.push_back(std::move(first));
    all.push_back(keyword("float_lists", arg_of(std::move(a))));
  }
  {
    fb::ProcessGroupArgT a;
    a.group = 0;
    all.push_back(keyword("group", arg_of(std::move(a))));
  }
  all.push_back(keyword("group_value", value_ref(group)));
  g.node("test::everything", "default", std::move(all), results(tensor(everything)));

  g.output(tensor(relu));
  g.output(tensor(reduced));
  g.output(tensor(everything));
  g.output(tensor(cond_0));
  g.output(tensor(moved));

  auto signature = std::make_unique<fb::SignatureT>();
  signature->inputs.push_back(input_spec(fb::InputKind::USER_INPUT, static_cast<int32_t>(x)));
  signature->inputs.push_back(input_spec(fb::InputKind::PARAMETER, static_cast<int32_t>(w), "fc.weight"));
  signature->inputs.push_back(input_spec(fb::InputKind::PARAMETER, static_cast<int32_t>(b), "fc.bias"));
  signature->inputs.push_back(input_spec(fb::InputKind::BUFFER, static_cast<int32_t>(buf), "running_mean"));
  signature->inputs.back()->persistent = false;
  signature->inputs.push_back(input_spec(fb::InputKind::USER_INPUT, static_cast<int32_t>(dt)));
  signature->inputs.push_back(input_spec(fb::InputKind::CUSTOM_OBJ, static_cast<int32_t>(obj), "counter"));
  signature->inputs.push_back(input_spec(fb::InputKind::CONSTANT_INPUT, -1, "scale"));
  signature->inputs.back()->constant = holder(float_arg(0.5));
  signature->outputs.push_back(output_spec(fb::OutputKind::USER_OUTPUT, static_cast<int32_t>(relu)));
  signature->outputs.push_back(output_spec(fb::OutputKind::USER_OUTPUT, static_cast<int32_t>(reduced)));
  signature->outputs.push_back(output_spec(fb::OutputKind::USER_OUTPUT, static_cast<int32_t>(everything)));
  signature->outputs.push_back(output_spec(fb::OutputKind::USER_OUTPUT, static_cast<int32_t>(cond_0)));
  signature->outputs.push_back(output_spec(fb::OutputKind::BUFFER_MUTATION, static_cast<int32_t>(moved), "running_mean"));
  g.graph().signature = std::move(signature);
  return g.release();
}

}  // namespace

ProgramWithWeights sample_program() {
  ProgramWithWeights out;
  fb::ProgramT& program = out.program;
  program.producer = "nrt tests/cli sample_program";

  auto mesh = std::make_unique<fb::DeviceMeshT>();
  mesh->name = "mesh";
  mesh->device_type = fb::DeviceType::CUDA;
  mesh->shape = {2, 2};
  mesh->dim_names = {"dp", "tp"};
  mesh->ranks = {0, 1, 2, 3};
  program.meshes.push_back(std::move(mesh));

  auto group = std::make_unique<fb::ProcessGroupT>();
  group->name = "tp0";
  group->ranks = {0, 1};
  group->backend = "nccl";
  group->mesh = 0;
  group->mesh_dim = 1;
  program.process_groups.push_back(std::move(group));

  program.graphs.push_back(main_graph(program));
  program.graphs.push_back(body_graph(program));
  program.entry_points = {0};

  out.storages.push_back(float_bytes(16 * 64, 0.0f));
  out.storages.push_back(float_bytes(64, -1.0f));
  for (size_t i = 0; i < out.storages.size(); ++i) program.storages.push_back(std::make_unique<fb::StorageT>());
  add_weight(program, "fc.weight", 0, weight_meta(fb::ScalarType::FLOAT32, {16, 64}), true);
  add_weight(program, "fc.bias", 1, weight_meta(fb::ScalarType::FLOAT32, {64}), true);
  // A buffer sharing the bias' storage: counted in weight bytes once, not as a parameter.
  add_weight(program, "running_mean", 1, weight_meta(fb::ScalarType::FLOAT32, {64}), false);

  program.metadata.push_back(key_value("torch_version", "2.5.0"));
  return out;
}

ProgramWithWeights program_with_bad_value_index() {
  ProgramWithWeights out = sample_program();
  auto& first_arg = out.program.graphs[0]->nodes[0]->inputs[0]->arg;
  first_arg.AsTensorArg()->value = 999;
  return out;
}

Status write_program(const std::string& path, const ProgramWithWeights& program) {
  std::vector<std::span<const uint8_t>> spans;
  for (const auto& storage : program.storages) spans.emplace_back(storage.data(), storage.size());
  return write_program_file(path, program.program, spans);
}

}  // namespace nrt::testing
