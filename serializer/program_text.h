// Human-readable text for the parts of a program: types, constants, arguments, nodes and graphs.
// `nrt-inspect print` shows a graph with it; `info`, diffs and messages reuse the pieces.
//
//   graph main(%x : f32[8,16], %w : f32[16,64]) -> (%out)
//     %mm : f32[8,64] = aten::mm.default(%x, %w)
//     %out : f32[8,64] = aten::add.Tensor(%mm, %x, alpha=1)
//
// Contract: the program has passed verification (ProgramFile), yet every function stays safe on
// an index that is out of range or a field that is absent: it prints a marker such as `%?7` or
// `?` instead of reading out of bounds. Names and strings from the file are escaped, so no
// control character (terminal escape, newline) reaches the output unescaped.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "schema/nrt_generated.h"

namespace nrt {

// Decorations a caller wraps around parts of the text (ANSI escapes on a terminal). Empty by
// default, so library output is plain text.
struct TextStyle {
  std::string target_begin;  // before an operator name in a node (`aten::mm.default`)
  std::string target_end;
};

// --- scalars and enums ------------------------------------------------------------------------

// Python's repr of a float: 1.0, 0.1, 1e-05, 1e+16, -0.0, nan, inf, -inf.
std::string render_float(double value);
// A Python string literal in single quotes, with \\, \', \n, \t, \r and \xNN escapes.
std::string render_string(std::string_view text);
// `text` with control bytes and backslashes escaped (\n, \xNN), for names printed bare.
std::string printable(std::string_view text);
// torch.float32, torch.strided, torch.contiguous_format; `torch.<unknown N>` for unknown values.
std::string render_scalar_type(fb::ScalarType type);
std::string render_layout(fb::Layout layout);
std::string render_memory_format(fb::MemoryFormat format);
// cpu, cuda:0 (absent device: cpu). `render_device_type` gives only the type: cuda.
std::string render_device(const fb::Device* device);
std::string render_device_type(fb::DeviceType type);
// sum, avg, product, min, max, band, bor, bxor, premul_sum.
std::string render_reduce_op(fb::ReduceOp op);
// user_input, parameter, buffer_mutation, ... (the enum name in lower case).
std::string render_input_kind(fb::InputKind kind);
std::string render_output_kind(fb::OutputKind kind);

// --- types ------------------------------------------------------------------------------------

// A symbolic expression, with sympy srepr's `Symbol('s0', positive=True)` and `Integer(2)`
// shortened to `s0` and `2` (the rest of the expression is kept as written).
std::string render_symbolic(std::string_view expr);
// A dimension: its literal, or its symbolic expression (`s0`); `?` when absent.
std::string render_dim(const fb::SymDim* dim);
// [8,64] ([] for a scalar).
std::string render_shape(const flatbuffers::Vector<flatbuffers::Offset<fb::SymDim>>* sizes);
// f32[8,64]; a device other than cpu is appended: f32[8,64]@cuda:0.
std::string render_tensor_meta(const fb::TensorMeta* meta);
// Shard(0), Replicate(), Partial(sum), StridedShard(dim=0, sf=2).
std::string render_placement(const fb::Placement& placement);
// f32[8,64], dtensor<f32[4,64] global [8,64], mesh 0 [Shard(0), Replicate()]>, symint, symfloat,
// symbool, pg<name>, obj<class>, graph<name>, None, [f32[4], f32[4]] (a list with known elements),
// tensor[] (without), f32[8]? (optional).
std::string render_type(const fb::Value& value, const fb::Program& program);

// --- arguments, nodes, graphs -----------------------------------------------------------------

// `aten::add.Tensor`; no `.` when the overload is empty.
std::string render_target(const fb::Operator& op);
// %name of value `index` in `graph`; `%?index` when out of range.
std::string render_value_ref(int64_t index, const fb::Graph& graph);
// An argument in a use position: %x, [%a, %b], 1, 2.5, 'sum', True, None, torch.float32, cpu,
// @subgraph, aten::mm.default, pg<name>, {'key': value}.
std::string render_argument(fb::Argument type, const void* arg, const fb::Graph& graph, const fb::Program& program);
// An argument in a defining position (node result, graph input): `%x : f32[8]`, `[%a : .., %b : ..]`,
// `_` for an unused slot; constants (constant inputs) as render_argument.
std::string render_definition(fb::Argument type, const void* arg, const fb::Graph& graph, const fb::Program& program);
// `%add_1 : f32[8,64] = aten::add.Tensor(%x, %w, alpha=1)`; with no result slot only the call.
std::string render_node(const fb::Node& node, const fb::Graph& graph, const fb::Program& program,
                        const TextStyle& style = {});
// The header (`graph main(%x : f32[8], ...) -> (%out)`, one input per line when it would not fit
// in 100 columns), one `# input`/`# output` line per signature entry (entry points), then one line
// per node indented by two spaces; ends with a newline. `keyword` is "graph" or "subgraph".
std::string render_graph(const fb::Graph& graph, const fb::Program& program, const TextStyle& style = {},
                         std::string_view keyword = "graph");
// Every graph: entry points first (in entry_points order) as `graph`, then the other graphs
// (subgraphs) in index order as `subgraph`, separated by blank lines.
std::string render_program(const fb::Program& program, const TextStyle& style = {});
// The graph called `name` as render_program prints it (`graph` for an entry point, `subgraph`
// otherwise); nullopt when the program has none of that name.
std::optional<std::string> render_named_graph(const fb::Program& program, std::string_view name,
                                              const TextStyle& style = {});
// Every graph's name, printable, comma-separated: for messages about a name that is not there.
std::string graph_names(const fb::Program& program);

}  // namespace nrt
