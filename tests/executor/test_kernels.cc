#include "tests/executor/test_kernels.h"

#include <cstring>

#include "executor/comm/process_group.h"

namespace nrt::testing {
namespace {

using exec::KernelContext;
using exec::RuntimeValue;
using exec::Tensor;

// The tensor output `index` is written into: the executor's planned tensor when it fits.
Tensor output_tensor(KernelContext& ctx, size_t index, const std::vector<int64_t>& sizes) {
  RuntimeValue& slot = ctx.outputs()[index];
  if (auto* t = std::get_if<Tensor>(&slot); t && t->defined() && t->sizes() == sizes &&
                                            t->dtype() == exec::ScalarType::FLOAT32) {
    return *t;
  }
  Tensor fresh = Tensor::empty(exec::ScalarType::FLOAT32, sizes);
  slot = fresh;
  return fresh;
}

Status add(KernelContext& ctx) {
  auto a = ctx.tensor("self", 0);
  auto b = ctx.tensor("other", 1);
  if (!a) return a.error();
  if (!b) return b.error();
  if (a->sizes() != b->sizes()) return ctx.error("shapes differ");
  Tensor out = output_tensor(ctx, 0, a->sizes());
  const float* x = a->data<float>();
  const float* y = b->data<float>();
  float* z = out.data<float>();
  for (int64_t i = 0, n = a->numel(); i < n; ++i) z[i] = x[i] + y[i];
  return {};
}

Status scale(KernelContext& ctx) {
  auto a = ctx.tensor("self", 0);
  auto f = ctx.real("factor", 1);
  if (!a) return a.error();
  if (!f) return f.error();
  Tensor out = output_tensor(ctx, 0, a->sizes());
  for (int64_t i = 0, n = a->numel(); i < n; ++i) out.data<float>()[i] = a->data<float>()[i] * static_cast<float>(*f);
  return {};
}

Status alias(KernelContext& ctx) {
  NRT_TRY(a, ctx.tensor("self", 0));
  ctx.outputs()[0] = *a;
  return {};
}

Status halves(KernelContext& ctx) {
  NRT_TRY(a, ctx.tensor("self", 0));
  if (a->dim() < 1 || a->size(0) % 2 != 0) return ctx.error("needs an even first dimension");
  std::vector<int64_t> sizes = a->sizes();
  sizes[0] /= 2;
  const int64_t offset = sizes[0] * a->strides()[0];
  ctx.outputs()[0] = std::vector<Tensor>{a->as_strided(sizes, a->strides(), a->storage_offset()),
                                         a->as_strided(sizes, a->strides(), a->storage_offset() + offset)};
  return {};
}

Status sum_list(KernelContext& ctx) {
  NRT_TRY(list, ctx.tensor_list("tensors", 0));
  if (list->empty()) return ctx.error("empty list");
  Tensor out = output_tensor(ctx, 0, (*list)[0].sizes());
  for (int64_t i = 0, n = out.numel(); i < n; ++i) {
    float s = 0;
    for (const auto& t : *list) s += t.data<float>()[i];
    out.data<float>()[i] = s;
  }
  return {};
}

Status size(KernelContext& ctx) {
  auto a = ctx.tensor("self", 0);
  auto d = ctx.int64("dim", 1);
  if (!a) return a.error();
  if (!d) return d.error();
  ctx.outputs()[0] = a->size(*d);
  return {};
}

Status sum_ints(KernelContext& ctx) {
  NRT_TRY(values, ctx.int_list("values", 0));
  int64_t s = 0;
  for (int64_t v : *values) s += v;
  ctx.outputs()[0] = s;
  return {};
}

Tensor& stashed() {
  static Tensor t;
  return t;
}

Status stash(KernelContext& ctx) {
  NRT_TRY(a, ctx.tensor("self", 0));
  stashed() = *a;  // keeps a reference past the value's lifetime: the bug poison mode must expose
  Tensor out = output_tensor(ctx, 0, a->sizes());
  std::memcpy(out.raw_data(), a->raw_data(), a->nbytes());
  return {};
}

Status read_stash(KernelContext& ctx) {
  NRT_TRY(a, ctx.tensor("self", 0));
  const Tensor& old = stashed();
  if (!old.defined() || old.sizes() != a->sizes()) return ctx.error("nothing stashed");
  Tensor out = output_tensor(ctx, 0, a->sizes());
  for (int64_t i = 0, n = a->numel(); i < n; ++i) out.data<float>()[i] = a->data<float>()[i] + old.data<float>()[i];
  return {};
}

Status bad_alias(KernelContext& ctx) { return alias(ctx); }

Status wrong_shape(KernelContext& ctx) {
  NRT_TRY(a, ctx.tensor("self", 0));
  ctx.outputs()[0] = Tensor::empty(exec::ScalarType::FLOAT32, {a->numel() + 1});
  return {};
}

Status fail(KernelContext& ctx) { return ctx.error("failed on purpose"); }

// Two outputs, both a copy of self, while self[0] >= 0; otherwise output 0 gets one element too
// many and output 1 an int, which the executor must refuse (and recover from on the next run).
Status pair_or_wrong(KernelContext& ctx) {
  NRT_TRY(a, ctx.tensor("self", 0));
  if (a->numel() > 0 && a->data<float>()[0] < 0) {
    ctx.outputs()[0] = Tensor::empty(exec::ScalarType::FLOAT32, {a->numel() + 1});
    ctx.outputs()[1] = int64_t{7};
    return {};
  }
  for (size_t o = 0; o < 2; ++o) {
    Tensor out = output_tensor(ctx, o, a->sizes());
    std::memcpy(out.raw_data(), a->raw_data(), a->nbytes());
  }
  return {};
}

// Zeros of sizes [n, n, n, n], n = self.size(0).
Status zeros4(KernelContext& ctx) {
  NRT_TRY(a, ctx.tensor("self", 0));
  const int64_t n = a->size(0);
  Tensor out = output_tensor(ctx, 0, {n, n, n, n});
  std::memset(out.raw_data(), 0, out.nbytes());
  return {};
}

Status group_size(KernelContext& ctx) {
  const RuntimeValue* v = ctx.find("group", 0);
  const auto* ref = v ? std::get_if<exec::ProcessGroupRef>(v) : nullptr;
  if (ref == nullptr) return ctx.error("no process group argument");
  ctx.outputs()[0] = static_cast<int64_t>(ref->group ? ref->group->size() : -1);
  return {};
}

using exec::DeviceKind;
using exec::KernelInfo;
using exec::KernelRegistration;
const KernelRegistration kRegistrations[] = {
    {"nrt_test::add", DeviceKind::kCpu, KernelInfo{add, false}},
    {"nrt_test::scale", DeviceKind::kCpu, KernelInfo{scale, false}},
    {"nrt_test::alias", DeviceKind::kCpu, KernelInfo{alias, true}},
    {"nrt_test::halves", DeviceKind::kCpu, KernelInfo{halves, true}},
    {"nrt_test::sum_list", DeviceKind::kCpu, KernelInfo{sum_list, false}},
    {"nrt_test::size", DeviceKind::kCpu, KernelInfo{size, false}},
    {"nrt_test::sum_ints", DeviceKind::kCpu, KernelInfo{sum_ints, false}},
    {"nrt_test::stash", DeviceKind::kCpu, KernelInfo{stash, false}},
    {"nrt_test::read_stash", DeviceKind::kCpu, KernelInfo{read_stash, false}},
    {"nrt_test::bad_alias", DeviceKind::kCpu, KernelInfo{bad_alias, false}},
    {"nrt_test::wrong_shape", DeviceKind::kCpu, KernelInfo{wrong_shape, false}},
    {"nrt_test::fail", DeviceKind::kCpu, KernelInfo{fail, false}},
    {"nrt_test::pair_or_wrong", DeviceKind::kCpu, KernelInfo{pair_or_wrong, false}},
    {"nrt_test::zeros4", DeviceKind::kCpu, KernelInfo{zeros4, false}},
    {"nrt_test::group_size", DeviceKind::kCpu, KernelInfo{group_size, false}},
};

}  // namespace

void link_test_kernels() {}

}  // namespace nrt::testing
