// Per-device allocators (executor/runtime/allocator.h): the host's, and the seam a device backend plugs
// into. A pretend device (host memory behind its own allocator, registered as cuda here) shows
// what a real one gets: the load gate asks for an allocator and then for kernels, weights are
// copied to the device once at load, storages know their device, copies go through the
// device's allocator, and kernels receive its execution context.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstdlib>
#include <cstring>

#include "executor/runtime/allocator.h"
#include "executor/runtime/executor.h"
#include "executor/runtime/memory_budget.h"
#include "executor/runtime/storage.h"
#include "serializer/open_program.h"
#include "testdata/program_builder.h"

namespace nrt::exec {
namespace {

using nrt::ScalarType;
namespace arg = testdata::arg;
using testdata::Args;

class PretendDevice final : public Allocator {
 public:
  DeviceKind kind() const override { return DeviceKind::kCuda; }
  void* allocate(size_t bytes, Device) override {
    ++allocations;
    return std::calloc(bytes ? bytes : 1, 1);
  }
  void deallocate(void* data, size_t, Device) override {
    ++deallocations;
    std::free(data);
  }
  Status copy(void* dst, Device dst_device, const void* src, Device src_device, size_t bytes) override {
    if (src_device.kind == DeviceKind::kCpu && dst_device.kind == DeviceKind::kCuda) ++to_device;
    if (src_device.kind == DeviceKind::kCuda && dst_device.kind == DeviceKind::kCpu) ++to_host;
    std::memcpy(dst, src, bytes);
    return {};
  }
  void* execution_context(Device) override { return &stream; }

