// .pt2 archives: built here (shared storages, non-contiguous views, several models) and written
// by torch itself (testdata/torch, scripts/torch_corpus.py). Each imports with its weights,
// verifies, and survives .pt2 -> .nrt -> .pt2 -> .nrt with identical programs and weight bytes;
// what nrt writes is an uncompressed, 64-byte aligned archive in torch's layout.
#include <cstring>
#include <filesystem>
#include <map>
#include <set>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "serializer/open_program.h"
#include "serializer/program_file.h"
#include "serializer/torch_export/export_pt2.h"
#include "serializer/torch_export/import_pt2.h"
#include "serializer/torch_export/operator_target.h"
#include "serializer/torch_export/pt2_archive.h"
#include "serializer/torch_export/torch_error_codes.h"
#include "serializer/write_program.h"
#include "tests/torch_export/json_compare.h"
#include "tests/torch_export/program_json.h"
#include "tests/torch_export/test_files.h"

namespace nrt::torch_export {
namespace {

using test::as_tensor;
using test::Json;
using test::named;
using test::node;
using test::tensor_meta;

std::vector<uint8_t> serialized(const ProgramWithWeights& p) {
  std::vector<std::span<const uint8_t>> spans;
  for (const auto& s : p.storages) spans.emplace_back(s.data(), s.size());
  auto bytes = serialize_program(p.program, spans);
  EXPECT_TRUE(bytes.ok()) << bytes.error().to_string();
  return bytes.ok() ? *bytes : std::vector<uint8_t>{};
}

Json strided_meta(std::vector<int64_t> sizes, std::vector<int64_t> strides, int64_t offset) {
  Json meta = tensor_meta(sizes);
  meta["strides"] = Json::array();
  for (int64_t s : strides) meta["strides"].push_back({{"as_int", s}});
  meta["storage_offset"] = {{"as_int", offset}};
  return meta;
}

std::vector<uint8_t> floats(std::initializer_list<float> values) {
  std::vector<uint8_t> bytes(values.size() * sizeof(float));
  std::memcpy(bytes.data(), values.begin(), bytes.size());
  return bytes;
}

// a and b are two views of one 12-float storage (b transposed, at offset 6); nb is a
// non-persistent buffer stored as a constant.
struct SharedStorageArchive {
  Json program;
  Json weights_config;
  Json constants_config;
  std::vector<uint8_t> weight_0 = floats({0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11});
  std::vector<uint8_t> tensor_0 = floats({0.5f, -0.5f, 0.25f});

  SharedStorageArchive() {
    Json g = test::graph(
        Json::array({as_tensor("p_a"), as_tensor("p_b"), as_tensor("b_nb"), as_tensor("x")}),
        Json::array({as_tensor("z")}),
        Json::array({node("torch.ops.aten.add.Tensor", Json::array({named("self", as_tensor("p_a")), named("other", as_tensor("p_b"))}),
                          Json::array({as_tensor("y")}), "y"),
                     node("torch.ops.aten.mul.Tensor", Json::array({named("self", as_tensor("y")), named("other", as_tensor("x"))}),
                          Json::array({as_tensor("z")}), "z")}));
      for (const char* t : {"p_a", "p_b", "x", "y", "z"}) g["tensor_values"][t] = tensor_meta({2, 3});
    g["tensor_values"]["p_b"] = strided_meta({2, 3}, {1, 2}, 6);
    g["tensor_values"]["b_nb"] = tensor_meta({3});
    program = test::exported_program(
        g,
        Json::array({{{"parameter", {{"arg", {{"name", "p_a"}}}, {"parameter_name", "a"}}}},
                     {{"parameter", {{"arg", {{"name", "p_b"}}}, {"parameter_name", "b"}}}},
                     {{"buffer", {{"arg", {{"name", "b_nb"}}}, {"buffer_name", "nb"}, {"persistent", false}}}},
                     {{"user_input", {{"arg", as_tensor("x")}}}}}),
        Json::array({{{"user_output", {{"arg", as_tensor("z")}}}}}));
    auto payload = [](const char* path, Json meta, bool param) {
      return Json{{"path_name", path}, {"is_param", param}, {"use_pickle", false}, {"tensor_meta", meta}};
    };
    weights_config = {{"config",
                       {{"a", payload("weight_0", tensor_meta({2, 3}), true)},
                        {"b", payload("weight_0", strided_meta({2, 3}, {1, 2}, 6), true)}}}};
    constants_config = {{"config", {{"nb", payload("tensor_0", tensor_meta({3}), false)}}}};
  }

