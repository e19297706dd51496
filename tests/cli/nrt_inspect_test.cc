// Runs the real nrt-inspect binary (a data dependency, found in the runfiles) on programs written
// by sample_program.h, and checks exit statuses, JSON output, golden text, conversion and color.
//
// Golden files: golden/sample.print.txt is `nrt-inspect print` of sample_program(), and
// golden/NAME.print.txt that of testdata/NAME.nrt. After an intended change to the text format
// (or to testdata), regenerate them from the repository root with
//   bazel build //cli:nrt-inspect && bazel run //tests/cli:write_sample_program -- /tmp/sample.nrt
//   bazel-bin/cli/nrt-inspect print /tmp/sample.nrt > tests/cli/golden/sample.print.txt
//   for f in mlp dtensor all_arguments; do
//     bazel-bin/cli/nrt-inspect print testdata/$f.nrt > tests/cli/golden/$f.print.txt; done
// and review the diff.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "serializer/program_file.h"
#include "tests/cli/command_runner.h"
#include "tests/cli/sample_program.h"
#include "tests/runfile.h"

namespace nrt::testing {
namespace {

using json = nlohmann::json;

std::string read_bytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream buffer;
  buffer << in.rdbuf();
  return buffer.str();
}

void write_bytes(const std::string& path, const std::string& bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << bytes;
}

bool exists(const std::string& path) { return std::ifstream(path).good(); }

bool has_escape(const std::string& text) { return text.find('\x1b') != std::string::npos; }

class NrtInspectTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    const char* tmp = std::getenv("TEST_TMPDIR");
    dir_ = new std::string(tmp ? tmp : "/tmp");
    ASSERT_TRUE(write_program(sample_path(), sample_program()).ok());
    ASSERT_TRUE(write_program(bad_index_path(), program_with_bad_value_index()).ok());
  }
  static void TearDownTestSuite() { delete dir_; }

  static std::string path(const std::string& name) { return *dir_ + "/" + name; }
  static std::string sample_path() { return path("sample.nrt"); }
  static std::string bad_index_path() { return path("bad_index.nrt"); }

  // nrt-inspect with `args`, NO_COLOR and NRT_LOG_LEVEL removed so the defaults are tested.
  static CommandResult inspect(std::vector<std::string> args, CommandEnvironment env = {}) {
    args.insert(args.begin(), runfile("cli/nrt-inspect"));
    env.unset.push_back("NO_COLOR");
    env.unset.push_back("NRT_LOG_LEVEL");
    return run_command(args, env);
  }

  static std::string* dir_;
};

std::string* NrtInspectTest::dir_ = nullptr;

// --- global flags and usage ---------------------------------------------------------------------

TEST_F(NrtInspectTest, VersionPrintsToolAndSchemaVersion) {
  const auto r = inspect({"--version"});
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_EQ(r.out, "nrt-inspect 0.1.0 (schema 1.0)\n");
}

TEST_F(NrtInspectTest, HelpExitsZeroAndListsEverySubcommandAndFlag) {
  const auto r = inspect({"--help"});
  EXPECT_EQ(r.exit_code, 0);
  for (const char* word : {"info", "print", "verify", "convert", "--version", "-v,--verbose", "-q,--quiet"}) {
    EXPECT_NE(r.out.find(word), std::string::npos) << word;
  }
  const std::vector<std::pair<std::string, std::vector<std::string>>> flags = {
      {"info", {"--json", "file"}},
      {"print", {"--graph", "file"}},
      {"verify", {"--deep", "--json", "file"}},
      {"convert", {"-o,--output", "--from", "--to", "--deep", "input"}},
  };
  for (const auto& [command, words] : flags) {
    const auto sub = inspect({command, "--help"});
    EXPECT_EQ(sub.exit_code, 0) << command;
    for (const auto& word : words) EXPECT_NE(sub.out.find(word), std::string::npos) << command << " " << word;
  }
}

TEST_F(NrtInspectTest, UsageErrorsExitTwo) {
  const std::vector<std::vector<std::string>> cases = {
      {},                                                     // no subcommand
      {"--bogus"},                                            // unknown global flag
      {"info", sample_path(), "--bogus"},                     // unknown subcommand flag
      {"frobnicate", sample_path()},                          // unknown subcommand
      {"info"},                                               // missing file
      {"convert", sample_path()},                             // missing -o
      {"convert", sample_path(), "-o", path("x.nrt"), "--to", "xml"},  // bad format name
      {"-v", "-q", "info", sample_path()},                    // contradictory flags
  };
  for (const auto& args : cases) {
    const auto r = inspect(args);
    std::string joined;
    for (const auto& a : args) joined += a + " ";
    EXPECT_EQ(r.exit_code, 2) << joined << "\n" << r.err;
    EXPECT_FALSE(r.err.empty()) << joined;
    EXPECT_TRUE(r.out.empty()) << joined;
  }
}

