#include "bench/synthetic_program.h"

#include <array>
#include <memory>
#include <string_view>
#include <utility>
#include <vector>

namespace nrt::bench {
namespace {

// ---------------------------------------------------------------------------------------------
// The ladder's shape, shared by the object-API builder and the torch JSON writer so both forms
// describe the same nodes.

enum class LadderOp : uint32_t { kAdd = 0, kMul = 1, kRelu = 2 };

constexpr std::string_view kParameterValue = "p_w";
constexpr std::string_view kParameterFqn = "w";
constexpr std::string_view kUserInput = "x";
constexpr int64_t kRows = 8;
constexpr int64_t kCols = 64;

LadderOp op_of(uint32_t node) { return static_cast<LadderOp>(node % 3); }

std::string_view op_short_name(LadderOp op) {
  switch (op) {
    case LadderOp::kAdd:
      return "add";
    case LadderOp::kMul:
      return "mul";
    case LadderOp::kRelu:
      return "relu";
  }
  return "";
}

// torch.export names a node's output after the node: add_0, mul_1, relu_2, ...
std::string node_name(uint32_t node) { return std::string(op_short_name(op_of(node))) + "_" + std::to_string(node); }

std::string self_input_name(uint32_t node) {
  return node == 0 ? std::string(kUserInput) : node_name(node - 1);
}

using Metadata = std::array<std::pair<std::string_view, std::string>, 3>;

Metadata ladder_metadata(uint32_t node) {
  const LadderOp op = op_of(node);
  const std::string block = std::to_string(node / 3);
  std::string statement;
  std::string torch_fn = node_name(node) + ";";
  switch (op) {
    case LadderOp::kAdd:
      statement = "h = torch.add(h, self.w, alpha=1)";
      torch_fn += "builtin_function_or_method.add";
      break;
    case LadderOp::kMul:
      statement = "h = torch.mul(h, x)";
      torch_fn += "builtin_function_or_method.mul";
      break;
    case LadderOp::kRelu:
      statement = "h = torch.relu(h)";
      torch_fn += "builtin_function_or_method.relu";
      break;
  }
  return {{
      {"stack_trace", "  File \"/workspace/ladder.py\", line " + std::to_string(20 + static_cast<uint32_t>(op)) +
                          ", in forward\n    " + statement + "\n"},
      {"nn_module_stack", "L__self___blocks_" + block + ",blocks." + block + ",__main__.Block"},
      {"torch_fn", torch_fn},
  }};
}

// ---------------------------------------------------------------------------------------------
// Object API

std::unique_ptr<fb::SymDimT> literal_dim(int64_t value) {
  auto dim = std::make_unique<fb::SymDimT>();
  dim->literal = value;
  return dim;
}

std::unique_ptr<fb::TensorMetaT> f32_matrix(int64_t rows, int64_t cols) {
  auto meta = std::make_unique<fb::TensorMetaT>();
  meta->dtype = fb::ScalarType::FLOAT32;
  meta->sizes.push_back(literal_dim(rows));
  meta->sizes.push_back(literal_dim(cols));
  meta->strides.push_back(literal_dim(cols));
  meta->strides.push_back(literal_dim(1));
  meta->storage_offset = literal_dim(0);
  meta->device = std::make_unique<fb::DeviceT>();
  meta->layout = fb::Layout::STRIDED;
  return meta;
}

std::unique_ptr<fb::ValueT> tensor_value(std::string name, int64_t rows, int64_t cols) {
  auto value = std::make_unique<fb::ValueT>();
  value->name = std::move(name);
  value->kind = fb::ValueKind::TENSOR;
  value->tensor = f32_matrix(rows, cols);
  return value;
}

fb::ArgumentUnion tensor_arg(uint32_t value_index) {
  fb::TensorArgT arg;
  arg.value = value_index;
  fb::ArgumentUnion u;
  u.Set(std::move(arg));
  return u;
}

fb::ArgumentUnion int_arg(int64_t literal) {
  fb::IntArgT arg;
  arg.value = literal;
  fb::ArgumentUnion u;
  u.Set(std::move(arg));
  return u;
}

std::unique_ptr<fb::ArgumentHolderT> holder(fb::ArgumentUnion arg) {
  auto h = std::make_unique<fb::ArgumentHolderT>();
  h->arg = std::move(arg);
  return h;
}

std::unique_ptr<fb::NamedArgumentT> named(std::string name, fb::ArgumentUnion arg, fb::ArgumentKind kind) {
  auto n = std::make_unique<fb::NamedArgumentT>();
  n->name = std::move(name);
  n->arg = std::move(arg);
  n->kind = kind;
  return n;
}

std::unique_ptr<fb::OperatorT> op(std::string name, std::string overload) {
  auto o = std::make_unique<fb::OperatorT>();
  o->name = std::move(name);
  o->overload = std::move(overload);
  return o;
}

std::unique_ptr<fb::KeyValueT> key_value(std::string key, std::string value) {
  auto kv = std::make_unique<fb::KeyValueT>();
  kv->key = std::move(key);
  kv->value = std::move(value);
  return kv;
}

std::unique_ptr<fb::InputSpecT> input_spec(fb::InputKind kind, int32_t value, std::string target) {
  auto spec = std::make_unique<fb::InputSpecT>();
  spec->kind = kind;
  spec->value = value;
  spec->target = std::move(target);
  return spec;
}

std::unique_ptr<fb::OutputSpecT> user_output(int32_t value) {
  auto spec = std::make_unique<fb::OutputSpecT>();
  spec->kind = fb::OutputKind::USER_OUTPUT;
  spec->value = value;
  return spec;
}

std::unique_ptr<fb::WeightTensorT> parameter(std::string fqn, uint32_t storage, int64_t rows, int64_t cols) {
  auto weight = std::make_unique<fb::WeightTensorT>();
  weight->fqn = std::move(fqn);
  weight->storage = storage;
  weight->meta = f32_matrix(rows, cols);
  weight->is_parameter = true;
  return weight;
}

// Operators in the order of LadderOp, so a node's op index is its LadderOp number.
void add_ladder_operators(fb::ProgramT* program) {
  program->operators.push_back(op("aten::add", "Tensor"));
  program->operators.push_back(op("aten::mul", "Tensor"));
  program->operators.push_back(op("aten::relu", "default"));
}

// ---------------------------------------------------------------------------------------------
// JSON text

void append_json_string(std::string* out, std::string_view s) {
  out->push_back('"');
  for (char c : s) {
    switch (c) {
      case '"':
        out->append("\\\"");
        break;
      case '\\':
        out->append("\\\\");
        break;
      case '\n':
        out->append("\\n");
        break;
      default:
        out->push_back(c);
    }
  }
  out->push_back('"');
}

void append_as_tensor(std::string* out, std::string_view name) {
  out->append("{\"as_tensor\": {\"name\": ");
  append_json_string(out, name);
  out->append("}}");
}

void append_named_tensor(std::string* out, std::string_view arg_name, std::string_view value) {
  out->append("{\"name\": ");
  append_json_string(out, arg_name);
  out->append(", \"arg\": ");
  append_as_tensor(out, value);
  out->append(", \"kind\": 1}");
}

// torch.export's serialized TensorMeta of an f32[8,64] contiguous CPU tensor (dtype 7 = FLOAT,
// layout 7 = Strided in the export schema's numbering).
constexpr std::string_view kTorchTensorMeta =
    "{\"dtype\": 7, \"sizes\": [{\"as_int\": 8}, {\"as_int\": 64}], \"requires_grad\": false, "
    "\"device\": {\"type\": \"cpu\"}, \"strides\": [{\"as_int\": 64}, {\"as_int\": 1}], "
    "\"storage_offset\": {\"as_int\": 0}, \"layout\": 7}";

void append_torch_node(std::string* out, uint32_t node) {
  const LadderOp op = op_of(node);
  out->append("{\"target\": \"torch.ops.aten.");
  out->append(op == LadderOp::kRelu ? "relu.default" : std::string(op_short_name(op)) + ".Tensor");
  out->append("\", \"inputs\": [");
  append_named_tensor(out, "self", self_input_name(node));
  if (op == LadderOp::kAdd) {
    out->append(", ");
    append_named_tensor(out, "other", kParameterValue);
    out->append(", {\"name\": \"alpha\", \"arg\": {\"as_int\": 1}, \"kind\": 2}");
  } else if (op == LadderOp::kMul) {
    out->append(", ");
    append_named_tensor(out, "other", kUserInput);
  }
  out->append("], \"outputs\": [");
  append_as_tensor(out, node_name(node));
  out->append("], \"metadata\": {");
  bool first = true;
  for (const auto& [key, value] : ladder_metadata(node)) {
    if (!first) out->append(", ");
    first = false;
    append_json_string(out, key);
    out->append(": ");
    append_json_string(out, value);
  }
  out->append("}, \"is_hop_single_tensor_return\": null}");
}

}  // namespace

fb::ProgramT make_ladder_program(uint32_t num_nodes) {
  fb::ProgramT program;
  program.producer = "nrt-bench ladder";
  add_ladder_operators(&program);
  program.storages.push_back(std::make_unique<fb::StorageT>());
  program.weights.push_back(parameter(std::string(kParameterFqn), 0, kRows, kCols));

  auto graph = std::make_unique<fb::GraphT>();
  graph->name = "forward";
  constexpr uint32_t kParameterIndex = 0;
  constexpr uint32_t kUserInputIndex = 1;
  constexpr uint32_t kFirstNodeValue = 2;
  graph->values.reserve(kFirstNodeValue + num_nodes);
  graph->values.push_back(tensor_value(std::string(kParameterValue), kRows, kCols));
  graph->values.push_back(tensor_value(std::string(kUserInput), kRows, kCols));
  graph->inputs.push_back(holder(tensor_arg(kParameterIndex)));
  graph->inputs.push_back(holder(tensor_arg(kUserInputIndex)));

  graph->nodes.reserve(num_nodes);
  for (uint32_t n = 0; n < num_nodes; ++n) {
    const LadderOp ladder_op = op_of(n);
    const uint32_t self = n == 0 ? kUserInputIndex : kFirstNodeValue + n - 1;
    const uint32_t result = kFirstNodeValue + n;
    graph->values.push_back(tensor_value(node_name(n), kRows, kCols));

    auto node = std::make_unique<fb::NodeT>();
    node->name = node_name(n);
    node->op = static_cast<uint32_t>(ladder_op);
    node->inputs.push_back(named("self", tensor_arg(self), fb::ArgumentKind::POSITIONAL));
    if (ladder_op == LadderOp::kAdd) {
      node->inputs.push_back(named("other", tensor_arg(kParameterIndex), fb::ArgumentKind::POSITIONAL));
      node->inputs.push_back(named("alpha", int_arg(1), fb::ArgumentKind::KEYWORD));
    } else if (ladder_op == LadderOp::kMul) {
      node->inputs.push_back(named("other", tensor_arg(kUserInputIndex), fb::ArgumentKind::POSITIONAL));
    }
    node->outputs.push_back(holder(tensor_arg(result)));
    for (auto& [key, value] : ladder_metadata(n)) node->metadata.push_back(key_value(std::string(key), value));
    graph->nodes.push_back(std::move(node));
  }
  const uint32_t last = num_nodes == 0 ? kUserInputIndex : kFirstNodeValue + num_nodes - 1;
  graph->outputs.push_back(holder(tensor_arg(last)));

  graph->signature = std::make_unique<fb::SignatureT>();
  graph->signature->inputs.push_back(
      input_spec(fb::InputKind::PARAMETER, kParameterIndex, std::string(kParameterFqn)));
  graph->signature->inputs.push_back(input_spec(fb::InputKind::USER_INPUT, kUserInputIndex, ""));
  graph->signature->outputs.push_back(user_output(static_cast<int32_t>(last)));

  program.graphs.push_back(std::move(graph));
  program.entry_points.push_back(0);
  program.metadata.push_back(key_value("torch_version", "2.9.0"));
  return program;
}

std::string make_ladder_torch_json(uint32_t num_nodes) {
  std::string out;
  out.reserve(static_cast<size_t>(num_nodes) * 720 + 4096);
  const std::string last = num_nodes == 0 ? std::string(kUserInput) : node_name(num_nodes - 1);

  out.append("{\"graph_module\": {\"graph\": {\"inputs\": [");
  append_as_tensor(&out, kParameterValue);
  out.append(", ");
  append_as_tensor(&out, kUserInput);
  out.append("], \"outputs\": [");
  append_as_tensor(&out, last);
  out.append("], \"nodes\": [");
  for (uint32_t n = 0; n < num_nodes; ++n) {
    if (n != 0) out.append(", ");
    append_torch_node(&out, n);
  }
  out.append("], \"tensor_values\": {");
  append_json_string(&out, kParameterValue);
  out.append(": ");
  out.append(kTorchTensorMeta);
  out.append(", ");
  append_json_string(&out, kUserInput);
  out.append(": ");
  out.append(kTorchTensorMeta);
  for (uint32_t n = 0; n < num_nodes; ++n) {
    out.append(", ");
    append_json_string(&out, node_name(n));
    out.append(": ");
    out.append(kTorchTensorMeta);
  }
  out.append(
      "}, \"sym_int_values\": {}, \"sym_bool_values\": {}, \"sym_float_values\": {}, "
      "\"custom_obj_values\": {}, \"is_single_tensor_return\": false}, ");
  out.append("\"signature\": {\"input_specs\": [{\"parameter\": {\"arg\": {\"name\": ");
  append_json_string(&out, kParameterValue);
  out.append("}, \"parameter_name\": ");
  append_json_string(&out, kParameterFqn);
  out.append("}}, {\"user_input\": {\"arg\": ");
  append_as_tensor(&out, kUserInput);
  out.append("}}], \"output_specs\": [{\"user_output\": {\"arg\": ");
  append_as_tensor(&out, last);
  out.append("}}]}, \"module_call_graph\": [], \"metadata\": {}, \"treespec_namedtuple_fields\": {}}, ");
  out.append(
      "\"opset_version\": {\"aten\": 0}, \"range_constraints\": {}, "
      "\"schema_version\": {\"major\": 8, \"minor\": 20}, \"verifiers\": [], "
      "\"torch_version\": \"2.9.0\", \"guards_code\": []}");
  return out;
}

fb::ProgramT make_weighted_program(uint32_t num_storages, uint64_t storage_bytes) {
  constexpr int64_t kWeightCols = 1024;
  const auto rows = static_cast<int64_t>(storage_bytes / (kWeightCols * sizeof(float)));

  fb::ProgramT program;
  program.producer = "nrt-bench weighted";
  program.operators.push_back(op("aten::relu", "default"));

  auto graph = std::make_unique<fb::GraphT>();
  graph->name = "forward";
  graph->signature = std::make_unique<fb::SignatureT>();
  for (uint32_t s = 0; s < num_storages; ++s) {
    const std::string fqn = "layers." + std::to_string(s) + ".weight";
    program.storages.push_back(std::make_unique<fb::StorageT>());
    program.weights.push_back(parameter(fqn, s, rows, kWeightCols));
    graph->values.push_back(tensor_value("p_layers_" + std::to_string(s) + "_weight", rows, kWeightCols));
    graph->inputs.push_back(holder(tensor_arg(s)));
    graph->signature->inputs.push_back(input_spec(fb::InputKind::PARAMETER, static_cast<int32_t>(s), fqn));
  }
  const uint32_t x = num_storages;
  const uint32_t y = num_storages + 1;
  graph->values.push_back(tensor_value(std::string(kUserInput), kRows, kCols));
  graph->values.push_back(tensor_value("relu", kRows, kCols));
  graph->inputs.push_back(holder(tensor_arg(x)));
  graph->signature->inputs.push_back(input_spec(fb::InputKind::USER_INPUT, static_cast<int32_t>(x), ""));

  auto node = std::make_unique<fb::NodeT>();
  node->name = "relu";
  node->op = 0;
  node->inputs.push_back(named("self", tensor_arg(x), fb::ArgumentKind::POSITIONAL));
  node->outputs.push_back(holder(tensor_arg(y)));
  graph->nodes.push_back(std::move(node));
  graph->outputs.push_back(holder(tensor_arg(y)));
  graph->signature->outputs.push_back(user_output(static_cast<int32_t>(y)));

  program.graphs.push_back(std::move(graph));
  program.entry_points.push_back(0);
  return program;
}

}  // namespace nrt::bench
