// Normalisations, computed in float (double for float64) with statistics accumulated in double:
// layer_norm/native_layer_norm (over the trailing normalized_shape; native_ also returns mean and
// rstd shaped [*leading, 1, ...]), rms_norm (eps None means the dtype's machine epsilon), group_norm
// and native_group_norm (per sample and group; native_ also returns mean and rstd [N, groups]),
// _weight_norm (v scaled to g over every dim but one), and batch norm in inference form (running
// statistics; per channel along dim 1).
#include <algorithm>
#include <cmath>
#include <limits>

#include "executor/kernels/cpu/broadcast.h"
#include "executor/kernels/cpu/cpu_features.h"
#include "executor/kernels/cpu/dimensions.h"
#include "executor/kernels/cpu/dtype_dispatch.h"
#include "executor/kernels/cpu/layer_norm_float_rows.h"
#include "executor/kernels/cpu/layer_norm_float_rows_body.h"
#include "executor/kernels/cpu/output_slot.h"
#include "executor/kernels/cpu/tensor_copy.h"
#include "executor/runtime/intra_op_threads.h"

namespace nrt::exec::cpu {

void layer_norm_float_rows(const float* x, float* y, const float* weight, const float* bias, int64_t rows,
                           int64_t columns, double eps, float* mean_out, float* rstd_out) {
  layer_norm_float_rows_body(x, y, weight, bias, rows, columns, eps, mean_out, rstd_out);
}

namespace {

ScalarType compute_dtype(ScalarType t) { return t == ScalarType::FLOAT64 ? ScalarType::FLOAT64 : ScalarType::FLOAT32; }

// A contiguous compute-dtype copy of an optional per-feature parameter with `sizes`.
Result<std::optional<Tensor>> read_parameter(const KernelContext& ctx, std::string_view name, int position,
                                             const std::vector<int64_t>& sizes, ScalarType compute) {
  NRT_TRY(t, ctx.optional_tensor(name, position));
  if (!t->has_value()) return std::optional<Tensor>{};
  if (!is_kernel_dtype((*t)->dtype())) return unsupported_dtype(ctx, (*t)->dtype());
  if ((*t)->sizes() != sizes) {
    return ctx.error(std::string(name) + " has shape " + shape_string((*t)->sizes()) + ", expected " +
                     shape_string(sizes));
  }
  return std::optional<Tensor>(contiguous_as(**t, compute));
}

struct RowLayout {
  int64_t rows = 1;     // product of the leading dims
  int64_t columns = 1;  // product of normalized_shape
};

Result<RowLayout> normalized_rows(const KernelContext& ctx, const Tensor& input, const std::vector<int64_t>& shape) {
  const auto n = static_cast<int64_t>(shape.size());
  if (n > input.dim()) return ctx.error("normalized_shape " + shape_string(shape) + " exceeds the input's rank");
  RowLayout layout;
  for (int64_t i = 0; i < input.dim(); ++i) {
    const int64_t s = input.sizes()[static_cast<size_t>(i)];
    if (i < input.dim() - n) {
      layout.rows *= s;
    } else {
      if (s != shape[static_cast<size_t>(i - (input.dim() - n))]) {
        return ctx.error("normalized_shape " + shape_string(shape) + " does not match the input's trailing sizes " +
                         shape_string(input.sizes()));
      }
      layout.columns *= s;
    }
  }
  return layout;
}

// The mean and rstd outputs (1 and 2) of the native_ normalisations, when the op has them.
struct StatisticOutputs {
  std::optional<OutputSlot> mean, rstd;
  Tensor mean_staging, rstd_staging;
  template <class C>
  C* mean_data() {
    return mean ? mean_staging.data<C>() : nullptr;
  }
  template <class C>
  C* rstd_data() {
    return rstd ? rstd_staging.data<C>() : nullptr;
  }
  void commit() {
    if (mean) mean->commit();
    if (rstd) rstd->commit();
  }
};

Result<StatisticOutputs> bind_statistics(KernelContext& ctx, bool wanted, ScalarType dtype,
                                         const std::vector<int64_t>& sizes, ScalarType compute) {
  StatisticOutputs stats;
  if (!wanted) return stats;
  NRT_TRY(m, OutputSlot::bind_secondary(ctx, 1, dtype, sizes));
  NRT_TRY(r, OutputSlot::bind_secondary(ctx, 2, dtype, sizes));
  stats.mean = *m;
  stats.rstd = *r;
  stats.mean_staging = stats.mean->staging(compute);
  stats.rstd_staging = stats.rstd->staging(compute);
  return stats;
}

template <class C>
void layer_norm_rows(const C* x, C* y, const C* weight, const C* bias, RowLayout layout, double eps, C* mean_out,
                     C* rstd_out) {
  for (int64_t r = 0; r < layout.rows; ++r) {
    const C* row = x + r * layout.columns;
    double sum = 0.0;
    for (int64_t c = 0; c < layout.columns; ++c) sum += static_cast<double>(row[c]);
    const double mean = layout.columns ? sum / static_cast<double>(layout.columns) : 0.0;
    double squares = 0.0;
    for (int64_t c = 0; c < layout.columns; ++c) {
      const double d = static_cast<double>(row[c]) - mean;
      squares += d * d;
    }
    const double variance = layout.columns ? squares / static_cast<double>(layout.columns) : 0.0;
    const double rstd = 1.0 / std::sqrt(variance + eps);
    C* out = y + r * layout.columns;
    for (int64_t c = 0; c < layout.columns; ++c) {
      double v = (static_cast<double>(row[c]) - mean) * rstd;
      if (weight) v *= static_cast<double>(weight[c]);
      if (bias) v += static_cast<double>(bias[c]);
      out[c] = static_cast<C>(v);
    }
    if (mean_out) mean_out[r] = static_cast<C>(mean);
    if (rstd_out) rstd_out[r] = static_cast<C>(rstd);
  }
}

// float32 rows: layer_norm_float_rows.h's loops, in the AVX-512 build where the CPU has it.
template <>
void layer_norm_rows<float>(const float* x, float* y, const float* weight, const float* bias, RowLayout layout,
                            double eps, float* mean_out, float* rstd_out) {
  static const bool avx512 = cpu_has_avx512f();
  if (avx512) {
    avx512::layer_norm_float_rows(x, y, weight, bias, layout.rows, layout.columns, eps, mean_out, rstd_out);
  } else {
    layer_norm_float_rows(x, y, weight, bias, layout.rows, layout.columns, eps, mean_out, rstd_out);
  }
}

// Rows split over the intra-op threads (intra_op_threads.h), each row normalised by one thread as
// above, so the bits do not depend on the thread count. BERT-base's 128x768 at 2 threads: 0.030 ms
// a call against 0.055 on one (nrt-run --profile; in BERT itself, after a product on two threads,
// one thread took up to 0.135 ms, its rows partly in the other core's cache).
template <class C>
void layer_norm_rows_threaded(const C* x, C* y, const C* weight, const C* bias, RowLayout layout, double eps,
                              C* mean_out, C* rstd_out) {
  const int64_t grain = std::max<int64_t>(1, (int64_t{1} << 14) / std::max<int64_t>(layout.columns, 1));
  parallel_for(layout.rows, grain, [&](int64_t begin, int64_t end) {
    const int64_t offset = begin * layout.columns;
    layer_norm_rows<C>(x + offset, y + offset, weight, bias, RowLayout{end - begin, layout.columns}, eps,
                       mean_out ? mean_out + begin : nullptr, rstd_out ? rstd_out + begin : nullptr);
  });
}

// native_layer_norm(Tensor input, SymInt[] normalized_shape, Tensor? weight, Tensor? bias, float eps)
//   -> (Tensor, Tensor mean, Tensor rstd); layer_norm(..., float eps=1e-05, bool cudnn_enable=True).
Status layer_norm_with(KernelContext& ctx, bool with_statistics) {
  NRT_TRY(input, ctx.tensor("input", 0));
  if (!is_floating_dtype(input->dtype())) return unsupported_dtype(ctx, input->dtype());
  NRT_TRY(shape, ctx.int_list("normalized_shape", 1));
  NRT_TRY(eps, ctx.real("eps", 4, 1e-5));
  NRT_TRY(layout, normalized_rows(ctx, *input, *shape));
  const ScalarType compute = compute_dtype(input->dtype());
  NRT_TRY(weight, read_parameter(ctx, "weight", 2, *shape, compute));
  NRT_TRY(bias, read_parameter(ctx, "bias", 3, *shape, compute));
  NRT_TRY(out, OutputSlot::bind(ctx, 0, input->dtype(), input->sizes()));
  std::vector<int64_t> stat_sizes = input->sizes();
  for (size_t i = input->sizes().size() - shape->size(); i < stat_sizes.size(); ++i) stat_sizes[i] = 1;
  NRT_TRY(stats, bind_statistics(ctx, with_statistics, input->dtype(), stat_sizes, compute));
  const Tensor x = contiguous_as(*input, compute);
  Tensor y = out->staging(compute);
  auto run = [&](auto zero) {
    using C = decltype(zero);
    layer_norm_rows_threaded<C>(x.data<C>(), y.data<C>(), *weight ? (*weight)->data<C>() : nullptr,
                                *bias ? (*bias)->data<C>() : nullptr, *layout, *eps, stats->mean_data<C>(),
                                stats->rstd_data<C>());
  };
  if (compute == ScalarType::FLOAT64) {
    run(0.0);
  } else {
    run(0.0f);
  }
  out->commit();
  stats->commit();
  return Status::Ok();
}

// group_norm(Tensor input, int num_groups, Tensor? weight=None, Tensor? bias=None, float eps=1e-05,
// bool cudnn_enabled=True) and native_group_norm(Tensor input, Tensor? weight, Tensor? bias, SymInt N,
// SymInt C, SymInt HxW, int group, float eps) -> (Tensor, Tensor mean, Tensor rstd): statistics per
// (sample, group) over the group's channels at every position, then weight and bias per channel.
Status group_norm_with(KernelContext& ctx, bool native) {
  NRT_TRY(input, ctx.tensor("input", 0));
  if (!is_floating_dtype(input->dtype())) return unsupported_dtype(ctx, input->dtype());
  if (input->dim() < 2) return ctx.error("expects an input of at least 2 dims [N, C, ...], got " + shape_string(input->sizes()));
  NRT_TRY(groups, native ? ctx.int64("group", 6) : ctx.int64("num_groups", 1));
  NRT_TRY(eps, native ? ctx.real("eps", 7) : ctx.real("eps", 4, 1e-5));
  const int64_t n = input->sizes()[0], channels = input->sizes()[1];
  if (*groups <= 0 || channels % *groups != 0) {
    return ctx.error("num_groups " + std::to_string(*groups) + " must divide the " + std::to_string(channels) +
                     " channels");
  }
  const int64_t positions = n != 0 && channels != 0 ? input->numel() / (n * channels) : 0;
  const ScalarType compute = compute_dtype(input->dtype());
  NRT_TRY(weight, read_parameter(ctx, "weight", native ? 1 : 2, {channels}, compute));
  NRT_TRY(bias, read_parameter(ctx, "bias", native ? 2 : 3, {channels}, compute));
  NRT_TRY(out, OutputSlot::bind(ctx, 0, input->dtype(), input->sizes()));
  NRT_TRY(stats, bind_statistics(ctx, native, input->dtype(), {n, *groups}, compute));
  const Tensor x = contiguous_as(*input, compute);
  Tensor y = out->staging(compute);
  const RowLayout layout{n * *groups, channels / *groups * positions};
  auto run = [&](auto zero) {
    using C = decltype(zero);
    layer_norm_rows_threaded<C>(x.data<C>(), y.data<C>(), nullptr, nullptr, layout, *eps, stats->mean_data<C>(),
                                stats->rstd_data<C>());
    if (!*weight && !*bias) return;
    C* values = y.data<C>();
    const C* w = *weight ? (*weight)->data<C>() : nullptr;
    const C* b = *bias ? (*bias)->data<C>() : nullptr;
    for (int64_t sample = 0; sample < n; ++sample) {
      for (int64_t c = 0; c < channels; ++c) {
        C* plane = values + (sample * channels + c) * positions;
        const C scale = w ? w[c] : C(1), shift = b ? b[c] : C(0);
        for (int64_t i = 0; i < positions; ++i) plane[i] = plane[i] * scale + shift;
      }
    }
  };
  if (compute == ScalarType::FLOAT64) {
    run(0.0);
  } else {
    run(0.0f);
  }
  out->commit();
  stats->commit();
  return Status::Ok();
}

// _weight_norm(Tensor v, Tensor g, int dim=0): v * g / ||v||, the 2-norm taken over every dim but
// `dim` (dim -1: over all of v), with one g per index along dim (one g for dim -1).
Status weight_norm(KernelContext& ctx) {
  NRT_TRY(v, ctx.tensor("v", 0));
  NRT_TRY(g, ctx.tensor("g", 1));
  NRT_TRY(dim, ctx.int64("dim", 2, 0));
  if (!is_floating_dtype(v->dtype())) return unsupported_dtype(ctx, v->dtype());
  int64_t outer = 1, extent = 1, inner = v->numel();
  if (*dim != -1) {
    NRT_TRY(d, wrap_dim(ctx, *dim, v->dim()));
    extent = v->sizes()[static_cast<size_t>(*d)];
    outer = product(std::vector<int64_t>(v->sizes().begin(), v->sizes().begin() + *d));
    inner = product(std::vector<int64_t>(v->sizes().begin() + *d + 1, v->sizes().end()));
  }
  if (g->numel() != extent) {
    return ctx.error("g " + shape_string(g->sizes()) + " must hold one value per index of dim " + std::to_string(*dim) +
                     " of v " + shape_string(v->sizes()));
  }
  const ScalarType compute = compute_dtype(v->dtype());
  const Tensor x = contiguous_as(*v, compute), gains = contiguous_as(*g, compute);
  NRT_TRY(out, OutputSlot::bind(ctx, 0, v->dtype(), v->sizes()));
  Tensor y = out->staging(compute);
  auto run = [&](auto zero) {
    using C = decltype(zero);
    const C* in = x.data<C>();
    const C* gain = gains.data<C>();
    C* values = y.data<C>();
    std::vector<double> squares(static_cast<size_t>(extent), 0.0);
    for (int64_t o = 0; o < outer; ++o) {
      for (int64_t k = 0; k < extent; ++k) {
        const C* row = in + (o * extent + k) * inner;
        for (int64_t i = 0; i < inner; ++i) squares[static_cast<size_t>(k)] += static_cast<double>(row[i]) * row[i];
      }
    }
    for (int64_t o = 0; o < outer; ++o) {
      for (int64_t k = 0; k < extent; ++k) {
        const double scale = static_cast<double>(gain[k]) / std::sqrt(squares[static_cast<size_t>(k)]);
        const size_t at = static_cast<size_t>((o * extent + k) * inner);
        for (int64_t i = 0; i < inner; ++i) values[at + i] = static_cast<C>(static_cast<double>(in[at + i]) * scale);
      }
    }
  };
  if (compute == ScalarType::FLOAT64) {
    run(0.0);
  } else {
    run(0.0f);
  }
  out->commit();
  return Status::Ok();
}

double machine_epsilon(ScalarType t) {
  switch (t) {
    case ScalarType::FLOAT64: return std::numeric_limits<double>::epsilon();
    case ScalarType::FLOAT16: return 0x1p-10;
    case ScalarType::BFLOAT16: return 0x1p-7;
    default: return std::numeric_limits<float>::epsilon();
  }
}

// rms_norm(Tensor input, SymInt[] normalized_shape, Tensor? weight=None, float? eps=None)
Status rms_norm(KernelContext& ctx) {
  NRT_TRY(input, ctx.tensor("input", 0));
  if (!is_floating_dtype(input->dtype())) return unsupported_dtype(ctx, input->dtype());
  NRT_TRY(shape, ctx.int_list("normalized_shape", 1));
  NRT_TRY(eps, ctx.real("eps", 3, machine_epsilon(input->dtype())));
  NRT_TRY(layout, normalized_rows(ctx, *input, *shape));
  const ScalarType compute = compute_dtype(input->dtype());
  NRT_TRY(weight, read_parameter(ctx, "weight", 2, *shape, compute));
  NRT_TRY(out, OutputSlot::bind(ctx, 0, input->dtype(), input->sizes()));
  const Tensor x = contiguous_as(*input, compute);
  Tensor y = out->staging(compute);
  auto run = [&](auto zero) {
    using C = decltype(zero);
    const C* w = *weight ? (*weight)->data<C>() : nullptr;
    for (int64_t r = 0; r < layout->rows; ++r) {
      const C* row = x.data<C>() + r * layout->columns;
      C* dst = y.data<C>() + r * layout->columns;
      double squares = 0.0;
      for (int64_t c = 0; c < layout->columns; ++c) squares += static_cast<double>(row[c]) * static_cast<double>(row[c]);
      const double mean_square = layout->columns ? squares / static_cast<double>(layout->columns) : 0.0;
      const double scale = 1.0 / std::sqrt(mean_square + *eps);
      for (int64_t c = 0; c < layout->columns; ++c) {
        double v = static_cast<double>(row[c]) * scale;
        if (w) v *= static_cast<double>(w[c]);
        dst[c] = static_cast<C>(v);
      }
    }
  };
  if (compute == ScalarType::FLOAT64) {
    run(0.0);
  } else {
    run(0.0f);
  }
  out->commit();
  return Status::Ok();
}

// Inference batch norm; weight/bias positions 1, 2, running stats 3, 4; eps at `eps_position`.
// Outputs 1 and 2 (when the op has them) are empty [0] tensors, as torch's inference path returns.
Status batch_norm_with(KernelContext& ctx, int eps_position, bool with_empty_statistics) {
  NRT_TRY(input, ctx.tensor("input", 0));
  if (!is_floating_dtype(input->dtype())) return unsupported_dtype(ctx, input->dtype());
  if (input->dim() < 2) return ctx.error("input must have at least 2 dimensions, got " + shape_string(input->sizes()));
  const int64_t channels = input->sizes()[1];
  const std::vector<int64_t> per_channel{channels};
  NRT_TRY(weight, read_parameter(ctx, "weight", 1, per_channel, ScalarType::FLOAT64));
  NRT_TRY(bias, read_parameter(ctx, "bias", 2, per_channel, ScalarType::FLOAT64));
  NRT_TRY(running_mean, read_parameter(ctx, "running_mean", 3, per_channel, ScalarType::FLOAT64));
  NRT_TRY(running_var, read_parameter(ctx, "running_var", 4, per_channel, ScalarType::FLOAT64));
  if (!*running_mean || !*running_var) return ctx.error("inference batch norm needs running_mean and running_var");
  NRT_TRY(eps, ctx.real("eps", eps_position));
  // y = x * scale[c] + shift[c]
  std::vector<double> scale(static_cast<size_t>(channels)), shift(static_cast<size_t>(channels));
  for (int64_t c = 0; c < channels; ++c) {
    const double inv_std = 1.0 / std::sqrt((*running_var)->data<double>()[c] + *eps);
    const double w = *weight ? (*weight)->data<double>()[c] : 1.0;
    const double b = *bias ? (*bias)->data<double>()[c] : 0.0;
    scale[static_cast<size_t>(c)] = w * inv_std;
    shift[static_cast<size_t>(c)] = b - (*running_mean)->data<double>()[c] * w * inv_std;
  }
  NRT_TRY(out, OutputSlot::bind(ctx, 0, input->dtype(), input->sizes()));
  const ScalarType compute = compute_dtype(input->dtype());
  const Tensor x = contiguous_as(*input, compute);
  Tensor y = out->staging(compute);
  int64_t inner = 1;
  for (int64_t d = 2; d < input->dim(); ++d) inner *= input->sizes()[static_cast<size_t>(d)];
  const int64_t batches = input->sizes()[0];
  auto run = [&](auto zero) {
    using C = decltype(zero);
    const C* src = x.data<C>();
    C* dst = y.data<C>();
    for (int64_t n = 0; n < batches; ++n) {
      for (int64_t c = 0; c < channels; ++c) {
        const auto a = static_cast<C>(scale[static_cast<size_t>(c)]);
        const auto b = static_cast<C>(shift[static_cast<size_t>(c)]);
        const int64_t base = (n * channels + c) * inner;
        for (int64_t i = 0; i < inner; ++i) dst[base + i] = src[base + i] * a + b;
      }
    }
  };
  if (compute == ScalarType::FLOAT64) {
    run(0.0);
  } else {
    run(0.0f);
  }
  out->commit();
  if (with_empty_statistics) {
    for (size_t i = 1; i <= 2; ++i) {
      NRT_TRY(stat, OutputSlot::bind_secondary(ctx, i, input->dtype(), {0}));
    }
  }
  return Status::Ok();
}

// batch_norm(input, weight, bias, running_mean, running_var, bool training, float momentum,
//            float eps, bool cudnn_enabled)
Status batch_norm(KernelContext& ctx) {
  NRT_TRY(training, ctx.boolean("training", 5));
  if (*training) return ctx.error("training-mode batch norm is not supported (inference only)");
  return batch_norm_with(ctx, 7, false);
}

constexpr DeviceKind kCpu = DeviceKind::kCpu;
const KernelRegistration kRegistrations[] = {
    {"aten::native_layer_norm.default", kCpu, {[](KernelContext& ctx) { return layer_norm_with(ctx, true); }, false}},
    {"aten::layer_norm.default", kCpu, {[](KernelContext& ctx) { return layer_norm_with(ctx, false); }, false}},
    {"aten::rms_norm.default", kCpu, {&rms_norm, false}},
    {"aten::_weight_norm.default", kCpu, {&weight_norm, false}},
    {"aten::group_norm.default", kCpu, {[](KernelContext& ctx) { return group_norm_with(ctx, false); }, false}},
    {"aten::native_group_norm.default", kCpu, {[](KernelContext& ctx) { return group_norm_with(ctx, true); }, false}},
    // (input, weight, bias, running_mean, running_var, float momentum, float eps)
    {"aten::_native_batch_norm_legit_no_training.default", kCpu,
     {[](KernelContext& ctx) { return batch_norm_with(ctx, 6, true); }, false}},
    {"aten::batch_norm.default", kCpu, {&batch_norm, false}},
};

}  // namespace
}  // namespace nrt::exec::cpu