TEST_F(NrtInspectTest, MissingFileIsIoTroubleForEverySubcommand) {
  const std::string missing = path("does_not_exist.nrt");
  for (const auto& args : std::vector<std::vector<std::string>>{{"info", missing},
                                                                 {"info", "--json", missing},
                                                                 {"print", missing},
                                                                 {"verify", missing},
                                                                 {"convert", missing, "-o", path("out.nrt")}}) {
    const auto r = inspect(args);
    EXPECT_EQ(r.exit_code, 2) << args[0];
    EXPECT_NE(r.err.find("NRT-E101 IoOpen"), std::string::npos) << args[0] << ": " << r.err;
  }
  EXPECT_FALSE(exists(path("out.nrt")));
}

// --- verify -------------------------------------------------------------------------------------

TEST_F(NrtInspectTest, VerifyValidProgram) {
  const auto r = inspect({"verify", sample_path()});
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_EQ(r.out, "valid: " + sample_path() + "\n");
  EXPECT_EQ(r.err, "");
  EXPECT_EQ(inspect({"verify", "--deep", sample_path()}).exit_code, 0);
}

TEST_F(NrtInspectTest, VerifyReportsTheErrorIdOfAnInvalidProgram) {
  const auto r = inspect({"verify", bad_index_path()});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(r.out.rfind("invalid: NRT-E302 ValueIndexOutOfRange: ", 0), 0u) << r.out;
  EXPECT_NE(r.out.find("999"), std::string::npos) << r.out;
}

TEST_F(NrtInspectTest, CorruptedBytesAreInvalidNotUsageTrouble) {
  const std::string bytes = read_bytes(sample_path());
  ASSERT_GT(bytes.size(), 4096u);

  std::string bad_magic = bytes;
  bad_magic[0] = 'X';
  write_bytes(path("bad_magic.nrt"), bad_magic);
  auto r = inspect({"verify", path("bad_magic.nrt")});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.out.find("NRT-E202 BadMagic"), std::string::npos) << r.out;

  write_bytes(path("truncated.nrt"), bytes.substr(0, 40));
  r = inspect({"verify", path("truncated.nrt")});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.out.find("NRT-E201 FileTooSmall"), std::string::npos) << r.out;

  // A flipped weight byte passes the structural checks; only --deep reads the weights.
  std::string flipped = bytes;
  flipped[flipped.size() - 1] = static_cast<char>(flipped[flipped.size() - 1] ^ 0x55);
  write_bytes(path("flipped.nrt"), flipped);
  EXPECT_EQ(inspect({"verify", path("flipped.nrt")}).exit_code, 0);
  r = inspect({"verify", "--deep", path("flipped.nrt")});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.out.find("NRT-E505 ChecksumMismatch"), std::string::npos) << r.out;

  for (const char* command : {"info", "print"}) {
    r = inspect({command, path("bad_magic.nrt")});
    EXPECT_EQ(r.exit_code, 1) << command;
    EXPECT_NE(r.err.find("NRT-E202"), std::string::npos) << command << ": " << r.err;
    EXPECT_TRUE(r.out.empty()) << command;
  }
}

TEST_F(NrtInspectTest, VerifyJsonIsOneParsableObject) {
  auto r = inspect({"verify", "--json", sample_path()});
  EXPECT_EQ(r.exit_code, 0);
  json valid = json::parse(r.out);
  EXPECT_EQ(valid["valid"], true);
  EXPECT_TRUE(valid["code"].is_null());
  EXPECT_TRUE(valid["name"].is_null());
  EXPECT_TRUE(valid["message"].is_null());

  r = inspect({"verify", "--json", bad_index_path()});
  EXPECT_EQ(r.exit_code, 1);
  json invalid = json::parse(r.out);
  EXPECT_EQ(invalid["valid"], false);
  EXPECT_EQ(invalid["code"], "NRT-E302");
  EXPECT_EQ(invalid["name"], "ValueIndexOutOfRange");
  EXPECT_NE(invalid["message"].get<std::string>().find("999"), std::string::npos);

  r = inspect({"verify", "--json", path("does_not_exist.nrt")});
  EXPECT_EQ(r.exit_code, 2);
  json missing = json::parse(r.out);
  EXPECT_EQ(missing["valid"], false);
  EXPECT_EQ(missing["code"], "NRT-E101");
}