  std::vector<uint8_t> archive(const std::string& model = "model") const {
    const std::string json = program.dump(), weights = weights_config.dump(), constants = constants_config.dump();
    auto text = [](const std::string& s) { return std::span<const uint8_t>(reinterpret_cast<const uint8_t*>(s.data()), s.size()); };
    static const std::string kFormat = "pt2", kVersion = "0";
    const std::vector<Pt2Entry> entries = {
        {"data/weights/weight_0", weight_0},
        {"data/weights/" + model + "_weights_config.json", text(weights)},
        {"data/constants/tensor_0", tensor_0},
        {"data/constants/" + model + "_constants_config.json", text(constants)},
        {"models/" + model + ".json", text(json)},
        {"archive_format", text(kFormat)},
        {"archive_version", text(kVersion)},
    };
    auto bytes = write_pt2_archive("archive", entries);
    EXPECT_TRUE(bytes.ok());
    return bytes.ok() ? *bytes : std::vector<uint8_t>{};
  }
};

TEST(Pt2, SharedStorageStaysOneStorageAndViewsKeepTheirLayout) {
  SharedStorageArchive source;
  auto reader = Pt2Reader::from_bytes(source.archive());
  ASSERT_TRUE(reader.ok()) << reader.error().to_string();
  EXPECT_EQ(reader->root(), "archive");
  auto imported = import_pt2(*reader);
  ASSERT_TRUE(imported.ok()) << imported.error().to_string();
  const auto& p = imported->program;
  ASSERT_EQ(p.storages.size(), 2u);
  EXPECT_EQ(p.storages[0], source.weight_0);
  EXPECT_EQ(p.storages[1], source.tensor_0);
  ASSERT_EQ(p.program.weights.size(), 3u);
  const auto& a = *p.program.weights[0];
  const auto& b = *p.program.weights[1];
  const auto& nb = *p.program.weights[2];
  EXPECT_EQ(a.fqn, "a");
  EXPECT_EQ(b.fqn, "b");
  EXPECT_EQ(a.storage, b.storage);  // one storage, two views
  EXPECT_TRUE(a.is_parameter);
  EXPECT_EQ(b.meta->strides[0]->literal, 1);
  EXPECT_EQ(b.meta->strides[1]->literal, 2);
  EXPECT_EQ(b.meta->storage_offset->literal, 6);
  EXPECT_EQ(nb.fqn, "nb");
  EXPECT_EQ(nb.storage, 1u);
  EXPECT_FALSE(nb.is_parameter);
  // Verifies as an .nrt (views inside their storages, signature consistent).
  auto file = ProgramFile::from_bytes(serialized(p));
  ASSERT_TRUE(file.ok()) << file.error().to_string();
}

TEST(Pt2, ExportIsAlignedInTorchLayoutAndImportsIdentically) {
  SharedStorageArchive source;
  auto first = import_pt2(*Pt2Reader::from_bytes(source.archive()));
  ASSERT_TRUE(first.ok()) << first.error().to_string();
  Pt2ExportOptions options;
  options.root = "exported";
  auto bytes = export_pt2(first->program, options);
  ASSERT_TRUE(bytes.ok()) << bytes.error().to_string();
  EXPECT_TRUE(check_record_alignment(*bytes).ok()) << check_record_alignment(*bytes).error().to_string();

  auto reader = Pt2Reader::from_bytes(*bytes);
  ASSERT_TRUE(reader.ok());
  EXPECT_EQ(reader->root(), "exported");
  const std::set<std::string> names(reader->names().begin(), reader->names().end());
  for (const char* expected : {"archive_format", "archive_version", ".data/version", "byteorder", ".data/serialization_id",
                               "models/model.json", "data/weights/model_weights_config.json", "data/weights/weight_0",
                               "data/constants/model_constants_config.json", "data/constants/tensor_0",
                               "data/sample_inputs/model.pt"}) {
    EXPECT_TRUE(names.count(expected)) << expected;
  }
  EXPECT_EQ(names.size(), 11u);
  EXPECT_EQ(*reader->read_text("archive_format"), "pt2");
  EXPECT_EQ(*reader->read_text("archive_version"), "0");
  EXPECT_EQ(*reader->read("data/weights/weight_0"), source.weight_0);
  // The configs say the same as the source's (key order aside).
  EXPECT_EQ(test::json_difference(source.weights_config,
                                  Json::parse(*reader->read_text("data/weights/model_weights_config.json"))),
            "");
  EXPECT_EQ(test::json_difference(source.constants_config,
                                  Json::parse(*reader->read_text("data/constants/model_constants_config.json"))),
            "");
  EXPECT_EQ(test::json_difference(source.program, Json::parse(*reader->read_text("models/model.json"))), "");

  auto second = import_pt2(*reader);
  ASSERT_TRUE(second.ok()) << second.error().to_string();
  EXPECT_EQ(serialized(first->program), serialized(second->program));
  // Same program, same bytes: the writer has no clock and no randomness.
  EXPECT_EQ(*export_pt2(second->program, options), *bytes);
}

TEST(Pt2, FilesRoundTripPt2NrtPt2Nrt) {
  const std::string dir = test::scratch_dir("pt2_files");
  test::write_bytes(dir + "/source.pt2", SharedStorageArchive().archive());
  ASSERT_TRUE(convert_program(dir + "/source.pt2", dir + "/first.nrt", {}, {}).ok());
  auto status = convert_program(dir + "/first.nrt", dir + "/again.pt2", {}, {});
  ASSERT_TRUE(status.ok()) << status.error().to_string();
  ASSERT_TRUE(convert_program(dir + "/again.pt2", dir + "/second.nrt", {}, {}).ok());
  EXPECT_EQ(test::read_bytes(dir + "/first.nrt"), test::read_bytes(dir + "/second.nrt"));
  auto reader = Pt2Reader::open(dir + "/again.pt2");
  ASSERT_TRUE(reader.ok());
  EXPECT_EQ(reader->root(), "again");  // the file's stem, as torch names it
}

TEST(Pt2, SeveralModelsBecomeSeveralEntryGraphs) {
  const std::string encoder = test::relu_program().dump();
  Json decoder_json = test::relu_program();
  decoder_json["graph_module"]["graph"]["nodes"][0]["target"] = "torch.ops.aten.sigmoid.default";
  const std::string decoder = decoder_json.dump();
  const std::string empty_config = R"({"config": {}})";
  auto text = [](const std::string& s) { return std::span<const uint8_t>(reinterpret_cast<const uint8_t*>(s.data()), s.size()); };
  static const std::string kFormat = "pt2", kVersion = "0";
  std::vector<Pt2Entry> entries = {{"archive_format", text(kFormat)}, {"archive_version", text(kVersion)}};
  for (const auto& [name, json] : {std::pair<std::string, const std::string*>{"encoder", &encoder}, {"decoder", &decoder}}) {
    entries.push_back({"models/" + name + ".json", text(*json)});
    entries.push_back({"data/weights/" + name + "_weights_config.json", text(empty_config)});
    entries.push_back({"data/constants/" + name + "_constants_config.json", text(empty_config)});
  }
  auto bytes = write_pt2_archive("two", entries);
  ASSERT_TRUE(bytes.ok());
  auto reader = Pt2Reader::from_bytes(*bytes);
  ASSERT_TRUE(reader.ok());

  auto both = import_pt2(*reader);
  ASSERT_TRUE(both.ok()) << both.error().to_string();
  const auto& p = both->program.program;
  ASSERT_EQ(p.entry_points.size(), 2u);
  EXPECT_EQ(p.graphs[p.entry_points[0]]->name, "encoder");
  EXPECT_EQ(p.graphs[p.entry_points[1]]->name, "decoder");
  EXPECT_EQ(p.operators.size(), 2u);  // relu and sigmoid
  ASSERT_TRUE(ProgramFile::from_bytes(serialized(both->program)).ok());

  auto one = import_pt2(*reader, "decoder");
  ASSERT_TRUE(one.ok());
  ASSERT_EQ(one->program.program.entry_points.size(), 1u);
  EXPECT_EQ(one->program.program.graphs[0]->name, "decoder");

  auto missing = import_pt2(*reader, "nope");
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.error().code, ErrorCode::InvalidArgument);
  EXPECT_NE(missing.error().message.find("'encoder', 'decoder'"), std::string::npos) << missing.error().message;

