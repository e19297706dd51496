// Kernel registries: separate instances are separate, a second registration of a target is an
// error naming both origins (unless the same origin repeats itself, or replacing is asked for),
// and kernel libraries replace existing kernels only when told to.
#include <gtest/gtest.h>

#include <cstdlib>

#include "executor/runtime/kernel.h"
#include "executor/runtime/kernel_library.h"
#include "tests/runfile.h"

namespace nrt::exec {
namespace {

using nrt::testing::runfile;

Status first(KernelContext&) { return {}; }
Status second(KernelContext&) { return {}; }

TEST(KernelRegistry, InstancesAreSeparate) {
  KernelRegistry mine;
  ASSERT_TRUE(mine.add("registry_test::only_mine.default", DeviceKind::kCpu, {&first, false}, "test").ok());
  EXPECT_NE(mine.find("registry_test::only_mine.default", DeviceKind::kCpu), nullptr);
  EXPECT_EQ(KernelRegistry::global().find("registry_test::only_mine.default", DeviceKind::kCpu), nullptr);
  EXPECT_EQ(mine.find("aten::add.Tensor", DeviceKind::kCpu), nullptr) << "built-ins live in global() only";
  EXPECT_EQ(mine.find("registry_test::only_mine.default", DeviceKind::kCuda), nullptr);
}

TEST(KernelRegistry, DuplicatesAreErrorsNamingBothOrigins) {
  KernelRegistry registry;
  ASSERT_TRUE(registry.add("registry_test::op.default", DeviceKind::kCpu, {&first, false}, "a.cc").ok());
  // The same origin registering the same kernel again changes nothing.
  EXPECT_TRUE(registry.add("registry_test::op.default", DeviceKind::kCpu, {&first, false}, "a.cc").ok());
  const Status twice = registry.add("registry_test::op.default", DeviceKind::kCpu, {&second, false}, "b.cc");
  ASSERT_FALSE(twice.ok());
  EXPECT_NE(twice.error().message.find("from a.cc"), std::string::npos) << twice.error().message;
  EXPECT_NE(twice.error().message.find("b.cc registers another"), std::string::npos) << twice.error().message;
  EXPECT_EQ(registry.find("registry_test::op.default", DeviceKind::kCpu)->fn, &first) << "the first one stays";
  // Another device is another table.
  EXPECT_TRUE(registry.add("registry_test::op.default", DeviceKind::kCuda, {&second, false}, "b.cc").ok());

  std::string replaced;
  const KernelInfo* before = registry.find("registry_test::op.default", DeviceKind::kCpu);
  ASSERT_TRUE(registry.add("registry_test::op.default", DeviceKind::kCpu, {&second, false}, "b.cc", true, &replaced).ok());
  EXPECT_EQ(replaced, "a.cc");
  EXPECT_EQ(registry.origin("registry_test::op.default", DeviceKind::kCpu), "b.cc");
  EXPECT_EQ(registry.find("registry_test::op.default", DeviceKind::kCpu), before) << "entries stay where they are";
  EXPECT_EQ(before->fn, &second);
}

TEST(KernelRegistry, BuiltInsNameTheirSourceFile) {
  EXPECT_EQ(KernelRegistry::global().origin("aten::add.Tensor", DeviceKind::kCpu),
            "executor/kernels/cpu/arithmetic_kernels.cc");
}

TEST(KernelLibrary, ReplacesExistingKernelsOnlyWhenTold) {
  const std::string library = runfile("tests/executor/libenum_probe_kernels.so");
  KernelRegistry registry;
  ASSERT_TRUE(registry.add("nrt_corpus::enum_probe.default", DeviceKind::kCpu, {&first, false}, "the host").ok());
  auto refused = load_kernel_library(library, registry);
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.error().message.find("nrt_corpus::enum_probe.default (registered by the host)"), std::string::npos)
      << refused.error().message;
  EXPECT_NE(refused.error().message.find("--kernel-library-override"), std::string::npos) << refused.error().message;
  EXPECT_EQ(registry.find("nrt_corpus::enum_probe.default", DeviceKind::kCpu)->fn, &first) << "nothing registered";

  auto replaced = load_kernel_library(library, registry, true);
  ASSERT_TRUE(replaced.ok()) << replaced.error().to_string();
  ASSERT_EQ(replaced->replaced.size(), 1u);
  EXPECT_EQ(replaced->replaced[0], "nrt_corpus::enum_probe.default (was the host)");
  EXPECT_NE(registry.find("nrt_corpus::enum_probe.default", DeviceKind::kCpu)->fn, &first);
  // Loading it again is no conflict with itself.
  auto again = load_kernel_library(library, registry);
  EXPECT_TRUE(again.ok()) << again.error().to_string();
}

// Each way a library can get its registration wrong is refused with an error naming the library
// and the mistake; the host goes on, and nothing of the library is registered (issue 25, class 4).
TEST(KernelLibrary, RefusesEveryMalformedRegistration) {
  const std::string library = runfile("tests/executor/libbad_kernels.so");
  for (auto [mode, words] : std::vector<std::pair<std::string, std::string>>{
           {"null_target", "kernel 1: a null target"},
           {"empty_target", "kernel 1: an empty target"},
           {"long_target", "a target longer than 1024 bytes"},
           {"not_utf8", "target 'bad_library::\\xff\\xfe.default' is not UTF-8"},
           {"device_99", "for device kind 99, which is not one nrt knows"},
           {"null_kernel", "target 'aten::add.Tensor' with a null kernel function"},
       }) {
    ASSERT_EQ(setenv("NRT_TEST_BAD_LIBRARY", mode.c_str(), 1), 0);
    for (bool override_existing : {false, true}) {
      KernelRegistry registry;
      ASSERT_TRUE(registry.add("aten::add.Tensor", DeviceKind::kCpu, {&first, false}, "the host").ok());
      auto loaded = load_kernel_library(library, registry, override_existing);
      ASSERT_FALSE(loaded.ok()) << mode;
      EXPECT_EQ(loaded.error().code, ErrorCode::InvalidArgument) << mode;
      EXPECT_NE(loaded.error().message.find(library), std::string::npos) << loaded.error().message;
      EXPECT_NE(loaded.error().message.find(words), std::string::npos) << mode << ": " << loaded.error().message;
      EXPECT_EQ(registry.find("bad_library::fine.default", DeviceKind::kCpu), nullptr) << mode << ": partly registered";
      EXPECT_EQ(registry.find("aten::add.Tensor", DeviceKind::kCpu)->fn, &first) << mode << ": a built-in was replaced";
    }
  }
  ASSERT_EQ(unsetenv("NRT_TEST_BAD_LIBRARY"), 0);
  KernelRegistry registry;
  auto fine = load_kernel_library(library, registry);
  ASSERT_TRUE(fine.ok()) << fine.error().to_string();
  EXPECT_EQ(fine->targets, std::vector<std::string>{"bad_library::fine.default"});
}

TEST(KernelLibrary, RefusesAnEntryPointThatIsData) {
  const std::string library = runfile("tests/executor/libdata_symbol.so");
  KernelRegistry registry;
  auto loaded = load_kernel_library(library, registry);
  ASSERT_FALSE(loaded.ok());
  EXPECT_EQ(loaded.error().code, ErrorCode::InvalidArgument);
  EXPECT_NE(loaded.error().message.find("nrt_register_kernels is not a function"), std::string::npos)
      << loaded.error().message;
}

}  // namespace
}  // namespace nrt::exec
