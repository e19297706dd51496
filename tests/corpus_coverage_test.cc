// The compatibility corpus must exercise every argument kind, value kind, enum value, placement
// kind and signature kind of the schema; when the schema grows, this test names what is missing.
#include <gtest/gtest.h>

#include <set>

#include "core/schema_enums.h"
#include "testdata/corpus_programs.h"

namespace nrt {
namespace {

struct Seen {
  std::set<fb::Argument> arguments;
  std::set<fb::ValueKind> value_kinds;
  std::set<fb::ScalarType> dtypes;
  std::set<fb::Layout> layouts;
  std::set<fb::DeviceType> devices;
  std::set<fb::MemoryFormat> memory_formats;
  std::set<fb::ReduceOp> reduce_ops;
  std::set<fb::PlacementKind> placements;
  std::set<fb::InputKind> input_kinds;
  std::set<fb::OutputKind> output_kinds;
  std::set<int> mesh_ranks;  // dimensionality of meshes DTensors use

  void meta(const fb::TensorMetaT& m) {
    dtypes.insert(m.dtype);
    layouts.insert(m.layout);
    if (m.device) devices.insert(m.device->type);
  }

  void argument(const fb::ArgumentUnion& a) {
    arguments.insert(a.type);
    switch (a.type) {
      case fb::Argument::ScalarTypeArg:
        dtypes.insert(a.AsScalarTypeArg()->value);
        break;
      case fb::Argument::LayoutArg:
        layouts.insert(a.AsLayoutArg()->value);
        break;
      case fb::Argument::MemoryFormatArg:
        memory_formats.insert(a.AsMemoryFormatArg()->value);
        break;
      case fb::Argument::DeviceArg:
        devices.insert(a.AsDeviceArg()->value->type);
        break;
      case fb::Argument::StringToArgumentArg:
        for (const auto& entry : a.AsStringToArgumentArg()->entries) argument(entry->value);
        break;
      default:
        break;
    }
  }

  void program(const fb::ProgramT& p) {
    for (const auto& g : p.graphs) {
      for (const auto& v : g->values) {
        value_kinds.insert(v->kind);
        if (v->tensor) meta(*v->tensor);
        if (v->dtensor) {
          mesh_ranks.insert(static_cast<int>(p.meshes[v->dtensor->mesh]->shape.size()));
          for (const auto& pl : v->dtensor->placements) {
            placements.insert(pl.kind());
            if (pl.kind() == fb::PlacementKind::PARTIAL) reduce_ops.insert(pl.reduce_op());
          }
        }
      }
      for (const auto& in : g->inputs) argument(in->arg);
      for (const auto& out : g->outputs) argument(out->arg);
      for (const auto& n : g->nodes) {
        for (const auto& in : n->inputs) argument(in->arg);
        for (const auto& out : n->outputs) argument(out->arg);
      }
      if (g->signature) {
        for (const auto& s : g->signature->inputs) input_kinds.insert(s->kind);
        for (const auto& s : g->signature->outputs) output_kinds.insert(s->kind);
      }
    }
  }
};

const Seen& seen() {
  static const Seen s = [] {
    Seen s;
    for (const auto& entry : testdata::corpus_programs()) s.program(entry.build().program);
    return s;
  }();
  return s;
}

template <typename Enum, size_t N>
void expect_all(const std::set<Enum>& got, const Enum (&values)[N], const char* (*name)(Enum), std::set<Enum> skip = {}) {
  for (Enum v : values) {
    if (skip.count(v)) continue;
    EXPECT_TRUE(got.count(v)) << "corpus never uses " << name(v);
  }
}

TEST(CorpusCoverage, EveryArgumentKind) {
  expect_all(seen().arguments, fb::EnumValuesArgument(), fb::EnumNameArgument, {fb::Argument::NONE});
}
TEST(CorpusCoverage, EveryValueKind) {
  expect_all(seen().value_kinds, fb::EnumValuesValueKind(), fb::EnumNameValueKind,
             {fb::ValueKind::UNKNOWN, fb::ValueKind::GRAPH, fb::ValueKind::TENSOR_LIST,
              fb::ValueKind::OPTIONAL_TENSOR_LIST});
}
TEST(CorpusCoverage, EveryScalarType) {
  expect_all(seen().dtypes, fb::EnumValuesScalarType(), fb::EnumNameScalarType, {fb::ScalarType::UNKNOWN});
}
TEST(CorpusCoverage, EveryLayoutDeviceMemoryFormat) {
  expect_all(seen().layouts, fb::EnumValuesLayout(), fb::EnumNameLayout);
  expect_all(seen().devices, fb::EnumValuesDeviceType(), fb::EnumNameDeviceType);
  expect_all(seen().memory_formats, fb::EnumValuesMemoryFormat(), fb::EnumNameMemoryFormat);
}
TEST(CorpusCoverage, EveryPlacementOnOneAndTwoDimensionalMeshes) {
  expect_all(seen().placements, fb::EnumValuesPlacementKind(), fb::EnumNamePlacementKind);
  expect_all(seen().reduce_ops, fb::EnumValuesReduceOp(), fb::EnumNameReduceOp);
  EXPECT_TRUE(seen().mesh_ranks.count(1));
  EXPECT_TRUE(seen().mesh_ranks.count(2));
}
TEST(CorpusCoverage, EverySignatureKind) {
  expect_all(seen().input_kinds, fb::EnumValuesInputKind(), fb::EnumNameInputKind, {fb::InputKind::UNKNOWN});
  expect_all(seen().output_kinds, fb::EnumValuesOutputKind(), fb::EnumNameOutputKind, {fb::OutputKind::UNKNOWN});
}

TEST(ScalarTypeInfo, CoversEveryScalarType) {
  std::set<std::string_view> names;
  for (auto type : fb::EnumValuesScalarType()) {
    if (type == fb::ScalarType::UNKNOWN) continue;
    EXPECT_GT(element_size(type), 0u) << fb::EnumNameScalarType(type);
    const auto name = short_name(type);
    EXPECT_TRUE(names.insert(name).second) << "duplicate short name " << name;
    ASSERT_TRUE(schema_scalar_type_from_short_name(name).has_value()) << name;
    EXPECT_EQ(*schema_scalar_type_from_short_name(name), type);
  }
  EXPECT_EQ(element_size(static_cast<fb::ScalarType>(14)), 0u);  // a gap in the numbering
  EXPECT_FALSE(is_known(static_cast<fb::ScalarType>(14)));
  // Values beyond the table's range, which a hostile file may hold, have no row either.
  for (int value : {-1, 256, 256 + 6, 32767}) {
    EXPECT_EQ(element_size(static_cast<fb::ScalarType>(value)), 0u) << value;
    EXPECT_EQ(short_name(static_cast<fb::ScalarType>(value)), "?") << value;
  }
}

}  // namespace
}  // namespace nrt