// --- info ---------------------------------------------------------------------------------------

TEST_F(NrtInspectTest, InfoJsonHasTheDocumentedKeysAndFacts) {
  const auto r = inspect({"info", "--json", sample_path()});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const json info = json::parse(r.out);
  for (const char* key : {"schema_version", "graphs", "process_groups", "meshes", "weight_bytes", "num_parameters"}) {
    EXPECT_TRUE(info.contains(key)) << key;
  }
  EXPECT_EQ(info["schema_version"], "1.0");
  // Storages: 16*64 and 64 float32 values; parameters: fc.weight and fc.bias, not running_mean.
  EXPECT_EQ(info["weight_bytes"], (16 * 64 + 64) * 4);
  EXPECT_EQ(info["num_parameters"], 16 * 64 + 64);

  ASSERT_EQ(info["graphs"].size(), 2u);
  const json& main = info["graphs"][0];
  EXPECT_EQ(main["name"], "main");
  EXPECT_EQ(main["entry_point"], true);
  EXPECT_EQ(main["num_nodes"], 15);
  EXPECT_EQ(main["ops"]["aten::mm.default"], 1);
  EXPECT_EQ(main["ops"]["higher_order::cond"], 1);
  uint64_t total = 0;
  for (const auto& [target, n] : main["ops"].items()) total += n.get<uint64_t>();
  EXPECT_EQ(total, 15u);

  ASSERT_EQ(main["inputs"].size(), 7u);
  const json& x = main["inputs"][0];
  EXPECT_EQ(x["name"], "x");
  EXPECT_EQ(x["dtype"], "f32");
  EXPECT_EQ(x["shape"], json::parse(R"(["s0", 16])"));
  EXPECT_EQ(x["signature_kind"], "user_input");
  const json& weight = main["inputs"][1];
  EXPECT_EQ(weight["signature_kind"], "parameter");
  EXPECT_EQ(weight["target"], "fc.weight");
  const json& dt = main["inputs"][4];
  EXPECT_EQ(dt["kind"], "dtensor");
  EXPECT_EQ(dt["dtype"], "bf16");
  EXPECT_EQ(dt["shape"], json::parse("[4, 64]"));
  EXPECT_EQ(dt["dtensor"]["mesh"], 0);
  EXPECT_EQ(dt["dtensor"]["placements"], json::parse(R"j(["Shard(0)", "Partial(sum)"])j"));
  EXPECT_EQ(dt["dtensor"]["global_shape"], json::parse("[8, 64]"));
  EXPECT_EQ(main["inputs"][6]["kind"], "constant");
  EXPECT_EQ(main["outputs"][4]["device"], "cuda:0");
  EXPECT_EQ(main["outputs"][4]["signature_kind"], "buffer_mutation");

  const json& body = info["graphs"][1];
  EXPECT_EQ(body["name"], "body");
  EXPECT_EQ(body["entry_point"], false);
  EXPECT_EQ(body["ops"], json::parse(R"({"aten::neg.default": 1})"));

  ASSERT_EQ(info["meshes"].size(), 1u);
  EXPECT_EQ(info["meshes"][0]["shape"], json::parse("[2, 2]"));
  EXPECT_EQ(info["meshes"][0]["dim_names"], json::parse(R"(["dp", "tp"])"));
  EXPECT_EQ(info["meshes"][0]["device_type"], "cuda");
  ASSERT_EQ(info["process_groups"].size(), 1u);
  EXPECT_EQ(info["process_groups"][0]["name"], "tp0");
  EXPECT_EQ(info["process_groups"][0]["ranks"], json::parse("[0, 1]"));
  EXPECT_EQ(info["process_groups"][0]["mesh_dim"], 1);
}

TEST_F(NrtInspectTest, InfoTextNamesTheSameFacts) {
  const auto r = inspect({"info", sample_path()});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  for (const char* line : {"schema version  1.0\n", "parameters      1088\n", "graph main: 15 nodes, 21 values\n",
                           "subgraph body: 1 node, 2 values\n", "    1  aten::neg.default\n",
                           "  0  tp0  ranks [0, 1]  backend nccl  mesh 0 dim 1\n",
                           "  0  mesh  cuda  shape [2,2]  dims [dp, tp]  ranks [0, 1, 2, 3]\n"}) {
    EXPECT_NE(r.out.find(line), std::string::npos) << line << "\n" << r.out;
  }
  EXPECT_NE(r.out.find("dtensor<bf16[4,64] global [8,64], mesh 0 [Shard(0), Partial(sum)]>  user_input"),
            std::string::npos)
      << r.out;
}

