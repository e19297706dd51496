// torch's stateful random ops, drawn from the run's seed instead of torch's global generator:
// rand, randn, their _like forms, randint, normal (every overload and the functional form of
// normal_), uniform, bernoulli, and dropout in training. Each node's key is
// fold_in(key(seed), stream), its stream a hash of its graph's and its own name
// (KernelContext::random_stream), and element i of its output takes the bits of element i of
// torch's stateless layout (executor/random/torch_philox.h). So values depend on the seed, the
// node's name and the element's index only: not on the schedule, the thread, or which rank draws
// which shard. They are not torch's mt19937 numbers (docs/RANDOM.md says why).
#include <cmath>
#include <optional>
#include <string>
#include <vector>

#include "executor/kernels/cpu/broadcast.h"
#include "executor/kernels/cpu/draw_runs.h"
#include "executor/kernels/cpu/dtype_dispatch.h"
#include "executor/kernels/cpu/output_slot.h"
#include "executor/kernels/cpu/seeded_draws.h"
#include "executor/kernels/cpu/tensor_copy.h"
#include "executor/random/torch_philox.h"

namespace nrt::exec::cpu {
namespace {

using random::TorchPhiloxKey;

TorchPhiloxKey draw_key(const KernelContext& ctx) {
  return random::torch_key_fold_in({ctx.seed(), 0}, ctx.random_stream());
}

Status host_only(const KernelContext& ctx) {
  if (ctx.device().kind != DeviceKind::kCpu) return ctx.error("seeded random draws run on the host only");
  return Status::Ok();
}

// Draws the node's elements of an output of `sizes` (all, or a sharded draw's own: draw_runs) in
// `dtype`'s layout into `out` (contiguous, `dtype`): uniform in [a, b) or normal (mean a, std b).
Status draw_into(const KernelContext& ctx, const std::vector<int64_t>& sizes, bool normal, double a, double b,
                 ScalarType dtype, void* out) {
  NRT_TRY(runs, draw_runs(ctx, sizes));
  const TorchPhiloxKey key = draw_key(ctx);
  auto* bytes = static_cast<uint8_t*>(out);
  for (const DrawRun& run : *runs) {
    uint8_t* at = bytes + static_cast<size_t>(run.local_first) * element_size(dtype);
    if (normal) random::torch_normal(key, dtype, a, b, run.global_first, run.count, at);
    if (!normal) random::torch_uniform(key, dtype, a, b, run.global_first, run.count, at);
  }
  return Status::Ok();
}

// A contiguous float64 tensor of `sizes` with the node's draw, elements in `layout`'s layout
// (float32's four per block, float64's two).
Result<Tensor> draw_doubles(const KernelContext& ctx, const std::vector<int64_t>& sizes, bool normal, double a,
                            double b, ScalarType layout) {
  Tensor values = Tensor::empty(ScalarType::FLOAT64, sizes);
  if (layout == ScalarType::FLOAT64) {
    NRT_RETURN_IF_ERROR(draw_into(ctx, sizes, normal, a, b, ScalarType::FLOAT64, values.raw_data()));
    return values;
  }
  const int64_t n = values.numel();
  std::vector<float> floats(static_cast<size_t>(n));
  NRT_RETURN_IF_ERROR(draw_into(ctx, sizes, normal, a, b, ScalarType::FLOAT32, floats.data()));
  auto* out = values.data<double>();
  for (int64_t i = 0; i < n; ++i) out[i] = floats[static_cast<size_t>(i)];
  return values;
}

// Output 0 of `dtype` and `sizes` drawn from the node's key in that dtype's own layout.
Status draw_output(KernelContext& ctx, ScalarType dtype, const std::vector<int64_t>& sizes, bool normal, double a,
                   double b) {
  NRT_RETURN_IF_ERROR(host_only(ctx));
  if (!random::torch_draws_floating(dtype)) {
    return ctx.error(std::string(normal ? "normal" : "uniform") + " draws need a floating dtype, got " +
                     std::string(short_name(dtype)));
  }
  if (normal && !(b >= 0.0)) return ctx.error("normal expects std >= 0.0, got " + std::to_string(b));
  if (!normal && !(a <= b)) {
    return ctx.error("uniform expects from <= to, got from=" + std::to_string(a) + " to=" + std::to_string(b));
  }
  NRT_TRY(slot, OutputSlot::bind(ctx, 0, dtype, sizes));
  Tensor out = slot->staging(dtype);
  NRT_RETURN_IF_ERROR(draw_into(ctx, sizes, normal, a, b, dtype, out.raw_data()));
  slot->commit();
  return Status::Ok();
}

// rand / randn(SymInt[] size, *, ScalarType? dtype=None, ...)
template <bool kNormal>
Status from_size(KernelContext& ctx) {
  NRT_TRY(sizes, ctx.int_list("size", 0));
  NRT_TRY(dtype, ctx.scalar_type("dtype", 1));
  return draw_output(ctx, dtype->value_or(ScalarType::FLOAT32), *sizes, kNormal, 0.0, 1.0);
}

// rand_like / randn_like(Tensor self, *, ScalarType? dtype=None, ...)
template <bool kNormal>
Status like(KernelContext& ctx) {
  NRT_TRY(self, ctx.tensor("self", 0));
  NRT_TRY(dtype, ctx.scalar_type("dtype", 1));
  return draw_output(ctx, dtype->value_or(self->dtype()), self->sizes(), kNormal, 0.0, 1.0);
}

// normal_functional(Tensor self, float mean=0., float std=1., *, Generator? generator=None), also
// the functional form nrt gives normal_ (its in-place node writes the result back).
Status normal_like_self(KernelContext& ctx) {
  NRT_TRY(self, ctx.tensor("self", 0));
  NRT_TRY(mean, ctx.real("mean", 1, 0.0));
  NRT_TRY(std, ctx.real("std", 2, 1.0));
  return draw_output(ctx, self->dtype(), self->sizes(), true, *mean, *std);
}

// uniform(Tensor self, float from=0., float to=1., *, Generator? generator=None) (uniform_'s functional form)
Status uniform_like_self(KernelContext& ctx) {
  NRT_TRY(self, ctx.tensor("self", 0));
  NRT_TRY(from, ctx.real("from", 1, 0.0));
  NRT_TRY(to, ctx.real("to", 2, 1.0));
  return draw_output(ctx, self->dtype(), self->sizes(), false, *from, *to);
}

// normal.float_float(float mean, float std, SymInt[] size, *, Generator?, ScalarType? dtype=None, ...)
Status normal_float_float(KernelContext& ctx) {
  NRT_TRY(mean, ctx.real("mean", 0));
  NRT_TRY(std, ctx.real("std", 1));
  NRT_TRY(sizes, ctx.int_list("size", 2));
  NRT_TRY(dtype, ctx.scalar_type("dtype", 4));
  return draw_output(ctx, dtype->value_or(ScalarType::FLOAT32), *sizes, true, *mean, *std);
}

// normal with a tensor mean or std (broadcast together): mean + std * z, z standard normal in the
// output dtype's layout, computed in float64.
Status normal_with_tensors(KernelContext& ctx, const Tensor& mean, const Tensor& std, ScalarType dtype) {
  NRT_RETURN_IF_ERROR(host_only(ctx));
  if (!random::torch_draws_floating(dtype)) {
    return ctx.error("normal needs a floating dtype, got " + std::string(short_name(dtype)));
  }
  const auto sizes = broadcast_shapes(mean.sizes(), std.sizes());
  if (!sizes) return ctx.error("mean and std do not broadcast together");
  const Tensor mean64 = converted_copy(expand_to(mean, *sizes), ScalarType::FLOAT64);
  const Tensor std64 = converted_copy(expand_to(std, *sizes), ScalarType::FLOAT64);
  const auto* m = mean64.data<double>();
  const auto* s = std64.data<double>();
  for (int64_t i = 0; i < std64.numel(); ++i) {
    if (!(s[i] >= 0.0)) return ctx.error("normal expects all elements of std >= 0.0");
  }
  NRT_TRY(values, draw_doubles(ctx, *sizes, true, 0.0, 1.0, dtype == ScalarType::FLOAT64 ? dtype : ScalarType::FLOAT32));
  auto* v = values->data<double>();
  for (int64_t i = 0; i < values->numel(); ++i) v[i] = m[i] + s[i] * v[i];
  NRT_TRY(out, bind_output(ctx, 0, dtype, *sizes));
  copy_into(*out, *values);
  return Status::Ok();
}


// normal.Tensor_float(Tensor mean, float std=1., *, Generator? generator=None)
Status normal_tensor_float(KernelContext& ctx) {
  NRT_TRY(mean, ctx.tensor("mean", 0));
  NRT_TRY(std, ctx.real("std", 1, 1.0));
  NRT_TRY(std_tensor, scalar_on(ScalarValue::of_float(*std), ScalarType::FLOAT64, Device{}));
  return normal_with_tensors(ctx, *mean, *std_tensor, mean->dtype());
}

// normal.float_Tensor(float mean, Tensor std, *, Generator? generator=None)
Status normal_float_tensor(KernelContext& ctx) {
  NRT_TRY(mean, ctx.real("mean", 0));
  NRT_TRY(std, ctx.tensor("std", 1));
  NRT_TRY(mean_tensor, scalar_on(ScalarValue::of_float(*mean), ScalarType::FLOAT64, Device{}));
  return normal_with_tensors(ctx, *mean_tensor, *std, std->dtype());
}

// normal.Tensor_Tensor(Tensor mean, Tensor std, *, Generator? generator=None)
Status normal_tensor_tensor(KernelContext& ctx) {
  NRT_TRY(mean, ctx.tensor("mean", 0));
  NRT_TRY(std, ctx.tensor("std", 1));
  const ScalarType dtype = mean->dtype() == ScalarType::FLOAT64 || std->dtype() == ScalarType::FLOAT64
                               ? ScalarType::FLOAT64
                               : mean->dtype();
  return normal_with_tensors(ctx, *mean, *std, dtype);
}

// Integers in [low, high): 64 random bits per element (torch's 8-byte layout, two per block),
// reduced modulo the range, then converted to `dtype`.
Status draw_integers(KernelContext& ctx, int64_t low, int64_t high, const std::vector<int64_t>& sizes, ScalarType dtype) {
  NRT_RETURN_IF_ERROR(host_only(ctx));
  if (!is_floating_dtype(dtype) && !is_integral_dtype(dtype)) return unsupported_dtype(ctx, dtype);
  if (high <= low) {
    return ctx.error("random_ expects 'from' to be less than 'to', but got from=" + std::to_string(low) +
                     " >= to=" + std::to_string(high));
  }
  Tensor values = Tensor::empty(ScalarType::INT64, sizes);
  NRT_TRY(runs, draw_runs(ctx, sizes));
  const random::TorchIntRange range{false, static_cast<uint64_t>(low),
                                    static_cast<uint64_t>(high) - static_cast<uint64_t>(low)};
  const TorchPhiloxKey key = draw_key(ctx);
  for (const DrawRun& run : *runs) {
    random::torch_randint(key, ScalarType::INT64, range, run.global_first, run.count,
                          values.data<int64_t>() + run.local_first);
  }
  NRT_TRY(out, bind_output(ctx, 0, dtype, sizes));
  copy_into(*out, values);
  return Status::Ok();
}

// randint(SymInt high, SymInt[] size, *, ScalarType? dtype=None, ...) (dtype default int64)
Status randint_high(KernelContext& ctx) {
  NRT_TRY(high, ctx.int64("high", 0));
  NRT_TRY(sizes, ctx.int_list("size", 1));
  NRT_TRY(dtype, ctx.scalar_type("dtype", 2));
  return draw_integers(ctx, 0, *high, *sizes, dtype->value_or(ScalarType::INT64));
}

// randint.low(SymInt low, SymInt high, SymInt[] size, *, ScalarType? dtype=None, ...)
Status randint_low(KernelContext& ctx) {
  NRT_TRY(low, ctx.int64("low", 0));
  NRT_TRY(high, ctx.int64("high", 1));
  NRT_TRY(sizes, ctx.int_list("size", 2));
  NRT_TRY(dtype, ctx.scalar_type("dtype", 3));
  return draw_integers(ctx, *low, *high, *sizes, dtype->value_or(ScalarType::INT64));
}

// randint_like(Tensor self, SymInt high, *, ScalarType? dtype=None, ...)
Status randint_like_high(KernelContext& ctx) {
  NRT_TRY(self, ctx.tensor("self", 0));
  NRT_TRY(high, ctx.int64("high", 1));
  NRT_TRY(dtype, ctx.scalar_type("dtype", 2));
  return draw_integers(ctx, 0, *high, self->sizes(), dtype->value_or(self->dtype()));
}

// randint_like.low_dtype(Tensor self, SymInt low, SymInt high, *, ScalarType? dtype=None, ...)
Status randint_like_low(KernelContext& ctx) {
  NRT_TRY(self, ctx.tensor("self", 0));
  NRT_TRY(low, ctx.int64("low", 1));
  NRT_TRY(high, ctx.int64("high", 2));
  NRT_TRY(dtype, ctx.scalar_type("dtype", 3));
  return draw_integers(ctx, *low, *high, self->sizes(), dtype->value_or(self->dtype()));
}

// 1 where a uniform draw in [0, 1) (float64 layout) is below p, else 0, in self's dtype and shape.
Status bernoulli_of(KernelContext& ctx, const Tensor& self, const Tensor& p) {
  NRT_RETURN_IF_ERROR(host_only(ctx));
  if (!is_kernel_dtype(self.dtype())) return unsupported_dtype(ctx, self.dtype());
  const Tensor p64 = converted_copy(expand_to(p, self.sizes()), ScalarType::FLOAT64);
  const auto* probability = p64.data<double>();
  for (int64_t i = 0; i < p64.numel(); ++i) {
    if (!(probability[i] >= 0.0 && probability[i] <= 1.0)) {
      return ctx.error("bernoulli expects 0 <= p <= 1, got " + std::to_string(probability[i]));
    }
  }
  NRT_TRY(values, draw_doubles(ctx, self.sizes(), false, 0.0, 1.0, ScalarType::FLOAT64));
  auto* v = values->data<double>();
  for (int64_t i = 0; i < values->numel(); ++i) v[i] = v[i] < probability[i] ? 1.0 : 0.0;
  NRT_TRY(out, bind_output(ctx, 0, self.dtype(), self.sizes()));
  copy_into(*out, *values);
  return Status::Ok();
}

// bernoulli(Tensor self, *, Generator? generator=None): self holds the probabilities.
Status bernoulli_self(KernelContext& ctx) {
  NRT_TRY(self, ctx.tensor("self", 0));
  return bernoulli_of(ctx, *self, *self);
}

// bernoulli.p(Tensor self, float p=0.5, *, Generator?), and bernoulli.float, nrt's functional
// form of bernoulli_.float(Tensor(a!) self, float p=0.5, *, Generator?).
Status bernoulli_float(KernelContext& ctx) {
  NRT_TRY(self, ctx.tensor("self", 0));
  NRT_TRY(p, ctx.real("p", 1, 0.5));
  NRT_TRY(p_tensor, scalar_on(ScalarValue::of_float(*p), ScalarType::FLOAT64, Device{}));
  return bernoulli_of(ctx, *self, *p_tensor);
}

// bernoulli.Tensor(Tensor self, Tensor p, *, Generator?) (bernoulli_.Tensor's functional form)
Status bernoulli_tensor(KernelContext& ctx) {
  NRT_TRY(self, ctx.tensor("self", 0));
  NRT_TRY(p, ctx.tensor("p", 1));
  return bernoulli_of(ctx, *self, *p);
}

constexpr DeviceKind kCpu = DeviceKind::kCpu;
const KernelRegistration kRegistrations[] = {
    {"aten::rand.default", kCpu, {&from_size<false>, false}},
    {"aten::randn.default", kCpu, {&from_size<true>, false}},
    {"aten::rand_like.default", kCpu, {&like<false>, false}},
    {"aten::randn_like.default", kCpu, {&like<true>, false}},
    {"aten::randint.default", kCpu, {&randint_high, false}},
    {"aten::randint.low", kCpu, {&randint_low, false}},
    {"aten::randint_like.default", kCpu, {&randint_like_high, false}},
    {"aten::randint_like.low_dtype", kCpu, {&randint_like_low, false}},
    {"aten::normal_functional.default", kCpu, {&normal_like_self, false}},
    {"aten::normal.default", kCpu, {&normal_like_self, false}},  // normal_.default's functional form
    {"aten::normal.float_float", kCpu, {&normal_float_float, false}},
    {"aten::normal.Tensor_float", kCpu, {&normal_tensor_float, false}},
    {"aten::normal.float_Tensor", kCpu, {&normal_float_tensor, false}},
    {"aten::normal.Tensor_Tensor", kCpu, {&normal_tensor_tensor, false}},
    {"aten::uniform.default", kCpu, {&uniform_like_self, false}},
    {"aten::bernoulli.default", kCpu, {&bernoulli_self, false}},
    {"aten::bernoulli.p", kCpu, {&bernoulli_float, false}},
    {"aten::bernoulli.float", kCpu, {&bernoulli_float, false}},  // bernoulli_.float's functional form
    {"aten::bernoulli.Tensor", kCpu, {&bernoulli_tensor, false}},
};

}  // namespace

Status dropout_in_training(KernelContext& ctx, const Tensor& input, double p, bool mask) {
  NRT_RETURN_IF_ERROR(host_only(ctx));
  if (!(p >= 0.0 && p <= 1.0)) return ctx.error("dropout probability has to be between 0 and 1, but got " + std::to_string(p));
  if (!is_floating_dtype(input.dtype())) return unsupported_dtype(ctx, input.dtype());
  const double keep = 1.0 - p;
  const double scale = keep == 0.0 ? 0.0 : 1.0 / keep;
  // Uniforms in float32's layout (four per block): element i is kept when its draw is below 1 - p.
  NRT_TRY(drawn, draw_doubles(ctx, input.sizes(), false, 0.0, 1.0, ScalarType::FLOAT32));
  Tensor values = std::move(*drawn);
  const Tensor x = converted_copy(input, ScalarType::FLOAT64);
  Tensor kept = Tensor::empty(ScalarType::BOOL, input.sizes());
  auto* v = values.data<double>();
  const auto* xs = x.data<double>();
  auto* k = kept.data<bool>();
  for (int64_t i = 0; i < values.numel(); ++i) {
    k[i] = v[i] < keep;
    v[i] = k[i] ? xs[i] * scale : 0.0;
  }
  // A fresh tensor (dropout is registered as a view for inference, where it returns its input).
  Tensor out = Tensor::empty(input.dtype(), input.sizes());
  copy_into(out, values);
  NRT_RETURN_IF_ERROR(set_output(ctx, 0, out));
  if (mask) {
    NRT_TRY(mask_slot, OutputSlot::bind_secondary(ctx, 1, ScalarType::BOOL, input.sizes()));
    copy_into(mask_slot->tensor(), kept);
  }
  return Status::Ok();
}

}  // namespace nrt::exec::cpu
