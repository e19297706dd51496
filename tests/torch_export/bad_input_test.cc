// Bad input: each case is a clean error with its code and a message naming the place, and a
// conversion that fails leaves no output file (nor a temporary one) behind.
#include <zip.h>

#include <cstring>
#include <filesystem>
#include <functional>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "serializer/input_limits.h"
#include "serializer/open_program.h"
#include "serializer/torch_export/import_json.h"
#include "serializer/torch_export/import_pt2.h"
#include "serializer/torch_export/pt2_archive.h"
#include "serializer/torch_export/torch_error_codes.h"
#include "tests/torch_export/program_json.h"
#include "tests/torch_export/test_files.h"

namespace nrt::torch_export {
namespace {

using test::as_tensor;
using test::Json;

struct Case {
  std::string name;
  std::string file;  // input file name (its extension picks the format)
  std::function<std::vector<uint8_t>()> bytes;
  ErrorCode code;
  std::vector<std::string> message_parts;
};

std::vector<uint8_t> text_bytes(const std::string& s) { return {s.begin(), s.end()}; }
std::vector<uint8_t> json_bytes(const Json& j) { return text_bytes(j.dump()); }

Json with(std::function<void(Json&)> edit) {
  Json program = test::relu_program();
  edit(program);
  return program;
}

Json& graph_of(Json& program) { return program["graph_module"]["graph"]; }

// A .pt2 of the relu program with the given extra entries (and without those named in `drop`).
std::vector<uint8_t> archive(std::vector<std::pair<std::string, std::string>> extra, std::vector<std::string> drop = {},
                             std::string root = "m") {
  std::vector<std::pair<std::string, std::string>> files = {
      {"archive_format", "pt2"},
      {"archive_version", "0"},
      {"models/model.json", test::relu_program().dump()},
      {"data/weights/model_weights_config.json", R"({"config": {}})"},
      {"data/constants/model_constants_config.json", R"({"config": {}})"},
  };
  for (auto& e : extra) {
    bool replaced = false;
    for (auto& f : files) {
      if (f.first == e.first) {
        f.second = e.second;
        replaced = true;
      }
    }
    if (!replaced) files.push_back(e);
  }
  std::vector<Pt2Entry> entries;
  for (const auto& [name, content] : files) {
    if (std::find(drop.begin(), drop.end(), name) != drop.end()) continue;
    entries.push_back({name, {reinterpret_cast<const uint8_t*>(content.data()), content.size()}});
  }
  auto bytes = write_pt2_archive(root, entries);
  EXPECT_TRUE(bytes.ok());
  return bytes.ok() ? *bytes : std::vector<uint8_t>{};
}

// A program with one parameter `w` of shape [2,3] f32, and a weights config describing it.
std::vector<uint8_t> archive_with_weight(const std::string& record, size_t record_bytes, const Json& payload_meta,
                                         const char* config = "data/weights/model_weights_config.json") {
  Json program = test::relu_program();
  auto& g = graph_of(program);
  g["inputs"].insert(g["inputs"].begin(), as_tensor("p_w"));
  g["tensor_values"]["p_w"] = test::tensor_meta({2, 3});
  auto& specs = program["graph_module"]["signature"]["input_specs"];
  specs.insert(specs.begin(), Json{{"parameter", {{"arg", {{"name", "p_w"}}}, {"parameter_name", "w"}}}});
  const Json cfg = {{"config", {{"w", payload_meta}}}};
  std::vector<std::pair<std::string, std::string>> extra = {{"models/model.json", program.dump()}, {config, cfg.dump()}};
  if (!record.empty()) extra.push_back({record, std::string(record_bytes, '\1')});
  return archive(extra);
}

Json payload(const char* path, Json meta = test::tensor_meta({2, 3}), bool pickle = false) {
  return {{"path_name", path}, {"is_param", true}, {"use_pickle", pickle}, {"tensor_meta", meta}};
}

uint32_t le32(const uint8_t* p) { return p[0] | (p[1] << 8) | (p[2] << 16) | (static_cast<uint32_t>(p[3]) << 24); }
void put32(uint8_t* p, uint32_t v) {
  for (int i = 0; i < 4; ++i) p[i] = static_cast<uint8_t>(v >> (8 * i));
}

struct ZipEntry {
  std::string name;  // as stored, root included
  std::string content;
  bool deflate = false;
};

// A zip of exactly these entries (names as given, unlike write_pt2_archive's root/name).
std::vector<uint8_t> raw_zip(const std::vector<ZipEntry>& entries) {
  zip_error_t error;
  zip_error_init(&error);
  zip_source_t* sink = zip_source_buffer_create(nullptr, 0, 0, &error);
  zip_t* za = zip_open_from_source(sink, ZIP_TRUNCATE, &error);
  zip_source_keep(sink);
  for (const auto& e : entries) {
    zip_source_t* data = zip_source_buffer(za, e.content.data(), e.content.size(), 0);
    const zip_int64_t i = zip_file_add(za, e.name.c_str(), data, 0);
    EXPECT_GE(i, 0) << e.name;
    zip_set_file_compression(za, static_cast<zip_uint64_t>(i), e.deflate ? ZIP_CM_DEFLATE : ZIP_CM_STORE, 1);
  }
  EXPECT_EQ(zip_close(za), 0);
  zip_source_open(sink);
  zip_stat_t st;
  zip_source_stat(sink, &st);
  std::vector<uint8_t> bytes(st.size);
  zip_source_read(sink, bytes.data(), st.size);
  zip_source_close(sink);
  zip_source_free(sink);
  zip_error_fini(&error);
  return bytes;
}

// One deflated entry of 1 MiB of zeros whose headers then claim `claimed` bytes.
std::vector<uint8_t> zip_bomb(uint32_t claimed) {
  std::vector<uint8_t> bytes = raw_zip({{"m/models/model.json", std::string(1 << 20, '\0'), true}});
  for (size_t at = 0; at + 46 <= bytes.size(); ++at) {
    if (le32(&bytes[at]) == 0x04034b50) put32(&bytes[at + 22], claimed);  // local header
    if (le32(&bytes[at]) == 0x02014b50) put32(&bytes[at + 24], claimed);  // central directory
  }
  return bytes;
}

// The entries of the relu program's archive under root m/, plus `extra`.
std::vector<ZipEntry> relu_entries(std::vector<ZipEntry> extra = {}) {
  std::vector<ZipEntry> entries = {
      {"m/archive_format", "pt2"},
      {"m/archive_version", "0"},
      {"m/models/model.json", test::relu_program().dump()},
      {"m/data/weights/model_weights_config.json", R"({"config": {}})"},
      {"m/data/constants/model_constants_config.json", R"({"config": {}})"},
  };
  for (auto& e : extra) entries.push_back(std::move(e));
  return entries;
}

std::vector<Case> cases() {
  const std::string whisper = test::read_text(test::conformance_dir() + "/torch_export/whisper_tiny_decode_dynamic.json");
  return {
      {"TruncatedJson", "m.json", [whisper] { return text_bytes(whisper.substr(0, whisper.size() / 2)); }, codes::kJson,
       {"not valid JSON"}},
      {"EmptyJsonObject", "m.json", [] { return text_bytes("{}"); }, codes::kMissingField, {"schema_version"}},
      {"NotAnObject", "m.json", [] { return text_bytes("[{\"graph_module\": 1}]"); }, codes::kJson, {"expected an object"}},
      {"NotUtf8", "m.json", [] { return text_bytes("{\"graph_module\": \"\xff\xfe\"}"); }, codes::kJson, {"not valid JSON"}},
      {"NestedTooDeep", "m.json", [] { return text_bytes("{\"graph_module\": " + std::string(5000, '[') + std::string(5000, ']') + "}"); },
       codes::kJson, {"not valid JSON"}},
      {"WrongTypeDtype", "m.json",
       [] { return json_bytes(with([](Json& p) { graph_of(p)["tensor_values"]["x"]["dtype"] = "float"; })); },
       codes::kJson, {"graph_module.graph.tensor_values.x.dtype", "expected an integer, found a string"}},
      {"WrongTypeNodes", "m.json", [] { return json_bytes(with([](Json& p) { graph_of(p)["nodes"] = Json::object(); })); },
       codes::kJson, {"graph_module.graph.nodes", "expected an array"}},
      {"FractionForInt", "m.json",
       [] { return json_bytes(with([](Json& p) { graph_of(p)["tensor_values"]["x"]["sizes"][0]["as_int"] = 2.5; })); },
       codes::kJson, {"sizes[0].as_int", "found a fraction"}},
      {"MissingTarget", "m.json", [] { return json_bytes(with([](Json& p) { graph_of(p)["nodes"][0].erase("target"); })); },
       codes::kMissingField, {"graph_module.graph.nodes[0]", "'target'"}},
      {"MissingGraphModule", "m.json", [] { return json_bytes(with([](Json& p) { p.erase("graph_module"); })); },
       codes::kMissingField, {"'graph_module'"}},
      {"MissingTensorMetaField", "m.json",
       [] { return json_bytes(with([](Json& p) { graph_of(p)["tensor_values"]["y"].erase("strides"); })); },
       codes::kMissingField, {"tensor_values.y", "'strides'"}},
      {"IntegerBeyondInt64", "m.json",
       [] {
         std::string text = test::relu_program().dump();
         const std::string from = "\"as_int\":2";
         text.replace(text.find(from), from.size(), "\"as_int\":9223372036854775808");
         return text_bytes(text);
       },
       codes::kJson, {"9223372036854775808", "beyond the int64 range"}},
      {"IntegerBeyondUint64", "m.json",
       [] {
         std::string text = test::relu_program().dump();
         const std::string from = "\"as_int\":2";
         text.replace(text.find(from), from.size(), "\"as_int\":123456789012345678901234567890");
         return text_bytes(text);
       },
       codes::kJson, {}},
      {"DuplicateValueAcrossTables", "m.json",
       [] { return json_bytes(with([](Json& p) { graph_of(p)["sym_int_values"]["y"] = {{"as_int", 1}}; })); },
       codes::kDuplicateName, {"'y'", "declared more than once"}},
      {"DuplicateValueKey", "m.json",
       [] {
         std::string text = test::relu_program().dump();
         const std::string from = "\"tensor_values\":{";
         const auto meta = test::tensor_meta({1}).dump();
         text.replace(text.find(from), from.size(), from + "\"x\":" + meta + ",");
         return text_bytes(text);
       },
       codes::kDuplicateName, {"'x'"}},
      {"UndefinedReference", "m.json",
       [] { return json_bytes(with([](Json& p) { graph_of(p)["nodes"][0]["inputs"][0]["arg"] = as_tensor("ghost"); })); },
       codes::kUnknownValueName, {"nodes[0].inputs[0].arg.as_tensor", "'ghost'"}},
      {"UndefinedSignatureReference", "m.json",
       [] {
         return json_bytes(with([](Json& p) {
           p["graph_module"]["signature"]["input_specs"].push_back(
               {{"parameter", {{"arg", {{"name", "ghost"}}}, {"parameter_name", "w"}}}});
         }));
       },
       codes::kUnknownValueName, {"'ghost'"}},
      {"UnmappedDtype", "m.json", [] { return json_bytes(with([](Json& p) { graph_of(p)["tensor_values"]["x"]["dtype"] = 14; })); },
       codes::kUnmappedEnumValue, {"tensor_values.x.dtype", "ScalarType 14"}},
      {"UnmappedLayout", "m.json", [] { return json_bytes(with([](Json& p) { graph_of(p)["tensor_values"]["x"]["layout"] = 9; })); },
       codes::kUnmappedEnumValue, {"Layout 9"}},
      {"UnmappedMemoryFormat", "m.json",
       [] {
         return json_bytes(with([](Json& p) {
           graph_of(p)["nodes"][0]["inputs"].push_back(test::named("memory_format", {{"as_memory_format", 7}}, 2));
         }));
       },
       codes::kUnmappedEnumValue, {"MemoryFormat 7"}},
      {"UnmappedDevice", "m.json",
       [] { return json_bytes(with([](Json& p) { graph_of(p)["tensor_values"]["x"]["device"]["type"] = "npu"; })); },
       codes::kUnmappedEnumValue, {"'npu'"}},
      {"UnknownArgumentMember", "m.json",
       [] {
         return json_bytes(with([](Json& p) { graph_of(p)["nodes"][0]["inputs"][0]["arg"] = {{"as_quaternion", 1}}; }));
       },
       codes::kUnknownUnionMember, {"'as_quaternion'"}},
      {"UnionWithTwoMembers", "m.json",
       [] {
         return json_bytes(with([](Json& p) { graph_of(p)["nodes"][0]["inputs"][0]["arg"] = {{"as_int", 1}, {"as_bool", true}}; }));
       },
       codes::kJson, {"exactly one member"}},
      {"UnknownInputSpec", "m.json",
       [] {
         return json_bytes(with([](Json& p) {
           p["graph_module"]["signature"]["input_specs"][0] = {{"future_input", {{"arg", as_tensor("x")}}}};
         }));
       },
       codes::kUnknownUnionMember, {"'future_input'"}},
      {"ReservedMetadataKey", "m.json",
       [] { return json_bytes(with([](Json& p) { graph_of(p)["nodes"][0]["metadata"]["nrt::x"] = "1"; })); },
       codes::kJson, {"reserved"}},
      {"BadTarget", "m.json",
       [] { return json_bytes(with([](Json& p) { graph_of(p)["nodes"][0]["target"] = "torch.ops.aten"; })); },
       codes::kJson, {"torch.ops.aten"}},
      // Archives.
      {"NotAZip", "m.pt2", [] { return text_bytes("GIF89a, not an archive at all"); }, codes::kArchiveCorrupt, {"zip"}},
      {"TruncatedZip", "m.pt2", [] { auto b = archive({}); b.resize(b.size() / 2); return b; }, codes::kArchiveCorrupt, {}},
      {"EntriesOutsideAFolder", "m.pt2",
       [] {
         std::vector<Pt2Entry> entries = {{"x", {}}};
         auto bytes = write_pt2_archive("", entries);  // name "/x": no root folder
         return bytes.ok() ? *bytes : std::vector<uint8_t>{};
       },
       codes::kArchiveCorrupt, {"folder"}},
      {"NoModels", "m.pt2", [] { return archive({}, {"models/model.json"}); }, codes::kArchiveEntryMissing, {"models/"}},
      {"NoArchiveFormat", "m.pt2", [] { return archive({}, {"archive_format"}); }, codes::kArchiveEntryMissing,
       {"m/archive_format"}},
      {"WrongArchiveFormat", "m.pt2", [] { return archive({{"archive_format", "zip"}}); }, codes::kArchiveCorrupt,
       {"archive_format is 'zip'"}},
      {"WrongArchiveVersion", "m.pt2", [] { return archive({{"archive_version", "1"}}); }, codes::kArchiveCorrupt,
       {"archive_version is '1'"}},
      {"NoWeightsConfig", "m.pt2", [] { return archive({}, {"data/weights/model_weights_config.json"}); },
       codes::kArchiveEntryMissing, {"data/weights/model_weights_config.json"}},
      {"MissingWeightRecord", "m.pt2", [] { return archive_with_weight("", 0, payload("weight_7")); },
       codes::kArchiveEntryMissing, {"data/weights/weight_7"}},
      {"RecordSmallerThanView", "m.pt2", [] { return archive_with_weight("data/weights/weight_0", 16, payload("weight_0")); },
       codes::kWeightsConfigMismatch, {"entry 'w'", "need 24 bytes", "holds 16"}},
      {"RecordNotWholeElements", "m.pt2", [] { return archive_with_weight("data/weights/weight_0", 26, payload("weight_0")); },
       codes::kWeightsConfigMismatch, {"26 bytes, not a whole number of 4-byte elements"}},
      {"ViewStridesReachOut", "m.pt2",
       [] {
         Json meta = test::tensor_meta({2, 3});
         meta["strides"][0]["as_int"] = 100;
         return archive_with_weight("data/weights/weight_0", 24, payload("weight_0", meta));
       },
       codes::kWeightsConfigMismatch, {"need 412 bytes"}},
      // A use_pickle record must be a torch.save zip (pickle_test covers the pickles inside).
      {"PickledWeight", "m.pt2", [] { return archive_with_weight("data/weights/weight_0", 24, payload("weight_0", test::tensor_meta({2, 3}), true)); },
       codes::kArchiveCorrupt, {"entry 'w'", "weight_0", "a torch.save zip"}},
      {"CustomObjectConstant", "m.pt2",
       [] {
         return archive({{"data/constants/model_constants_config.json",
                          R"({"config": {"obj": {"path_name": "custom_obj_0", "is_param": false, "use_pickle": true, "tensor_meta": null}}})"},
                         {"data/constants/custom_obj_0", "pickle"}});
       },
       codes::kPickledPayload, {"custom_obj_0", "TorchBind"}},
      {"LegacyPickledWeights", "m.pt2", [] { return archive({{"data/weights/model.pt", "pickle"}}); }, codes::kLegacyArchive,
       {"legacy", "data/weights/model.pt"}},
      {"ZipBombDeflated", "m.pt2", [] { return zip_bomb(0x7fffffff); }, codes::kArchiveCorrupt, {"zip bomb"}},
      {"EntryInASecondRoot", "m.pt2", [] { return raw_zip(relu_entries({{"other/x", "1"}})); }, codes::kArchiveCorrupt,
       {"'other/x' lies outside the archive's root folder 'm/'"}},
      {"EntryWithAnAbsoluteName", "m.pt2", [] { return raw_zip(relu_entries({{"/m/x", "1"}})); },
       codes::kArchiveCorrupt, {"'/m/x' has an absolute name"}},
      {"EntryLeavingTheRoot", "m.pt2", [] { return raw_zip(relu_entries({{"m/../x", "1"}})); }, codes::kArchiveCorrupt,
       {"'m/../x' has a '..' component"}},
      {"EntryWithAnEmptyComponent", "m.pt2", [] { return raw_zip(relu_entries({{"m//x", "1"}})); },
       codes::kArchiveCorrupt, {"'m//x' has an empty path component"}},
      {"EntryWithADotComponent", "m.pt2", [] { return raw_zip(relu_entries({{"m/./x", "1"}})); },
       codes::kArchiveCorrupt, {"has a '.' component"}},
      {"EntryWithAWindowsPath", "m.pt2", [] { return raw_zip(relu_entries({{"m\\x", "1"}})); },
       codes::kArchiveCorrupt, {"Windows path"}},
      {"ModelJsonSchemaError", "m.pt2",
       [] { return archive({{"models/model.json", with([](Json& p) { p["schema_version"]["major"] = 9; }).dump()}}); },
       codes::kSchemaVersion, {"m/models/model.json", "9.20"}},
  };
}

class BadInput : public ::testing::TestWithParam<Case> {};

TEST_P(BadInput, IsACleanErrorAndWritesNothing) {
  ASSERT_FALSE(test::conformance_dir().empty()) << "conformance directory missing";
  const Case& c = GetParam();
  const std::string dir = test::scratch_dir("bad_" + c.name);
  const std::string in = dir + "/" + c.file;
  test::write_bytes(in, c.bytes());
  for (const char* out : {"out.nrt", "out.pt2", "out.json"}) {
    auto status = convert_program(in, dir + "/" + out, {}, {});
    ASSERT_FALSE(status.ok()) << c.name << " converted to " << out;
    EXPECT_EQ(status.error().code, c.code) << status.error().to_string();
    for (const auto& part : c.message_parts) {
      EXPECT_NE(status.error().message.find(part), std::string::npos)
          << "'" << part << "' not in: " << status.error().message;
    }
  }
  EXPECT_EQ(test::list_dir(dir), std::vector<std::string>{c.file});  // no output, no temporary file
}

INSTANTIATE_TEST_SUITE_P(Cases, BadInput, ::testing::ValuesIn(cases()),
                         [](const auto& info) { return info.param.name; });

TEST(BadInput, FailedConversionLeavesAnExistingOutputUntouched) {
  const std::string dir = test::scratch_dir("bad_existing");
  test::write_bytes(dir + "/m.json", text_bytes("{\"graph_module\": "));
  test::write_bytes(dir + "/out.nrt", text_bytes("previous"));
  ASSERT_FALSE(convert_program(dir + "/m.json", dir + "/out.nrt", {}, {}).ok());
  EXPECT_EQ(test::read_text(dir + "/out.nrt"), "previous");
  EXPECT_EQ(test::list_dir(dir).size(), 2u);
}

// A model.json that inflates past the JSON cap is refused by its declared size, before inflating.
TEST(BadInput, ModelJsonOverTheCapIsRefusedBeforeInflating) {
  std::string json = test::relu_program().dump();
  json.resize(kMaxTorchJsonBytes + 1, ' ');
  std::vector<ZipEntry> entries = relu_entries();
  entries[2] = {"m/models/model.json", std::move(json), true};
  auto reader = Pt2Reader::from_bytes(raw_zip(entries));
  ASSERT_TRUE(reader.ok()) << reader.error().to_string();
  auto imported = import_pt2(*reader, "");
  ASSERT_FALSE(imported.ok());
  EXPECT_EQ(imported.error().code, codes::kArchiveCorrupt) << imported.error().to_string();
  EXPECT_NE(imported.error().message.find("more than the 268435456 allowed"), std::string::npos)
      << imported.error().message;
}

// A weight record that inflates far beyond what its tensor needs (64 MiB for 24 bytes, inside
// the deflate ratio) is read only as far as the tensor reaches: the program holds 24 bytes.
TEST(BadInput, WeightRecordIsReadOnlyAsFarAsItsTensorReaches) {
  auto stored = Pt2Reader::from_bytes(archive_with_weight("data/weights/weight_0", 24, payload("weight_0")));
  ASSERT_TRUE(stored.ok()) << stored.error().to_string();
  std::vector<ZipEntry> entries;
  for (const auto& name : stored->names()) {
    auto bytes = stored->read(name);
    ASSERT_TRUE(bytes.ok());
    entries.push_back({"m/" + name, std::string(bytes->begin(), bytes->end())});
    if (name == "data/weights/weight_0") entries.back() = {"m/" + name, std::string(64 << 20, '\1'), true};
  }
  const auto zip = raw_zip(entries);
  EXPECT_LT(zip.size(), 1u << 20);
  auto reader = Pt2Reader::from_bytes(zip);
  ASSERT_TRUE(reader.ok()) << reader.error().to_string();
  auto imported = import_pt2(*reader, "");
  ASSERT_TRUE(imported.ok()) << imported.error().to_string();
  ASSERT_EQ(imported->program.storages.size(), 1u);
  EXPECT_EQ(imported->program.storages[0].size(), 24u);
  EXPECT_EQ(imported->program.storages[0], std::vector<uint8_t>(24, 1));
  bool warned = false;
  for (const auto& w : imported->warnings) warned = warned || w.find("use the first 24") != std::string::npos;
  EXPECT_TRUE(warned);
}

// Two models viewing one record (nrt's own exporter shares records): the second reaches further
// than the first, so the record is read again to the larger extent.
TEST(BadInput, ARecordSharedByModelsIsReadAsFarAsAnyReaches) {
  auto model_with_weight = [](std::vector<int64_t> sizes, const std::string& fqn) {
    Json program = test::relu_program();
    auto& g = graph_of(program);
    g["inputs"].insert(g["inputs"].begin(), as_tensor("p_w"));
    g["tensor_values"]["p_w"] = test::tensor_meta(sizes);
    auto& specs = program["graph_module"]["signature"]["input_specs"];
    specs.insert(specs.begin(), Json{{"parameter", {{"arg", {{"name", "p_w"}}}, {"parameter_name", fqn}}}});
    return program.dump();
  };
  auto config = [](std::vector<int64_t> sizes, const std::string& fqn) {
    return Json{{"config", {{fqn, payload("weight_0", test::tensor_meta(sizes))}}}}.dump();
  };
  auto reader = Pt2Reader::from_bytes(archive({{"models/model.json", model_with_weight({2, 3}, "w")},
                                               {"data/weights/model_weights_config.json", config({2, 3}, "w")},
                                               {"models/model2.json", model_with_weight({4, 3}, "w2")},
                                               {"data/weights/model2_weights_config.json", config({4, 3}, "w2")},
                                               {"data/constants/model2_constants_config.json", R"({"config": {}})"},
                                               {"data/weights/weight_0", std::string(48, '\2')}}));
  ASSERT_TRUE(reader.ok()) << reader.error().to_string();
  auto imported = import_pt2(*reader, "");
  ASSERT_TRUE(imported.ok()) << imported.error().to_string();
  ASSERT_EQ(imported->program.storages.size(), 1u);
  EXPECT_EQ(imported->program.storages[0], std::vector<uint8_t>(48, 2));
}

// Text files over their reader's cap are refused by their size, before anything is read
// (sparse files: they cost no disk).
TEST(BadInput, JsonFilesOverTheCapAreRefusedUnread) {
  const std::string dir = test::scratch_dir("bad_json_cap");
  struct Text {
    std::string name, content;
    uint64_t cap;
  };
  for (const auto& [name, content, cap] : {Text{"m.json", "{\"graph_module\": {}}", kMaxTorchJsonBytes},
                                           Text{"m.nrt.json", "{\"graphs\": []}", kMaxNrtJsonBytes}}) {
    test::write_bytes(dir + "/" + name, text_bytes(content));
    std::filesystem::resize_file(dir + "/" + name, cap + 1);
    auto status = convert_program(dir + "/" + name, dir + "/out.nrt", {}, {});
    ASSERT_FALSE(status.ok()) << name;
    EXPECT_EQ(status.error().code, ErrorCode::IoOpen) << status.error().to_string();
    EXPECT_NE(status.error().message.find("more than the " + std::to_string(cap)), std::string::npos)
        << status.error().message;
  }
}

TEST(BadInput, StoredEntryDeclaringMoreThanTheFile) {
  auto bytes = archive({});
  // Claim 1 GiB for the first (stored) entry in both of its headers.
  for (size_t at = 0; at + 46 <= bytes.size(); ++at) {
    if (le32(&bytes[at]) == 0x04034b50 && at == 0) {
      put32(&bytes[at + 18], 1u << 30);
      put32(&bytes[at + 22], 1u << 30);
    }
    if (le32(&bytes[at]) == 0x02014b50) {
      put32(&bytes[at + 20], 1u << 30);
      put32(&bytes[at + 24], 1u << 30);
      break;
    }
  }
  auto reader = Pt2Reader::from_bytes(bytes);
  ASSERT_FALSE(reader.ok());
  EXPECT_EQ(reader.error().code, codes::kArchiveCorrupt);
}

}  // namespace
}  // namespace nrt::torch_export
