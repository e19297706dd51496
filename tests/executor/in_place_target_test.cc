// Which functional op an in-place or out= target runs as (executor/runtime/in_place_target.h), and which
// kernel the registry resolves for it: its own when it has one, the functional one otherwise,
// none when neither exists or nothing can write the result back.
#include <gtest/gtest.h>

#include "executor/runtime/in_place_target.h"

namespace nrt::exec {
namespace {

TEST(FunctionalCandidates, InPlaceNamesDropTheTrailingUnderscore) {
  auto relu = functional_candidates("aten::relu_.default");
  EXPECT_EQ(relu.kind, MutationKind::kInPlace);
  EXPECT_EQ(relu.targets, std::vector<std::string>{"aten::relu.default"});
  EXPECT_EQ(functional_candidates("aten::add_.Tensor").targets, std::vector<std::string>{"aten::add.Tensor"});
  EXPECT_EQ(functional_candidates("aten::relu_").targets, std::vector<std::string>{"aten::relu.default"});
  auto iand = functional_candidates("aten::__iand__.Tensor");
  EXPECT_EQ(iand.kind, MutationKind::kInPlace);
  EXPECT_EQ(iand.targets, std::vector<std::string>{"aten::__and__.Tensor"});
}

TEST(FunctionalCandidates, OutVariantsNameTheirFunctionalOverloads) {
  auto add = functional_candidates("aten::add.out");
  EXPECT_EQ(add.kind, MutationKind::kOut);
  EXPECT_EQ(add.targets, (std::vector<std::string>{"aten::add.Tensor", "aten::add.default"}));
  EXPECT_EQ(functional_candidates("aten::clamp.Tensor_out").targets, std::vector<std::string>{"aten::clamp.Tensor"});
  EXPECT_EQ(functional_candidates("aten::div.out_mode").targets, std::vector<std::string>{"aten::div.Tensor_mode"});
}

TEST(FunctionalCandidates, FunctionalAndDunderTargetsHaveNone) {
  for (const char* target : {"aten::relu.default", "aten::__and__.Tensor", "aten::_softmax.default", "relu_", "",
                             "aten::.default", "aten::_.default"}) {
    auto c = functional_candidates(target);
    EXPECT_EQ(c.kind, MutationKind::kNone) << target;
    EXPECT_TRUE(c.targets.empty()) << target;
  }
}

Status ok_kernel(KernelContext&) { return {}; }
Status other_kernel(KernelContext&) { return {}; }

TEST(ResolveKernel, OwnKernelFirstThenTheFunctionalOne) {
  KernelRegistry registry;  // its own: the global one is left alone
  ASSERT_TRUE(registry.add(std::string(kWriteBackTarget), DeviceKind::kCpu, {&ok_kernel, false}, "test").ok());
  ASSERT_TRUE(registry.add("in_place_test::scale.default", DeviceKind::kCpu, {&ok_kernel, false}, "test").ok());
  ASSERT_TRUE(registry.add("in_place_test::twice_.default", DeviceKind::kCpu, {&other_kernel, false}, "test").ok());
  ASSERT_TRUE(registry.add("in_place_test::twice.default", DeviceKind::kCpu, {&ok_kernel, false}, "test").ok());

  auto functional = resolve_kernel(registry, "in_place_test::scale_.default", DeviceKind::kCpu);
  ASSERT_NE(functional.kernel, nullptr) << "the registry's aten::copy.default writes the result back";
  EXPECT_EQ(functional.kernel->fn, &ok_kernel);
  EXPECT_EQ(functional.mutation, MutationKind::kInPlace);
  EXPECT_EQ(functional.functional_target, "in_place_test::scale.default");
  EXPECT_EQ(functional.write_back, &ok_kernel) << "the registry's aten::copy.default";

  auto own = resolve_kernel(registry, "in_place_test::twice_.default", DeviceKind::kCpu);
  ASSERT_NE(own.kernel, nullptr);
  EXPECT_EQ(own.kernel->fn, &other_kernel);
  EXPECT_EQ(own.mutation, MutationKind::kNone);

  EXPECT_EQ(resolve_kernel(registry, "in_place_test::missing_.default", DeviceKind::kCpu).kernel, nullptr);
  // No write-back kernel on this device: the in-place form is missing there.
  ASSERT_TRUE(registry.add("in_place_test::scale.default", DeviceKind::kCuda, {&ok_kernel, false}, "test").ok());
  EXPECT_EQ(resolve_kernel(registry, "in_place_test::scale_.default", DeviceKind::kCuda).kernel, nullptr);
}

}  // namespace
}  // namespace nrt::exec
