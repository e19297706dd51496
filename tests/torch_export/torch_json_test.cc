// Hand-written torch.export JSON: every Argument member, every InputSpec and OutputSpec kind,
// symbolic values, both ways of writing None, unknown fields, schema versions and functional
// collectives, each imported, verified as .nrt and exported back to the same JSON value.
#include <cmath>
#include <span>

#include <gtest/gtest.h>

#include "serializer/program_file.h"
#include "serializer/torch_export/export_json.h"
#include "serializer/torch_export/import_json.h"
#include "serializer/torch_export/operator_target.h"
#include "serializer/torch_export/torch_error_codes.h"
#include "serializer/write_program.h"
#include "tests/torch_export/json_compare.h"
#include "tests/torch_export/program_json.h"

namespace nrt::torch_export {
namespace {

using test::as_tensor;
using test::Json;
using test::named;
using test::node;
using test::tensor_meta;

// What an .nrt file of the program holds, unpacked again: verification included.
Result<ProgramWithWeights> through_nrt(const ProgramWithWeights& program) {
  std::vector<std::span<const uint8_t>> spans;
  for (const auto& s : program.storages) spans.emplace_back(s.data(), s.size());
  NRT_TRY(bytes, serialize_program(program.program, spans));
  NRT_TRY(file, ProgramFile::from_bytes(std::move(*bytes)));
  return unpack_program(*file);
}

// Imports, verifies and exports `source`; returns the first difference ("" when equal).
std::string round_trip_difference(const Json& source) {
  auto imported = import_torch_json(source.dump());
  if (!imported) return "import: " + imported.error().to_string();
  auto verified = through_nrt(imported->program);
  if (!verified) return "verify: " + verified.error().to_string();
  auto exported = export_torch_json(verified->program, "model");
  if (!exported) return "export: " + exported.error().to_string();
  return test::json_difference(source, Json::parse(*exported));
}

// ---------------------------------------------------------------------------------------------
// Every Argument member of schema 8.20 in one node.

Json every_argument_program() {
  Json sub = test::graph(Json::array({as_tensor("a")}), Json::array({as_tensor("r")}),
                         Json::array({node("torch.ops.aten.relu.default", Json::array({named("self", as_tensor("a"))}),
                                           Json::array({as_tensor("r")}), "r")}));
  sub["tensor_values"]["a"] = tensor_meta({2, 3});
  sub["tensor_values"]["r"] = tensor_meta({2, 3});
  sub["is_single_tensor_return"] = true;

  const Json x = {{"name", "x"}};
  const Json w = {{"name", "p_w"}};
  const Json obj = {{"name", "obj"}, {"class_fqn", "__torch__.torch.classes.nrt.Thing"}};
  Json inputs = Json::array({
      named("none", {{"as_none", true}}),
      named("tensor", {{"as_tensor", x}}),
      named("tensors", {{"as_tensors", {x, w}}}),
      named("int", {{"as_int", -7}}),
      named("ints", {{"as_ints", {1, -2, INT64_MAX, INT64_MIN}}}),
      named("float", {{"as_float", -0.0}}),
      named("floats", {{"as_floats", {1e-05, "Infinity", "-Infinity", "NaN", 0.1, 1e16, 123456.0, 5e-324}}}),
      named("string", {{"as_string", "h\u00e9llo \"world\"\n\t\\"}}),
      named("strings", {{"as_strings", {"a", ""}}}),
      named("sym_int", {{"as_sym_int", {{"as_name", "s"}}}}),
      named("sym_int_literal", {{"as_sym_int", {{"as_int", 4}}}}),
      named("sym_ints", {{"as_sym_ints", {{{"as_name", "s"}}, {{"as_int", 2}}}}}),
      named("dtype", {{"as_scalar_type", 2}}, 2),
      named("memory_format", {{"as_memory_format", 1}}, 2),
      named("layout", {{"as_layout", 7}}, 2),
      named("device", {{"as_device", {{"type", "cuda"}, {"index", 1}}}}, 2),
      named("bool", {{"as_bool", true}}),
      named("bools", {{"as_bools", {true, false}}}),
      named("sym_bool", {{"as_sym_bool", {{"as_name", "b"}}}}),
      named("sym_bools", {{"as_sym_bools", {{{"as_name", "b"}}, {{"as_bool", false}}}}}),
      named("optional_tensors", {{"as_optional_tensors", {{{"as_tensor", x}}, {{"as_none", true}}}}}),
      named("graph", {{"as_graph", {{"name", "true_graph_0"}, {"graph", sub}}}}),
      named("custom_obj", {{"as_custom_obj", obj}}),
      named("operator", {{"as_operator", "torch.ops.aten.add.Tensor"}}),
      named("sym_float", {{"as_sym_float", {{"as_name", "f"}}}}),
      named("sym_floats", {{"as_sym_floats", {{{"as_name", "f"}}, {{"as_float", 2.5}}}}}),
      named("optional_none", {{"as_optional_tensor", {{"as_none", true}}}}),
      named("optional_tensor", {{"as_optional_tensor", {{"as_tensor", x}}}}),
      named("complex", {{"as_complex", {{"real", 1.5}, {"imag", "-Infinity"}}}}),
      named("nested", {{"as_nested_tensors", {{x}, {x, w}}}}),
      named("int_lists", {{"as_int_lists", {{1, 2}, {3}}}}),
      named("map",
            {{"as_string_to_argument",
              {{"k2", {{"as_int", 1}}},
               {"k1", {{"as_tensor", x}}},
               {"k3", {{"as_string_to_argument", {{"inner", {{"as_none", true}}}}}}}}}}),
      named("float_lists", {{"as_float_lists", {{0.5}, Json::array()}}}),
      named("unknown_kind", {{"as_int", 0}}, nullptr),
  });

  Json g = test::graph(
      Json::array({as_tensor("p_w"), as_tensor("x"), {{"as_sym_int", {{"as_name", "s"}}}}, {{"as_custom_obj", obj}}}),
      Json::array({as_tensor("y"), {{"as_sym_int", {{"as_name", "s"}}}}, {{"as_int", 5}}, as_tensor("y1")}),
      Json::array({
          node("_operator.eq", Json::array({named("a", {{"as_sym_int", {{"as_name", "s"}}}}), named("b", {{"as_int", 3}})}),
               Json::array({{{"as_sym_bool", {{"as_name", "b"}}}}}), "b"),
          node("torch.sym_float", Json::array({named("a", {{"as_sym_int", {{"as_name", "s"}}}})}),
               Json::array({{{"as_sym_float", {{"as_name", "f"}}}}}), "f"),
          node("torch.ops.nrt_test.every_argument.default", inputs, Json::array({as_tensor("y")}), "every_argument"),
          node("torch.ops.aten.split.Tensor", Json::array({named("self", as_tensor("y")), named("split_size", {{"as_int", 1}})}),
               Json::array({{{"as_tensors", {{{"name", "y0"}}, {{"name", "y1"}}}}}}), "split"),
          node("torch.ops.aten.var_mean.correction", Json::array({named("self", as_tensor("x"))}),
               Json::array({as_tensor("v"), {{"as_none", true}}}), "var_mean"),
      }));
  for (const char* t : {"p_w", "x", "y", "v"}) g["tensor_values"][t] = tensor_meta({2, 3});
  g["tensor_values"]["y0"] = tensor_meta({1, 3});
  g["tensor_values"]["y1"] = tensor_meta({1, 3});
  g["sym_int_values"]["s"] = {{"as_expr", {{"expr_str", "Symbol('s0', positive=True, integer=True)"}, {"hint", {{"as_int", 3}}}}}};
  g["sym_bool_values"]["b"] = {{"as_expr", {{"expr_str", "Eq(Symbol('s0'), Integer(3))"}, {"hint", nullptr}}}};
  g["sym_float_values"]["f"] = {{"as_expr", {{"expr_str", "ToFloat(Symbol('s0'))"}, {"hint", {{"as_float", 3.0}}}}}};
  g["custom_obj_values"]["obj"] = obj;
  Json program = test::exported_program(
      g,
      Json::array({{{"parameter", {{"arg", w}, {"parameter_name", "w"}}}},
                   {{"user_input", {{"arg", as_tensor("x")}}}},
                   {{"user_input", {{"arg", {{"as_sym_int", {{"as_name", "s"}}}}}}}},
                   {{"custom_obj", {{"arg", obj}, {"custom_obj_name", "thing"}}}}}),
      Json::array({{{"user_output", {{"arg", as_tensor("y")}}}},
                   {{"user_output", {{"arg", {{"as_sym_int", {{"as_name", "s"}}}}}}}},
                   {{"user_output", {{"arg", {{"as_int", 5}}}}}},
                   {{"user_output", {{"arg", as_tensor("y1")}}}}}));
  program["range_constraints"] = {{"s0", {{"min_val", 2}, {"max_val", nullptr}}}};
  return program;
}

TEST(TorchJson, EveryArgumentMemberMapsToItsNrtKind) {
  auto imported = import_torch_json(every_argument_program().dump());
  ASSERT_TRUE(imported.ok()) << imported.error().to_string();
  EXPECT_EQ(imported->warnings.size(), 1u) << imported->warnings.front();  // only "no weights"
  const fb::ProgramT& p = imported->program.program;
  const fb::GraphT& g = *p.graphs[0];
  ASSERT_EQ(g.nodes.size(), 5u);
  const fb::NodeT& n = *g.nodes[2];
  using A = fb::Argument;
  const A expected[] = {A::NoneArg,         A::TensorArg,      A::TensorListArg,      A::IntArg,
                        A::IntListArg,      A::FloatArg,       A::FloatListArg,       A::StringArg,
                        A::StringListArg,   A::SymIntArg,      A::SymIntArg,          A::SymIntListArg,
                        A::ScalarTypeArg,   A::MemoryFormatArg, A::LayoutArg,         A::DeviceArg,
                        A::BoolArg,         A::BoolListArg,    A::SymBoolArg,         A::SymBoolListArg,
                        A::OptionalTensorListArg, A::GraphArg, A::CustomObjArg,       A::OperatorArg,
                        A::SymFloatArg,     A::SymFloatListArg, A::OptionalTensorArg, A::OptionalTensorArg,
                        A::ComplexArg,      A::NestedTensorsArg, A::IntListListArg,   A::StringToArgumentArg,
                        A::FloatListListArg, A::IntArg};
  ASSERT_EQ(n.inputs.size(), std::size(expected));
  for (size_t i = 0; i < std::size(expected); ++i) {
    EXPECT_EQ(n.inputs[i]->arg.type, expected[i]) << "input " << i << " '" << n.inputs[i]->name << "'";
  }
  auto value_named = [&g](const std::string& name) {
    for (uint32_t v = 0; v < g.values.size(); ++v) {
      if (g.values[v]->name == name) return static_cast<int64_t>(v);
    }
    return int64_t{-1};
  };
  auto in = [&n](size_t i) -> const fb::ArgumentUnion& { return n.inputs[i]->arg; };
  EXPECT_EQ(in(1).AsTensorArg()->value, value_named("x"));
  EXPECT_EQ(in(4).AsIntListArg()->values, (std::vector<int64_t>{1, -2, INT64_MAX, INT64_MIN}));
  EXPECT_TRUE(std::signbit(*in(5).AsFloatArg()->value));
  const auto& floats = in(6).AsFloatListArg()->values;
  EXPECT_TRUE(std::isinf(floats[1]) && floats[1] > 0);
  EXPECT_TRUE(std::isinf(floats[2]) && floats[2] < 0);
  EXPECT_TRUE(std::isnan(floats[3]));
  EXPECT_EQ(floats[7], 5e-324);
  EXPECT_EQ(in(9).AsSymIntArg()->value, value_named("s"));
  EXPECT_EQ(in(10).AsSymIntArg()->value, -1);
  EXPECT_EQ(in(10).AsSymIntArg()->literal, 4);
  EXPECT_EQ(in(11).AsSymIntListArg()->items[1].value(), -1);
  EXPECT_EQ(in(11).AsSymIntListArg()->items[1].literal(), 2);
  EXPECT_EQ(in(12).AsScalarTypeArg()->value, fb::ScalarType::INT8);  // schema CHAR=2
  EXPECT_EQ(in(13).AsMemoryFormatArg()->value, fb::MemoryFormat::CONTIGUOUS);
  EXPECT_EQ(in(14).AsLayoutArg()->value, fb::Layout::STRIDED);  // schema Strided=7
  EXPECT_EQ(in(15).AsDeviceArg()->value->type, fb::DeviceType::CUDA);
  EXPECT_EQ(in(15).AsDeviceArg()->value->index, 1);
  EXPECT_EQ(n.inputs[12]->kind, fb::ArgumentKind::KEYWORD);
  EXPECT_EQ(in(20).AsOptionalTensorListArg()->values, (std::vector<int32_t>{static_cast<int32_t>(value_named("x")), -1}));
  const uint32_t sub = in(21).AsGraphArg()->graph;
  ASSERT_LT(sub, p.graphs.size());
  EXPECT_EQ(p.graphs[sub]->name, "model/true_graph_0");
  EXPECT_EQ(p.graphs[sub]->nodes.size(), 1u);
  EXPECT_EQ(in(22).AsCustomObjArg()->class_fqn, "__torch__.torch.classes.nrt.Thing");
  const auto& op = *p.operators[in(23).AsOperatorArg()->op];
  EXPECT_EQ(op.name, "aten::add");
  EXPECT_EQ(op.overload, "Tensor");
  EXPECT_EQ(in(25).AsSymFloatListArg()->items[1].literal(), 2.5);
  EXPECT_EQ(in(26).AsOptionalTensorArg()->value, -1);
  EXPECT_EQ(in(27).AsOptionalTensorArg()->value, value_named("x"));
  EXPECT_EQ(*in(28).AsComplexArg()->real, 1.5);
  EXPECT_TRUE(std::isinf(*in(28).AsComplexArg()->imag));
  const auto& entries = in(31).AsStringToArgumentArg()->entries;
  ASSERT_EQ(entries.size(), 3u);
  EXPECT_EQ(entries[0]->key, "k1");  // sorted by key
  EXPECT_EQ(entries[2]->value.type, A::StringToArgumentArg);
  EXPECT_EQ(n.inputs[33]->kind, fb::ArgumentKind::UNKNOWN);

  // Symbolic values keep expressions and hints; outputs define values; None slots stay.
  const auto& s = *g.values[value_named("s")];
  EXPECT_EQ(s.kind, fb::ValueKind::SYM_INT);
  EXPECT_EQ(s.sym->expr, "Symbol('s0', positive=True, integer=True)");
  EXPECT_EQ(*s.sym->int_hint, 3);
  EXPECT_EQ(*g.values[value_named("f")]->sym->float_hint, 3.0);
  EXPECT_FALSE(g.values[value_named("b")]->sym->bool_hint.has_value());
  EXPECT_EQ(g.values[value_named("obj")]->kind, fb::ValueKind::CUSTOM_OBJ);
  EXPECT_EQ(g.nodes[3]->outputs[0]->arg.type, A::TensorListArg);
  EXPECT_EQ(g.nodes[4]->outputs[1]->arg.type, A::NoneArg);
  ASSERT_EQ(p.range_constraints.size(), 1u);
  EXPECT_EQ(*p.range_constraints[0]->min, 2);
  EXPECT_FALSE(p.range_constraints[0]->max.has_value());
}

TEST(TorchJson, EveryArgumentMemberRoundTrips) { EXPECT_EQ(round_trip_difference(every_argument_program()), ""); }

// ---------------------------------------------------------------------------------------------
// Every InputSpec and OutputSpec kind (tokens and parameter mutation included).

Json every_spec_program() {
  const char* clone = "torch.ops.aten.clone.default";
  auto unary = [&](const char* target, const std::string& in, const std::string& out) {
    return node(target, Json::array({named("self", as_tensor(in))}), Json::array({as_tensor(out)}), out);
  };
  const Json obj = {{"name", "obj"}, {"class_fqn", "__torch__.torch.classes.nrt.Thing"}};
  Json g = test::graph(
      Json::array({as_tensor("token"), as_tensor("p"), as_tensor("b1"), as_tensor("b2"), as_tensor("c"),
                   {{"as_custom_obj", obj}}, as_tensor("x"), {{"as_int", 3}}}),
      Json::array({as_tensor("token_out"), as_tensor("y"), as_tensor("loss"), as_tensor("b1_new"), as_tensor("grad_p"),
                   as_tensor("grad_x"), as_tensor("x_new"), as_tensor("p_new")}),
      Json::array({unary(clone, "token", "token_out"), unary("torch.ops.aten.sum.default", "x", "loss"),
                   node("torch.ops.aten.add.Tensor", Json::array({named("self", as_tensor("b1")), named("other", as_tensor("x"))}),
                        Json::array({as_tensor("b1_new")}), "b1_new"),
                   unary(clone, "p", "grad_p"), unary(clone, "x", "grad_x"), unary(clone, "x", "x_new"),
                   unary(clone, "p", "p_new"),
                   node("torch.ops.aten.mul.Tensor", Json::array({named("self", as_tensor("x")), named("other", as_tensor("c"))}),
                        Json::array({as_tensor("y")}), "y")}));
  for (const char* t : {"token", "token_out"}) g["tensor_values"][t] = tensor_meta({0});
  for (const char* t : {"p", "b1", "b2", "c", "x", "y", "b1_new", "grad_p", "grad_x", "x_new", "p_new"}) {
    g["tensor_values"][t] = tensor_meta({2, 3});
  }
  g["tensor_values"]["loss"] = tensor_meta({});
  g["custom_obj_values"]["obj"] = obj;
  auto tensor_spec = [](const char* kind, const char* arg, const char* field = nullptr, const char* target = nullptr) {
    Json body = {{"arg", {{"name", arg}}}};
    if (field != nullptr) body[field] = target;
    return Json{{kind, body}};
  };
  return test::exported_program(
      g,
      Json::array({tensor_spec("token", "token"), tensor_spec("parameter", "p", "parameter_name", "p"),
                   {{"buffer", {{"arg", {{"name", "b1"}}}, {"buffer_name", "b1"}, {"persistent", true}}}},
                   {{"buffer", {{"arg", {{"name", "b2"}}}, {"buffer_name", "sub.b2"}, {"persistent", false}}}},
                   tensor_spec("tensor_constant", "c", "tensor_constant_name", "c0"),
                   {{"custom_obj", {{"arg", obj}, {"custom_obj_name", "thing"}}}},
                   {{"user_input", {{"arg", as_tensor("x")}}}},
                   {{"constant_input", {{"name", "n"}, {"value", {{"as_int", 3}}}}}}}),
      Json::array({tensor_spec("token", "token_out"), {{"user_output", {{"arg", as_tensor("y")}}}},
                   tensor_spec("loss_output", "loss"), tensor_spec("buffer_mutation", "b1_new", "buffer_name", "b1"),
                   tensor_spec("gradient_to_parameter", "grad_p", "parameter_name", "p"),
                   tensor_spec("gradient_to_user_input", "grad_x", "user_input_name", "x"),
                   tensor_spec("user_input_mutation", "x_new", "user_input_name", "x"),
                   tensor_spec("parameter_mutation", "p_new", "parameter_name", "p")}));
}

TEST(TorchJson, EverySpecKindMapsToItsNrtKind) {
  auto imported = import_torch_json(every_spec_program().dump());
  ASSERT_TRUE(imported.ok()) << imported.error().to_string();
  const fb::GraphT& g = *imported->program.program.graphs[0];
  ASSERT_TRUE(g.signature);
  const fb::InputKind inputs[] = {fb::InputKind::TOKEN,           fb::InputKind::PARAMETER, fb::InputKind::BUFFER,
                                  fb::InputKind::BUFFER,          fb::InputKind::TENSOR_CONSTANT,
                                  fb::InputKind::CUSTOM_OBJ,      fb::InputKind::USER_INPUT,
                                  fb::InputKind::CONSTANT_INPUT};
  ASSERT_EQ(g.signature->inputs.size(), std::size(inputs));
  for (size_t i = 0; i < std::size(inputs); ++i) EXPECT_EQ(g.signature->inputs[i]->kind, inputs[i]) << i;
  EXPECT_TRUE(g.signature->inputs[2]->persistent);
  EXPECT_FALSE(g.signature->inputs[3]->persistent);
  EXPECT_EQ(g.signature->inputs[3]->target, "sub.b2");
  EXPECT_EQ(g.signature->inputs[4]->target, "c0");
  EXPECT_EQ(g.signature->inputs[5]->target, "thing");
  EXPECT_EQ(g.signature->inputs[7]->value, -1);
  EXPECT_EQ(g.signature->inputs[7]->target, "n");
  ASSERT_TRUE(g.signature->inputs[7]->constant);
  EXPECT_EQ(g.signature->inputs[7]->constant->arg.AsIntArg()->value, 3);
  const fb::OutputKind outputs[] = {fb::OutputKind::TOKEN,          fb::OutputKind::USER_OUTPUT,
                                    fb::OutputKind::LOSS_OUTPUT,    fb::OutputKind::BUFFER_MUTATION,
                                    fb::OutputKind::GRADIENT_TO_PARAMETER, fb::OutputKind::GRADIENT_TO_USER_INPUT,
                                    fb::OutputKind::USER_INPUT_MUTATION,   fb::OutputKind::PARAMETER_MUTATION};
  ASSERT_EQ(g.signature->outputs.size(), std::size(outputs));
  for (size_t i = 0; i < std::size(outputs); ++i) EXPECT_EQ(g.signature->outputs[i]->kind, outputs[i]) << i;
  EXPECT_EQ(g.signature->outputs[3]->target, "b1");
  EXPECT_EQ(g.signature->outputs[7]->target, "p");
}

TEST(TorchJson, EverySpecKindRoundTrips) { EXPECT_EQ(round_trip_difference(every_spec_program()), ""); }

// ---------------------------------------------------------------------------------------------
// None written by leaving fields out (older torch) survives the round trip as well.

TEST(TorchJson, OmittedOptionalsRoundTrip) {
  Json program = test::relu_program();
  auto& g = program["graph_module"]["graph"];
  for (auto& [name, meta] : g["tensor_values"].items()) meta["device"].erase("index");
  for (auto& n : g["nodes"]) {
    n.erase("is_hop_single_tensor_return");
    n.erase("name");
    for (auto& input : n["inputs"]) input.erase("kind");
  }
  g.erase("sym_float_values");
  g.erase("custom_obj_values");
  g.erase("is_single_tensor_return");
  g["inputs"].push_back({{"as_sym_int", {{"as_name", "s"}}}});
  g["sym_int_values"]["s"] = {{"as_expr", {{"expr_str", "s0"}}}};
  program["graph_module"]["signature"]["input_specs"].push_back({{"user_input", {{"arg", g["inputs"][1]}}}});
  program.erase("guards_code");
  program.erase("torch_version");
  program["graph_module"].erase("treespec_namedtuple_fields");
  EXPECT_EQ(round_trip_difference(program), "");
  // And the null form of the same program.
  EXPECT_EQ(round_trip_difference(test::relu_program()), "");
}

TEST(TorchJson, UnknownFieldsWarnOncePerFieldAndAreDropped) {
  Json program = test::relu_program();
  program["future_top_level"] = 1;
  program["graph_module"]["graph"]["nodes"][0]["future_node_field"] = "a";
  program["graph_module"]["graph"]["nodes"].push_back(program["graph_module"]["graph"]["nodes"][0]);
  program["graph_module"]["graph"]["nodes"][1]["outputs"][0]["as_tensor"]["name"] = "y2";
  program["graph_module"]["graph"]["nodes"][1]["name"] = "y2";
  program["graph_module"]["graph"]["tensor_values"]["y2"] = tensor_meta({2, 3});
  program["graph_module"]["graph"]["tensor_values"]["x"]["future_meta_field"] = true;
  auto imported = import_torch_json(program.dump());
  ASSERT_TRUE(imported.ok()) << imported.error().to_string();
  int node_warnings = 0, top_warnings = 0, meta_warnings = 0;
  for (const auto& w : imported->warnings) {
    node_warnings += w.find("'future_node_field' in Node") != std::string::npos;
    top_warnings += w.find("'future_top_level' in ExportedProgram") != std::string::npos;
    meta_warnings += w.find("'future_meta_field' in TensorMeta") != std::string::npos;
  }
  EXPECT_EQ(node_warnings, 1);  // two nodes carry it, one warning
  EXPECT_EQ(top_warnings, 1);
  EXPECT_EQ(meta_warnings, 1);
  auto exported = export_torch_json(imported->program.program, "model");
  ASSERT_TRUE(exported.ok());
  const Json back = Json::parse(*exported);
  EXPECT_FALSE(back.contains("future_top_level"));
  EXPECT_FALSE(back["graph_module"]["graph"]["nodes"][0].contains("future_node_field"));
}

TEST(TorchJson, SchemaVersions) {
  for (int minor : {0, 15, 17, 20, 99}) {
    Json program = test::relu_program();
    program["schema_version"]["minor"] = minor;
    auto imported = import_torch_json(program.dump());
    ASSERT_TRUE(imported.ok()) << "8." << minor << ": " << imported.error().to_string();
    bool newer_warning = false;
    for (const auto& w : imported->warnings) newer_warning |= w.find("newer than 8.20") != std::string::npos;
    EXPECT_EQ(newer_warning, minor > 20) << minor;
  }
  for (int major : {7, 9}) {
    Json program = test::relu_program();
    program["schema_version"]["major"] = major;
    auto imported = import_torch_json(program.dump());
    ASSERT_FALSE(imported.ok());
    EXPECT_EQ(imported.error().code, codes::kSchemaVersion);
    EXPECT_NE(imported.error().message.find(std::to_string(major) + ".20"), std::string::npos)
        << imported.error().message;
  }
  Json legacy = test::relu_program();
  legacy["schema_version"] = 2;
  auto imported = import_torch_json(legacy.dump());
  ASSERT_FALSE(imported.ok());
  EXPECT_EQ(imported.error().code, codes::kSchemaVersion);
  EXPECT_NE(imported.error().message.find("legacy"), std::string::npos) << imported.error().message;
}

// ---------------------------------------------------------------------------------------------
// Functional collectives.

Json collectives_program(bool with_sizes) {
  auto collective = [](const std::string& op, const std::string& in, const std::string& out, Json extra) {
    Json inputs = Json::array({named("input", as_tensor(in))});
    for (auto& e : extra) inputs.push_back(e);
    return node("torch.ops._c10d_functional." + op + ".default", inputs, Json::array({as_tensor(out)}), out);
  };
  Json nodes = Json::array({collective("all_reduce", "x", "ar", {named("reduce_op", {{"as_string", "sum"}}),
                                                                 named("group_name", {{"as_string", "tp"}})})});
  if (with_sizes) {
    nodes.push_back(collective("all_gather_into_tensor", "ar", "ag",
                               {named("group_size", {{"as_int", 4}}), named("group_name", {{"as_string", "tp"}})}));
    nodes.push_back(collective("reduce_scatter_tensor", "ag", "rs",
                               {named("reduce_op", {{"as_string", "avg"}}), named("group_size", {{"as_int", 2}}),
                                named("group_name", {{"as_string", "dp"}})}));
  }
  const std::string last = with_sizes ? "rs" : "ar";
  Json g = test::graph(Json::array({as_tensor("x")}), Json::array({as_tensor(last)}), nodes);
  for (const char* t : {"x", "ar", "ag", "rs"}) g["tensor_values"][t] = tensor_meta({2, 3});
  return test::exported_program(g, Json::array({{{"user_input", {{"arg", as_tensor("x")}}}}}),
                                Json::array({{{"user_output", {{"arg", as_tensor(last)}}}}}));
}

TEST(TorchJson, FunctionalCollectivesPopulateProcessGroups) {
  auto imported = import_torch_json(collectives_program(true).dump());
  ASSERT_TRUE(imported.ok()) << imported.error().to_string();
  const fb::ProgramT& p = imported->program.program;
  ASSERT_EQ(p.process_groups.size(), 2u);
  EXPECT_EQ(p.process_groups[0]->name, "tp");
  EXPECT_EQ(p.process_groups[0]->ranks, (std::vector<int32_t>{0, 1, 2, 3}));
  EXPECT_EQ(p.process_groups[1]->name, "dp");
  EXPECT_EQ(p.process_groups[1]->ranks, (std::vector<int32_t>{0, 1}));
  const auto& ar = *p.graphs[0]->nodes[0];
  ASSERT_EQ(ar.inputs[2]->arg.type, fb::Argument::ProcessGroupArg);
  EXPECT_EQ(ar.inputs[2]->arg.AsProcessGroupArg()->group, 0u);
  EXPECT_EQ(ar.inputs[1]->arg.type, fb::Argument::StringArg);  // reduce_op stays a string
  EXPECT_EQ(round_trip_difference(collectives_program(true)), "");
}

TEST(TorchJson, CollectiveWithoutGroupSizeRecordsTheGroupWithoutRanks) {
  auto imported = import_torch_json(collectives_program(false).dump());
  ASSERT_TRUE(imported.ok()) << imported.error().to_string();
  ASSERT_EQ(imported->program.program.process_groups.size(), 1u);
  EXPECT_EQ(imported->program.program.process_groups[0]->name, "tp");
  EXPECT_TRUE(imported->program.program.process_groups[0]->ranks.empty());
}

TEST(TorchJson, DisagreeingGroupSizesAreAnError) {
  Json program = collectives_program(true);
  program["graph_module"]["graph"]["nodes"][2]["inputs"][3]["arg"]["as_string"] = "tp";  // size 2 and 4
  auto imported = import_torch_json(program.dump());
  ASSERT_FALSE(imported.ok());
  EXPECT_EQ(imported.error().code, ErrorCode::InvalidProcessGroup);
}

// ---------------------------------------------------------------------------------------------
// Node targets.

TEST(OperatorTarget, BothWays) {
  const std::tuple<const char*, const char*, const char*> cases[] = {
      {"torch.ops.aten.add.Tensor", "aten::add", "Tensor"},
      {"torch.ops.higher_order.cond", "higher_order::cond", ""},
      {"torch.ops._c10d_functional.all_reduce.default", "_c10d_functional::all_reduce", "default"},
      {"_operator.getitem", "_operator.getitem", ""},
      {"torch.sym_float", "torch.sym_float", ""},
  };
  for (const auto& [target, name, overload] : cases) {
    auto op = operator_from_target(target);
    ASSERT_TRUE(op.ok()) << target;
    EXPECT_EQ(op->name, name);
    EXPECT_EQ(op->overload, overload);
    EXPECT_EQ(*target_from_operator(*op), target);
  }
  for (const char* bad : {"", "aten::add", "torch.ops.aten", "torch.ops.aten.", "torch.ops.aten.add.", "torch.ops.a.b.c.d"}) {
    EXPECT_FALSE(operator_from_target(bad).ok()) << bad;
  }
}

}  // namespace
}  // namespace nrt::torch_export
