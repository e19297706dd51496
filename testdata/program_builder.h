// A small builder over the FlatBuffers object API for writing programs in tests, benchmarks and
// the testdata generator: interns operators, tracks values by name, appends nodes and signature
// entries in order. It builds; it does not verify (ProgramFile does that).
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "core/schema_enums.h"
#include "schema/nrt_generated.h"
#include "serializer/json_form.h"

namespace nrt::testdata {

// Tensor metadata with literal sizes and contiguous strides.
fb::TensorMetaT tensor_meta(fb::ScalarType dtype, const std::vector<int64_t>& sizes);
inline fb::TensorMetaT tensor_meta(ScalarType dtype, const std::vector<int64_t>& sizes) {
  return tensor_meta(to_schema(dtype), sizes);
}
std::unique_ptr<fb::SymDimT> literal_dim(int64_t value);
std::unique_ptr<fb::SymDimT> symbolic_dim(const std::string& expr, int64_t hint);

// A node's named arguments, in order (GraphBuilder::node's positional and keyword ones).
using Args = std::vector<std::pair<std::string, fb::ArgumentUnion>>;

// Argument constructors.
namespace arg {
fb::ArgumentUnion none();
fb::ArgumentUnion tensor(uint32_t value);
fb::ArgumentUnion tensors(std::vector<uint32_t> values);
fb::ArgumentUnion optional_tensor(int32_t value);  // -1: None
fb::ArgumentUnion optional_tensors(std::vector<int32_t> values);
fb::ArgumentUnion integer(int64_t v);
fb::ArgumentUnion integers(std::vector<int64_t> v);
fb::ArgumentUnion real(double v);
fb::ArgumentUnion reals(std::vector<double> v);
fb::ArgumentUnion string(std::string v);
fb::ArgumentUnion strings(std::vector<std::string> v);
fb::ArgumentUnion boolean(bool v);
fb::ArgumentUnion booleans(std::vector<bool> v);
fb::ArgumentUnion sym_int(int32_t value);  // reference to a SYM_INT value
fb::ArgumentUnion sym_int_literal(int64_t v);
fb::ArgumentUnion sym_ints(std::vector<fb::SymIntItem> items);
fb::ArgumentUnion sym_float(int32_t value);
fb::ArgumentUnion sym_floats(std::vector<fb::SymFloatItem> items);
fb::ArgumentUnion sym_bool(int32_t value);
fb::ArgumentUnion sym_bools(std::vector<fb::SymBoolItem> items);
fb::ArgumentUnion scalar_type(fb::ScalarType v);
inline fb::ArgumentUnion scalar_type(ScalarType v) { return scalar_type(to_schema(v)); }
fb::ArgumentUnion memory_format(fb::MemoryFormat v);
fb::ArgumentUnion layout(fb::Layout v);
fb::ArgumentUnion device(fb::DeviceType type, int32_t index);
fb::ArgumentUnion graph(uint32_t graph_index);
fb::ArgumentUnion custom_obj(uint32_t value, std::string class_fqn);
fb::ArgumentUnion op(uint32_t op_index);
fb::ArgumentUnion complex(double real, double imag);
fb::ArgumentUnion nested_tensors(std::vector<std::vector<uint32_t>> lists);
fb::ArgumentUnion int_lists(std::vector<std::vector<int64_t>> lists);
fb::ArgumentUnion float_lists(std::vector<std::vector<double>> lists);
fb::ArgumentUnion string_map(Args entries);
fb::ArgumentUnion process_group(uint32_t group);
fb::ArgumentUnion value(uint32_t value);
}  // namespace arg

class GraphBuilder {
 public:
  explicit GraphBuilder(fb::GraphT* graph) : graph_(graph) {}

  // Values. Each returns the value's index.
  uint32_t tensor(const std::string& name, fb::ScalarType dtype, const std::vector<int64_t>& sizes);
  // The runtime's element type (tests build programs and tensors with the same names).
  uint32_t tensor(const std::string& name, ScalarType dtype, const std::vector<int64_t>& sizes) {
    return tensor(name, to_schema(dtype), sizes);
  }
  uint32_t tensor(const std::string& name, fb::TensorMetaT meta);
  uint32_t dtensor(const std::string& name, fb::ScalarType dtype, const std::vector<int64_t>& local_sizes,
                   const std::vector<int64_t>& global_sizes, uint32_t mesh, std::vector<fb::Placement> placements);
  uint32_t dtensor(const std::string& name, ScalarType dtype, const std::vector<int64_t>& local_sizes,
                   const std::vector<int64_t>& global_sizes, uint32_t mesh, std::vector<fb::Placement> placements) {
    return dtensor(name, to_schema(dtype), local_sizes, global_sizes, mesh, std::move(placements));
  }
  uint32_t value(const std::string& name, fb::ValueKind kind);
  uint32_t sym_int(const std::string& name, const std::string& expr, int64_t hint);
  uint32_t process_group(const std::string& name, int32_t group);
  uint32_t custom_obj(const std::string& name, const std::string& class_fqn);
  uint32_t index_of(const std::string& name) const;
  void set_tensor_meta(uint32_t value, fb::TensorMetaT meta);

  // Graph inputs with their signature entries.
  void user_input(fb::ArgumentUnion defining);
  void input(fb::ArgumentUnion defining, fb::InputKind kind, const std::string& target = "", bool persistent = true);
  void constant_input(fb::ArgumentUnion constant, const std::string& name);

  // A node; `outputs` are defining arguments (arg::tensor(v), ...).
  fb::NodeT& node(const std::string& name, uint32_t op, Args positional, Args keyword, std::vector<fb::ArgumentUnion> outputs);

  void user_output(fb::ArgumentUnion arg);
  void output(fb::ArgumentUnion arg, fb::OutputKind kind, const std::string& target = "");
  // Subgraphs have no signature.
  void drop_signature() { graph_->signature.reset(); }

 private:
  fb::GraphT* graph_;
  std::map<std::string, uint32_t> by_name_;
};

class ProgramBuilder {
 public:
  explicit ProgramBuilder(std::string producer = "nrt testdata");

  uint32_t op(const std::string& name, const std::string& overload);
  uint32_t storage(std::vector<uint8_t> bytes);
  void weight(const std::string& fqn, uint32_t storage, fb::TensorMetaT meta, bool is_parameter);
  uint32_t mesh(const std::string& name, std::vector<int64_t> shape, std::vector<int32_t> ranks,
                std::vector<std::string> dim_names = {});
  uint32_t group(const std::string& name, std::vector<int32_t> ranks, const std::string& backend, int32_t mesh = -1,
                 int32_t mesh_dim = -1);
  // A new graph; entry points get a signature.
  GraphBuilder graph(const std::string& name, bool entry_point);
  uint32_t graph_index(const std::string& name) const;
  void metadata(const std::string& key, const std::string& value);
  void range_constraint(const std::string& symbol, int64_t min, int64_t max);

  ProgramWithWeights finish();

 private:
  ProgramWithWeights result_;
  std::map<std::string, uint32_t> ops_;
};

// Bytes of a float32 tensor filled with a deterministic pattern (no RNG state in test data).
std::vector<uint8_t> pattern_f32(size_t count, float scale);

}  // namespace nrt::testdata
