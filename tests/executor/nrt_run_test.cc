// Runs the real nrt-run binary (with the CPU kernel library): the MLP and the transformer block
// against NumPy goldens (make_goldens.py) within 1e-5, --json, --output-dir, --repeat,
// --random-inputs, and exit statuses: 0 ok, 1 mismatch (with the worst element reported), 2 usage,
// I/O, invalid program or unsupported ops.
#include <gtest/gtest.h>

#include <tuple>

#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "io/compare_outputs.h"
#include "io/npy.h"
#include "tests/executor/run_process.h"
#include "tests/runfile.h"

namespace nrt::testing {
namespace {

using json = nlohmann::json;

std::string temp_dir(const std::string& name) {
  const char* tmp = std::getenv("TEST_TMPDIR");
  const std::string dir = std::string(tmp ? tmp : "/tmp") + "/nrt_run_test_" + name;
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  return dir;
}

const std::string kNrtRun = runfile("cli/nrt-run");
const std::string kMlp = runfile("testdata/mlp.nrt");
const std::string kMlpJson = runfile("testdata/mlp.nrt.json");
const std::string kBlock = runfile("tests/executor/data/transformer_block.nrt");
const std::string kE2e = runfile("tests/executor/data/e2e");

ProcessResult nrt_run(std::vector<std::string> args) {
  args.insert(args.begin(), kNrtRun);
  return run_process(args);
}

TEST(NrtRunTest, MlpMatchesNumpy) {
  auto r = nrt_run({kMlp, "--input", "x=" + kE2e + "/mlp/inputs/x.npy", "--expect", kE2e + "/mlp/expected"});
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("output linear_1: f32[8,4]"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("matches"), std::string::npos) << r.out;
}

// --device cuda: on a machine with a GPU the block matches the goldens there; without one (CI) the
// run stops before anything runs with NRT-E1014 naming what is missing, exit 2 — never a crash.
TEST(NrtRunTest, DeviceCudaRunsOrSaysWhatIsMissing) {
  auto r = nrt_run({kBlock, "--input", "x=" + kE2e + "/transformer_block/inputs/x.npy", "--expect",
                    kE2e + "/transformer_block/expected", "--device", "cuda:0", "--atol", "1e-4"});
  if (r.exit_code == 0) {
    EXPECT_NE(r.out.find("matches"), std::string::npos) << r.out;
  } else {
    EXPECT_EQ(r.exit_code, 2) << r.out << r.err;
    EXPECT_NE(r.err.find("NRT-E1014 DeviceUnavailable"), std::string::npos) << r.err;
  }
  r = nrt_run({kBlock, "--random-inputs", "0", "--device", "cuda:64"});
  EXPECT_EQ(r.exit_code, 2) << r.out << r.err;
  EXPECT_NE(r.err.find("NRT-E1014"), std::string::npos) << r.err;
  r = nrt_run({kBlock, "--random-inputs", "0", "--device", "gpu"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("is not one of cpu, cuda, cuda:N"), std::string::npos) << r.err;
}

TEST(NrtRunTest, TransformerBlockMatchesNumpy) {
  auto r = nrt_run({kBlock, "--input", "x=" + kE2e + "/transformer_block/inputs/x.npy", "--expect",
                    kE2e + "/transformer_block/expected", "--poison-freed"});
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("output add_1: f32[2,8,32]"), std::string::npos) << r.out;
}

TEST(NrtRunTest, JsonReportsTimesMemoryAndComparison) {
  auto r = nrt_run({kBlock, "--input", "x=" + kE2e + "/transformer_block/inputs/x.npy", "--expect",
                    kE2e + "/transformer_block/expected", "--repeat", "3", "--json"});
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  const json j = json::parse(r.out);
  EXPECT_EQ(j["ok"], true);
  EXPECT_EQ(j["exit_code"], 0);
  EXPECT_EQ(j["graph"], "forward");
  EXPECT_EQ(j["runs"], 3);
  EXPECT_EQ(j["time_ms"]["all"].size(), 3u);
  EXPECT_GT(j["time_ms"]["median"].get<double>(), 0.0);
  EXPECT_LE(j["time_ms"]["min"].get<double>(), j["time_ms"]["median"].get<double>());
  const auto arena = j["memory"]["arena_bytes"].get<uint64_t>();
  const auto naive = j["memory"]["naive_bytes"].get<uint64_t>();
  EXPECT_GT(arena, 0u);
  EXPECT_LT(arena, naive);
  EXPECT_LE(j["memory"]["live_peak_bytes"].get<uint64_t>(), arena);
  ASSERT_EQ(j["outputs"].size(), 1u);
  const auto& out = j["outputs"][0];
  EXPECT_EQ(out["name"], "add_1");
  EXPECT_EQ(out["type"], "f32[2,8,32]");
  EXPECT_EQ(out["comparison"]["ok"], true);
  EXPECT_EQ(out["comparison"]["elements"], 2 * 8 * 32);
  EXPECT_LT(out["comparison"]["max_abs_error"].get<double>(), 1e-5);
}

// Expected outputs with element [3, 2] changed by 0.5.
std::string perturbed_expectations() {
  const std::string dir = temp_dir("perturbed");
  auto expected = exec::read_npy(kE2e + "/mlp/expected/linear_1.npy");
  EXPECT_TRUE(expected.ok());
  expected->data<float>()[3 * 4 + 2] += 0.5f;
  EXPECT_TRUE(exec::write_npy(dir + "/linear_1.npy", *expected).ok());
  return dir;
}

TEST(NrtRunTest, ProfileCountsEveryNodeOfEveryRun) {
  const std::string dir = temp_dir("profile");
  const std::string trace_path = dir + "/trace.json";
  auto r = nrt_run({kBlock, "--random-inputs", "1", "--repeat", "4", "--json", "--profile", "--profile-trace", trace_path});
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  const json j = json::parse(r.out);
  const auto& by_target = j["profile"]["by_target"];
  const auto& by_node = j["profile"]["by_node"];
  ASSERT_FALSE(by_target.empty());
  uint64_t calls = 0;
  double share = 0, previous = 1e300;
  for (const auto& row : by_target) {
    calls += row["count"].get<uint64_t>();
    share += row["share"].get<double>();
    EXPECT_LE(row["total_ms"].get<double>(), previous) << "rows are sorted by total time";
    previous = row["total_ms"].get<double>();
    EXPECT_NEAR(row["mean_ms"].get<double>() * row["count"].get<double>(), row["total_ms"].get<double>(), 1e-9);
  }
  EXPECT_NEAR(share, 1.0, 1e-9);
  EXPECT_EQ(calls, 4 * by_node.size()) << "every node, once per run";
  for (const auto& row : by_node) EXPECT_EQ(row["count"], 4) << row["name"];

  // The trace holds the last run: one complete event per node, with its target and shapes.
  std::ifstream trace_file(trace_path);
  const json trace = json::parse(trace_file);
  const auto& events = trace["traceEvents"];
  ASSERT_EQ(events.size(), by_node.size());
  double end = 0;
  for (const auto& event : events) {
    EXPECT_EQ(event["ph"], "X");
    EXPECT_TRUE(event["name"].get<std::string>().find("::") != std::string::npos) << event.dump();
    EXPECT_GE(event["ts"].get<double>(), end) << "nodes run one after another";
    end = event["ts"].get<double>() + event["dur"].get<double>();
  }
  EXPECT_NE(events[0]["args"]["shapes"].get<std::string>().find("f32["), std::string::npos) << events[0].dump();

  // Text mode prints both tables.
  auto text = nrt_run({kBlock, "--random-inputs", "1", "--profile"});
  ASSERT_EQ(text.exit_code, 0) << text.err;
  EXPECT_NE(text.out.find("profile by op target:"), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("profile by node (slowest 20):"), std::string::npos) << text.out;
}

TEST(NrtRunTest, MismatchExitsOneAndNamesTheWorstElement) {
  const std::string dir = perturbed_expectations();
  auto r = nrt_run({kMlp, "--input", "x=" + kE2e + "/mlp/inputs/x.npy", "--expect", dir});
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
  EXPECT_NE(r.out.find("MISMATCH"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("1 of 32 elements"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("worst element [3, 2]: got "), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("abs error 0.5"), std::string::npos) << r.out;

  auto j = nrt_run({kMlp, "--input", "x=" + kE2e + "/mlp/inputs/x.npy", "--expect", dir, "--json"});
  EXPECT_EQ(j.exit_code, 1);
  const json report = json::parse(j.out);
  EXPECT_EQ(report["ok"], false);
  EXPECT_EQ(report["exit_code"], 1);
  const auto& c = report["outputs"][0]["comparison"];
  EXPECT_EQ(c["ok"], false);
  EXPECT_EQ(c["mismatched"], 1);
  EXPECT_EQ(c["worst"]["index"], json::array({3, 2}));
  EXPECT_NEAR(c["worst"]["abs_error"].get<double>(), 0.5, 1e-6);

  // Loose enough tolerances accept the same files.
  auto loose = nrt_run({kMlp, "--input", "x=" + kE2e + "/mlp/inputs/x.npy", "--expect", dir, "--atol", "0.6"});
  EXPECT_EQ(loose.exit_code, 0) << loose.out;
}

TEST(NrtRunTest, OutputDirHoldsOneNpyPerOutput) {
  const std::string dir = temp_dir("outputs") + "/nested/out";
  auto r = nrt_run({kMlpJson, "--input", "x=" + kE2e + "/mlp/inputs/x.npy", "--output-dir", dir});
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  auto written = exec::read_npy(dir + "/linear_1.npy");
  ASSERT_TRUE(written.ok()) << written.error().to_string();
  auto expected = exec::read_npy(kE2e + "/mlp/expected/linear_1.npy");
  ASSERT_TRUE(expected.ok());
  EXPECT_TRUE(exec::compare_tensors(*written, *expected).ok);
}

// Every output's path is checked before the run: an output whose file would be a directory fails
// the job with nothing written, not after the outputs before it (issue 25, class 5).
TEST(NrtRunTest, AnUnwritableOutputFailsBeforeAnyIsWritten) {
  const std::string corpus = runfile("testdata/torch/philox");
  const std::string dir = temp_dir("unwritable");
  std::filesystem::create_directories(dir + "/_philox_uniform_5.npy");
  auto r = nrt_run({corpus + "/model.pt2", "--input", "key=" + corpus + "/input_0.npy", "--input",
                    "wrapping_key=" + corpus + "/input_1.npy", "--input", "x=" + corpus + "/input_2.npy", "--output-dir",
                    dir});
  EXPECT_EQ(r.exit_code, 2) << r.out << r.err;
  EXPECT_NE(r.err.find("output '_philox_uniform_5' would be written to"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("which is not a regular file"), std::string::npos) << r.err;
  EXPECT_FALSE(std::filesystem::exists(dir + "/add.npy")) << "an earlier output was written";
}

// --seed decides the seeded draws: the same seed repeats every value, another changes them.
TEST(NrtRunTest, SeedDecidesTheSeededDraws) {
  const std::string corpus = runfile("testdata/torch/seeded_draws");
  const std::string a = temp_dir("seed_a"), b = temp_dir("seed_b");
  const std::string input = "x=" + corpus + "/input_0.npy";
  auto first = nrt_run({corpus + "/model.pt2", "--input", input, "--seed", "11", "--output-dir", a});
  ASSERT_EQ(first.exit_code, 0) << first.out << first.err;
  EXPECT_EQ(nrt_run({corpus + "/model.pt2", "--input", input, "--seed", "11", "--expect", a, "--atol", "0", "--rtol", "0"})
                .exit_code,
            0);
  auto other = nrt_run({corpus + "/model.pt2", "--input", input, "--seed", "12", "--expect", a, "--atol", "0", "--rtol", "0"});
  EXPECT_EQ(other.exit_code, 1) << "seed 12 drew seed 11's numbers: " << other.out;
  ASSERT_EQ(nrt_run({corpus + "/model.pt2", "--input", input, "--output-dir", b}).exit_code, 0);
  EXPECT_EQ(nrt_run({corpus + "/model.pt2", "--input", input, "--seed", "0", "--expect", b, "--atol", "0", "--rtol", "0"})
                .exit_code,
            0)
      << "the default seed is not 0";
  EXPECT_EQ(nrt_run({corpus + "/model.pt2", "--input", input, "--seed", "-1"}).exit_code, 2);
}

// --warmup's runs come first and are left out of the times and the profile: 2 warm-up runs and
// 3 timed ones report 3 times and count every node 3 times.
TEST(NrtRunTest, WarmupRunsAreLeftOutOfTimesAndProfile) {
  auto r = nrt_run({kBlock, "--random-inputs", "1", "--warmup", "2", "--repeat", "3", "--json", "--profile"});
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  const json j = json::parse(r.out);
  EXPECT_EQ(j["runs"], 3);
  EXPECT_EQ(j["warmup"], 2);
  EXPECT_EQ(j["time_ms"]["all"].size(), 3u);
  const auto& by_node = j["profile"]["by_node"];
  ASSERT_FALSE(by_node.empty());
  for (const auto& row : by_node) EXPECT_EQ(row["count"], 3) << row["name"];

  auto text = nrt_run({kBlock, "--random-inputs", "1", "--warmup", "1", "--repeat", "2"});
  ASSERT_EQ(text.exit_code, 0) << text.err;
  EXPECT_NE(text.out.find("over 2 runs"), std::string::npos) << text.out;
  EXPECT_NE(text.out.find(", after 1 warm-up run\n"), std::string::npos) << text.out;
  auto refused = nrt_run({kMlp, "--random-inputs", "1", "--warmup", "-1"});
  EXPECT_EQ(refused.exit_code, 2);
  EXPECT_NE(refused.err.find("is below the minimum of 0"), std::string::npos) << refused.err;
}

// Numeric flags and variables by one rule (core/number_text.h): an empty value or spaces around a
// number are refused, not read as the default, and the error names the real reason (issue 25,
// class 6).
TEST(NrtRunTest, NumbersInFlagsAndVariablesFollowOneRule) {
  for (auto [flag, value, reason] : std::vector<std::tuple<std::string, std::string, std::string>>{
           {"--random-inputs", "", "is empty"},
           {"--random-inputs", " 5", "has spaces around the number"},
           {"--seed", "5 ", "has spaces around the number"},
           {"--seed", "-1", "is below the minimum of 0"},
           {"--repeat", "0", "is below the minimum of 1"},
           {"--repeat", "10000000", "is above the cap of 1000000"},
           {"--repeat", "lots", "is not an integer"},
           {"--atol", "", "is empty"},
       }) {
    auto r = nrt_run({kMlp, "--random-inputs", "1", flag, value});
    EXPECT_EQ(r.exit_code, 2) << flag << "='" << value << "'";
    EXPECT_NE(r.err.find(reason), std::string::npos) << flag << "='" << value << "': " << r.err;
    EXPECT_NE(r.err.find("NRT-E104"), std::string::npos) << r.err;
  }
  // Environment variables are read in one process too, not only under mpirun.
  auto r = run_process({"/usr/bin/env", "NRT_COLLECTIVE_TIMEOUT_S=1e30", kNrtRun, kMlp, "--random-inputs", "1"});
  EXPECT_EQ(r.exit_code, 2) << r.out << r.err;
  EXPECT_NE(r.err.find("NRT_COLLECTIVE_TIMEOUT_S='1e30' is above the cap of 1e+07"), std::string::npos) << r.err;
  r = run_process({"/usr/bin/env", "NRT_NAN_CHECK=", kNrtRun, kMlp, "--random-inputs", "1"});
  EXPECT_EQ(r.exit_code, 2) << r.out << r.err;
  EXPECT_NE(r.err.find("NRT_NAN_CHECK is empty"), std::string::npos) << r.err;
}

TEST(NrtRunTest, RandomInputsAreDeterministic) {
  const std::string a = temp_dir("random_a"), b = temp_dir("random_b"), c = temp_dir("random_c");
  ASSERT_EQ(nrt_run({kMlp, "--random-inputs", "7", "--output-dir", a}).exit_code, 0);
  ASSERT_EQ(nrt_run({kMlp, "--random-inputs", "7", "--output-dir", b}).exit_code, 0);
  ASSERT_EQ(nrt_run({kMlp, "--random-inputs", "8", "--output-dir", c}).exit_code, 0);
  auto ta = exec::read_npy(a + "/linear_1.npy"), tb = exec::read_npy(b + "/linear_1.npy"),
       tc = exec::read_npy(c + "/linear_1.npy");
  ASSERT_TRUE(ta.ok() && tb.ok() && tc.ok());
  EXPECT_EQ(std::memcmp(ta->raw_data(), tb->raw_data(), ta->nbytes()), 0);
  EXPECT_NE(std::memcmp(ta->raw_data(), tc->raw_data(), ta->nbytes()), 0);
  // Same seed, same outputs: a run compares clean against another's outputs.
  EXPECT_EQ(nrt_run({kMlp, "--random-inputs", "7", "--expect", a}).exit_code, 0);
}

TEST(NrtRunTest, UsageAndInputErrorsExitTwo) {
  EXPECT_EQ(nrt_run({}).exit_code, 2);
  EXPECT_EQ(nrt_run({kMlp, "--no-such-flag"}).exit_code, 2);
  EXPECT_EQ(nrt_run({kMlp, "--repeat", "0"}).exit_code, 2);

  auto missing = nrt_run({kMlp});
  EXPECT_EQ(missing.exit_code, 2);
  EXPECT_NE(missing.err.find("missing input 'x'"), std::string::npos) << missing.err;

  auto malformed = nrt_run({kMlp, "--input", "x"});
  EXPECT_EQ(malformed.exit_code, 2);
  EXPECT_NE(malformed.err.find("NAME=PATH"), std::string::npos) << malformed.err;

  auto unknown = nrt_run({kMlp, "--input", "y=" + kE2e + "/mlp/inputs/x.npy"});
  EXPECT_EQ(unknown.exit_code, 2);
  EXPECT_NE(unknown.err.find("user inputs: x"), std::string::npos) << unknown.err;

  auto wrong_shape = nrt_run({kMlp, "--input", "x=" + kE2e + "/transformer_block/inputs/x.npy"});
  EXPECT_EQ(wrong_shape.exit_code, 2);
  EXPECT_NE(wrong_shape.err.find("f32[2,8,32]"), std::string::npos) << wrong_shape.err;

  auto no_file = nrt_run({kMlp, "--input", "x=/nonexistent/x.npy"});
  EXPECT_EQ(no_file.exit_code, 2);

  auto no_expect = nrt_run({kMlp, "--random-inputs", "1", "--expect", temp_dir("empty")});
  EXPECT_EQ(no_expect.exit_code, 2);
  EXPECT_NE(no_expect.err.find("linear_1.npy"), std::string::npos) << no_expect.err;
}

TEST(NrtRunTest, InvalidProgramsExitTwo) {
  const std::string garbage = temp_dir("garbage") + "/garbage.nrt";
  std::ofstream(garbage) << "this is not an nrt file, not even close";
  auto r = nrt_run({garbage, "--random-inputs", "1"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("NRT-E"), std::string::npos) << r.err;

  auto j = nrt_run({garbage, "--random-inputs", "1", "--json"});
  EXPECT_EQ(j.exit_code, 2);
  const json report = json::parse(j.out);
  EXPECT_EQ(report["ok"], false);
  EXPECT_EQ(report["exit_code"], 2);
  EXPECT_EQ(report["error"]["id"].get<std::string>().rfind("NRT-E", 0), 0u);

  auto no_graph = nrt_run({kMlp, "--graph", "nope", "--random-inputs", "1"});
  EXPECT_EQ(no_graph.exit_code, 2);
  EXPECT_NE(no_graph.err.find("no graph named 'nope'"), std::string::npos) << no_graph.err;
}

TEST(NrtRunTest, UnsupportedOpsAreListedTogether) {
  // all_arguments.nrt uses test-only targets the kernel library does not have.
  auto r = nrt_run({runfile("testdata/all_arguments.nrt"), "--random-inputs", "1"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("nrt_test::every_argument.default"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("nrt_test::produce_everything.default"), std::string::npos) << r.err;
}

// A custom op (the torch corpus's nrt_corpus::enum_probe) runs once its kernel library is loaded:
// without it the load lists the missing target; with it both outputs match torch's.
TEST(NrtRunTest, KernelLibrariesProvideCustomOps) {
  const std::string model = runfile("testdata/torch/custom_op_enums");
  const std::string library = runfile("tests/executor/libenum_probe_kernels.so");
  auto missing = nrt_run({model + "/model.pt2", "--input", "x=" + model + "/input_0.npy"});
  EXPECT_EQ(missing.exit_code, 2) << missing.out << missing.err;
  EXPECT_NE(missing.err.find("NRT-E1001 MissingKernel"), std::string::npos) << missing.err;
  EXPECT_NE(missing.err.find("nrt_corpus::enum_probe.default"), std::string::npos) << missing.err;

  const std::string out = temp_dir("custom_op");
  auto r = nrt_run({model + "/model.pt2", "--kernel-library", library, "--input", "x=" + model + "/input_0.npy",
                    "--output-dir", out});
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  const std::pair<const char*, const char*> outputs[] = {{"enum_probe.npy", "output_0.npy"},
                                                         {"enum_probe_1.npy", "output_1.npy"}};
  for (const auto& [got_name, expected_name] : outputs) {
    auto got = exec::read_npy(out + "/" + got_name);
    auto expected = exec::read_npy(model + "/" + expected_name);
    ASSERT_TRUE(got.ok()) << got.error().to_string();
    ASSERT_TRUE(expected.ok()) << expected.error().to_string();
    EXPECT_EQ(got->dtype(), expected->dtype()) << got_name;
    EXPECT_TRUE(exec::compare_tensors(*got, *expected, exec::Tolerance{0, 0}).ok) << got_name;
  }

  auto not_a_library = nrt_run({kMlp, "--kernel-library", kMlp, "--input", "x=" + kE2e + "/mlp/inputs/x.npy"});
  EXPECT_EQ(not_a_library.exit_code, 2) << not_a_library.out << not_a_library.err;
  EXPECT_NE(not_a_library.err.find("kernel library"), std::string::npos) << not_a_library.err;
}

}  // namespace
}  // namespace nrt::testing