  int allocations = 0, deallocations = 0, to_device = 0, to_host = 0;
  int stream = 0;  // what kernels must receive
};

PretendDevice& device() {
  static PretendDevice* pretend = [] {
    auto* p = new PretendDevice();
    EXPECT_TRUE(register_allocator(p).ok());
    return p;
  }();
  return *pretend;
}

const Device kDevice{DeviceKind::kCuda, 0};
int g_kernel_calls = 0;

// aten::add.Tensor on the pretend device (its memory is host memory): f32, same shapes.
Status device_add(KernelContext& ctx) {
  if (ctx.device_context() != &device().stream) return ctx.error("not given the device's execution context");
  auto self = ctx.tensor("self", 0);
  auto other = ctx.tensor("other", 1);
  if (!self || !other) return ctx.error("missing arguments");
  if (self->device() != kDevice || other->device() != kDevice) return ctx.error("an argument is not on the device");
  auto* out = std::get_if<Tensor>(&ctx.outputs()[0]);
  if (out == nullptr || !out->defined() || out->device() != kDevice) return ctx.error("no planned output on the device");
  for (int64_t i = 0; i < out->numel(); ++i) out->data<float>()[i] = self->data<float>()[i] + other->data<float>()[i];
  ++g_kernel_calls;
  return {};
}
const KernelRegistration kDeviceAdd("aten::add.Tensor", DeviceKind::kCuda, {&device_add, false});

// y = x + w, w a parameter; `with_mm` adds z = mm(y, y) (no kernel on the device).
ProgramWithWeights program(bool with_mm) {
  testdata::ProgramBuilder p("device_allocator_test");
  const uint32_t add = p.op("aten::add", "Tensor");
  const uint32_t mm = p.op("aten::mm", "default");
  p.weight("w", p.storage(testdata::pattern_f32(4, 0.5f)), testdata::tensor_meta(ScalarType::FLOAT32, {4}), true);
  auto g = p.graph("main", true);
  const uint32_t w = g.tensor("p_w", ScalarType::FLOAT32, {4});
  const uint32_t x = g.tensor("x", ScalarType::FLOAT32, {4});
  const uint32_t y = g.tensor("y", ScalarType::FLOAT32, {4});
  g.input(arg::tensor(w), fb::InputKind::PARAMETER, "w");
  g.user_input(arg::tensor(x));
  g.node("add", add, Args{{"self", arg::tensor(x)}, {"other", arg::tensor(w)}}, {}, {arg::tensor(y)});
  if (with_mm) {
    const uint32_t z = g.tensor("z", ScalarType::FLOAT32, {4, 4});
    g.node("mm", mm, Args{{"self", arg::tensor(y)}, {"mat2", arg::tensor(y)}}, {}, {arg::tensor(z)});
    g.user_output(arg::tensor(z));
  }
  g.user_output(arg::tensor(y));
  return p.finish();
}

TEST(HostAllocator, StoragesAreAlignedZeroedAndCounted) {
  const uint64_t before = memory_in_use();
  {
    auto storage = Storage::allocate(100);
    EXPECT_EQ(reinterpret_cast<uintptr_t>(storage->data()) % 64, 0u);
    for (size_t i = 0; i < 100; ++i) ASSERT_EQ(storage->data()[i], 0);
    EXPECT_EQ(storage->device().kind, DeviceKind::kCpu);
    EXPECT_EQ(memory_in_use(), before + 128) << "whole 64-byte lines count against the budget";
  }
  EXPECT_EQ(memory_in_use(), before);
  ASSERT_NE(allocator_for(DeviceKind::kCpu), nullptr);
  EXPECT_FALSE(register_allocator(allocator_for(DeviceKind::kCpu)).ok()) << "the host's is built in";
}

TEST(DeviceAllocator, CopiesGoThroughTheDevicesAllocator) {
  PretendDevice& pretend = device();
  auto host = Storage::allocate(16);
  for (int i = 0; i < 16; ++i) host->data()[i] = static_cast<uint8_t>(i);
  auto on_device = Storage::allocate(16, kDevice);
  EXPECT_EQ(on_device->device(), kDevice);
  const int to_device = pretend.to_device, to_host = pretend.to_host;
  ASSERT_TRUE(copy_storage_bytes(*on_device, 0, *host, 0, 16).ok());
  auto back = Storage::allocate(16);
  ASSERT_TRUE(copy_storage_bytes(*back, 4, *on_device, 4, 12).ok());
  EXPECT_EQ(pretend.to_device, to_device + 1);
  EXPECT_EQ(pretend.to_host, to_host + 1);
  EXPECT_EQ(back->data()[15], 15);
  EXPECT_EQ(back->data()[3], 0) << "only the bytes asked for";
  EXPECT_FALSE(copy_storage_bytes(*back, 8, *on_device, 0, 16).ok()) << "past the end";
}

TEST(DeviceAllocator, ADeviceWithAnAllocatorGetsTheMissingKernelReport) {
  device();
  auto file = verify_in_memory(program(true));
  ASSERT_TRUE(file.ok()) << file.error().to_string();
  ExecutorOptions options;
  options.device = kDevice;
  auto executor = Executor::load(std::move(*file), options);
  ASSERT_FALSE(executor.ok());
  EXPECT_EQ(executor.error().code, ErrorCode::MissingKernel) << executor.error().to_string();
  EXPECT_NE(executor.error().message.find("aten::mm.default"), std::string::npos) << executor.error().message;
  EXPECT_EQ(executor.error().message.find("aten::add.Tensor"), std::string::npos) << "add has a device kernel";
}

TEST(DeviceAllocator, WeightsAreCopiedToTheDeviceOnceAndOnlyTheEdgesMove) {
  PretendDevice& pretend = device();
  auto file = verify_in_memory(program(false));
  ASSERT_TRUE(file.ok()) << file.error().to_string();
  ExecutorOptions options;
  options.device = kDevice;
  const int to_device = pretend.to_device, to_host = pretend.to_host;
  auto executor = Executor::load(std::move(*file), options);
  ASSERT_TRUE(executor.ok()) << executor.error().to_string();
  EXPECT_EQ(pretend.to_device, to_device + 1) << "one weight storage, copied once at load";
  const auto& plan = (*executor)->plan();
  const auto& weight = std::get<Tensor>((*executor)->frame().slots()[static_cast<size_t>(plan.values[0].slot)]);
  EXPECT_EQ(weight.device(), kDevice);
  EXPECT_FALSE(weight.storage()->read_only()) << "the device copy, not the file's mapped bytes";

  Tensor x = Tensor::empty(ScalarType::FLOAT32, {4}, kDevice);
  for (int i = 0; i < 4; ++i) x.data<float>()[i] = static_cast<float>(i);
  const auto expected_w = testdata::pattern_f32(4, 0.5f);
  for (int run = 0; run < 2; ++run) {
    g_kernel_calls = 0;
    auto outputs = (*executor)->run({{"x", x}});
    ASSERT_TRUE(outputs.ok()) << outputs.error().to_string();
    EXPECT_EQ(g_kernel_calls, 1);
    const auto& y = std::get<Tensor>((*outputs)[0].value);
    EXPECT_EQ(y.device(), Device{}) << "outputs come back to the host (the run's edge)";
    for (int i = 0; i < 4; ++i) {
      float w = 0;
      std::memcpy(&w, expected_w.data() + 4 * i, 4);
      EXPECT_EQ(y.data<float>()[i], static_cast<float>(i) + w);
    }
  }
  EXPECT_EQ(pretend.to_device, to_device + 1) << "runs copy no weight again";
  EXPECT_EQ(pretend.to_host, to_host + 2) << "each run's output copied back once";

  // A host input is copied to the device at the run's edge (and the answer is the same).
  Tensor on_host = Tensor::empty(ScalarType::FLOAT32, {4});
  for (int i = 0; i < 4; ++i) on_host.data<float>()[i] = static_cast<float>(i);
  auto from_host = (*executor)->run({{"x", on_host}});
  ASSERT_TRUE(from_host.ok()) << from_host.error().to_string();
  EXPECT_EQ(pretend.to_device, to_device + 2) << "the host input went to the device once";
  const auto& y = std::get<Tensor>((*from_host)[0].value);
  float w0 = 0;
  std::memcpy(&w0, expected_w.data(), 4);
  EXPECT_EQ(y.data<float>()[0], w0);
}

}  // namespace
}  // namespace nrt::exec