TEST_F(NrtInspectTest, CheckOpsNamesTheDeviceWhoseKernelsItChecks) {
  auto r = inspect({"info", "--check-ops", sample_path()});
  EXPECT_NE(r.out.find("CPU kernel"), std::string::npos) << r.out;
  const int cpu_exit = r.exit_code;
  r = inspect({"info", "--check-ops", "--device", "cuda", sample_path()});
  EXPECT_TRUE(r.exit_code == 0 || r.exit_code == 1) << r.err;
  EXPECT_NE(r.out.find("CUDA kernel"), std::string::npos) << r.out;
  EXPECT_GE(r.exit_code, cpu_exit) << "the CUDA backend has no kernel the CPU lacks in this program";
  r = inspect({"info", "--check-ops", "--device", "tpu:0", sample_path()});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("is not one of cpu, cuda, cuda:N"), std::string::npos) << r.err;
}

// --- print --------------------------------------------------------------------------------------

TEST_F(NrtInspectTest, PrintMatchesGolden) {
  const auto r = inspect({"print", sample_path()});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const std::string golden = read_bytes(runfile("tests/cli/golden/sample.print.txt"));
  ASSERT_FALSE(golden.empty());
  EXPECT_EQ(r.out, golden);
}

TEST_F(NrtInspectTest, PrintOneGraph) {
  auto r = inspect({"print", "--graph", "body", sample_path()});
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_EQ(r.out, "subgraph body(%a : f32[s0,64]) -> (%neg)\n  %neg : f32[s0,64] = aten::neg.default(%a)\n");

  r = inspect({"print", "--graph", "nope", sample_path()});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_TRUE(r.out.empty());
  EXPECT_NE(r.err.find("main, body"), std::string::npos) << r.err;
}

TEST_F(NrtInspectTest, PrintOfTestdataMatchesGolden) {
  for (const char* name : {"mlp", "dtensor", "all_arguments"}) {
    const auto r = inspect({"print", runfile(std::string("testdata/") + name + ".nrt")});
    ASSERT_EQ(r.exit_code, 0) << name << ": " << r.err;
    const std::string golden = read_bytes(runfile(std::string("tests/cli/golden/") + name + ".print.txt"));
    ASSERT_FALSE(golden.empty()) << name;
    EXPECT_EQ(r.out, golden) << name;
  }
}

// Every committed program is valid, summarizes to JSON and prints the same in both forms.
TEST_F(NrtInspectTest, EveryTestdataProgramVerifiesInfosAndPrints) {
  std::vector<std::string> programs;
  for (const auto& entry : std::filesystem::directory_iterator(runfile("testdata"))) {
    const std::string file = entry.path().string();
    if (file.ends_with(".nrt")) programs.push_back(file);
  }
  ASSERT_GE(programs.size(), 3u);
  for (const auto& program : programs) {
    EXPECT_EQ(inspect({"verify", "--deep", program}).exit_code, 0) << program;
    const auto info = inspect({"info", "--json", program});
    ASSERT_EQ(info.exit_code, 0) << program << ": " << info.err;
    const json parsed = json::parse(info.out);
    EXPECT_EQ(parsed["schema_version"], "1.0") << program;
    EXPECT_FALSE(parsed["graphs"].empty()) << program;
    const auto printed = inspect({"print", program});
    EXPECT_EQ(printed.exit_code, 0) << program;
    if (exists(program + ".json")) {
      EXPECT_EQ(inspect({"print", program + ".json"}).out, printed.out) << program;
    }
  }
}

// --- convert ------------------------------------------------------------------------------------

TEST_F(NrtInspectTest, ConvertRoundTripKeepsThePrintedProgram) {
  const std::string as_json = path("round.nrt.json");
  const std::string back = path("round.nrt");
  auto r = inspect({"convert", sample_path(), "-o", as_json});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(read_bytes(as_json).substr(0, 1), "{");
  r = inspect({"convert", as_json, "-o", back});
  ASSERT_EQ(r.exit_code, 0) << r.err;

  const auto original = inspect({"print", sample_path()});
  const auto round_tripped = inspect({"print", back});
  ASSERT_EQ(round_tripped.exit_code, 0);
  EXPECT_EQ(round_tripped.out, original.out);
  EXPECT_EQ(inspect({"verify", "--deep", back}).exit_code, 0);

  // The .nrt.json form is accepted wherever a program is read.
  const auto printed_json = inspect({"print", as_json});
  EXPECT_EQ(printed_json.exit_code, 0);
  EXPECT_EQ(printed_json.out, original.out);
  EXPECT_EQ(inspect({"verify", as_json}).exit_code, 0);
}

