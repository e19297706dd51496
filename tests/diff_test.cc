// Structural diff after canonical alignment (serializer/program_diff.h).
#include <gtest/gtest.h>

#include <cstring>
#include <functional>

#include "serializer/program_diff.h"
#include "serializer/open_program.h"
#include "testdata/corpus_programs.h"

namespace nrt {
namespace {

ProgramWithWeights corpus(const std::string& name) {
  for (const auto& entry : testdata::corpus_programs()) {
    if (entry.name == name) return entry.build();
  }
  ADD_FAILURE() << name;
  return {};
}

ProgramFile open(ProgramWithWeights program) {
  auto file = verify_in_memory(std::move(program));
  EXPECT_TRUE(file.ok()) << file.error().to_string();
  return std::move(file).value();
}

ProgramDiff diff_after(const std::string& name, const std::function<void(ProgramWithWeights&)>& change) {
  auto b = corpus(name);
  change(b);
  return diff_programs(open(corpus(name)), open(std::move(b)));
}

bool mentions(const std::vector<std::string>& lines, const std::string& text) {
  for (const auto& l : lines) {
    if (l.find(text) != std::string::npos) return true;
  }
  return false;
}

TEST(Diff, EveryCorpusProgramEqualsItself) {
  for (const auto& entry : testdata::corpus_programs()) {
    EXPECT_TRUE(diff_programs(open(entry.build()), open(entry.build())).same()) << entry.name;
  }
}

TEST(Diff, RenamedValuesAreTheSame) {
  auto d = diff_after("mlp", [](ProgramWithWeights& p) {
    for (auto& v : p.program.graphs[0]->values) v->name += "_renamed";
  });
  EXPECT_TRUE(d.same());
}

TEST(Diff, ChangedTarget) {
  auto d = diff_after("mlp", [](ProgramWithWeights& p) { p.program.operators[1]->name = "aten::gelu"; });
  ASSERT_EQ(d.graphs.size(), 1u);
  ASSERT_EQ(d.graphs[0].changed_nodes.size(), 1u);
  EXPECT_EQ(d.graphs[0].changed_nodes[0].a_node, "%relu");
  EXPECT_TRUE(mentions(d.graphs[0].changed_nodes[0].changes, "target: aten::relu.default -> aten::gelu.default"));
  EXPECT_TRUE(d.graphs[0].added_nodes.empty());
  EXPECT_TRUE(d.graphs[0].removed_nodes.empty());
}

TEST(Diff, MovedEdgeNamesTheArgument) {
  auto d = diff_after("mlp", [](ProgramWithWeights& p) {
    auto& g = *p.program.graphs[0];
    g.nodes[2]->inputs[0]->arg.AsTensorArg()->value = g.nodes[0]->outputs[0]->arg.AsTensorArg()->value;
  });
  ASSERT_EQ(d.graphs.size(), 1u);
  ASSERT_EQ(d.graphs[0].changed_nodes.size(), 1u);
  EXPECT_EQ(d.graphs[0].changed_nodes[0].a_node, "%linear_1");
  EXPECT_TRUE(mentions(d.graphs[0].changed_nodes[0].changes, "argument 'input'"));
  // relu now feeds nothing but is still there: not removed.
  EXPECT_TRUE(d.graphs[0].removed_nodes.empty());
}

TEST(Diff, ChangedConstantAndAddedNode) {
  auto d = diff_after("shared_storage", [](ProgramWithWeights& p) {
    auto& g = *p.program.graphs[0];
    for (auto& n : g.nodes) {
      if (n->name == "add_1") n->inputs[1]->arg.AsIntArg()->value = 5;
    }
    auto extra = std::make_unique<fb::NodeT>();
    extra->name = "extra";
    extra->op = 0;
    g.nodes.push_back(std::move(extra));
  });
  ASSERT_EQ(d.graphs.size(), 1u);
  EXPECT_EQ(d.graphs[0].added_nodes.size(), 1u);
  ASSERT_EQ(d.graphs[0].changed_nodes.size(), 1u);
  EXPECT_TRUE(mentions(d.graphs[0].changed_nodes[0].changes, "argument 'other': 1 -> 5"))
      << d.graphs[0].changed_nodes[0].changes[0];
}

TEST(Diff, WeightsWithMaxAbsoluteDifference) {
  auto d = diff_after("mlp", [](ProgramWithWeights& p) {
    float v;
    std::memcpy(&v, p.storages[1].data() + 8, 4);
    v += 0.5f;
    std::memcpy(p.storages[1].data() + 8, &v, 4);
  });
  EXPECT_TRUE(d.graphs.empty());
  ASSERT_EQ(d.weights.size(), 1u);
  EXPECT_EQ(d.weights[0].fqn, "fc1.bias");
  ASSERT_TRUE(d.weights[0].max_abs_diff.has_value());
  EXPECT_NEAR(*d.weights[0].max_abs_diff, 0.5, 1e-6);
}

TEST(Diff, MeshesAndGroups) {
  auto d = diff_after("dtensor", [](ProgramWithWeights& p) {
    p.program.process_groups[0]->ranks = {3, 2, 1, 0};
    p.program.meshes[0]->ranks = {3, 2, 1, 0};
  });
  EXPECT_TRUE(mentions(d.group_changes, "'world'"));
  EXPECT_TRUE(mentions(d.mesh_changes, "'dp'"));
  EXPECT_FALSE(d.same());
}

}  // namespace
}  // namespace nrt
