// Every program of the torch.export corpus (testdata/torch/<model>/, made by
// scripts/torch_corpus.py) imported from its .pt2 and run by the executor against torch's own
// eager outputs: input_<i>.npy binds the i-th user input, output_<i>.npy is compared with the
// i-th user output, within a tolerance that suits the dtype (f32: 1e-5, f64: 1e-7, f16: 1e-3,
// bf16: 1e-2 relative; integers and bools exactly), or exactly when the manifest says "exact".
//
// Every model must load and match, except those kSingleProcessFailures names: they cannot run in
// one process and must fail to load with the error given (the reason says where they run instead). The
// custom op of `custom_op_enums` gets its kernel from a kernel library loaded at run time
// (tests/executor/enum_probe_kernel_library.cc), as a user's custom-op library would.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <set>

#include "io/compare_outputs.h"
#include "executor/runtime/executor.h"
#include "executor/runtime/kernel_library.h"
#include "io/npy.h"
#include "executor/runtime/tensor_copy.h"
#include "serializer/open_program.h"
#include "core/schema_enums.h"
#include "tests/runfile.h"

namespace nrt::testing {
namespace {

const std::set<std::string> kRequired = {"mlp",          "transformer_block", "dynamic_batch", "cnn",
                                         "buffer_mutation", "tied_weights",    "dtypes",        "cond",
                                         "custom_op_enums", "collectives"};

// The architectures whose kernels came last (segmentation, MoE, ALiBi, disentangled attention,
// rotary variants, MaxViT's einsum, video, windowed attention, audio), each in the three forms a
// user hands over: the training IR, run_decompositions({}) and core ATen.
const char* const kFamilies[] = {"segformer", "mixtral",  "bloom",   "deberta_v2",          "falcon",
                                 "gptj",      "swin_hf",  "wav2vec2", "maxvit_small_config", "r3d_small_config"};
const char* const kForms[] = {"default", "decomp_empty", "core_aten"};

struct ExpectedFailure {
  ErrorCode code;
  std::string text;  // the message names it
  std::string why;
};
const std::map<std::string, ExpectedFailure> kSingleProcessFailures = {
    {"collectives",
     {ErrorCode::CollectiveFailed, "process group '0' (ranks [0, 1]) is not bound",
      "_c10d_functional collectives over a 2-rank group: run under mpirun by tests/executor/torch_collectives_test"}},
};

void load_custom_op_kernels() {
  static const bool loaded = [] {
    auto targets = exec::load_kernel_library(runfile("tests/executor/libenum_probe_kernels.so"));
    EXPECT_TRUE(targets.ok()) << targets.error().to_string();
    return targets.ok();
  }();
  ASSERT_TRUE(loaded);
}

exec::Tolerance tolerance_for(exec::ScalarType dtype) {
  switch (dtype) {
    case exec::ScalarType::FLOAT32: return {1e-5, 1e-5};
    case exec::ScalarType::FLOAT64: return {1e-7, 1e-7};
    case exec::ScalarType::FLOAT16: return {1e-3, 1e-3};
    case exec::ScalarType::BFLOAT16: return {1e-2, 1e-2};
    default: return {0, 0};
  }
}

std::vector<std::string> corpus_models() {
  std::vector<std::string> models;
  const std::string dir = runfile("testdata/torch");
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator(dir, ec)) {
    if (entry.is_directory() && std::filesystem::exists(entry.path() / "model.pt2")) {
      models.push_back(entry.path().filename().string());
    }
  }
  std::sort(models.begin(), models.end());
  return models;
}

TEST(TorchCorpusTest, CorpusIsPresent) {
  const auto models = corpus_models();
  for (const auto& required : kRequired) {
    EXPECT_NE(std::find(models.begin(), models.end(), required), models.end()) << required;
  }
  for (const char* family : kFamilies) {
    for (const char* form : kForms) {
      const std::string name = std::string(family) + "__" + form;
      EXPECT_NE(std::find(models.begin(), models.end(), name), models.end()) << name;
    }
  }
}

// DIR/model.pt2 imported, verified and loaded; any failure is the error.
Result<std::unique_ptr<exec::Executor>> load_model(const std::string& dir) {
  OpenOptions options;
  options.format = ProgramFormat::kPt2;
  NRT_TRY(file, open_program(dir + "/model.pt2", options));
  return exec::Executor::load(std::move(*file));
}

class TorchCorpusModelTest : public ::testing::TestWithParam<std::string> {};

TEST_P(TorchCorpusModelTest, MatchesTorch) {
  const std::string model = GetParam();
  const std::string dir = runfile("testdata/torch/" + model);

  load_custom_op_kernels();
  auto executor = load_model(dir);
  if (auto failure = kSingleProcessFailures.find(model); failure != kSingleProcessFailures.end()) {
    ASSERT_FALSE(executor.ok()) << model << " loaded in one process: " << failure->second.why;
    EXPECT_EQ(executor.error().code, failure->second.code) << executor.error().to_string();
    EXPECT_NE(executor.error().message.find(failure->second.text), std::string::npos) << executor.error().to_string();
    return;
  }
  ASSERT_TRUE(executor.ok()) << model << ": " << executor.error().to_string();

  std::ifstream manifest_file(dir + "/manifest.json");
  const auto manifest = nlohmann::json::parse(manifest_file);
  const auto declared = (*executor)->user_inputs();
  ASSERT_EQ(manifest["inputs"].size(), declared.size()) << model;
  exec::NamedInputs inputs;
  for (size_t i = 0; i < declared.size(); ++i) {
    const std::string path = dir + "/" + manifest["inputs"][i]["file"].get<std::string>();
    auto tensor = exec::read_npy(path);
    ASSERT_TRUE(tensor.ok()) << tensor.error().to_string();
    auto adapted = exec::convert_npy_for(*tensor, declared[i].dtype, path);
    ASSERT_TRUE(adapted.ok()) << adapted.error().to_string();
    inputs[declared[i].name] = std::move(*adapted);
  }
  auto outputs = (*executor)->run(inputs);
  ASSERT_TRUE(outputs.ok()) << model << ": " << outputs.error().to_string();
  if (manifest.contains("note") && manifest["outputs"].empty()) {
    // Exported without eager outputs (torch's fake process group computes nothing meaningful):
    // it runs; its values are checked under mpirun (tests/executor/collective_faults_test).
    EXPECT_FALSE(outputs->empty()) << model;
    return;
  }
  ASSERT_EQ(outputs->size(), manifest["outputs"].size()) << model;
  for (size_t i = 0; i < outputs->size(); ++i) {
    const std::string path = dir + "/" + manifest["outputs"][i]["file"].get<std::string>();
    auto expected = exec::read_npy(path);
    ASSERT_TRUE(expected.ok()) << expected.error().to_string();
    const auto* got = std::get_if<exec::Tensor>(&(*outputs)[i].value);
    ASSERT_NE(got, nullptr) << model << " output " << i;
    // "exact": torch's bits are the contract (the stateless random ops), not a tolerance.
    const bool exact = manifest.value("exact", false);
    const auto c = exec::compare_tensors(*got, *expected, exact ? exec::Tolerance{0, 0} : tolerance_for(got->dtype()));
    EXPECT_TRUE(c.ok) << model << " output " << i << " '" << (*outputs)[i].name << "' " << got->type_string() << ": "
                      << (c.problem.empty() ? c.num_mismatched : 0) << " mismatched " << c.problem << " worst "
                      << exec::index_text(c.worst_index) << " got " << c.worst_got << " expected " << c.worst_expected
                      << " (max abs " << c.max_abs_error << ", max rel " << c.max_rel_error << ")";
  }
}

// The default IR keeps in-place ops: on a buffer (count.add_), on the user input it also returns
// (x.add_), through views. Every run sees the file's buffer and leaves the caller's input alone,
// so a second run gives torch's outputs again.
TEST(TorchCorpusTest, InPlaceMutationRepeatsAndLeavesInputsAlone) {
  const std::string dir = runfile("testdata/torch/inplace_buffer_view__default");
  auto executor = load_model(dir);
  ASSERT_TRUE(executor.ok()) << executor.error().to_string();
  auto input = exec::read_npy(dir + "/input_0.npy");
  ASSERT_TRUE(input.ok()) << input.error().to_string();
  const exec::Tensor before = exec::contiguous_copy(*input);
  exec::NamedInputs inputs{{(*executor)->user_inputs().at(0).name, *input}};
  for (int run = 0; run < 3; ++run) {
    auto outputs = (*executor)->run(inputs);
    ASSERT_TRUE(outputs.ok()) << outputs.error().to_string();
    ASSERT_EQ(outputs->size(), 2u);
    for (size_t i = 0; i < 2; ++i) {
      auto expected = exec::read_npy(dir + "/output_" + std::to_string(i) + ".npy");
      ASSERT_TRUE(expected.ok());
      const auto c = exec::compare_tensors(std::get<exec::Tensor>((*outputs)[i].value), *expected, {0, 0});
      EXPECT_TRUE(c.ok) << "run " << run << " output " << i << ": got " << c.worst_got << " expected " << c.worst_expected;
    }
    EXPECT_TRUE(exec::compare_tensors(*input, before, {0, 0}).ok) << "the caller's input was written";
  }
}

INSTANTIATE_TEST_SUITE_P(Corpus, TorchCorpusModelTest, ::testing::ValuesIn(corpus_models()),
                         [](const auto& info) { return info.param; });

}  // namespace
}  // namespace nrt::testing
