// The conformance programs of record (../shared/conformance, written by torch 2.12, schema 8.20):
// each imports, verifies as .nrt, keeps its node count, op histogram and signature, and exports
// back to the same JSON value. The pre-2.6 archive is refused with a message naming the legacy
// format.
#include <filesystem>
#include <map>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "serializer/open_program.h"
#include "serializer/torch_export/export_json.h"
#include "serializer/torch_export/import_json.h"
#include "serializer/torch_export/import_pt2.h"
#include "serializer/torch_export/operator_target.h"
#include "serializer/torch_export/torch_error_codes.h"
#include "tests/torch_export/json_compare.h"
#include "tests/torch_export/test_files.h"

namespace nrt::torch_export {
namespace {

struct Conformance {
  const char* file;
  size_t nodes;  // PROVENANCE.md
};

constexpr Conformance kFiles[] = {
    {"smolvlm256m_connector_static.json", 9},
    {"tinyclip_image_encoder_static.json", 41},
    {"whisper_tiny_decode_dynamic.json", 106},
};

std::string path_of(const char* file) { return test::conformance_dir() + "/torch_export/" + file; }

std::map<std::string, int> source_histogram(const nlohmann::json& source) {
  std::map<std::string, int> histogram;
  for (const auto& node : source["graph_module"]["graph"]["nodes"]) ++histogram[node["target"].get<std::string>()];
  return histogram;
}

std::vector<std::string> spec_members(const nlohmann::json& specs) {
  std::vector<std::string> members;
  for (const auto& spec : specs) members.push_back(spec.begin().key());
  return members;
}

class ConformanceTest : public ::testing::TestWithParam<Conformance> {};

TEST(ConformanceDir, Exists) {
  ASSERT_FALSE(test::conformance_dir().empty())
      << "set NRT_CONFORMANCE_DIR to ../shared/conformance (scripts/test_all.sh does)";
}

TEST_P(ConformanceTest, ImportsVerifiesAndRoundTrips) {
  ASSERT_FALSE(test::conformance_dir().empty()) << "conformance directory missing";
  const std::string text = test::read_text(path_of(GetParam().file));
  ASSERT_FALSE(text.empty());
  const nlohmann::json source = nlohmann::json::parse(text);

  auto imported = import_torch_json(text);
  ASSERT_TRUE(imported.ok()) << imported.error().to_string();
  for (const auto& w : imported->warnings) std::printf("  warning: %s\n", w.c_str());

  // Verified through a real .nrt file.
  const std::string dir = test::scratch_dir(std::string("conformance_") + GetParam().file);
  ASSERT_TRUE(save_program(std::move(imported->program), dir + "/m.nrt", ProgramFormat::kNrt).ok());
  auto file = open_program(dir + "/m.nrt");
  ASSERT_TRUE(file.ok()) << file.error().to_string();
  const auto loaded = unpack_program(*file);
  const fb::ProgramT& program = loaded.program;

  ASSERT_EQ(program.entry_points.size(), 1u);
  const fb::GraphT& graph = *program.graphs[program.entry_points[0]];
  EXPECT_EQ(graph.name, "model");
  EXPECT_EQ(graph.nodes.size(), GetParam().nodes);
  EXPECT_EQ(graph.nodes.size(), source["graph_module"]["graph"]["nodes"].size());

  std::map<std::string, int> histogram;
  for (const auto& node : graph.nodes) {
    auto target = target_from_operator(*program.operators[node->op]);
    ASSERT_TRUE(target.ok());
    ++histogram[*target];
  }
  EXPECT_EQ(histogram, source_histogram(source));

  // Signature kinds in order.
  const auto& sig = source["graph_module"]["signature"];
  ASSERT_TRUE(graph.signature);
  ASSERT_EQ(graph.signature->inputs.size(), sig["input_specs"].size());
  ASSERT_EQ(graph.signature->outputs.size(), sig["output_specs"].size());
  const auto inputs = spec_members(sig["input_specs"]);
  for (size_t i = 0; i < inputs.size(); ++i) {
    const auto kind = graph.signature->inputs[i]->kind;
    const std::map<std::string, fb::InputKind> expected = {{"user_input", fb::InputKind::USER_INPUT},
                                                           {"parameter", fb::InputKind::PARAMETER},
                                                           {"buffer", fb::InputKind::BUFFER},
                                                           {"tensor_constant", fb::InputKind::TENSOR_CONSTANT}};
    ASSERT_TRUE(expected.count(inputs[i])) << inputs[i];
    EXPECT_EQ(kind, expected.at(inputs[i])) << "input spec " << i;
  }
  // Node names and metadata verbatim.
  const auto& nodes = source["graph_module"]["graph"]["nodes"];
  for (size_t n = 0; n < nodes.size(); ++n) {
    EXPECT_EQ(graph.nodes[n]->name, nodes[n]["name"].get<std::string>());
    size_t entries = 0;
    for (const auto& kv : graph.nodes[n]->metadata) {
      ASSERT_TRUE(nodes[n]["metadata"].contains(kv->key)) << kv->key;
      EXPECT_EQ(kv->value, nodes[n]["metadata"][kv->key].get<std::string>());
      ++entries;
    }
    EXPECT_EQ(entries, nodes[n]["metadata"].size());
  }

  auto exported = export_torch_json(program, "model");
  ASSERT_TRUE(exported.ok()) << exported.error().to_string();
  EXPECT_EQ(test::json_difference(source, nlohmann::json::parse(*exported)), "");
}

// The same round trip through the files a user would write: JSON -> .nrt -> JSON.
TEST_P(ConformanceTest, ConvertsThroughFiles) {
  ASSERT_FALSE(test::conformance_dir().empty()) << "conformance directory missing";
  const std::string dir = test::scratch_dir(std::string("convert_") + GetParam().file);
  ASSERT_TRUE(convert_program(path_of(GetParam().file), dir + "/m.nrt", {}, {}).ok());
  auto status = convert_program(dir + "/m.nrt", dir + "/back.json", {}, {});
  ASSERT_TRUE(status.ok()) << status.error().to_string();
  const auto source = nlohmann::json::parse(test::read_text(path_of(GetParam().file)));
  EXPECT_EQ(test::json_difference(source, nlohmann::json::parse(test::read_text(dir + "/back.json"))), "");
  // And into a .pt2 (no weights to carry: the parameters were never published) and back.
  status = convert_program(dir + "/m.nrt", dir + "/m.pt2", {}, {});
  ASSERT_TRUE(status.ok()) << status.error().to_string();
  ASSERT_TRUE(convert_program(dir + "/m.pt2", dir + "/again.nrt", {}, {}).ok());
  EXPECT_EQ(test::read_bytes(dir + "/m.nrt"), test::read_bytes(dir + "/again.nrt"));
}

INSTANTIATE_TEST_SUITE_P(Files, ConformanceTest, ::testing::ValuesIn(kFiles),
                         [](const auto& info) { return std::string(info.param.file).substr(0, std::string(info.param.file).find('_')); });

TEST(Conformance, WhisperKeepsSymbolsAndRanges) {
  ASSERT_FALSE(test::conformance_dir().empty()) << "conformance directory missing";
  auto imported = import_torch_json(test::read_text(path_of("whisper_tiny_decode_dynamic.json")));
  ASSERT_TRUE(imported.ok()) << imported.error().to_string();
  const fb::ProgramT& program = imported->program.program;
  ASSERT_EQ(program.range_constraints.size(), 2u);
  EXPECT_EQ(program.range_constraints[0]->symbol, "s0 + 1");
  EXPECT_EQ(program.range_constraints[0]->min, 2);
  EXPECT_EQ(program.range_constraints[0]->max, 9);
  EXPECT_EQ(program.range_constraints[1]->symbol, "s0");
  const fb::GraphT& graph = *program.graphs[0];
  int sym_ints = 0, sym_bools = 0, symbolic_dims = 0;
  for (const auto& v : graph.values) {
    if (v->kind == fb::ValueKind::SYM_INT) {
      ++sym_ints;
      ASSERT_TRUE(v->sym);
      EXPECT_FALSE(v->sym->expr.empty());
      EXPECT_TRUE(v->sym->int_hint.has_value());
    }
    if (v->kind == fb::ValueKind::SYM_BOOL) {
      ++sym_bools;
      EXPECT_TRUE(v->sym->bool_hint.value_or(false));
    }
    if (v->kind == fb::ValueKind::TENSOR) {
      for (const auto& d : v->tensor->sizes) symbolic_dims += d->expr.empty() ? 0 : 1;
    }
  }
  EXPECT_EQ(sym_ints, 5);
  EXPECT_EQ(sym_bools, 4);
  EXPECT_EQ(symbolic_dims, 25);
}

TEST(Conformance, LegacyArchiveIsRefusedByName) {
  ASSERT_FALSE(test::conformance_dir().empty()) << "conformance directory missing";
  const std::string legacy = test::conformance_dir() + "/legacy/hades_pid_schema2.pt2";
  auto imported = import_pt2_file(legacy);
  ASSERT_FALSE(imported.ok());
  EXPECT_EQ(imported.error().code, codes::kLegacyArchive);
  EXPECT_NE(imported.error().message.find("legacy torch.export archive"), std::string::npos)
      << imported.error().message;
  EXPECT_NE(imported.error().message.find("serialized_exported_program.json"), std::string::npos);

  const std::string dir = test::scratch_dir("legacy");
  auto status = convert_program(legacy, dir + "/out.nrt", {}, {});
  ASSERT_FALSE(status.ok());
  EXPECT_FALSE(std::filesystem::exists(dir + "/out.nrt"));
  EXPECT_TRUE(test::list_dir(dir).empty());
}

}  // namespace
}  // namespace nrt::torch_export