TEST_F(NrtInspectTest, ConvertWithExplicitFormats) {
  const std::string no_extension = path("explicit_output");
  auto r = inspect({"convert", sample_path(), "-o", no_extension, "--to", "nrt.json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(read_bytes(no_extension).substr(0, 1), "{");

  // Without --to an unknown output name is a usage error, and nothing is written.
  r = inspect({"convert", sample_path(), "-o", path("unknown_output")});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("NRT-E103"), std::string::npos) << r.err;
  EXPECT_FALSE(exists(path("unknown_output")));

  r = inspect({"convert", no_extension, "--from", "nrt.json", "-o", path("explicit_back.nrt")});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(inspect({"print", path("explicit_back.nrt")}).out, inspect({"print", sample_path()}).out);
}

TEST_F(NrtInspectTest, ConvertRejectsInvalidInputWithoutWriting) {
  const auto r = inspect({"convert", bad_index_path(), "-o", path("never.nrt.json")});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("NRT-E302"), std::string::npos) << r.err;
  EXPECT_FALSE(exists(path("never.nrt.json")));
}

// --- diagnostics and color ----------------------------------------------------------------------

TEST_F(NrtInspectTest, LogLevelFollowsFlagsAndEnvironment) {
  const std::string out = path("logged.nrt.json");
  EXPECT_EQ(inspect({"convert", sample_path(), "-o", out}).err, "");  // default: warn
  EXPECT_NE(inspect({"-v", "convert", sample_path(), "-o", out}).err.find("nrt-inspect: info: wrote"),
            std::string::npos);
  EXPECT_NE(inspect({"convert", sample_path(), "-o", out}, {{"NRT_LOG_LEVEL=info"}, {}}).err.find("info: wrote"),
            std::string::npos);
  EXPECT_EQ(inspect({"-q", "convert", sample_path(), "-o", out}, {{"NRT_LOG_LEVEL=info"}, {}}).err, "");
  // Errors survive -q but not an explicit NRT_LOG_LEVEL=off.
  EXPECT_NE(inspect({"-q", "info", path("missing.nrt")}).err.find("NRT-E101"), std::string::npos);
  const auto silenced = inspect({"info", path("missing.nrt")}, {{"NRT_LOG_LEVEL=off"}, {}});
  EXPECT_EQ(silenced.exit_code, 2);
  EXPECT_EQ(silenced.err, "");
}

TEST_F(NrtInspectTest, NoColorWhenStdoutIsNotATerminal) {
  for (const auto& args : std::vector<std::vector<std::string>>{
           {"print", sample_path()}, {"info", sample_path()}, {"verify", sample_path()}, {"verify", bad_index_path()}}) {
    const auto r = inspect(args);
    EXPECT_FALSE(has_escape(r.out)) << args[0];
    EXPECT_FALSE(has_escape(r.err)) << args[0];
  }
}

TEST_F(NrtInspectTest, ColorOnATerminalUnlessNoColor) {
  const std::string binary = runfile("cli/nrt-inspect");
  const CommandEnvironment plain{{}, {"NO_COLOR", "NRT_LOG_LEVEL"}};
  auto r = run_command_in_terminal({binary, "print", sample_path()}, plain);
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_NE(r.out.find("\x1b[1maten::mm.default\x1b[0m"), std::string::npos) << r.out;
  r = run_command_in_terminal({binary, "verify", sample_path()}, plain);
  EXPECT_NE(r.out.find("\x1b[32mvalid\x1b[0m"), std::string::npos) << r.out;
  r = run_command_in_terminal({binary, "verify", bad_index_path()}, plain);
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.out.find("\x1b[31minvalid\x1b[0m"), std::string::npos) << r.out;

  const CommandEnvironment no_color{{"NO_COLOR=1"}, {"NRT_LOG_LEVEL"}};
  for (const auto& args : std::vector<std::vector<std::string>>{{binary, "print", sample_path()},
                                                                 {binary, "info", sample_path()},
                                                                 {binary, "verify", bad_index_path()}}) {
    r = run_command_in_terminal(args, no_color);
    EXPECT_FALSE(r.out.empty()) << args[1];
    EXPECT_FALSE(has_escape(r.out)) << args[1];
  }
  // The file's own escape bytes never reach the terminal: the sample's assert message holds one.
  r = run_command_in_terminal({binary, "print", sample_path()}, no_color);
  EXPECT_NE(r.out.find("\\x1b[0m"), std::string::npos);
}

}  // namespace
}  // namespace nrt::testing
