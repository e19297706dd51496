#include "tests/torch_export/program_json.h"

namespace nrt::test {

Json tensor_meta(std::vector<int64_t> sizes, int dtype) {
  Json dims = Json::array(), strides = Json::array();
  std::vector<int64_t> stride(sizes.size(), 1);
  for (size_t d = sizes.size(); d-- > 1;) stride[d - 1] = stride[d] * sizes[d];
  for (size_t d = 0; d < sizes.size(); ++d) {
    dims.push_back({{"as_int", sizes[d]}});
    strides.push_back({{"as_int", stride[d]}});
  }
  return {{"dtype", dtype},
          {"sizes", dims},
          {"requires_grad", false},
          {"device", {{"type", "cpu"}, {"index", nullptr}}},
          {"strides", strides},
          {"storage_offset", {{"as_int", 0}}},
          {"layout", 7}};
}

Json as_tensor(const std::string& name) { return {{"as_tensor", {{"name", name}}}}; }

Json named(const std::string& name, Json arg, Json kind) {
  return {{"name", name}, {"arg", std::move(arg)}, {"kind", std::move(kind)}};
}

Json node(const std::string& target, Json inputs, Json outputs, const std::string& name) {
  return {{"target", target},
          {"inputs", std::move(inputs)},
          {"outputs", std::move(outputs)},
          {"metadata", {{"stack_trace", "File \"m.py\", line 1, in forward"}, {"torch_fn", name + ";fn"}}},
          {"is_hop_single_tensor_return", nullptr},
          {"name", name}};
}

Json graph(Json inputs, Json outputs, Json nodes) {
  return {{"inputs", std::move(inputs)},
          {"outputs", std::move(outputs)},
          {"nodes", std::move(nodes)},
          {"tensor_values", Json::object()},
          {"sym_int_values", Json::object()},
          {"sym_bool_values", Json::object()},
          {"is_single_tensor_return", false},
          {"custom_obj_values", Json::object()},
          {"sym_float_values", Json::object()}};
}

Json exported_program(Json graph, Json input_specs, Json output_specs) {
  return {{"graph_module",
           {{"graph", std::move(graph)},
            {"signature", {{"input_specs", std::move(input_specs)}, {"output_specs", std::move(output_specs)}}},
            {"module_call_graph", Json::array({{{"fqn", ""}, {"signature", nullptr}}})},
            {"metadata", Json::object()},
            {"treespec_namedtuple_fields", Json::object()}}},
          {"opset_version", {{"aten", 10}}},
          {"range_constraints", Json::object()},
          {"schema_version", {{"major", 8}, {"minor", 20}}},
          {"verifiers", {"ATEN"}},
          {"torch_version", "2.12.0+cpu"},
          {"guards_code", Json::array()}};
}

Json relu_program() {
  Json g = graph(Json::array({as_tensor("x")}), Json::array({as_tensor("y")}),
                 Json::array({node("torch.ops.aten.relu.default", Json::array({named("self", as_tensor("x"))}),
                                   Json::array({as_tensor("y")}), "y")}));
  g["tensor_values"]["x"] = tensor_meta({2, 3});
  g["tensor_values"]["y"] = tensor_meta({2, 3});
  return exported_program(g, Json::array({{{"user_input", {{"arg", as_tensor("x")}}}}}),
                          Json::array({{{"user_output", {{"arg", as_tensor("y")}}}}}));
}

}  // namespace nrt::test
