#include "testdata/corpus_programs.h"

#include <cmath>
#include <cstdint>
#include <limits>

#include "testdata/program_builder.h"

namespace nrt::testdata {
namespace {

using fb::ScalarType;
using fb::ValueKind;

fb::Placement shard(int32_t dim) { return fb::Placement(fb::PlacementKind::SHARD, fb::ReduceOp::SUM, dim, 0); }
fb::Placement strided_shard(int32_t dim, int32_t split_factor) {
  return fb::Placement(fb::PlacementKind::STRIDED_SHARD, fb::ReduceOp::SUM, dim, split_factor);
}
fb::Placement replicate() { return fb::Placement(fb::PlacementKind::REPLICATE, fb::ReduceOp::SUM, 0, 0); }
fb::Placement partial(fb::ReduceOp op) { return fb::Placement(fb::PlacementKind::PARTIAL, op, 0, 0); }

void add_metadata(fb::NodeT& node, const std::string& stack) {
  auto kv = std::make_unique<fb::KeyValueT>();
  kv->key = "stack_trace";
  kv->value = stack;
  node.metadata.push_back(std::move(kv));
  kv = std::make_unique<fb::KeyValueT>();
  kv->key = "nn_module_stack";
  kv->value = "L__self__,,torch.nn.Module";
  node.metadata.push_back(std::move(kv));
}

// A two-layer perceptron with real weights: the bundled example of the README.
ProgramWithWeights mlp() {
  ProgramBuilder p("nrt testdata: mlp");
  const uint32_t linear = p.op("aten::linear", "default");
  const uint32_t relu = p.op("aten::relu", "default");
  const uint32_t w1 = p.storage(pattern_f32(32 * 16, 0.25f));
  const uint32_t b1 = p.storage(pattern_f32(32, 0.1f));
  const uint32_t w2 = p.storage(pattern_f32(4 * 32, 0.25f));
  const uint32_t b2 = p.storage(pattern_f32(4, 0.1f));
  p.weight("fc1.weight", w1, tensor_meta(ScalarType::FLOAT32, {32, 16}), true);
  p.weight("fc1.bias", b1, tensor_meta(ScalarType::FLOAT32, {32}), true);
  p.weight("fc2.weight", w2, tensor_meta(ScalarType::FLOAT32, {4, 32}), true);
  p.weight("fc2.bias", b2, tensor_meta(ScalarType::FLOAT32, {4}), true);
  p.metadata("source", "hand-written testdata (testdata/corpus_programs.cc)");

  auto g = p.graph("main", true);
  const uint32_t pw1 = g.tensor("p_fc1_weight", ScalarType::FLOAT32, {32, 16});
  const uint32_t pb1 = g.tensor("p_fc1_bias", ScalarType::FLOAT32, {32});
  const uint32_t pw2 = g.tensor("p_fc2_weight", ScalarType::FLOAT32, {4, 32});
  const uint32_t pb2 = g.tensor("p_fc2_bias", ScalarType::FLOAT32, {4});
  const uint32_t x = g.tensor("x", ScalarType::FLOAT32, {8, 16});
  const uint32_t h = g.tensor("linear", ScalarType::FLOAT32, {8, 32});
  const uint32_t r = g.tensor("relu", ScalarType::FLOAT32, {8, 32});
  const uint32_t out = g.tensor("linear_1", ScalarType::FLOAT32, {8, 4});
  g.input(arg::tensor(pw1), fb::InputKind::PARAMETER, "fc1.weight");
  g.input(arg::tensor(pb1), fb::InputKind::PARAMETER, "fc1.bias");
  g.input(arg::tensor(pw2), fb::InputKind::PARAMETER, "fc2.weight");
  g.input(arg::tensor(pb2), fb::InputKind::PARAMETER, "fc2.bias");
  g.user_input(arg::tensor(x));
  add_metadata(g.node("linear", linear, Args{{"input", arg::tensor(x)}, {"weight", arg::tensor(pw1)}, {"bias", arg::tensor(pb1)}},
                      {}, {arg::tensor(h)}),
               "File \"mlp.py\", line 9, in forward\n    x = self.fc1(x)");
  add_metadata(g.node("relu", relu, Args{{"self", arg::tensor(h)}}, {}, {arg::tensor(r)}),
               "File \"mlp.py\", line 10, in forward\n    x = torch.relu(x)");
  add_metadata(g.node("linear_1", linear, Args{{"input", arg::tensor(r)}, {"weight", arg::tensor(pw2)}, {"bias", arg::tensor(pb2)}},
                      {}, {arg::tensor(out)}),
               "File \"mlp.py\", line 11, in forward\n    return self.fc2(x)");
  g.user_output(arg::tensor(out));
  return p.finish();
}

// One node carrying every Argument kind, and nodes defining every kind of value.
ProgramWithWeights all_arguments() {
  ProgramBuilder p("nrt testdata: all_arguments");
  const uint32_t every = p.op("nrt_test::every_argument", "default");
  const uint32_t split = p.op("aten::split", "Tensor");
  const uint32_t producer = p.op("nrt_test::produce_everything", "default");
  const uint32_t size = p.op("aten::sym_size", "int");
  const uint32_t identity = p.op("aten::clone", "default");
  p.range_constraint("s0", 2, 1024);
  p.range_constraint("s1", 0, std::numeric_limits<int64_t>::max());

  // A subgraph for GraphArg.
  {
    auto sub = p.graph("identity_branch", false);
    sub.drop_signature();
    const uint32_t a = sub.tensor("a", ScalarType::FLOAT32, {4});
    const uint32_t b = sub.tensor("b", ScalarType::FLOAT32, {4});
    sub.user_input(arg::tensor(a));
    sub.node("clone", identity, Args{{"self", arg::tensor(a)}}, {}, {arg::tensor(b)});
    sub.user_output(arg::tensor(b));
  }
  const uint32_t branch = p.graph_index("identity_branch");
  const uint32_t group = p.group("default_pg", {0, 1}, "gloo");

  auto g = p.graph("main", true);
  fb::TensorMetaT dynamic = tensor_meta(ScalarType::FLOAT32, {0, 16});
  dynamic.sizes[0] = symbolic_dim("Symbol('s0', positive=True, integer=True)", 8);
  dynamic.strides[0] = literal_dim(16);
  const uint32_t x = g.tensor("x", std::move(dynamic));
  const uint32_t y = g.tensor("y", ScalarType::FLOAT32, {4});
  const uint32_t s0 = g.sym_int("sym_size_int", "s0", 8);
  const uint32_t obj = g.custom_obj("obj", "__torch__.torch.classes.nrt_test.Counter");
  const uint32_t pg = g.process_group("pg", static_cast<int32_t>(group));
  g.user_input(arg::tensor(x));
  g.user_input(arg::tensor(y));
  g.input(arg::custom_obj(obj, "__torch__.torch.classes.nrt_test.Counter"), fb::InputKind::CUSTOM_OBJ, "counter");
  g.user_input(arg::value(pg));
  g.constant_input(arg::real(0.5), "alpha");

  g.node("sym_size_int", size, Args{{"self", arg::tensor(x)}, {"dim", arg::integer(0)}}, {}, {arg::sym_int(static_cast<int32_t>(s0))});
  const uint32_t c0 = g.tensor("split_0", ScalarType::FLOAT32, {2});
  const uint32_t c1 = g.tensor("split_1", ScalarType::FLOAT32, {2});
  g.node("split", split, Args{{"self", arg::tensor(y)}, {"split_size", arg::sym_int_literal(2)}}, {},
         {arg::tensors({c0, c1})});
  const uint32_t t = g.tensor("produced", ScalarType::FLOAT32, {4});
  const uint32_t opt = g.value("maybe", ValueKind::OPTIONAL_TENSOR);
  g.set_tensor_meta(opt, tensor_meta(ScalarType::FLOAT32, {4}));
  const uint32_t sf = g.value("sym_float", ValueKind::SYM_FLOAT);
  const uint32_t sb = g.value("sym_bool", ValueKind::SYM_BOOL);
  const uint32_t obj2 = g.custom_obj("obj_out", "__torch__.torch.classes.nrt_test.Counter");
  const uint32_t none = g.value("nothing", ValueKind::NONE);
  g.node("produce", producer, Args{{"self", arg::tensor(y)}}, {},
         {arg::tensor(t), arg::optional_tensor(static_cast<int32_t>(opt)), arg::sym_float(static_cast<int32_t>(sf)),
          arg::sym_bool(static_cast<int32_t>(sb)), arg::custom_obj(obj2, "__torch__.torch.classes.nrt_test.Counter"),
          arg::value(none), arg::none(), arg::optional_tensor(-1)});

  const double nan = std::numeric_limits<double>::quiet_NaN();
  const double inf = std::numeric_limits<double>::infinity();
  Args keyword;
  keyword.emplace_back("none", arg::none());
  keyword.emplace_back("tensor", arg::tensor(x));
  keyword.emplace_back("tensors", arg::tensors({c0, c1, t}));
  keyword.emplace_back("int", arg::integer(std::numeric_limits<int64_t>::min()));
  keyword.emplace_back("ints", arg::integers({std::numeric_limits<int64_t>::max(), -1, 0, 42}));
  keyword.emplace_back("float", arg::real(-0.0));
  keyword.emplace_back("float_nan", arg::real(nan));
  keyword.emplace_back("float_inf", arg::real(-inf));
  keyword.emplace_back("floats", arg::reals({1.5, nan, inf, -inf, -0.0, 5e-324, 1.7976931348623157e308}));
  keyword.emplace_back("string", arg::string("quote \" backslash \\ newline \n unicode \u00e9\u4e2d"));
  keyword.emplace_back("strings", arg::strings({"", "sum", "<function f at 0x7f3a2c1b9d30>"}));
  keyword.emplace_back("sym_int", arg::sym_int(static_cast<int32_t>(s0)));
  keyword.emplace_back("sym_int_literal", arg::sym_int_literal(-7));
  keyword.emplace_back("sym_ints", arg::sym_ints({fb::SymIntItem(static_cast<int32_t>(s0), 0), fb::SymIntItem(-1, 16)}));
  keyword.emplace_back("scalar_type", arg::scalar_type(ScalarType::BFLOAT16));
  keyword.emplace_back("memory_format", arg::memory_format(fb::MemoryFormat::CHANNELS_LAST));
  keyword.emplace_back("layout", arg::layout(fb::Layout::STRIDED));
  keyword.emplace_back("device", arg::device(fb::DeviceType::CUDA, 1));
  keyword.emplace_back("bool", arg::boolean(true));
  keyword.emplace_back("bools", arg::booleans({true, false, true}));
  keyword.emplace_back("sym_bool", arg::sym_bool(static_cast<int32_t>(sb)));
  keyword.emplace_back("sym_bools", arg::sym_bools({fb::SymBoolItem(static_cast<int32_t>(sb), false), fb::SymBoolItem(-1, true)}));
  keyword.emplace_back("optional_tensors", arg::optional_tensors({static_cast<int32_t>(t), -1, static_cast<int32_t>(opt)}));
  keyword.emplace_back("graph", arg::graph(branch));
  keyword.emplace_back("custom_obj", arg::custom_obj(obj, "__torch__.torch.classes.nrt_test.Counter"));
  keyword.emplace_back("operator", arg::op(identity));
  keyword.emplace_back("sym_float", arg::sym_float(static_cast<int32_t>(sf)));
  keyword.emplace_back("sym_floats", arg::sym_floats({fb::SymFloatItem(static_cast<int32_t>(sf), 0.0), fb::SymFloatItem(-1, 2.5)}));
  keyword.emplace_back("optional_tensor", arg::optional_tensor(-1));
  keyword.emplace_back("complex", arg::complex(1.0, -2.5));
  keyword.emplace_back("nested_tensors", arg::nested_tensors({{c0}, {c1, t}}));
  keyword.emplace_back("int_lists", arg::int_lists({{1, 2}, {}, {3}}));
  Args inner;
  inner.emplace_back("leaf", arg::integer(1));
  keyword.emplace_back("string_to_argument",
                       arg::string_map({{"alpha", arg::real(0.5)}, {"nested", arg::string_map(std::move(inner))},
                                        {"tensor", arg::tensor(t)}}));
  keyword.emplace_back("float_lists", arg::float_lists({{0.25, nan}, {-inf}}));
  keyword.emplace_back("process_group", arg::process_group(group));
  keyword.emplace_back("value", arg::value(pg));
  const uint32_t result = g.tensor("every", ScalarType::FLOAT32, {4});
  fb::NodeT& node = g.node("every", every, Args{{"self", arg::tensor(y)}}, std::move(keyword), {arg::tensor(result)});
  add_metadata(node, "File \"model.py\", line 1");
  g.user_output(arg::tensor(result));
  g.user_output(arg::sym_int(static_cast<int32_t>(s0)));
  g.output(arg::integer(3), fb::OutputKind::USER_OUTPUT);
  return p.finish();
}

// Tensor values of every ScalarType, Layout and DeviceType; a node with every enum argument.
ProgramWithWeights all_enums() {
  ProgramBuilder p("nrt testdata: all_enums");
  const uint32_t take = p.op("nrt_test::take_enums", "default");
  auto g = p.graph("main", true);
  std::vector<uint32_t> inputs;
  Args keyword;
  for (auto type : fb::EnumValuesScalarType()) {
    if (type == ScalarType::UNKNOWN) continue;
    const std::string name = std::string("x_") + fb::EnumNameScalarType(type);
    const uint32_t v = g.tensor(name, type, {2, 3});
    g.user_input(arg::tensor(v));
    inputs.push_back(v);
    keyword.emplace_back(std::string("dtype_") + fb::EnumNameScalarType(type), arg::scalar_type(type));
  }
  for (auto layout : fb::EnumValuesLayout()) {
    fb::TensorMetaT meta = tensor_meta(ScalarType::FLOAT32, {2});
    meta.layout = layout;
    const uint32_t v = g.tensor(std::string("layout_") + fb::EnumNameLayout(layout), std::move(meta));
    g.user_input(arg::tensor(v));
    keyword.emplace_back(std::string("layout_") + fb::EnumNameLayout(layout), arg::layout(layout));
  }
  for (auto type : fb::EnumValuesDeviceType()) {
    fb::TensorMetaT meta = tensor_meta(ScalarType::FLOAT32, {2});
    meta.device->type = type;
    meta.device->index = type == fb::DeviceType::CPU ? -1 : 0;
    const uint32_t v = g.tensor(std::string("device_") + fb::EnumNameDeviceType(type), std::move(meta));
    g.user_input(arg::tensor(v));
    keyword.emplace_back(std::string("device_") + fb::EnumNameDeviceType(type), arg::device(type, 3));
  }
  for (auto format : fb::EnumValuesMemoryFormat()) {
    keyword.emplace_back(std::string("memory_format_") + fb::EnumNameMemoryFormat(format), arg::memory_format(format));
  }
  std::vector<uint32_t> all = inputs;
  const uint32_t out = g.tensor("out", ScalarType::FLOAT32, {2, 3});
  g.node("take", take, Args{{"tensors", arg::tensors(all)}}, std::move(keyword), {arg::tensor(out)});
  g.user_output(arg::tensor(out));
  return p.finish();
}

// DTensors with every placement kind on 1-D and 2-D meshes, process group inputs, collectives.
ProgramWithWeights dtensor() {
  ProgramBuilder p("nrt testdata: dtensor");
  const uint32_t mesh1 = p.mesh("dp", {4}, {0, 1, 2, 3}, {"dp"});
  const uint32_t mesh2 = p.mesh("dp_tp", {2, 2}, {0, 1, 2, 3}, {"dp", "tp"});
  const uint32_t world = p.group("world", {0, 1, 2, 3}, "nccl");
  p.group("dp", {0, 1, 2, 3}, "nccl", static_cast<int32_t>(mesh1), 0);
  p.group("dp_tp.tp.0", {0, 1}, "nccl", static_cast<int32_t>(mesh2), 1);
  p.group("dp_tp.dp.0", {0, 2}, "nccl", static_cast<int32_t>(mesh2), 0);
  const uint32_t all_reduce = p.op("_c10d_functional::all_reduce", "default");
  const uint32_t wait = p.op("_c10d_functional::wait_tensor", "default");
  const uint32_t all_gather = p.op("_c10d_functional::all_gather_into_tensor", "default");
  const uint32_t mm = p.op("aten::mm", "default");
  const uint32_t redistribute = p.op("nrt::redistribute", "default");

  auto g = p.graph("main", true);
  const auto f32 = ScalarType::FLOAT32;
  const uint32_t x = g.dtensor("x", f32, {2, 64}, {8, 64}, mesh1, {shard(0)});
  const uint32_t w = g.dtensor("w", f32, {64, 64}, {64, 64}, mesh1, {replicate()});
  const uint32_t y2 = g.dtensor("y2d", f32, {4, 32}, {8, 64}, mesh2, {shard(0), shard(1)});
  const uint32_t z2 = g.dtensor("z2d", f32, {8, 64}, {8, 64}, mesh2, {replicate(), partial(fb::ReduceOp::AVG)});
  const uint32_t s2 = g.dtensor("s2d", f32, {4, 64}, {8, 64}, mesh2, {strided_shard(0, 2), replicate()});
  std::vector<uint32_t> partials;
  for (auto op : fb::EnumValuesReduceOp()) {
    partials.push_back(g.dtensor(std::string("partial_") + fb::EnumNameReduceOp(op), f32, {8}, {8}, mesh1, {partial(op)}));
  }
  const uint32_t pg = g.process_group("group", static_cast<int32_t>(world));
  const uint32_t local = g.tensor("local", f32, {16});
  for (uint32_t v : {x, w, y2, z2, s2}) g.user_input(arg::tensor(v));
  for (uint32_t v : partials) g.user_input(arg::tensor(v));
  g.user_input(arg::value(pg));
  g.user_input(arg::tensor(local));

  const uint32_t h = g.dtensor("mm", f32, {2, 64}, {8, 64}, mesh1, {shard(0)});
  g.node("mm", mm, Args{{"self", arg::tensor(x)}, {"mat2", arg::tensor(w)}}, {}, {arg::tensor(h)});
  const uint32_t r = g.dtensor("replicated", f32, {8, 64}, {8, 64}, mesh1, {replicate()});
  g.node("redistribute", redistribute, Args{{"input", arg::tensor(h)}},
         Args{{"placements", arg::strings({"Replicate()"})}, {"group", arg::process_group(world)}}, {arg::tensor(r)});
  const uint32_t ar = g.tensor("all_reduce", f32, {16});
  g.node("all_reduce", all_reduce,
         Args{{"input", arg::tensor(local)}, {"reduce_op", arg::string("sum")}, {"group_name", arg::string("world")}}, {},
         {arg::tensor(ar)});
  const uint32_t ar_done = g.tensor("wait_tensor", f32, {16});
  g.node("wait_tensor", wait, Args{{"input", arg::tensor(ar)}}, {}, {arg::tensor(ar_done)});
  const uint32_t ag = g.tensor("all_gather_into_tensor", f32, {32});
  g.node("all_gather_into_tensor", all_gather,
         Args{{"input", arg::tensor(ar_done)}, {"group_size", arg::integer(2)}, {"group_name", arg::string("dp_tp.tp.0")}},
         {}, {arg::tensor(ag)});
  const uint32_t ag_done = g.tensor("wait_tensor_1", f32, {32});
  g.node("wait_tensor_1", wait, Args{{"input", arg::tensor(ag)}}, {}, {arg::tensor(ag_done)});
  g.user_output(arg::tensor(r));
  g.user_output(arg::tensor(ag_done));
  g.user_output(arg::tensor(y2));
  g.user_output(arg::value(pg));
  return p.finish();
}

// torch.cond with two subgraphs.
ProgramWithWeights subgraph() {
  ProgramBuilder p("nrt testdata: subgraph");
  const uint32_t cond = p.op("torch.ops.higher_order.cond", "");
  const uint32_t sin = p.op("aten::sin", "default");
  const uint32_t cos = p.op("aten::cos", "default");
  const uint32_t getitem = p.op("_operator.getitem", "");
  const uint32_t gt = p.op("aten::gt", "Scalar");
  const uint32_t sum = p.op("aten::sum", "default");
  for (auto [name, op] : {std::pair{"true_graph_0", sin}, std::pair{"false_graph_0", cos}}) {
    auto sub = p.graph(name, false);
    sub.drop_signature();
    const uint32_t a = sub.tensor("x_1", ScalarType::FLOAT32, {4});
    const uint32_t b = sub.tensor(std::string(name) + "_out", ScalarType::FLOAT32, {4});
    sub.user_input(arg::tensor(a));
    sub.node(name, op, Args{{"self", arg::tensor(a)}}, {}, {arg::tensor(b)});
    sub.user_output(arg::tensor(b));
  }
  auto g = p.graph("main", true);
  const uint32_t x = g.tensor("x", ScalarType::FLOAT32, {4});
  g.user_input(arg::tensor(x));
  const uint32_t s = g.tensor("sum_1", ScalarType::FLOAT32, {});
  g.node("sum_1", sum, Args{{"self", arg::tensor(x)}}, {}, {arg::tensor(s)});
  const uint32_t pred = g.tensor("gt", ScalarType::BOOL, {});
  g.node("gt", gt, Args{{"self", arg::tensor(s)}, {"other", arg::integer(0)}}, {}, {arg::tensor(pred)});
  const uint32_t c = g.tensor("cond", ScalarType::FLOAT32, {4});
  g.node("cond", cond,
         Args{{"pred", arg::tensor(pred)}, {"true_fn", arg::graph(p.graph_index("true_graph_0"))},
              {"false_fn", arg::graph(p.graph_index("false_graph_0"))}, {"operands", arg::tensors({x})}},
         {}, {arg::tensors({c})});
  const uint32_t item = g.tensor("getitem", ScalarType::FLOAT32, {4});
  g.node("getitem", getitem, Args{{"self", arg::tensors({c})}, {"index", arg::integer(0)}}, {}, {arg::tensor(item)});
  g.user_output(arg::tensor(item));
  return p.finish();
}

// Weights as views of shared storages (transposed, offset, strided), and every signature kind.
ProgramWithWeights shared_storage() {
  ProgramBuilder p("nrt testdata: shared_storage");
  const uint32_t base = p.storage(pattern_f32(64, 1.0f));
  p.weight("lin.weight", base, tensor_meta(ScalarType::FLOAT32, {8, 8}), true);
  fb::TensorMetaT transposed = tensor_meta(ScalarType::FLOAT32, {8, 8});
  transposed.strides[0] = literal_dim(1);
  transposed.strides[1] = literal_dim(8);
  p.weight("lin.weight_t", base, std::move(transposed), false);
  fb::TensorMetaT rows = tensor_meta(ScalarType::FLOAT32, {4, 8});
  rows.storage_offset = literal_dim(8);
  p.weight("lin.rows", base, std::move(rows), false);
  fb::TensorMetaT every_other = tensor_meta(ScalarType::FLOAT32, {4, 4});
  every_other.strides[0] = literal_dim(16);
  every_other.strides[1] = literal_dim(2);
  every_other.storage_offset = literal_dim(1);
  p.weight("lin.every_other", base, std::move(every_other), false);
  std::vector<uint8_t> bf16(32);
  for (size_t i = 0; i < bf16.size(); ++i) bf16[i] = static_cast<uint8_t>(i * 7);
  const uint32_t half = p.storage(std::move(bf16));
  p.weight("norm.running_mean", half, tensor_meta(ScalarType::BFLOAT16, {16}), false);
  p.weight("norm.num_batches", half, tensor_meta(ScalarType::INT64, {2}), false);
  p.weight("const_table", half, tensor_meta(ScalarType::UINT8, {4, 8}), false);
  p.storage({});  // an empty storage backing an empty tensor
  p.weight("empty", 2, tensor_meta(ScalarType::FLOAT32, {0, 3}), false);

  const uint32_t add = p.op("aten::add", "Tensor");
  const uint32_t mul = p.op("aten::mul", "Tensor");
  const uint32_t token_op = p.op("with_effects", "");
  auto g = p.graph("main", true);
  const uint32_t token = g.value("token", ValueKind::TENSOR);
  g.set_tensor_meta(token, tensor_meta(ScalarType::FLOAT32, {0}));
  const uint32_t w = g.tensor("p_lin_weight", ScalarType::FLOAT32, {8, 8});
  const uint32_t mean = g.tensor("b_norm_running_mean", ScalarType::BFLOAT16, {16});
  const uint32_t batches = g.tensor("b_norm_num_batches", ScalarType::INT64, {2});
  const uint32_t table = g.tensor("c_const_table", ScalarType::UINT8, {4, 8});
  const uint32_t obj = g.custom_obj("obj_counter", "__torch__.torch.classes.nrt_test.Counter");
  const uint32_t x = g.tensor("x", ScalarType::FLOAT32, {8, 8});
  g.input(arg::tensor(token), fb::InputKind::TOKEN);
  g.input(arg::tensor(w), fb::InputKind::PARAMETER, "lin.weight");
  g.input(arg::tensor(mean), fb::InputKind::BUFFER, "norm.running_mean", true);
  g.input(arg::tensor(batches), fb::InputKind::BUFFER, "norm.num_batches", false);
  g.input(arg::tensor(table), fb::InputKind::TENSOR_CONSTANT, "const_table");
  g.input(arg::custom_obj(obj, "__torch__.torch.classes.nrt_test.Counter"), fb::InputKind::CUSTOM_OBJ, "counter");
  g.user_input(arg::tensor(x));
  g.constant_input(arg::integer(2), "scale");

  const uint32_t token_out = g.value("token_1", ValueKind::TENSOR);
  g.set_tensor_meta(token_out, tensor_meta(ScalarType::FLOAT32, {0}));
  g.node("with_effects", token_op, Args{{"token", arg::tensor(token)}, {"op", arg::op(add)}}, {}, {arg::tensor(token_out)});
  const uint32_t sum = g.tensor("add", ScalarType::FLOAT32, {8, 8});
  g.node("add", add, Args{{"self", arg::tensor(x)}, {"other", arg::tensor(w)}}, {}, {arg::tensor(sum)});
  const uint32_t prod = g.tensor("mul", ScalarType::FLOAT32, {8, 8});
  g.node("mul", mul, Args{{"self", arg::tensor(sum)}, {"other", arg::tensor(w)}}, {}, {arg::tensor(prod)});
  const uint32_t new_batches = g.tensor("add_1", ScalarType::INT64, {2});
  g.node("add_1", add, Args{{"self", arg::tensor(batches)}, {"other", arg::integer(1)}}, {}, {arg::tensor(new_batches)});
  const uint32_t loss = g.tensor("loss", ScalarType::FLOAT32, {});
  g.node("loss", p.op("aten::sum", "default"), Args{{"self", arg::tensor(prod)}}, {}, {arg::tensor(loss)});
  const uint32_t grad_w = g.tensor("grad_w", ScalarType::FLOAT32, {8, 8});
  g.node("grad_w", mul, Args{{"self", arg::tensor(x)}, {"other", arg::real(2.0)}}, {}, {arg::tensor(grad_w)});
  const uint32_t grad_x = g.tensor("grad_x", ScalarType::FLOAT32, {8, 8});
  g.node("grad_x", mul, Args{{"self", arg::tensor(w)}, {"other", arg::real(2.0)}}, {}, {arg::tensor(grad_x)});
  const uint32_t new_x = g.tensor("new_x", ScalarType::FLOAT32, {8, 8});
  g.node("new_x", add, Args{{"self", arg::tensor(x)}, {"other", arg::integer(1)}}, {}, {arg::tensor(new_x)});
  const uint32_t new_w = g.tensor("new_w", ScalarType::FLOAT32, {8, 8});
  g.node("new_w", add, Args{{"self", arg::tensor(w)}, {"other", arg::integer(1)}}, {}, {arg::tensor(new_w)});

  g.output(arg::tensor(token_out), fb::OutputKind::TOKEN);
  g.output(arg::tensor(new_batches), fb::OutputKind::BUFFER_MUTATION, "norm.num_batches");
  g.output(arg::tensor(new_w), fb::OutputKind::PARAMETER_MUTATION, "lin.weight");
  g.output(arg::tensor(new_x), fb::OutputKind::USER_INPUT_MUTATION, "x");
  g.output(arg::tensor(loss), fb::OutputKind::LOSS_OUTPUT);
  g.output(arg::tensor(grad_w), fb::OutputKind::GRADIENT_TO_PARAMETER, "lin.weight");
  g.output(arg::tensor(grad_x), fb::OutputKind::GRADIENT_TO_USER_INPUT, "x");
  g.user_output(arg::tensor(prod));
  return p.finish();
}

}  // namespace

const std::vector<CorpusProgram>& corpus_programs() {
  static const std::vector<CorpusProgram> programs = {
      {"mlp", mlp},
      {"all_arguments", all_arguments},
      {"all_enums", all_enums},
      {"dtensor", dtensor},
      {"subgraph", subgraph},
      {"shared_storage", shared_storage},
  };
  return programs;
}

}  // namespace nrt::testdata
