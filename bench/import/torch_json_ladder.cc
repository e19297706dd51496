#include "bench/import/torch_json_ladder.h"

#include "serializer/torch_export/json_writer.h"

namespace nrt::bench {
namespace {

using torch_export::JsonWriter;

const char* const kOps[] = {"add", "mul", "relu"};

std::string node_name(uint32_t n) { return std::string(kOps[n % 3]) + "_" + std::to_string(n); }

void tensor_meta(JsonWriter& w) {
  auto dims = [&w](int64_t a, int64_t b) {
    w.begin_array();
    for (int64_t v : {a, b}) {
      w.begin_object();
      w.key("as_int");
      w.int64(v);
      w.end_object();
    }
    w.end_array();
  };
  w.begin_object();
  w.key("dtype");
  w.int64(7);
  w.key("sizes");
  dims(8, 64);
  w.key("requires_grad");
  w.boolean(false);
  w.key("device");
  w.begin_object();
  w.key("type");
  w.string("cpu");
  w.key("index");
  w.null();
  w.end_object();
  w.key("strides");
  dims(64, 1);
  w.key("storage_offset");
  w.begin_object();
  w.key("as_int");
  w.int64(0);
  w.end_object();
  w.key("layout");
  w.int64(7);
  w.end_object();
}

void tensor_argument(JsonWriter& w, const std::string& name) {
  w.begin_object();
  w.key("as_tensor");
  w.begin_object();
  w.key("name");
  w.string(name);
  w.end_object();
  w.end_object();
}

void named_tensor(JsonWriter& w, const char* arg, const std::string& value) {
  w.begin_object();
  w.key("name");
  w.string(arg);
  w.key("arg");
  tensor_argument(w, value);
  w.key("kind");
  w.int64(1);
  w.end_object();
}

void node(JsonWriter& w, uint32_t n) {
  const uint32_t op = n % 3;
  const std::string self = n == 0 ? "x" : node_name(n - 1);
  w.begin_object();
  w.key("target");
  w.string(op == 2 ? "torch.ops.aten.relu.default" : std::string("torch.ops.aten.") + kOps[op] + ".Tensor");
  w.key("inputs");
  w.begin_array();
  named_tensor(w, "self", self);
  if (op == 0) {
    named_tensor(w, "other", "p_w");
    w.begin_object();
    w.key("name");
    w.string("alpha");
    w.key("arg");
    w.begin_object();
    w.key("as_int");
    w.int64(1);
    w.end_object();
    w.key("kind");
    w.int64(2);
    w.end_object();
  } else if (op == 1) {
    named_tensor(w, "other", "x");
  }
  w.end_array();
  w.key("outputs");
  w.begin_array();
  tensor_argument(w, node_name(n));
  w.end_array();
  w.key("metadata");
  w.begin_object();
  w.key("stack_trace");
  w.string("  File \"/workspace/ladder.py\", line " + std::to_string(20 + op) + ", in forward\n    h = torch." +
           kOps[op] + "(h)\n");
  w.key("nn_module_stack");
  const std::string block = std::to_string(n / 3);
  w.string("L__self___blocks_" + block + ",blocks." + block + ",__main__.Block");
  w.key("torch_fn");
  w.string(node_name(n) + ";builtin_function_or_method." + kOps[op]);
  w.end_object();
  w.key("is_hop_single_tensor_return");
  w.null();
  w.key("name");
  w.string(node_name(n));
  w.end_object();
}

}  // namespace

std::string make_torch_json_ladder(uint32_t num_nodes) {
  JsonWriter w;
  w.text().reserve(static_cast<size_t>(num_nodes) * 900 + 4096);
  const std::string last = num_nodes == 0 ? "x" : node_name(num_nodes - 1);
  w.begin_object();
  w.key("graph_module");
  w.begin_object();
  w.key("graph");
  w.begin_object();
  w.key("inputs");
  w.begin_array();
  tensor_argument(w, "p_w");
  tensor_argument(w, "x");
  w.end_array();
  w.key("outputs");
  w.begin_array();
  tensor_argument(w, last);
  w.end_array();
  w.key("nodes");
  w.begin_array();
  for (uint32_t n = 0; n < num_nodes; ++n) node(w, n);
  w.end_array();
  w.key("tensor_values");
  w.begin_object();
  for (const char* input : {"p_w", "x"}) {
    w.key(input);
    tensor_meta(w);
  }
  for (uint32_t n = 0; n < num_nodes; ++n) {
    w.key(node_name(n));
    tensor_meta(w);
  }
  w.end_object();
  for (const char* empty : {"sym_int_values", "sym_bool_values"}) {
    w.key(empty);
    w.begin_object();
    w.end_object();
  }
  w.key("is_single_tensor_return");
  w.boolean(false);
  for (const char* empty : {"custom_obj_values", "sym_float_values"}) {
    w.key(empty);
    w.begin_object();
    w.end_object();
  }
  w.end_object();
  w.key("signature");
  w.raw(R"({"input_specs": [{"parameter": {"arg": {"name": "p_w"}, "parameter_name": "w"}}, )"
        R"({"user_input": {"arg": {"as_tensor": {"name": "x"}}}}], "output_specs": [{"user_output": {"arg": )"
        R"({"as_tensor": {"name": ")" + last + R"("}}}}]})");
  w.key("module_call_graph");
  w.raw("[]");
  w.key("metadata");
  w.raw("{}");
  w.key("treespec_namedtuple_fields");
  w.raw("{}");
  w.end_object();
  w.key("opset_version");
  w.raw(R"({"aten": 10})");
  w.key("range_constraints");
  w.raw("{}");
  w.key("schema_version");
  w.raw(R"({"major": 8, "minor": 20})");
  w.key("verifiers");
  w.raw(R"(["ATEN"])");
  w.key("torch_version");
  w.string("2.12.0+cpu");
  w.key("guards_code");
  w.raw("[]");
  w.end_object();
  return std::move(w.text());
}

}  // namespace nrt::bench
