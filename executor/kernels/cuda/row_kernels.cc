// Row ops on CUDA: softmax/log_softmax over any dim, layer_norm/native_layer_norm/rms_norm over
// trailing dims, sum/mean over any dims, embedding, and scaled_dot_product_attention's math path
// (two cuBLASLt products around a row softmax). The reduced dims are moved last and made
// contiguous; results come back through the strided copy.
#include <algorithm>
#include <cmath>
#include <numeric>
#include <optional>
#include <string>
#include <vector>

#include "executor/cuda/cuda_status.h"
#include "executor/kernels/cpu/broadcast.h"
#include "executor/kernels/cpu/output_slot.h"
#include "executor/kernels/cpu/tensor_copy.h"
#include "executor/kernels/cuda/kernel_support.h"
#include "executor/kernels/cuda/row_launch.h"
#include "executor/runtime/tensor_copy.h"

namespace nrt::exec::cuda {

namespace {

bool is_floating(ScalarType t) {
  return t == ScalarType::FLOAT32 || t == ScalarType::FLOAT64 || t == ScalarType::FLOAT16 || t == ScalarType::BFLOAT16;
}

Result<int64_t> wrap(const KernelContext& ctx, int64_t dim, int64_t rank) {
  const int64_t r = std::max<int64_t>(rank, 1);
  if (dim < -r || dim >= r) return ctx.error("dim " + std::to_string(dim) + " is out of range for rank " + std::to_string(rank));
  return dim < 0 ? dim + r : dim;
}

// `t` with its dims in `order` (a view).
Tensor permuted(const Tensor& t, const std::vector<int64_t>& order) {
  std::vector<int64_t> sizes, strides;
  for (int64_t d : order) {
    sizes.push_back(t.sizes()[static_cast<size_t>(d)]);
    strides.push_back(t.strides()[static_cast<size_t>(d)]);
  }
  return t.as_strided(sizes, strides, t.storage_offset());
}

// softmax.int(self, dim, dtype?), _softmax(self, dim, half_to_float) and the log_ forms.
Status softmax(KernelContext& ctx, bool log, bool internal) {
  NRT_TRY(self, ctx.tensor("self", 0));
  NRT_TRY(dim, ctx.int64("dim", 1));
  ScalarType dtype = self->dtype();
  if (!internal) {
    NRT_TRY(given, ctx.scalar_type("dtype", 2));
    if (*given) dtype = **given;
  } else {
    NRT_TRY(half_to_float, ctx.boolean("half_to_float", 2, false));
    if (*half_to_float) dtype = ScalarType::FLOAT32;
  }
  if (!is_floating(dtype)) return ctx.error("softmax needs a floating dtype");
  NRT_TRY(d, wrap(ctx, *dim, self->dim()));
  NRT_TRY(out, cpu::bind_output(ctx, 0, dtype, self->sizes()));
  if (self->numel() == 0) return {};
  std::vector<int64_t> order;
  for (int64_t i = 0; i < self->dim(); ++i) {
    if (i != *d) order.push_back(i);
  }
  if (self->dim() > 0) order.push_back(*d);
  NRT_TRY(converted, as_dtype(ctx, *self, dtype));
  NRT_TRY(rows_in, contiguous(ctx, permuted(*converted, order)));
  const int64_t n = self->dim() == 0 ? 1 : self->sizes()[static_cast<size_t>(*d)];
  const Tensor target_view = permuted(*out, order);
  const bool direct = target_view.is_contiguous();
  Tensor result = direct ? target_view : Tensor::empty(dtype, rows_in->sizes(), out->device());
  NRT_RETURN_IF_ERROR(launch_result(ctx,
                                    launch_rows(log ? RowOp::kLogSoftmax : RowOp::kSoftmax, dtype, rows_in->raw_data(),
                                                result.raw_data(), self->numel() / n, n, context_of(ctx).stream),
                                    "softmax kernel launch"));
  if (!direct) NRT_RETURN_IF_ERROR(copy_into(ctx, target_view, result));
  return {};
}

// `self` seen as rows: the dims in `dims` (every dim when empty) moved last, so that each row
// holds the elements one output element reduces over.
struct Rows {
  Tensor data;  // contiguous [rows, n] (converted to `dtype`)
  int64_t rows = 0, n = 1;
  std::vector<int64_t> out_sizes;  // kept dims, with 1s for reduced ones when keepdim
};

Result<Rows> as_rows(KernelContext& ctx, const Tensor& self, const std::vector<int64_t>& dims, bool keepdim,
                     ScalarType dtype) {
  std::vector<bool> reduced(static_cast<size_t>(self.dim()), dims.empty());
  for (int64_t dim : dims) {
    NRT_TRY(d, wrap(ctx, dim, self.dim()));
    if (self.dim() > 0) reduced[static_cast<size_t>(*d)] = true;
  }
  Rows r;
  std::vector<int64_t> order;
  for (int64_t i = 0; i < self.dim(); ++i) {
    if (!reduced[static_cast<size_t>(i)]) {
      order.push_back(i);
      r.out_sizes.push_back(self.sizes()[static_cast<size_t>(i)]);
    } else if (keepdim) {
      r.out_sizes.push_back(1);
    }
  }
  for (int64_t i = 0; i < self.dim(); ++i) {
    if (reduced[static_cast<size_t>(i)]) {
      order.push_back(i);
      r.n *= self.sizes()[static_cast<size_t>(i)];
    }
  }
  r.rows = 1;
  for (int64_t s : r.out_sizes) r.rows *= s;
  NRT_TRY(converted, as_dtype(ctx, self, dtype));
  NRT_TRY(data, contiguous(ctx, permuted(*converted, order)));
  r.data = *data;
  return r;
}

// sum.dim_IntList(self, dim?, keepdim, dtype?), mean.dim(...), sum.default(self, dtype?).
Status reduce(KernelContext& ctx, RowOp op, bool all_dims) {
  NRT_TRY(self, ctx.tensor("self", 0));
  std::vector<int64_t> dims;
  bool keepdim = false;
  std::optional<ScalarType> dtype;
  if (all_dims) {
    NRT_TRY(given, ctx.scalar_type("dtype", 1));
    dtype = *given;
  } else {
    NRT_TRY(listed, ctx.int_list("dim", 1, std::vector<int64_t>{}));
    NRT_TRY(keep, ctx.boolean("keepdim", 2, false));
    NRT_TRY(given, ctx.scalar_type("dtype", 3));
    dims = *listed;
    keepdim = *keep;
    dtype = *given;
  }
  const ScalarType compute = dtype.value_or(self->dtype());
  if (!is_floating(compute)) return ctx.error("sums and means on CUDA need a floating dtype, got " + std::string(short_name(compute)));
  NRT_TRY(rows, as_rows(ctx, *self, dims, keepdim, compute));
  const int64_t n = rows->n;
  NRT_TRY(out, cpu::bind_output(ctx, 0, compute, rows->out_sizes));
  if (out->numel() == 0) return {};
  const Tensor* rows_in = &rows->data;
  Tensor result = Tensor::empty(compute, {out->numel()}, out->device());
  if (n == 0) {
    if (op == RowOp::kMean) return ctx.error("the mean of an empty extent is NaN: not computed on CUDA");
    Tensor zero = Tensor::empty(compute, {}, out->device());
    return copy_into(ctx, *out, zero);
  }
  NRT_RETURN_IF_ERROR(launch_result(
      ctx, launch_rows(op, compute, rows_in->raw_data(), result.raw_data(), out->numel(), n, context_of(ctx).stream),
      "reduction kernel launch"));
  return copy_into(ctx, *out, result.as_strided(out->sizes(), Tensor::contiguous_strides(out->sizes()), 0));
}

// argmax/argmin(self, dim=None, keepdim=False); max.dim/min.dim(self, dim, keepdim) -> (values,
// indices); amax/amin(self, dim=[], keepdim=False); max.default/min.default(self).
enum class ArgOutputs { kIndices, kValuesAndIndices, kValues };

Status arg_reduce(KernelContext& ctx, bool is_max, ArgOutputs outputs, bool dim_list) {
  NRT_TRY(self, ctx.tensor("self", 0));
  NRT_RETURN_IF_ERROR(check_dtype(ctx, self->dtype()));
  std::vector<int64_t> dims;
  bool keepdim = false;
  if (dim_list) {
    NRT_TRY(listed, ctx.int_list("dim", 1, std::vector<int64_t>{}));
    dims = *listed;
  } else if (const RuntimeValue* d = ctx.find("dim", 1); d != nullptr && std::holds_alternative<int64_t>(*d)) {
    dims = {std::get<int64_t>(*d)};
  } else if (outputs == ArgOutputs::kValuesAndIndices) {
    return ctx.error("dim is required");
  }
  if (const RuntimeValue* k = ctx.find("keepdim", 2); k != nullptr && std::holds_alternative<bool>(*k)) keepdim = std::get<bool>(*k);
  // argmax without dim reduces the flattened tensor to a 0-d index; keepdim then keeps every dim.
  NRT_TRY(rows, as_rows(ctx, *self, dims, keepdim, self->dtype()));
  if (rows->n == 0) return ctx.error("cannot reduce over an empty dimension");
  const bool values = outputs != ArgOutputs::kIndices, indices = outputs != ArgOutputs::kValues;
  Tensor value_out, index_out;
  if (values) {
    NRT_TRY(v, cpu::bind_output(ctx, 0, self->dtype(), rows->out_sizes));
    value_out = *v;
  }
  if (indices) {
    NRT_TRY(i, cpu::bind_output(ctx, values ? 1 : 0, ScalarType::INT64, rows->out_sizes));
    index_out = *i;
  }
  if (rows->rows == 0) return {};
  Tensor v_rows = values ? Tensor::empty(self->dtype(), {rows->rows}, self->device()) : Tensor();
  Tensor i_rows = indices ? Tensor::empty(ScalarType::INT64, {rows->rows}, self->device()) : Tensor();
  NRT_RETURN_IF_ERROR(launch_result(
      ctx,
      launch_arg_rows(is_max, self->dtype(), rows->data.raw_data(), values ? v_rows.raw_data() : nullptr,
                      indices ? i_rows.data<int64_t>() : nullptr, rows->rows, rows->n, context_of(ctx).stream),
      "arg reduction launch"));
  const std::vector<int64_t> dense = Tensor::contiguous_strides(rows->out_sizes);
  if (values) NRT_RETURN_IF_ERROR(copy_into(ctx, value_out, v_rows.as_strided(rows->out_sizes, dense, 0)));
  if (indices) NRT_RETURN_IF_ERROR(copy_into(ctx, index_out, i_rows.as_strided(rows->out_sizes, dense, 0)));
  return {};
}

// any.dim(self, dim, keepdim), any.dims(self, dim[]?, keepdim), any.default(self); all likewise.
Status any_reduce(KernelContext& ctx, bool all) {
  NRT_TRY(self, ctx.tensor("self", 0));
  NRT_RETURN_IF_ERROR(check_dtype(ctx, self->dtype()));
  std::vector<int64_t> dims;
  bool keepdim = false;
  if (const RuntimeValue* d = ctx.find("dim", 1); d != nullptr) {
    if (std::holds_alternative<int64_t>(*d)) dims = {std::get<int64_t>(*d)};
    if (std::holds_alternative<std::vector<int64_t>>(*d)) dims = std::get<std::vector<int64_t>>(*d);
  }
  if (const RuntimeValue* k = ctx.find("keepdim", 2); k != nullptr && std::holds_alternative<bool>(*k)) keepdim = std::get<bool>(*k);
  NRT_TRY(rows, as_rows(ctx, *self, dims, keepdim, self->dtype()));
  NRT_TRY(out, cpu::bind_output(ctx, 0, ScalarType::BOOL, rows->out_sizes));
  if (rows->rows == 0) return {};
  Tensor result = Tensor::empty(ScalarType::BOOL, {rows->rows}, self->device());
  NRT_RETURN_IF_ERROR(launch_result(ctx,
                                    launch_any_rows(all, self->dtype(), rows->data.raw_data(), result.data<bool>(),
                                                    rows->rows, rows->n, context_of(ctx).stream),
                                    "any/all launch"));
  return copy_into(ctx, *out, result.as_strided(rows->out_sizes, Tensor::contiguous_strides(rows->out_sizes), 0));
}

// cumsum/cumprod(Tensor self, int dim, *, ScalarType? dtype=None): integers scan as int64.
Status scan(KernelContext& ctx, bool product) {
  NRT_TRY(self, ctx.tensor("self", 0));
  NRT_TRY(dim, ctx.int64("dim", 1));
  NRT_TRY(dtype, ctx.scalar_type("dtype", 2));
  NRT_RETURN_IF_ERROR(check_dtype(ctx, self->dtype()));
  const ScalarType out_dtype = dtype->value_or(is_floating(self->dtype()) ? self->dtype() : ScalarType::INT64);
  NRT_RETURN_IF_ERROR(check_dtype(ctx, out_dtype));
  NRT_TRY(out, cpu::bind_output(ctx, 0, out_dtype, self->sizes()));
  if (self->numel() == 0) return {};
  const Tensor input = self->dim() == 0 ? self->as_strided({1}, {1}, self->storage_offset()) : *self;
  NRT_TRY(d, wrap(ctx, *dim, input.dim()));
  std::vector<int64_t> order;
  for (int64_t i = 0; i < input.dim(); ++i) {
    if (i != *d) order.push_back(i);
  }
  order.push_back(*d);
  NRT_TRY(converted, as_dtype(ctx, input, out_dtype));
  NRT_TRY(rows_in, contiguous(ctx, permuted(*converted, order)));
  Tensor result = Tensor::empty(out_dtype, rows_in->sizes(), out->device());
  const int64_t n = input.sizes()[static_cast<size_t>(*d)];
  NRT_RETURN_IF_ERROR(launch_result(ctx,
                                    launch_scan_rows(product, out_dtype, rows_in->raw_data(), result.raw_data(),
                                                     input.numel() / n, n, context_of(ctx).stream),
                                    "scan launch"));
  const Tensor out_view = self->dim() == 0 ? out->as_strided({1}, {1}, out->storage_offset()) : *out;
  return copy_into(ctx, permuted(out_view, order), result);
}

// diff(Tensor self, int n=1, int dim=-1, Tensor? prepend=None, Tensor? append=None): the n-th
// forward difference along dim, through the subtraction kernel on shifted views.
Status diff(KernelContext& ctx) {
  NRT_TRY(self, ctx.tensor("self", 0));
  NRT_RETURN_IF_ERROR(check_dtype(ctx, self->dtype()));
  if (self->dim() == 0) return ctx.error("diff expects a tensor of at least one dimension");
  NRT_TRY(order, ctx.int64("n", 1, 1));
  if (*order < 0) return ctx.error("order must be non-negative, got " + std::to_string(*order));
  NRT_TRY(dim_arg, ctx.int64("dim", 2, -1));
  NRT_TRY(d, wrap(ctx, *dim_arg, self->dim()));
  const auto axis = static_cast<size_t>(*d);
  NRT_TRY(prepend, ctx.optional_tensor("prepend", 3));
  NRT_TRY(append, ctx.optional_tensor("append", 4));
  std::vector<Tensor> parts;
  if (*prepend) parts.push_back(**prepend);
  parts.push_back(*self);
  if (*append) parts.push_back(**append);
  for (const Tensor& t : parts) {
    if (t.dtype() != self->dtype() || t.dim() != self->dim()) return ctx.error("prepend and append must match self");
  }
  std::vector<int64_t> sizes = self->sizes();
  sizes[axis] = 0;
  for (const Tensor& t : parts) sizes[axis] += t.sizes()[axis];
  Tensor line = Tensor::empty(self->dtype(), sizes, self->device());
  int64_t at = 0;
  for (const Tensor& t : parts) {
    std::vector<int64_t> piece = sizes;
    piece[axis] = t.sizes()[axis];
    const Tensor slice = line.as_strided(piece, line.strides(), at * line.strides()[axis]);
    NRT_RETURN_IF_ERROR(copy_into(ctx, slice, t));
    at += t.sizes()[axis];
  }
  // Each order: line[1:] - line[:-1] into a line one shorter.
  for (int64_t k = 0; k < *order && sizes[axis] > 0; ++k) {
    std::vector<int64_t> shorter = sizes;
    shorter[axis] = sizes[axis] - 1;
    Tensor next = Tensor::empty(self->dtype(), shorter, self->device());
    const Tensor later = line.as_strided(shorter, line.strides(), line.strides()[axis]);
    const Tensor earlier = line.as_strided(shorter, line.strides(), 0);
    ElementwiseLaunch launch;
    const std::vector<int64_t> strides[3] = {next.strides(), later.strides(), earlier.strides()};
    NRT_TRY(indexer, make_indexer(shorter, strides));
    launch.indexer = *indexer;
    launch.numel = next.numel();
    launch.out = next.raw_data();
    launch.in[0] = later.raw_data();
    launch.in[1] = earlier.raw_data();
    launch.in_dtype = launch.out_dtype = self->dtype();
    // bool diff is logical xor in torch: != on bools.
    const BinaryOp op = self->dtype() == ScalarType::BOOL ? BinaryOp::kNe : BinaryOp::kSub;
    NRT_RETURN_IF_ERROR(launch_result(ctx, launch_binary(op, launch, context_of(ctx).stream), "diff launch"));
    line = next;
    sizes = shorter;
  }
  NRT_TRY(out, cpu::bind_output(ctx, 0, self->dtype(), sizes));
  return copy_into(ctx, *out, line);
}

// layer_norm(input, normalized_shape, weight?, bias?, eps=1e-5, cudnn_enable), native_layer_norm
// (also mean and rstd), rms_norm(input, normalized_shape, weight?, eps?).
Status norm(KernelContext& ctx, bool rms, bool native) {
  NRT_TRY(input, ctx.tensor("input", 0));
  NRT_TRY(shape, ctx.int_list("normalized_shape", 1));
  NRT_TRY(weight, ctx.optional_tensor("weight", 2));
  std::optional<Tensor> bias;
  double eps = 1e-5;
  if (rms) {
    auto given = ctx.real("eps", 3, -1.0);
    if (!given) return given.error();
    // rms_norm's default eps is torch.finfo(dtype).eps.
    eps = *given >= 0 ? *given
          : input->dtype() == ScalarType::FLOAT64 ? 2.220446049250313e-16
          : input->dtype() == ScalarType::FLOAT16 ? 0.0009765625
          : input->dtype() == ScalarType::BFLOAT16 ? 0.0078125
                                                   : 1.1920928955078125e-07;
  } else {
    NRT_TRY(b, ctx.optional_tensor("bias", 3));
    bias = *b;
    NRT_TRY(e, ctx.real("eps", 4, 1e-5));
    eps = *e;
  }
  if (!is_floating(input->dtype())) return ctx.error("normalization needs a floating input");
  const size_t k = shape->size();
  if (k > input->sizes().size() || !std::equal(shape->begin(), shape->end(), input->sizes().end() - static_cast<ptrdiff_t>(k))) {
    return ctx.error("normalized_shape does not match the input's trailing dims " + input->type_string());
  }
  const int64_t n = std::accumulate(shape->begin(), shape->end(), int64_t{1}, std::multiplies<>());
  const int64_t rows = n == 0 ? 0 : input->numel() / n;
  NRT_TRY(out, cpu::bind_output(ctx, 0, input->dtype(), input->sizes()));
  const ScalarType stat_dtype = input->dtype() == ScalarType::FLOAT64 ? ScalarType::FLOAT64 : ScalarType::FLOAT32;
  std::vector<int64_t> stat_sizes(input->sizes().begin(), input->sizes().end() - static_cast<ptrdiff_t>(k));
  stat_sizes.resize(input->sizes().size(), 1);
  Tensor mean, rstd;
  if (native) {
    NRT_TRY(m, cpu::OutputSlot::bind_secondary(ctx, 1, stat_dtype, stat_sizes));
    NRT_TRY(r, cpu::OutputSlot::bind_secondary(ctx, 2, stat_dtype, stat_sizes));
    mean = m->tensor();
    rstd = r->tensor();
    if (!mean.is_contiguous() || !rstd.is_contiguous()) return ctx.error("statistics outputs must be contiguous on CUDA");
    if (input->dtype() == ScalarType::FLOAT16 || input->dtype() == ScalarType::BFLOAT16) {
      return ctx.error("native_layer_norm of 16-bit floats (statistics in their dtype) is not supported on CUDA");
    }
  }
  if (input->numel() == 0) return {};
  NRT_TRY(x, contiguous(ctx, *input));
  const Tensor* w = *weight ? &**weight : nullptr;
  const Tensor* b = bias ? &*bias : nullptr;
  std::optional<Tensor> wc, bc;
  if (w != nullptr) {
    NRT_TRY(c, as_dtype(ctx, *w, input->dtype()));
    NRT_TRY(cc, contiguous(ctx, *c));
    wc = *cc;
  }
  if (b != nullptr) {
    NRT_TRY(c, as_dtype(ctx, *b, input->dtype()));
    NRT_TRY(cc, contiguous(ctx, *c));
    bc = *cc;
  }
  Tensor target = out->is_contiguous() ? *out : Tensor::empty(out->dtype(), out->sizes(), out->device());
  NRT_RETURN_IF_ERROR(launch_result(
      ctx,
      launch_norm_rows(rms, input->dtype(), x->raw_data(), wc ? wc->raw_data() : nullptr, bc ? bc->raw_data() : nullptr,
                       target.raw_data(), native ? mean.raw_data() : nullptr, native ? rstd.raw_data() : nullptr, rows, n,
                       eps, context_of(ctx).stream),
      "normalization kernel launch"));
  if (!out->is_contiguous()) NRT_RETURN_IF_ERROR(copy_into(ctx, *out, target));
  return {};
}

// embedding(Tensor weight, Tensor indices, SymInt padding_idx=-1, bool scale_grad_by_freq=False, bool sparse=False)
Status embedding(KernelContext& ctx) {
  NRT_TRY(weight, ctx.tensor("weight", 0));
  NRT_TRY(indices, ctx.tensor("indices", 1));
  if (weight->dim() != 2) return ctx.error("weight must be 2-D, got " + weight->type_string());
  if (indices->dtype() != ScalarType::INT64 && indices->dtype() != ScalarType::INT32) {
    return ctx.error("indices must be int64 or int32, got " + indices->type_string());
  }
  std::vector<int64_t> sizes = indices->sizes();
  sizes.push_back(weight->sizes()[1]);
  NRT_TRY(out, cpu::bind_output(ctx, 0, weight->dtype(), sizes));
  if (out->numel() == 0) return {};
  NRT_TRY(table, contiguous(ctx, *weight));
  NRT_TRY(index, contiguous(ctx, *indices));
  Tensor target = out->is_contiguous() ? *out : Tensor::empty(out->dtype(), out->sizes(), out->device());
  Tensor bad = Tensor::empty(ScalarType::INT32, {}, out->device());
  NRT_RETURN_IF_ERROR(launch_result(
      ctx,
      launch_gather_rows(table->raw_data(), weight->sizes()[0], weight->sizes()[1],
                         static_cast<int64_t>(weight->element_size()), index->raw_data(),
                         indices->dtype() == ScalarType::INT64, indices->numel(), target.raw_data(),
                         bad.data<int32_t>(), context_of(ctx).stream),
      "embedding kernel launch"));
  if (!out->is_contiguous()) NRT_RETURN_IF_ERROR(copy_into(ctx, *out, target));
  // An index outside the table is an error, as on the CPU (the flag comes back with one wait).
  auto flag = copy_to_device(bad, Device{});
  if (!flag) return flag.error();
  if (*flag->data<int32_t>() != 0) {
    return ctx.error("an index is outside the table of " + std::to_string(weight->sizes()[0]) + " rows");
  }
  return {};
}

// scaled_dot_product_attention(query, key, value, attn_mask=None, dropout_p=0., is_causal=False,
// scale=None, enable_gqa=False): softmax(q k^T * scale + mask) v, batch dims folded.
Status attention(KernelContext& ctx) {
  NRT_TRY(q, ctx.tensor("query", 0));
  NRT_TRY(k, ctx.tensor("key", 1));
  NRT_TRY(v, ctx.tensor("value", 2));
  NRT_TRY(mask, ctx.optional_tensor("attn_mask", 3));
  NRT_TRY(dropout, ctx.real("dropout_p", 4, 0.0));
  NRT_TRY(causal, ctx.boolean("is_causal", 5, false));
  const RuntimeValue* scale_arg = ctx.find("scale", 6);
  NRT_TRY(gqa, ctx.boolean("enable_gqa", 7, false));
  if (*dropout != 0.0) return ctx.error("dropout_p must be 0 at inference");
  if (*gqa) return ctx.error("enable_gqa is not supported on CUDA yet");
  if (q->dim() < 2 || k->dim() != q->dim() || v->dim() != q->dim()) return ctx.error("query, key and value must have one rank >= 2");
  if (!is_floating(q->dtype()) || k->dtype() != q->dtype() || v->dtype() != q->dtype()) {
    return ctx.error("query, key and value must share one floating dtype");
  }
  const size_t r = static_cast<size_t>(q->dim());
  const int64_t L = q->sizes()[r - 2], E = q->sizes()[r - 1], S = k->sizes()[r - 2], Ev = v->sizes()[r - 1];
  if (k->sizes()[r - 1] != E || v->sizes()[r - 2] != S) return ctx.error("key and value do not match the query");
  const std::vector<int64_t> batch(q->sizes().begin(), q->sizes().end() - 2);
  if (!std::equal(batch.begin(), batch.end(), k->sizes().begin()) || !std::equal(batch.begin(), batch.end(), v->sizes().begin())) {
    return ctx.error("query, key and value must share their batch dims on CUDA");
  }
  double scale = 1.0 / std::sqrt(static_cast<double>(E));
  if (scale_arg != nullptr && std::holds_alternative<double>(*scale_arg)) scale = std::get<double>(*scale_arg);
  std::vector<int64_t> out_sizes = batch;
  out_sizes.push_back(L);
  out_sizes.push_back(Ev);
  NRT_TRY(out, cpu::bind_output(ctx, 0, q->dtype(), out_sizes));
  if (out->numel() == 0) return {};
  int64_t B = 1;
  for (int64_t s : batch) B *= s;
  auto fold = [&](const Tensor& t, int64_t rows, int64_t cols) -> Result<Tensor> {
    NRT_TRY(c, contiguous(ctx, t));
    return c->as_strided({B, rows, cols}, {rows * cols, cols, 1}, c->storage_offset());
  };
  NRT_TRY(fq, fold(*q, L, E));
  NRT_TRY(fk, fold(*k, S, E));
  NRT_TRY(fv, fold(*v, S, Ev));
  const Tensor kt = fk->as_strided({B, E, S}, {S * E, 1, E}, fk->storage_offset());
  Tensor scores = Tensor::empty(q->dtype(), {B, L, S}, out->device());
  NRT_RETURN_IF_ERROR(batched_product(ctx, *fq, kt, scores, scale));
  if (*mask) {
    // A bool mask keeps where true (-inf elsewhere); a float mask is added.
    std::vector<int64_t> full = batch;
    full.push_back(L);
    full.push_back(S);
    if (!cpu::broadcasts_to(mask->value().sizes(), full)) return ctx.error("attn_mask does not broadcast to the scores");
    const Tensor scores_view = scores.as_strided(full, Tensor::contiguous_strides(full), 0);
    const Tensor m = cpu::expand_to(**mask, full);
    ElementwiseLaunch launch;
    const std::vector<int64_t> strides[3] = {scores_view.strides(), m.strides(), scores_view.strides()};
    NRT_TRY(indexer, make_indexer(full, std::span<const std::vector<int64_t>>(strides, 2)));
    launch.indexer = *indexer;
    launch.numel = scores.numel();
    launch.out = scores.raw_data();
    launch.in_dtype = q->dtype();
    launch.out_dtype = q->dtype();
    if (m.dtype() == ScalarType::BOOL) {
      // where(mask, scores, -inf): scores read in place, -inf from a one-element tensor.
      NRT_TRY(fill, cpu::scalar_on(cpu::ScalarValue::of_float(-INFINITY), q->dtype(), out->device()));
      const std::vector<int64_t> zero(full.size(), 0);
      const std::vector<int64_t> all[4] = {scores_view.strides(), m.strides(), scores_view.strides(), zero};
      NRT_TRY(where_indexer, make_indexer(full, all));
      launch.indexer = *where_indexer;
      launch.in[0] = m.raw_data();
      launch.in[1] = scores.raw_data();
      launch.in[2] = fill->raw_data();
      NRT_RETURN_IF_ERROR(launch_result(ctx, launch_where(launch, context_of(ctx).stream), "attention mask launch"));
    } else {
      NRT_TRY(mc, as_dtype(ctx, m, q->dtype()));
      const std::vector<int64_t> add_strides[3] = {scores_view.strides(), scores_view.strides(),
                                                   cpu::expand_to(*mc, full).strides()};
      NRT_TRY(add_indexer, make_indexer(full, add_strides));
      launch.indexer = *add_indexer;
      launch.in[0] = scores.raw_data();
      launch.in[1] = mc->raw_data();
      NRT_RETURN_IF_ERROR(launch_result(ctx, launch_binary(BinaryOp::kAdd, launch, context_of(ctx).stream),
                                        "attention mask launch"));
    }
  }
  NRT_RETURN_IF_ERROR(launch_result(ctx,
                                    launch_rows(RowOp::kSoftmax, q->dtype(), scores.raw_data(), scores.raw_data(), B * L,
                                                S, context_of(ctx).stream, *causal ? L : 0, /*safe=*/true),
                                    "attention softmax launch"));
  Tensor result = out->is_contiguous() ? out->as_strided({B, L, Ev}, {L * Ev, Ev, 1}, out->storage_offset())
                                       : Tensor::empty(q->dtype(), {B, L, Ev}, out->device());
  NRT_RETURN_IF_ERROR(batched_product(ctx, scores, *fv, result, 1.0));
  if (!out->is_contiguous()) {
    NRT_RETURN_IF_ERROR(copy_into(ctx, *out, result.as_strided(out_sizes, Tensor::contiguous_strides(out_sizes), 0)));
  }
  return {};
}

constexpr DeviceKind kCuda = DeviceKind::kCuda;
const KernelRegistration kRegistrations[] = {
    {"aten::softmax.int", kCuda, {[](KernelContext& ctx) { return softmax(ctx, false, false); }, false}},
    {"aten::_softmax.default", kCuda, {[](KernelContext& ctx) { return softmax(ctx, false, true); }, false}},
    {"aten::log_softmax.int", kCuda, {[](KernelContext& ctx) { return softmax(ctx, true, false); }, false}},
    {"aten::_log_softmax.default", kCuda, {[](KernelContext& ctx) { return softmax(ctx, true, true); }, false}},
    {"aten::sum.dim_IntList", kCuda, {[](KernelContext& ctx) { return reduce(ctx, RowOp::kSum, false); }, false}},
    {"aten::sum.default", kCuda, {[](KernelContext& ctx) { return reduce(ctx, RowOp::kSum, true); }, false}},
    {"aten::mean.dim", kCuda, {[](KernelContext& ctx) { return reduce(ctx, RowOp::kMean, false); }, false}},
    {"aten::layer_norm.default", kCuda, {[](KernelContext& ctx) { return norm(ctx, false, false); }, false}},
    {"aten::native_layer_norm.default", kCuda, {[](KernelContext& ctx) { return norm(ctx, false, true); }, false}},
    {"aten::rms_norm.default", kCuda, {[](KernelContext& ctx) { return norm(ctx, true, false); }, false}},
    {"aten::embedding.default", kCuda, {&embedding, false}},
    {"aten::argmax.default", kCuda, {[](KernelContext& ctx) { return arg_reduce(ctx, true, ArgOutputs::kIndices, false); }, false}},
    {"aten::argmin.default", kCuda, {[](KernelContext& ctx) { return arg_reduce(ctx, false, ArgOutputs::kIndices, false); }, false}},
    {"aten::max.dim", kCuda, {[](KernelContext& ctx) { return arg_reduce(ctx, true, ArgOutputs::kValuesAndIndices, false); }, false}},
    {"aten::min.dim", kCuda, {[](KernelContext& ctx) { return arg_reduce(ctx, false, ArgOutputs::kValuesAndIndices, false); }, false}},
    {"aten::amax.default", kCuda, {[](KernelContext& ctx) { return arg_reduce(ctx, true, ArgOutputs::kValues, true); }, false}},
    {"aten::amin.default", kCuda, {[](KernelContext& ctx) { return arg_reduce(ctx, false, ArgOutputs::kValues, true); }, false}},
    {"aten::max.default", kCuda, {[](KernelContext& ctx) { return arg_reduce(ctx, true, ArgOutputs::kValues, true); }, false}},
    {"aten::min.default", kCuda, {[](KernelContext& ctx) { return arg_reduce(ctx, false, ArgOutputs::kValues, true); }, false}},
    {"aten::cumsum.default", kCuda, {[](KernelContext& ctx) { return scan(ctx, false); }, false}},
    {"aten::cumprod.default", kCuda, {[](KernelContext& ctx) { return scan(ctx, true); }, false}},
    {"aten::diff.default", kCuda, {&diff, false}},
    {"aten::any.dim", kCuda, {[](KernelContext& ctx) { return any_reduce(ctx, false); }, false}},
    {"aten::any.dims", kCuda, {[](KernelContext& ctx) { return any_reduce(ctx, false); }, false}},
    {"aten::any.default", kCuda, {[](KernelContext& ctx) { return any_reduce(ctx, false); }, false}},
    {"aten::all.dim", kCuda, {[](KernelContext& ctx) { return any_reduce(ctx, true); }, false}},
    {"aten::all.default", kCuda, {[](KernelContext& ctx) { return any_reduce(ctx, true); }, false}},
    {"aten::scaled_dot_product_attention.default", kCuda, {&attention, false}},
};

}  // namespace
}  // namespace nrt::exec::cuda