  auto exported = export_pt2(both->program, {});
  ASSERT_TRUE(exported.ok()) << exported.error().to_string();
  auto back = Pt2Reader::from_bytes(*exported);
  ASSERT_TRUE(back.ok());
  EXPECT_TRUE(back->has("models/encoder.json"));
  EXPECT_TRUE(back->has("models/decoder.json"));
  EXPECT_EQ(test::json_difference(decoder_json, Json::parse(*back->read_text("models/decoder.json"))), "");
}

// ---------------------------------------------------------------------------------------------
// Programs torch wrote (testdata/torch).

struct CorpusModel {
  std::string name;
  std::string dir;
};

std::vector<CorpusModel> corpus_models() {
  std::vector<CorpusModel> models;
  const std::string root = test::torch_corpus_dir();
  if (root.empty()) return models;
  for (const auto& name : test::list_dir(root)) {
    // Per-rank DTensor archives (model_rank<r>.pt2) have tests of their own (dtensor_archives_test).
    if (std::filesystem::exists(root + "/" + name + "/model.pt2")) models.push_back({name, root + "/" + name});
  }
  return models;
}

TEST(TorchCorpus, HasTheZoo) {
  std::set<std::string> names;
  for (const auto& m : corpus_models()) names.insert(m.name);
  for (const char* expected : {"mlp", "cnn", "transformer_block", "tied_weights", "buffer_mutation", "dynamic_batch",
                               "cond", "dtypes", "custom_op_enums", "collectives"}) {
    EXPECT_TRUE(names.count(expected)) << expected << " missing from testdata/torch (scripts/torch_corpus.py)";
  }
}

TEST(TorchCorpus, EveryModelImportsVerifiesAndRoundTrips) {
  const auto models = corpus_models();
  ASSERT_FALSE(models.empty()) << "testdata/torch is missing";
  for (const auto& model : models) {
    SCOPED_TRACE(model.name);
    const Json manifest = Json::parse(test::read_text(model.dir + "/manifest.json"));
    const auto source_bytes = test::read_bytes(model.dir + "/model.pt2");
    // torch's own writer aligns records as nrt's does.
    EXPECT_TRUE(check_record_alignment(source_bytes).ok());
    auto source = Pt2Reader::from_bytes(source_bytes);
    ASSERT_TRUE(source.ok()) << source.error().to_string();
    auto imported = import_pt2(*source);
    ASSERT_TRUE(imported.ok()) << imported.error().to_string();
    auto file = ProgramFile::from_bytes(serialized(imported->program));
    ASSERT_TRUE(file.ok()) << file.error().to_string();

    const auto& p = imported->program.program;
    ASSERT_EQ(p.entry_points.size(), 1u);
    const fb::GraphT& g = *p.graphs[p.entry_points[0]];
    EXPECT_EQ(g.nodes.size(), manifest["nodes"].get<size_t>());
    std::map<std::string, int> histogram;
    for (const auto& n : g.nodes) ++histogram[*target_from_operator(*p.operators[n->op])];
    EXPECT_EQ(Json(histogram), manifest["op_histogram"]);
    std::vector<std::string> input_kinds, output_kinds;
    for (const auto& s : g.signature->inputs) {
      input_kinds.emplace_back(fb::EnumNameInputKind(s->kind));
    }
    for (const auto& s : g.signature->outputs) output_kinds.emplace_back(fb::EnumNameOutputKind(s->kind));
    ASSERT_EQ(input_kinds.size(), manifest["input_specs"].size());
    ASSERT_EQ(output_kinds.size(), manifest["output_specs"].size());
    for (size_t i = 0; i < input_kinds.size(); ++i) {
      std::string upper = manifest["input_specs"][i].get<std::string>();
      for (auto& c : upper) c = static_cast<char>(std::toupper(c));
      EXPECT_EQ(input_kinds[i], upper);
    }
    for (size_t i = 0; i < output_kinds.size(); ++i) {
      std::string upper = manifest["output_specs"][i].get<std::string>();
      for (auto& c : upper) c = static_cast<char>(std::toupper(c));
      EXPECT_EQ(output_kinds[i], upper);
    }
    // Every raw record came across byte for byte, and every payload is a weight.
    size_t payloads = 0;
    for (const char* dir : {"data/weights/", "data/constants/"}) {
      const std::string config = std::string(dir) + (dir[5] == 'w' ? "model_weights_config.json" : "model_constants_config.json");
      const Json entries = Json::parse(*source->read_text(config))["config"];
      for (auto it = entries.begin(); it != entries.end(); ++it, ++payloads) {
        const fb::WeightTensorT* weight = nullptr;
        for (const auto& w : p.weights) {
          if (w->fqn == it.key()) weight = w.get();
        }
        ASSERT_NE(weight, nullptr) << it.key();
        EXPECT_EQ(imported->program.storages[weight->storage],
                  *source->read(std::string(dir) + it.value()["path_name"].get<std::string>()))
            << it.key();
        EXPECT_EQ(weight->is_parameter, it.value()["is_param"].get<bool>());
      }
    }
    EXPECT_EQ(payloads, p.weights.size());

    // .pt2 -> .nrt -> .pt2 -> .nrt: identical programs and weight bytes; model.json the same value.
    auto exported = export_pt2(unpack_program(*file), {});
    ASSERT_TRUE(exported.ok()) << exported.error().to_string();
    EXPECT_TRUE(check_record_alignment(*exported).ok());
    auto again_reader = Pt2Reader::from_bytes(*exported);
    ASSERT_TRUE(again_reader.ok());
    auto again = import_pt2(*again_reader);
    ASSERT_TRUE(again.ok()) << again.error().to_string();
    EXPECT_EQ(serialized(imported->program), serialized(again->program));
    EXPECT_EQ(imported->program.storages, again->program.storages);
    EXPECT_EQ(test::json_difference(Json::parse(*source->read_text("models/model.json")),
                                    Json::parse(*again_reader->read_text("models/model.json"))),
              "");
  }
}

// What each model of the zoo is there for.
TEST(TorchCorpus, ModelsCarryWhatTheyExercise) {
  const std::string root = test::torch_corpus_dir();
  ASSERT_FALSE(root.empty()) << "testdata/torch is missing";
  auto load = [&root](const std::string& name) {
    auto imported = import_pt2_file(root + "/" + name + "/model.pt2");
    EXPECT_TRUE(imported.ok()) << name << ": " << imported.error().to_string();
    return imported.ok() ? std::move(imported->program) : ProgramWithWeights{};
  };

  {  // tied weights: one parameter, one storage
    auto p = load("tied_weights");
    ASSERT_EQ(p.program.weights.size(), 2u);
    EXPECT_EQ(p.program.weights[0]->storage, p.program.weights[1]->storage);
    EXPECT_EQ(p.storages.size(), 1u);
  }
  {  // buffer mutation: functionalized into a BUFFER_MUTATION output; non-persistent buffer is a constant
    auto p = load("buffer_mutation");
    const auto& sig = *p.program.graphs[0]->signature;
    EXPECT_EQ(sig.outputs[0]->kind, fb::OutputKind::BUFFER_MUTATION);
    EXPECT_EQ(sig.outputs[0]->target, "calls");
    bool non_persistent = false;
    for (const auto& s : sig.inputs) non_persistent |= s->kind == fb::InputKind::BUFFER && !s->persistent;
    EXPECT_TRUE(non_persistent);
  }
  {  // dynamic batch: a symbolic batch size with its range
    auto p = load("dynamic_batch");
    ASSERT_EQ(p.program.range_constraints.size(), 1u);
    EXPECT_EQ(*p.program.range_constraints[0]->min, 1);
    EXPECT_EQ(*p.program.range_constraints[0]->max, 64);
    bool symbolic = false;
    for (const auto& v : p.program.graphs[0]->values) {
      if (v->tensor) {
        for (const auto& d : v->tensor->sizes) symbolic |= !d->expr.empty();
      }
    }
    EXPECT_TRUE(symbolic);
  }
  {  // cond: two subgraphs
    auto p = load("cond");
    std::set<std::string> graphs;
    for (const auto& g : p.program.graphs) graphs.insert(g->name);
    EXPECT_TRUE(graphs.count("model/true_graph_0"));
    EXPECT_TRUE(graphs.count("model/false_graph_0"));
  }
  {  // dtypes: int8, bf16, bool
    auto p = load("dtypes");
    std::set<fb::ScalarType> dtypes;
    for (const auto& v : p.program.graphs[0]->values) {
      if (v->tensor) dtypes.insert(v->tensor->dtype);
    }
    for (auto t : {fb::ScalarType::INT8, fb::ScalarType::BFLOAT16, fb::ScalarType::BOOL}) EXPECT_TRUE(dtypes.count(t));
  }
  {  // custom op arguments of every enum kind
    auto p = load("custom_op_enums");
    std::set<fb::ScalarType> dtypes;
    std::set<fb::MemoryFormat> formats;
    int layouts = 0, devices = 0;
    for (const auto& n : p.program.graphs[0]->nodes) {
      for (const auto& in : n->inputs) {
        if (auto* a = in->arg.AsScalarTypeArg()) dtypes.insert(a->value);
        if (auto* a = in->arg.AsMemoryFormatArg()) formats.insert(a->value);
        if (auto* a = in->arg.AsLayoutArg()) layouts += a->value == fb::Layout::STRIDED;
        if (auto* a = in->arg.AsDeviceArg()) devices += a->value->type == fb::DeviceType::CPU;
      }
    }
    EXPECT_EQ(dtypes, (std::set<fb::ScalarType>{fb::ScalarType::FLOAT64, fb::ScalarType::INT8}));
    EXPECT_EQ(formats, (std::set<fb::MemoryFormat>{fb::MemoryFormat::CHANNELS_LAST, fb::MemoryFormat::CONTIGUOUS}));
    EXPECT_EQ(layouts, 2);
    EXPECT_EQ(devices, 2);
  }
  {  // collectives: the group the graph names, with the size all_gather states
    auto p = load("collectives");
    ASSERT_EQ(p.program.process_groups.size(), 1u);
    EXPECT_EQ(p.program.process_groups[0]->ranks, (std::vector<int32_t>{0, 1}));
  }
}

// nrt's own compatibility corpus: a program either exports to torch form and comes back the same,
// or is refused with a code saying what torch.export cannot express (process groups as values,
// quantized dtypes, ...). Never a crash or a wrong file.
TEST(NrtCorpus, ExportsToTorchOrRefusesCleanly) {
  const std::string dir = test::nrt_corpus_dir();
  ASSERT_FALSE(dir.empty()) << "testdata/ is missing";
  int exported_count = 0, refused = 0;
  for (const auto& name : test::list_dir(dir)) {
    if (name.size() < 4 || name.substr(name.size() - 4) != ".nrt") continue;
    SCOPED_TRACE(name);
    auto file = open_program(dir + "/" + name);
    ASSERT_TRUE(file.ok()) << file.error().to_string();
    const ProgramWithWeights unpacked = unpack_program(*file);
    const ProgramWithWeights* program = &unpacked;
    auto archive = export_pt2(*program, {});
    if (!archive) {
      EXPECT_TRUE(archive.error().code == codes::kNotExpressible || archive.error().code == codes::kUnmappedEnumValue)
          << archive.error().to_string();
      ++refused;
      continue;
    }
    ++exported_count;
    auto reader = Pt2Reader::from_bytes(*archive);
    ASSERT_TRUE(reader.ok());
    auto imported = import_pt2(*reader);
    ASSERT_TRUE(imported.ok()) << imported.error().to_string();
    ASSERT_TRUE(ProgramFile::from_bytes(serialized(imported->program)).ok());
    // Same graphs (entry graph first, subgraphs renamed "<parent>/<name>"), same nodes, and every
    // weight's bytes (a storage shared between the weights and the constants config is written
    // to each, so storages may be more).
    const auto& before = program->program;
    const auto& after = imported->program.program;
    auto node_counts = [](const fb::ProgramT& p) {
      std::multiset<size_t> counts;
      for (const auto& g : p.graphs) counts.insert(g->nodes.size());
      return counts;
    };
    EXPECT_EQ(node_counts(after), node_counts(before));
    auto weight_bytes = [](const ProgramWithWeights& p) {
      std::map<std::string, std::vector<uint8_t>> bytes;  // fqn -> its storage (weights come config by config)
      for (const auto& w : p.program.weights) bytes[w->fqn] = p.storages[w->storage];
      return bytes;
    };
    EXPECT_EQ(weight_bytes(imported->program), weight_bytes(*program));
    EXPECT_GE(imported->program.storages.size(), program->storages.size());
    // And a second trip changes nothing more.
    auto again = import_pt2(*Pt2Reader::from_bytes(*export_pt2(imported->program, {})));
    ASSERT_TRUE(again.ok());
    EXPECT_EQ(serialized(imported->program), serialized(again->program));
  }
  EXPECT_GT(exported_count, 0);
  EXPECT_GT(refused, 0);
}

}  // namespace
}  // namespace nrt::torch_export
