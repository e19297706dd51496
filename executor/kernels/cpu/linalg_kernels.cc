// Matrix products: mm, bmm, addmm, baddbmm, linear, matmul (torch's broadcasting rules, 1-D operands
// promoted and the added dimension removed). float32/float64 run through OpenBLAS; float16 and
// bfloat16 are converted to float32 and back; integer dtypes compute exactly (wrap-around); bool
// is rejected. Operands must share one dtype, as torch requires.
#include "executor/kernels/cpu/batched_product.h"
#include "executor/kernels/cpu/broadcast.h"
#include "executor/kernels/cpu/dimensions.h"
#include "executor/kernels/cpu/dtype_dispatch.h"
#include "executor/kernels/cpu/elementwise_loops.h"
#include "executor/kernels/cpu/gemm.h"
#include "executor/kernels/cpu/onednn_kept_weights.h"
#include "executor/kernels/cpu/onednn_linear.h"
#include "executor/kernels/cpu/small_product.h"
#include "executor/kernels/cpu/operand.h"
#include "executor/kernels/cpu/output_slot.h"
#include "executor/kernels/cpu/tensor_copy.h"
#include "executor/kernels/cpu/view_strides.h"

namespace nrt::exec::cpu {
namespace {

Status check_dtypes(const KernelContext& ctx, std::initializer_list<const Tensor*> tensors) {
  const ScalarType dtype = (*tensors.begin())->dtype();
  for (const Tensor* t : tensors) {
    if (t->dtype() != dtype) {
      return ctx.error("operands must share one dtype, got " + std::string(short_name(dtype)) + " and " +
                       std::string(short_name(t->dtype())));
    }
  }
  if (!is_floating_dtype(dtype) && !is_integral_dtype(dtype)) return unsupported_dtype(ctx, dtype);
  return Status::Ok();
}

// matmul with torch's rules; `mode` restricts the ranks for mm (2-D x 2-D) and bmm (3-D x 3-D).
enum class ProductRanks { kAny, kMatrix, kBatched };

Status product(KernelContext& ctx, std::string_view a_name, std::string_view b_name, ProductRanks ranks) {
  NRT_TRY(a, ctx.tensor(a_name, 0));
  NRT_TRY(b, ctx.tensor(b_name, 1));
  if (auto s = check_dtypes(ctx, {&*a, &*b}); !s.ok()) return s;
  const int64_t required = ranks == ProductRanks::kMatrix ? 2 : ranks == ProductRanks::kBatched ? 3 : 0;
  if (required && (a->dim() != required || b->dim() != required)) {
    return ctx.error("expects " + std::to_string(required) + "-D operands, got " + shape_string(a->sizes()) + " and " +
                     shape_string(b->sizes()));
  }
  if (a->dim() == 0 || b->dim() == 0) return ctx.error("both arguments to matmul need at least 1 dimension");
  // Promote 1-D operands to matrices.
  const bool a_vector = a->dim() == 1, b_vector = b->dim() == 1;
  Tensor x = a_vector ? a->as_strided({1, a->sizes()[0]}, {0, a->strides()[0]}, a->storage_offset()) : *a;
  Tensor y = b_vector ? b->as_strided({b->sizes()[0], 1}, {b->strides()[0], 0}, b->storage_offset()) : *b;
  const int64_t n = x.sizes()[x.sizes().size() - 2], k = x.sizes().back();
  const int64_t k2 = y.sizes()[y.sizes().size() - 2], m = y.sizes().back();
  if (k != k2) {
    return ctx.error("shapes " + shape_string(a->sizes()) + " and " + shape_string(b->sizes()) + " cannot be multiplied");
  }
  const std::vector<int64_t> x_batch(x.sizes().begin(), x.sizes().end() - 2);
  const std::vector<int64_t> y_batch(y.sizes().begin(), y.sizes().end() - 2);
  if (ranks == ProductRanks::kBatched && x_batch != y_batch) {
    return ctx.error("batch sizes differ: " + shape_string(a->sizes()) + " and " + shape_string(b->sizes()));
  }
  auto batch = broadcast_shapes(x_batch, y_batch);
  if (!batch) {
    return ctx.error("batch dimensions of " + shape_string(a->sizes()) + " and " + shape_string(b->sizes()) +
                     " do not broadcast");
  }
  std::vector<int64_t> out_sizes = *batch;
  if (!a_vector) out_sizes.push_back(n);
  if (!b_vector) out_sizes.push_back(m);
  NRT_TRY(slot, OutputSlot::bind(ctx, 0, a->dtype(), out_sizes));
  const ScalarType compute = product_dtype(a->dtype());
  std::vector<int64_t> x_full = *batch, y_full = *batch;
  x_full.insert(x_full.end(), {n, k});
  y_full.insert(y_full.end(), {k, m});
  if (x.dtype() != compute) x = converted_copy(x, compute);
  if (y.dtype() != compute) y = converted_copy(y, compute);
  Tensor staging = slot->staging(compute);
  batched_product(expand_to(x, x_full), expand_to(y, y_full), staging, *batch);
  slot->commit();
  return Status::Ok();
}

// addmm(Tensor self, Tensor mat1, Tensor mat2, *, Scalar beta=1, Scalar alpha=1) and
// baddbmm(Tensor self, Tensor batch1, Tensor batch2, *, Scalar beta=1, Scalar alpha=1):
// beta * self + alpha * (a @ b), for 2-D operands or batch by batch for 3-D ones. self broadcasts
// to the output and is not read when beta is 0 (torch's rule: its NaNs do not reach the output);
// integers compute exactly, with wrap-around.
Status add_product(KernelContext& ctx, bool batched) {
  NRT_TRY(self, ctx.tensor("self", 0));
  NRT_TRY(a, ctx.tensor(batched ? "batch1" : "mat1", 1));
  NRT_TRY(b, ctx.tensor(batched ? "batch2" : "mat2", 2));
  if (auto s = check_dtypes(ctx, {&*self, &*a, &*b}); !s.ok()) return s;
  NRT_TRY(beta, read_scalar(ctx, "beta", 3, ScalarValue::of_int(1)));
  NRT_TRY(alpha, read_scalar(ctx, "alpha", 4, ScalarValue::of_int(1)));
  const int64_t rank = batched ? 3 : 2;
  if (a->dim() != rank || b->dim() != rank || a->sizes()[rank - 1] != b->sizes()[rank - 2] ||
      (batched && a->sizes()[0] != b->sizes()[0])) {
    return ctx.error("shapes " + shape_string(a->sizes()) + " and " + shape_string(b->sizes()) + " cannot be multiplied");
  }
  const int64_t batches = batched ? a->sizes()[0] : 1;
  std::vector<int64_t> out_sizes{a->sizes()[rank - 2], b->sizes()[rank - 1]};
  if (batched) out_sizes.insert(out_sizes.begin(), batches);
  if (!broadcasts_to(self->sizes(), out_sizes)) {
    return ctx.error("self " + shape_string(self->sizes()) + " does not broadcast to " + shape_string(out_sizes));
  }
  NRT_TRY(slot, OutputSlot::bind(ctx, 0, a->dtype(), out_sizes));
  const ScalarType compute = product_dtype(a->dtype());
  Tensor c = slot->staging(compute);
  const Tensor x = contiguous_as(*a, compute), y = contiguous_as(*b, compute);
  if (is_floating_dtype(compute)) {
    const double beta_v = beta->to_double();
    if (beta_v != 0.0) copy_into(c, expand_to(*self, out_sizes));
    if (!batched) {
      gemm(x, y, c, alpha->to_double(), beta_v);
    } else {
      for (int64_t i = 0; i < batches; ++i) {
        gemm(matrix_at(x, {i}), matrix_at(y, {i}), matrix_at(c, {i}), alpha->to_double(), beta_v);
      }
    }
  } else {
    Tensor prod = Tensor::empty(compute, out_sizes);
    if (batched) {
      batched_product(x, y, prod, {batches});
    } else {
      integer_gemm(x, y, prod);
    }
    const Tensor bias = expand_to(*self, out_sizes);
    Status s = dispatch_dtype<kIntegral>(ctx, compute, [&](auto tag) {
      using T = typename decltype(tag)::type;
      const T al = alpha->as<T>(), be = beta->as<T>();
      map_binary<T, T, T>(c, bias, prod, [al, be](T s, T p) { return wrapping_add(wrapping_mul(be, s), wrapping_mul(al, p)); });
    });
    if (!s.ok()) return s;
  }
  slot->commit();
  return Status::Ok();
}

// linear(Tensor input, Tensor weight, Tensor? bias=None): input [..., in] @ weight[out, in]^T + bias.
Status linear(KernelContext& ctx) {
  NRT_TRY(input, ctx.tensor("input", 0));
  NRT_TRY(weight, ctx.tensor("weight", 1));
  NRT_TRY(bias, ctx.optional_tensor("bias", 2));
  if (auto s = check_dtypes(ctx, {&*input, &*weight}); !s.ok()) return s;
  if (*bias) {
    if (auto s = check_dtypes(ctx, {&*input, &**bias}); !s.ok()) return s;
  }
  if (input->dim() == 0 || weight->dim() != 2 || input->sizes().back() != weight->sizes()[1]) {
    return ctx.error("input " + shape_string(input->sizes()) + " and weight " + shape_string(weight->sizes()) +
                     " do not fit");
  }
  const int64_t in_features = weight->sizes()[1], out_features = weight->sizes()[0];
  std::vector<int64_t> out_sizes(input->sizes().begin(), input->sizes().end() - 1);
  out_sizes.push_back(out_features);
  if (*bias && !broadcasts_to((*bias)->sizes(), out_sizes)) {
    return ctx.error("bias " + shape_string((*bias)->sizes()) + " does not broadcast to " + shape_string(out_sizes));
  }
  NRT_TRY(slot, OutputSlot::bind(ctx, 0, input->dtype(), out_sizes));
  const ScalarType compute = product_dtype(input->dtype());
  const int64_t rows = input->numel() / std::max<int64_t>(in_features, 1);
  Tensor x = input->dtype() == compute ? *input : converted_copy(*input, compute);
  if (auto strides = view_strides(x.sizes(), x.strides(), {rows, in_features})) {
    x = x.as_strided({rows, in_features}, *strides, x.storage_offset());
  } else {
    x = converted_copy(x, compute);
    x = x.as_strided({rows, in_features}, {in_features, 1}, 0);
  }
  Tensor w = weight->dtype() == compute ? *weight : converted_copy(*weight, compute);
  const Tensor w_t = w.as_strided({in_features, out_features}, {w.strides()[1], w.strides()[0]}, w.storage_offset());
  Tensor staging = slot->staging(compute);
  const Tensor c = staging.as_strided({rows, out_features}, {out_features, 1}, staging.storage_offset());
  // A loaded program's weights: oneDNN's product with them packed once (onednn_linear.h), where
  // the product is large enough to pay for the primitive's call (fewest_packed_multiply_adds).
  const bool plain_bias = !*bias || ((*bias)->dtype() == ScalarType::FLOAT32 && (*bias)->sizes() == std::vector<int64_t>{out_features} &&
                                     (*bias)->is_contiguous());
  const bool constant_weights = compute == ScalarType::FLOAT32 && w.storage()->constant() && w.is_contiguous() && plain_bias;
  // Products too small for oneDNN's call to pay (a small Llama's 32 x 64 x 64) on small_product.h's
  // tiles, the weights packed once in blocks of 16 outputs.
  if (constant_weights && rows > 1 && rows * in_features * out_features <= kSmallProductMultiplyAdds &&
      small_product_available()) {
    LaidOutWeights packed;
    bool laid_out = true;
    try {
      packed = pointwise_packed_weights(out_features, in_features, w.data<float>(), w.storage());
    } catch (const dnnl::error&) {
      laid_out = false;  // the products below, as the pointwise convolutions fall back to oneDNN
    }
    if (laid_out) {
      avx512::small_product(rows, out_features, in_features, 1.0f, x.data<float>(), x.strides()[0], x.strides()[1],
                            static_cast<const float*>(packed.memory.get_data_handle()), 16, 16 * in_features,
                            *bias ? (*bias)->data<float>() : nullptr, c.data<float>(), out_features);
      slot->commit();
      return Status::Ok();
    }
  }
  const bool large = rows > 1 && rows * in_features * out_features >= fewest_packed_multiply_adds();
  if (constant_weights && large && x.strides() == std::vector<int64_t>{in_features, 1} &&
      onednn_linear(rows, out_features, in_features, x.data<float>(), w.data<float>(),
                    *bias ? (*bias)->data<float>() : nullptr, c.data<float>(), w.storage())) {
    slot->commit();
    return Status::Ok();
  }
  if (is_floating_dtype(compute)) {
    if (*bias) copy_into(c, expand_to(**bias, {rows, out_features}));
    gemm(x, w_t, c, 1.0, *bias ? 1.0 : 0.0);
  } else {
    integer_gemm(x, w_t, c);
    if (*bias) {
      const Tensor b = expand_to(**bias, {rows, out_features});
      Status s = dispatch_dtype<kIntegral>(ctx, compute, [&](auto tag) {
        using T = typename decltype(tag)::type;
        map_binary<T, T, T>(c, c, b, [](T p, T q) { return wrapping_add(p, q); });
      });
      if (!s.ok()) return s;
    }
  }
  slot->commit();
  return Status::Ok();
}

// transformers::grouped_mm_fallback(Tensor input, Tensor weight, Tensor offs): the expert products
// of transformers' mixture-of-experts layers (integrations/moe.py registers the op; its CPU path
// for float32). input [S, in] holds the tokens sorted by expert, weight [E, in, out] the experts,
// offs [E] the cumulative token counts: rows [offs[i-1], offs[i]) are multiplied by weight[i]; rows
// past the last offset are zero, as in transformers' loop. offs must be non-decreasing within [0, S].
Status grouped_mm_fallback(KernelContext& ctx) {
  NRT_TRY(input, ctx.tensor("input", 0));
  NRT_TRY(weight, ctx.tensor("weight", 1));
  NRT_TRY(offs, ctx.tensor("offs", 2));
  if (auto s = check_dtypes(ctx, {&*input, &*weight}); !s.ok()) return s;
  if (input->dim() != 2 || weight->dim() != 3 || offs->dim() != 1 || input->sizes()[1] != weight->sizes()[1] ||
      offs->sizes()[0] != weight->sizes()[0]) {
    return ctx.error("input " + shape_string(input->sizes()) + ", weight " + shape_string(weight->sizes()) + " and offs " +
                     shape_string(offs->sizes()) + " are not [S, in], [E, in, out] and [E]");
  }
  if (offs->dtype() != ScalarType::INT64 && offs->dtype() != ScalarType::INT32) {
    return ctx.error("offs must be int32 or int64, got " + std::string(short_name(offs->dtype())));
  }
  const Tensor ends = contiguous_as(*offs, ScalarType::INT64);
  const int64_t rows = input->sizes()[0], columns = weight->sizes()[2];
  NRT_TRY(slot, OutputSlot::bind(ctx, 0, input->dtype(), {rows, columns}));
  const ScalarType compute = product_dtype(input->dtype());
  Tensor staging = slot->staging(compute);
  fill_with(staging, ScalarValue::of_int(0));
  const Tensor x = contiguous_as(*input, compute), w = contiguous_as(*weight, compute);
  int64_t start = 0;
  for (int64_t e = 0; e < ends.sizes()[0]; ++e) {
    const int64_t end = ends.data<int64_t>()[e];
    if (end < start || end > rows) {
      return ctx.error("offs must be non-decreasing within [0, " + std::to_string(rows) + "], got " +
                       std::to_string(end) + " after " + std::to_string(start));
    }
    if (end > start && columns > 0 && x.sizes()[1] > 0) {
      product_2d(x.as_strided({end - start, x.sizes()[1]}, {x.sizes()[1], 1}, x.storage_offset() + start * x.sizes()[1]),
                 matrix_at(w, {e}), staging.as_strided({end - start, columns}, {columns, 1}, staging.storage_offset() + start * columns));
    }
    start = end;
  }
  slot->commit();
  return Status::Ok();
}

constexpr DeviceKind kCpu = DeviceKind::kCpu;
const KernelRegistration kRegistrations[] = {
    {"aten::mm.default", kCpu, {[](KernelContext& ctx) { return product(ctx, "self", "mat2", ProductRanks::kMatrix); }, false}},
    {"aten::bmm.default", kCpu, {[](KernelContext& ctx) { return product(ctx, "self", "mat2", ProductRanks::kBatched); }, false}},
    {"aten::matmul.default", kCpu, {[](KernelContext& ctx) { return product(ctx, "self", "other", ProductRanks::kAny); }, false}},
    {"aten::addmm.default", kCpu, {[](KernelContext& ctx) { return add_product(ctx, false); }, false}},
    {"transformers::grouped_mm_fallback.default", kCpu, {&grouped_mm_fallback, false}},
    {"aten::baddbmm.default", kCpu, {[](KernelContext& ctx) { return add_product(ctx, true); }, false}},
    {"aten::linear.default", kCpu, {&linear, false}},
};

}  // namespace
}  // namespace nrt::exec::cpu
