// Invariances and sensitivities of the canonical hash (serializer/program_hash.h). Each program
// is transformed through the object API, written, verified and hashed again.
#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <cstring>
#include <functional>
#include <limits>
#include <numeric>
#include <random>

#include "serializer/json_form.h"
#include "serializer/program_hash.h"
#include "serializer/open_program.h"
#include "testdata/corpus_programs.h"
#include "testdata/program_builder.h"

namespace nrt {
namespace {

ProgramWithWeights corpus(const std::string& name) {
  for (const auto& entry : testdata::corpus_programs()) {
    if (entry.name == name) return entry.build();
  }
  ADD_FAILURE() << "no corpus program " << name;
  return {};
}

ProgramFile open(ProgramWithWeights program) {
  auto file = verify_in_memory(std::move(program));
  EXPECT_TRUE(file.ok()) << file.error().to_string();
  return std::move(file).value();
}

ProgramDigests digests(ProgramWithWeights program, HashAlgorithm algorithm = HashAlgorithm::kXxh3) {
  return hash_program(open(std::move(program)), {algorithm, 2, nullptr});
}

// Applies `f` to every value reference (index into graph values) inside an argument.
void for_each_ref(fb::ArgumentUnion& a, const std::function<void(int64_t&)>& f) {
  using A = fb::Argument;
  auto fix32 = [&f](auto& v) {
    int64_t x = v;
    f(x);
    v = static_cast<std::remove_reference_t<decltype(v)>>(x);
  };
  switch (a.type) {
    case A::TensorArg:
      return fix32(a.AsTensorArg()->value);
    case A::TensorListArg:
      for (auto& v : a.AsTensorListArg()->values) fix32(v);
      return;
    case A::OptionalTensorArg:
      if (a.AsOptionalTensorArg()->value >= 0) fix32(a.AsOptionalTensorArg()->value);
      return;
    case A::OptionalTensorListArg:
      for (auto& v : a.AsOptionalTensorListArg()->values) {
        if (v >= 0) fix32(v);
      }
      return;
    case A::SymIntArg:
      if (a.AsSymIntArg()->value >= 0) fix32(a.AsSymIntArg()->value);
      return;
    case A::SymFloatArg:
      if (a.AsSymFloatArg()->value >= 0) fix32(a.AsSymFloatArg()->value);
      return;
    case A::SymBoolArg:
      if (a.AsSymBoolArg()->value >= 0) fix32(a.AsSymBoolArg()->value);
      return;
    case A::SymIntListArg:
      for (auto& item : a.AsSymIntListArg()->items) {
        if (item.value() >= 0) {
          int64_t x = item.value();
          f(x);
          item = std::remove_reference_t<decltype(item)>(static_cast<int32_t>(x), item.literal());
        }
      }
      return;
    case A::SymFloatListArg:
      for (auto& item : a.AsSymFloatListArg()->items) {
        if (item.value() >= 0) {
          int64_t x = item.value();
          f(x);
          item = std::remove_reference_t<decltype(item)>(static_cast<int32_t>(x), item.literal());
        }
      }
      return;
    case A::SymBoolListArg:
      for (auto& item : a.AsSymBoolListArg()->items) {
        if (item.value() >= 0) {
          int64_t x = item.value();
          f(x);
          item = std::remove_reference_t<decltype(item)>(static_cast<int32_t>(x), item.literal());
        }
      }
      return;
    case A::CustomObjArg:
      return fix32(a.AsCustomObjArg()->value);
    case A::ValueArg:
      return fix32(a.AsValueArg()->value);
    case A::NestedTensorsArg:
      for (auto& list : a.AsNestedTensorsArg()->lists) {
        for (auto& v : list->values) fix32(v);
      }
      return;
    case A::StringToArgumentArg:
      for (auto& entry : a.AsStringToArgumentArg()->entries) for_each_ref(entry->value, f);
      return;
    default:
      return;
  }
}

void for_each_argument(fb::GraphT& g, const std::function<void(fb::ArgumentUnion&)>& f) {
  for (auto& h : g.inputs) f(h->arg);
  for (auto& h : g.outputs) f(h->arg);
  for (auto& n : g.nodes) {
    for (auto& in : n->inputs) f(in->arg);
    for (auto& out : n->outputs) f(out->arg);
  }
  if (g.signature) {
    for (auto& spec : g.signature->inputs) {
      if (spec->constant) f(spec->constant->arg);
    }
  }
}

// Renumbers the values of every graph by a fixed shuffle: the same program, another layout.
void shuffle_values(fb::ProgramT& p, uint32_t seed) {
  std::mt19937 rng(seed);
  for (auto& g : p.graphs) {
    std::vector<uint32_t> perm(g->values.size());
    std::iota(perm.begin(), perm.end(), 0);
    std::shuffle(perm.begin(), perm.end(), rng);  // old index -> new index
    std::vector<std::unique_ptr<fb::ValueT>> values(g->values.size());
    for (size_t i = 0; i < perm.size(); ++i) values[perm[i]] = std::move(g->values[i]);
    g->values = std::move(values);
    auto remap = [&perm](int64_t& v) { v = perm[static_cast<size_t>(v)]; };
    for_each_argument(*g, [&](fb::ArgumentUnion& a) { for_each_ref(a, remap); });
    if (g->signature) {
      for (auto& s : g->signature->inputs) {
        if (s->value >= 0) s->value = static_cast<int32_t>(perm[static_cast<size_t>(s->value)]);
      }
      for (auto& s : g->signature->outputs) {
        if (s->value >= 0) s->value = static_cast<int32_t>(perm[static_cast<size_t>(s->value)]);
      }
    }
  }
}

// Reverses the operator table and the graph list (indices rewritten): another builder order.
void reverse_tables(fb::ProgramT& p) {
  const auto ops = static_cast<uint32_t>(p.operators.size());
  std::reverse(p.operators.begin(), p.operators.end());
  const auto graphs = static_cast<uint32_t>(p.graphs.size());
  std::reverse(p.graphs.begin(), p.graphs.end());
  for (auto& e : p.entry_points) e = graphs - 1 - e;
  for (auto& g : p.graphs) {
    for (auto& n : g->nodes) n->op = ops - 1 - n->op;
    for (auto& v : g->values) {
      if (v->graph >= 0) v->graph = static_cast<int32_t>(graphs - 1 - static_cast<uint32_t>(v->graph));
    }
    for_each_argument(*g, [&](fb::ArgumentUnion& a) {
      if (a.type == fb::Argument::OperatorArg) a.AsOperatorArg()->op = ops - 1 - a.AsOperatorArg()->op;
      if (a.type == fb::Argument::GraphArg) a.AsGraphArg()->graph = graphs - 1 - a.AsGraphArg()->graph;
    });
  }
}

class HashInvariance : public ::testing::TestWithParam<testdata::CorpusProgram> {};

TEST_P(HashInvariance, RenamingValuesAndNodes) {
  const auto before = digests(GetParam().build());
  auto program = GetParam().build();
  for (auto& g : program.program.graphs) {
    for (auto& v : g->values) v->name = "renamed_" + v->name + "_x";
    for (auto& n : g->nodes) n->name = "node_" + std::to_string(n->name.size());
  }
  const auto after = digests(std::move(program));
  EXPECT_EQ(before.structure, after.structure);
  EXPECT_EQ(before.full, after.full);
}

TEST_P(HashInvariance, BuilderLayoutValueOrderAndTables) {
  const auto before = digests(GetParam().build());
  for (uint32_t seed : {1u, 2u, 3u}) {
    auto program = GetParam().build();
    shuffle_values(program.program, seed);
    reverse_tables(program.program);
    EXPECT_EQ(before.structure, digests(std::move(program)).structure) << "seed " << seed;
  }
}

TEST_P(HashInvariance, MetadataIsNotHashed) {
  const auto before = digests(GetParam().build());
  auto program = GetParam().build();
  for (auto& g : program.program.graphs) {
    for (auto& n : g->nodes) {
      n->metadata.clear();
      auto kv = std::make_unique<fb::KeyValueT>();
      kv->key = "stack_trace";
      kv->value = "File \"elsewhere.py\", line 99";
      n->metadata.push_back(std::move(kv));
    }
  }
  program.program.metadata.clear();
  program.program.producer = "another producer";
  EXPECT_EQ(before.full, digests(std::move(program)).full);
}

TEST_P(HashInvariance, StorageOrderAndAlignment) {
  const auto before = digests(GetParam().build());
  auto program = GetParam().build();
  auto& p = program.program;
  const auto n = static_cast<uint32_t>(p.storages.size());
  std::reverse(p.storages.begin(), p.storages.end());
  std::reverse(program.storages.begin(), program.storages.end());
  for (auto& s : p.storages) s->alignment = 4096;
  for (auto& w : p.weights) w->storage = n - 1 - w->storage;
  std::reverse(p.weights.begin(), p.weights.end());
  const auto after = digests(std::move(program));
  EXPECT_EQ(before.weights, after.weights);
  EXPECT_EQ(before.full, after.full);
}

TEST_P(HashInvariance, JsonRoundTrip) {
  ProgramFile file = open(GetParam().build());
  const auto before = hash_program(file);
  auto json = program_to_json(file);
  ASSERT_TRUE(json.ok());
  auto parsed = program_from_json(*json);
  ASSERT_TRUE(parsed.ok());
  EXPECT_EQ(before.full, digests(std::move(*parsed)).full);
}

TEST_P(HashInvariance, ThreadCountDoesNotMatter) {
  ProgramFile file = open(GetParam().build());
  const auto one = hash_program(file, {HashAlgorithm::kXxh3, 1, nullptr});
  const auto many = hash_program(file, {HashAlgorithm::kXxh3, 7, nullptr});
  EXPECT_EQ(one.full, many.full);
}

INSTANTIATE_TEST_SUITE_P(Corpus, HashInvariance, ::testing::ValuesIn(testdata::corpus_programs()),
                         [](const auto& info) { return info.param.name; });

// mlp's relu and a second, independent relu can run in either order.
ProgramWithWeights two_independent_branches(bool swapped, const std::string& repr_address = "0x7f3a2c1b9d30") {
  testdata::ProgramBuilder p("hash test");
  const uint32_t relu = p.op("aten::relu", "default");
  const uint32_t neg = p.op("aten::neg", "default");
  const uint32_t call = p.op("nrt_test::call", "default");
  auto g = p.graph("main", true);
  const uint32_t x = g.tensor("x", fb::ScalarType::FLOAT32, {4});
  const uint32_t a = g.tensor("a", fb::ScalarType::FLOAT32, {4});
  const uint32_t b = g.tensor("b", fb::ScalarType::FLOAT32, {4});
  const uint32_t c = g.tensor("c", fb::ScalarType::FLOAT32, {4});
  g.user_input(testdata::arg::tensor(x));
  using testdata::Args;
  auto first = [&] { g.node("relu", relu, Args{{"self", testdata::arg::tensor(x)}}, {}, {testdata::arg::tensor(a)}); };
  auto second = [&] { g.node("neg", neg, Args{{"self", testdata::arg::tensor(x)}}, {}, {testdata::arg::tensor(b)}); };
  if (swapped) {
    second();
    first();
  } else {
    first();
    second();
  }
  g.node("call", call, Args{{"self", testdata::arg::tensor(a)}, {"other", testdata::arg::tensor(b)}},
         Args{{"fn", testdata::arg::string("<function helper at " + repr_address + ">")},
              {"options", testdata::arg::string_map({{"alpha", testdata::arg::real(1.0)}, {"beta", testdata::arg::integer(2)}})}},
         {testdata::arg::tensor(c)});
  g.user_output(testdata::arg::tensor(c));
  return p.finish();
}

TEST(HashInvariance, ReorderingIndependentNodes) {
  EXPECT_EQ(digests(two_independent_branches(false)).structure, digests(two_independent_branches(true)).structure);
}

TEST(HashInvariance, MapKeyOrder) {
  auto program = two_independent_branches(false);
  auto& entries = program.program.graphs[0]->nodes[2]->inputs[3]->arg.AsStringToArgumentArg()->entries;
  ASSERT_EQ(entries.size(), 2u);
  std::swap(entries[0], entries[1]);
  EXPECT_EQ(digests(two_independent_branches(false)).structure, digests(std::move(program)).structure);
}

TEST(HashInvariance, MemoryAddressesInReprs) {
  const auto a = digests(two_independent_branches(false, "0x7f3a2c1b9d30"));
  const auto b = digests(two_independent_branches(false, "0x55c1d2e3f4a0"));
  EXPECT_EQ(a.structure, b.structure);
  ASSERT_EQ(a.unstable_reprs.size(), 1u);
  EXPECT_NE(a.unstable_reprs[0].find("0x7f3a2c1b9d30"), std::string::npos);
}

TEST(HashInvariance, EveryNanHashesTheSame) {
  auto with_nan = [](uint64_t bits) {
    auto program = two_independent_branches(false);
    auto& entries = program.program.graphs[0]->nodes[2]->inputs[3]->arg.AsStringToArgumentArg()->entries;
    entries[0]->value.AsFloatArg()->value = std::bit_cast<double>(bits);
    return digests(std::move(program)).structure;
  };
  EXPECT_EQ(with_nan(0x7ff8000000000000ull), with_nan(0x7ff8000000000001ull));
  EXPECT_EQ(with_nan(0x7ff8000000000000ull), with_nan(0xfff8000000000000ull));
  EXPECT_NE(with_nan(0x7ff8000000000000ull), with_nan(std::bit_cast<uint64_t>(1.0)));
}

TEST(HashInvariance, ReorderingCollectivesIsAChange) {
  // Collectives must be issued in the same order on every rank: their order is structure.
  auto build = [](bool swapped) {
    testdata::ProgramBuilder p("hash test");
    p.group("world", {0, 1}, "nccl");
    const uint32_t ar = p.op("_c10d_functional::all_reduce", "default");
    auto g = p.graph("main", true);
    const uint32_t x = g.tensor("x", fb::ScalarType::FLOAT32, {4});
    const uint32_t y = g.tensor("y", fb::ScalarType::FLOAT32, {4});
    const uint32_t a = g.tensor("a", fb::ScalarType::FLOAT32, {4});
    const uint32_t b = g.tensor("b", fb::ScalarType::FLOAT32, {4});
    g.user_input(testdata::arg::tensor(x));
    g.user_input(testdata::arg::tensor(y));
    using testdata::Args;
    auto reduce = [&](uint32_t in, uint32_t out) {
      g.node("ar", ar,
             Args{{"input", testdata::arg::tensor(in)}, {"reduce_op", testdata::arg::string("sum")},
                  {"group_name", testdata::arg::string("world")}},
             {}, {testdata::arg::tensor(out)});
    };
    if (swapped) {
      reduce(y, b);
      reduce(x, a);
    } else {
      reduce(x, a);
      reduce(y, b);
    }
    g.user_output(testdata::arg::tensor(a));
    g.user_output(testdata::arg::tensor(b));
    return p.finish();
  };
  EXPECT_NE(digests(build(false)).structure, digests(build(true)).structure);
}

// ---------------------------------------------------------------------------------------------
// Sensitivities: each change must move `structure`.

void expect_structure_changes(const std::string& program_name, const std::function<void(fb::ProgramT&)>& change,
                              const std::string& what) {
  const auto before = digests(corpus(program_name));
  auto program = corpus(program_name);
  change(program.program);
  const auto after = digests(std::move(program));
  EXPECT_NE(before.structure, after.structure) << what;
  EXPECT_NE(before.full, after.full) << what;
}

TEST(HashSensitivity, EachStructuralChange) {
  expect_structure_changes("mlp", [](fb::ProgramT& p) { p.operators[1]->name = "aten::gelu"; }, "target");
  expect_structure_changes(
      "all_arguments",
      [](fb::ProgramT& p) {
        for (auto& n : p.graphs[1]->nodes) {
          for (auto& in : n->inputs) {
            if (in->name == "int") in->arg.AsIntArg()->value += 1;
          }
        }
      },
      "constant");
  expect_structure_changes("mlp", [](fb::ProgramT& p) { p.graphs[0]->values[4]->tensor->dtype = fb::ScalarType::FLOAT16; },
                           "dtype");
  expect_structure_changes("mlp", [](fb::ProgramT& p) { p.graphs[0]->values[4]->tensor->sizes[0]->literal = 9; },
                           "shape");
  expect_structure_changes("mlp", [](fb::ProgramT& p) { p.graphs[0]->values[4]->tensor->strides[0]->literal = 32; },
                           "stride");
  expect_structure_changes(
      "dtensor",
      [](fb::ProgramT& p) {
        // z2d: [Replicate(), Partial(avg)] -> [Replicate(), Partial(sum)], the same local sizes.
        p.graphs[0]->values[3]->dtensor->placements[1] =
            fb::Placement(fb::PlacementKind::PARTIAL, fb::ReduceOp::SUM, 0, 0);
      },
      "placement");
  expect_structure_changes(
      "dtensor",
      [](fb::ProgramT& p) {
        p.meshes[1]->ranks = {0, 2, 1, 3};
      },
      "mesh ranks");
  expect_structure_changes(
      "dtensor",
      [](fb::ProgramT& p) {
        p.meshes[1]->shape = {4, 1};
        p.meshes[1]->dim_names = {"dp", "tp"};
        // The DTensors on mesh 1 store coordinate 0's shard of the new shape (docs/FORMAT.md).
        for (auto& v : p.graphs[0]->values) {
          if (!v->dtensor || v->dtensor->mesh != 1) continue;
          const bool sharded_cols = v->name == "y2d";
          if (v->name == "y2d" || v->name == "s2d") v->tensor->sizes[0]->literal = 2;
          if (sharded_cols) {
            v->tensor->sizes[1]->literal = 64;
            v->tensor->strides[0]->literal = 64;
          }
        }
        for (auto& g : p.process_groups) {
          if (g->mesh == 1) {
            g->ranks = g->mesh_dim == 0 ? std::vector<int32_t>{0, 1, 2, 3} : std::vector<int32_t>{0};
          }
        }
      },
      "mesh shape");
  expect_structure_changes("dtensor", [](fb::ProgramT& p) { p.process_groups[0]->ranks = {0, 1, 3, 2}; },
                           "group ranks");
  expect_structure_changes(
      "mlp",
      [](fb::ProgramT& p) {
        // linear_1 reads the linear output instead of the relu output: one edge moved.
        auto& g = *p.graphs[0];
        g.nodes[2]->inputs[0]->arg.AsTensorArg()->value = g.nodes[0]->outputs[0]->arg.AsTensorArg()->value;
      },
      "edge");
}

TEST(HashSensitivity, OneFlippedWeightBit) {
  const auto before = digests(corpus("mlp"));
  auto program = corpus("mlp");
  program.storages[2][17] ^= 0x04;
  const auto after = digests(std::move(program));
  EXPECT_EQ(before.structure, after.structure);
  EXPECT_NE(before.weights, after.weights);
  EXPECT_NE(before.full, after.full);
}

TEST(Digest, PrefixesAndKnownAnswer) {
  const std::string abc = "abc";
  const auto sha = digest_of(HashAlgorithm::kSha256, {reinterpret_cast<const uint8_t*>(abc.data()), abc.size()});
  EXPECT_EQ(sha.to_string(), "nrt1-sha256:ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  const auto xxh = digest_of(HashAlgorithm::kXxh3, {reinterpret_cast<const uint8_t*>(abc.data()), abc.size()});
  EXPECT_EQ(xxh.to_string().rfind("nrt1-xxh3:", 0), 0u);
  EXPECT_EQ(xxh.hex().size(), 32u);
  const auto a = digests(corpus("mlp"), HashAlgorithm::kSha256);
  EXPECT_EQ(a.full.to_string().rfind("nrt1-sha256:", 0), 0u);
  EXPECT_EQ(a.full, digests(corpus("mlp"), HashAlgorithm::kSha256).full);
}

}  // namespace
}  // namespace nrt
