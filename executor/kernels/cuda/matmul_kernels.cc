// Matrix products on CUDA through cuBLASLt: mm, bmm, addmm, linear, matmul in float32 (TF32 tensor
// cores only when the run allows them: cuda_context.h), float16 and bfloat16 (float accumulation),
// and float64. Row-major tensors are handed to cuBLASLt (column-major) as their transposes:
// C = A B is computed as C^T = B^T A^T, so no operand is copied; an operand whose last two dims
// are neither row- nor column-contiguous is made contiguous first.
#include <cublasLt.h>

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "executor/cuda/cuda_status.h"
#include "executor/kernels/cpu/broadcast.h"
#include "executor/kernels/cpu/output_slot.h"
#include "executor/kernels/cuda/kernel_support.h"
#include "executor/runtime/matmul_precision.h"

namespace nrt::exec::cuda {
namespace {

// One operand as cuBLASLt reads it: a column-major matrix `rows` x `cols` (of the transposed
// row-major view), with its transpose flag, leading dimension and batch stride.
struct LtOperand {
  const void* data = nullptr;
  bool transposed = false;
  int64_t ld = 0;
  int64_t batch_stride = 0;
};

// A row-major [.., r, c] view (strides in elements) as a column-major operand of c x r; nullopt
// when its last two dims need a copy first.
std::optional<LtOperand> lt_operand(const Tensor& t) {
  const size_t n = t.sizes().size();
  const int64_t r = t.sizes()[n - 2], c = t.sizes()[n - 1];
  const int64_t sr = t.strides()[n - 2], sc = t.strides()[n - 1];
  LtOperand op;
  op.data = t.raw_data();
  op.batch_stride = n == 3 ? t.strides()[0] : 0;
  if (sc == 1 || c == 1) {  // row-contiguous: the column-major c x r matrix, as is
    op.ld = std::max<int64_t>(r == 1 ? c : sr, std::max<int64_t>(c, 1));
    return op;
  }
  if (sr == 1 || r == 1) {  // column-contiguous: a transposed operand
    op.transposed = true;
    op.ld = std::max<int64_t>(c == 1 ? r : sc, std::max<int64_t>(r, 1));
    return op;
  }
  return std::nullopt;
}

struct LtTypes {
  cudaDataType_t data;
  cublasComputeType_t compute;
  cudaDataType_t scale;
};

std::optional<LtTypes> lt_types(ScalarType dtype) {
  switch (dtype) {
    case ScalarType::FLOAT32:
      return LtTypes{CUDA_R_32F, allow_tf32() ? CUBLAS_COMPUTE_32F_FAST_TF32 : CUBLAS_COMPUTE_32F, CUDA_R_32F};
    case ScalarType::FLOAT16: return LtTypes{CUDA_R_16F, CUBLAS_COMPUTE_32F, CUDA_R_32F};
    case ScalarType::BFLOAT16: return LtTypes{CUDA_R_16BF, CUBLAS_COMPUTE_32F, CUDA_R_32F};
    case ScalarType::FLOAT64: return LtTypes{CUDA_R_64F, CUBLAS_COMPUTE_64F, CUDA_R_64F};
    default: return std::nullopt;
  }
}

// A cuBLASLt descriptor, destroyed with the scope.
template <typename T>
struct LtHandle {
  cublasStatus_t (*destroy)(T);
  T handle = nullptr;
  ~LtHandle() {
    if (handle != nullptr) (void)destroy(handle);
  }
};

// out[b] = alpha * a[b] @ bm[b] + beta * out[b] for `batch` products of [m, k] x [k, n]; `out`
// contiguous per batch. a and bm are row-major views as lt_operand accepts them.
Status lt_matmul(const KernelContext& ctx, const Tensor& a, const Tensor& bm, const Tensor& out, int64_t batch,
                 int64_t m, int64_t n, int64_t k, double alpha, double beta) {
  CudaContext& c = context_of(ctx);
  auto types = lt_types(out.dtype());
  if (!types) return ctx.error("matrix products of " + std::string(short_name(out.dtype())) + " are not supported on CUDA");
  auto A = lt_operand(a);
  auto B = lt_operand(bm);
  if (!A || !B) return make_error(ErrorCode::Internal, std::string(ctx.target()) + ": operand layout not prepared");
  const std::string who = std::string(ctx.target()) + ": ";
  auto check = [&](cublasStatus_t s, const char* call) -> Status {
    if (Status st = cublas_check(s, call); !st) return make_error(st.error().code, who + st.error().message);
    return {};
  };
  // Column-major: D (n x m) = op(B) (n x k) * op(A) (k x m).
  const CublasLt& lt = *c.lt;
  LtHandle<cublasLtMatmulDesc_t> desc{lt.matmul_desc_destroy};
  NRT_RETURN_IF_ERROR(check(lt.matmul_desc_create(&desc.handle, types->compute, types->scale), "cublasLtMatmulDescCreate"));
  const cublasOperation_t op_first = B->transposed ? CUBLAS_OP_T : CUBLAS_OP_N;
  const cublasOperation_t op_second = A->transposed ? CUBLAS_OP_T : CUBLAS_OP_N;
  NRT_RETURN_IF_ERROR(check(lt.matmul_desc_set_attribute(desc.handle, CUBLASLT_MATMUL_DESC_TRANSA, &op_first, sizeof(op_first)),
                            "cublasLtMatmulDescSetAttribute"));
  NRT_RETURN_IF_ERROR(check(lt.matmul_desc_set_attribute(desc.handle, CUBLASLT_MATMUL_DESC_TRANSB, &op_second, sizeof(op_second)),
                            "cublasLtMatmulDescSetAttribute"));
  LtHandle<cublasLtMatrixLayout_t> la{lt.matrix_layout_destroy}, lb{lt.matrix_layout_destroy}, lc{lt.matrix_layout_destroy};
  // Layouts are of the stored matrices: op(X) transposed means X is stored the other way round.
  NRT_RETURN_IF_ERROR(check(lt.matrix_layout_create(&la.handle, types->data, B->transposed ? k : n, B->transposed ? n : k, B->ld),
                            "cublasLtMatrixLayoutCreate"));
  NRT_RETURN_IF_ERROR(check(lt.matrix_layout_create(&lb.handle, types->data, A->transposed ? m : k, A->transposed ? k : m, A->ld),
                            "cublasLtMatrixLayoutCreate"));
  NRT_RETURN_IF_ERROR(check(lt.matrix_layout_create(&lc.handle, types->data, n, m, std::max<int64_t>(n, 1)), "cublasLtMatrixLayoutCreate"));
  if (batch > 1) {
    const int32_t count = static_cast<int32_t>(batch);
    const int64_t c_stride = m * n;
    const std::pair<cublasLtMatrixLayout_t, int64_t> layouts[] = {{la.handle, B->batch_stride}, {lb.handle, A->batch_stride}, {lc.handle, c_stride}};
    for (const auto& [layout, stride] : layouts) {
      NRT_RETURN_IF_ERROR(check(lt.matrix_layout_set_attribute(layout, CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT, &count, sizeof(count)),
                                "cublasLtMatrixLayoutSetAttribute"));
      NRT_RETURN_IF_ERROR(check(lt.matrix_layout_set_attribute(layout, CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET, &stride, sizeof(stride)),
                                "cublasLtMatrixLayoutSetAttribute"));
    }
  }
  LtHandle<cublasLtMatmulPreference_t> preference{lt.matmul_preference_destroy};
  NRT_RETURN_IF_ERROR(check(lt.matmul_preference_create(&preference.handle), "cublasLtMatmulPreferenceCreate"));
  const uint64_t workspace = c.blas_workspace_bytes;
  NRT_RETURN_IF_ERROR(check(lt.matmul_preference_set_attribute(preference.handle, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES,
                                                               &workspace, sizeof(workspace)),
                            "cublasLtMatmulPreferenceSetAttribute"));
  cublasLtMatmulHeuristicResult_t heuristic{};
  int found = 0;
  NRT_RETURN_IF_ERROR(check(lt.matmul_algo_get_heuristic(c.blas, desc.handle, la.handle, lb.handle, lc.handle, lc.handle,
                                                         preference.handle, 1, &heuristic, &found),
                            "cublasLtMatmulAlgoGetHeuristic"));
  if (found == 0) return make_error(ErrorCode::DeviceError, who + "cuBLASLt has no algorithm for this product");
  const float alpha32 = static_cast<float>(alpha), beta32 = static_cast<float>(beta);
  const bool wide = types->scale == CUDA_R_64F;
  return check(lt.matmul(c.blas, desc.handle, wide ? static_cast<const void*>(&alpha) : &alpha32, B->data, la.handle,
                         A->data, lb.handle, wide ? static_cast<const void*>(&beta) : &beta32, out.raw_data(),
                         lc.handle, out.raw_data(), lc.handle, &heuristic.algo, c.blas_workspace,
                         c.blas_workspace_bytes, c.stream),
               "cublasLtMatmul");
}

// `t` as lt_operand accepts it (a contiguous copy when its last two dims need one).
Result<Tensor> prepared(const KernelContext& ctx, const Tensor& t) {
  if (lt_operand(t)) return t;
  return contiguous(ctx, t);
}

// out (bound, [m, n] or [batch, m, n]) = alpha * a @ b + beta * (bias broadcast, when given).
Status product(KernelContext& ctx, const Tensor& a, const Tensor& b, const Tensor& out, const Tensor* bias, double alpha,
               double beta) {
  if (a.dtype() != b.dtype()) return ctx.error("operands of different dtypes (" + a.type_string() + ", " + b.type_string() + ")");
  const size_t rank = a.sizes().size();
  const int64_t batch = rank == 3 ? a.sizes()[0] : 1;
  const int64_t m = a.sizes()[rank - 2], k = a.sizes()[rank - 1], n = b.sizes()[rank - 1];
  if (out.numel() == 0) return {};
  // The product is written into contiguous memory; a strided output gets it through a copy.
  Tensor target = out.is_contiguous() ? out : Tensor::empty(out.dtype(), out.sizes(), out.device());
  double use_beta = 0;
  if (bias != nullptr && beta != 0) {
    NRT_RETURN_IF_ERROR(copy_into(ctx, target, *bias));
    use_beta = beta;
  }
  if (k == 0) {
    // An empty contraction: beta * bias, or zeros.
    if (bias == nullptr || beta == 0) {
      Tensor zero = Tensor::empty(out.dtype(), {}, out.device());
      NRT_RETURN_IF_ERROR(copy_into(ctx, target, zero));
    }
  } else {
    NRT_TRY(pa, prepared(ctx, a));
    NRT_TRY(pb, prepared(ctx, b));
    NRT_RETURN_IF_ERROR(lt_matmul(ctx, *pa, *pb, target, batch, m, n, k, alpha, use_beta));
  }
  if (!(target.raw_data() == out.raw_data())) NRT_RETURN_IF_ERROR(copy_into(ctx, out, target));
  return {};
}

Status check_matrix(const KernelContext& ctx, const Tensor& t, size_t rank, const char* name) {
  if (t.sizes().size() != rank) {
    return ctx.error(std::string(name) + " must be " + std::to_string(rank) + "-D, got " + t.type_string());
  }
  return {};
}

// mm(Tensor self, Tensor mat2)
Status mm(KernelContext& ctx) {
  NRT_TRY(a, ctx.tensor("self", 0));
  NRT_TRY(b, ctx.tensor("mat2", 1));
  NRT_RETURN_IF_ERROR(check_matrix(ctx, *a, 2, "self"));
  NRT_RETURN_IF_ERROR(check_matrix(ctx, *b, 2, "mat2"));
  if (a->sizes()[1] != b->sizes()[0]) return ctx.error("shapes " + a->type_string() + " and " + b->type_string() + " cannot be multiplied");
  NRT_TRY(out, cpu::bind_output(ctx, 0, a->dtype(), {a->sizes()[0], b->sizes()[1]}));
  return product(ctx, *a, *b, *out, nullptr, 1, 0);
}

// bmm(Tensor self, Tensor mat2)
Status bmm(KernelContext& ctx) {
  NRT_TRY(a, ctx.tensor("self", 0));
  NRT_TRY(b, ctx.tensor("mat2", 1));
  NRT_RETURN_IF_ERROR(check_matrix(ctx, *a, 3, "self"));
  NRT_RETURN_IF_ERROR(check_matrix(ctx, *b, 3, "mat2"));
  if (a->sizes()[0] != b->sizes()[0] || a->sizes()[2] != b->sizes()[1]) {
    return ctx.error("shapes " + a->type_string() + " and " + b->type_string() + " cannot be multiplied");
  }
  NRT_TRY(out, cpu::bind_output(ctx, 0, a->dtype(), {a->sizes()[0], a->sizes()[1], b->sizes()[2]}));
  return product(ctx, *a, *b, *out, nullptr, 1, 0);
}

// addmm(Tensor self, Tensor mat1, Tensor mat2, *, Scalar beta=1, Scalar alpha=1)
Status addmm(KernelContext& ctx) {
  NRT_TRY(self, ctx.tensor("self", 0));
  NRT_TRY(a, ctx.tensor("mat1", 1));
  NRT_TRY(b, ctx.tensor("mat2", 2));
  NRT_TRY(beta, ctx.real("beta", 3, 1.0));
  NRT_TRY(alpha, ctx.real("alpha", 4, 1.0));
  NRT_RETURN_IF_ERROR(check_matrix(ctx, *a, 2, "mat1"));
  NRT_RETURN_IF_ERROR(check_matrix(ctx, *b, 2, "mat2"));
  if (a->sizes()[1] != b->sizes()[0]) return ctx.error("shapes " + a->type_string() + " and " + b->type_string() + " cannot be multiplied");
  const std::vector<int64_t> sizes{a->sizes()[0], b->sizes()[1]};
  if (!cpu::broadcasts_to(self->sizes(), sizes)) return ctx.error("self " + self->type_string() + " does not broadcast to the product");
  NRT_TRY(out, cpu::bind_output(ctx, 0, a->dtype(), sizes));
  return product(ctx, *a, *b, *out, &*self, *alpha, *beta);
}

// linear(Tensor input, Tensor weight, Tensor? bias=None): input [*, in] @ weight^T [in, out].
Status linear(KernelContext& ctx) {
  NRT_TRY(input, ctx.tensor("input", 0));
  NRT_TRY(weight, ctx.tensor("weight", 1));
  NRT_TRY(bias, ctx.optional_tensor("bias", 2));
  NRT_RETURN_IF_ERROR(check_matrix(ctx, *weight, 2, "weight"));
  if (input->dim() < 1 || input->sizes().back() != weight->sizes()[1]) {
    return ctx.error("input " + input->type_string() + " does not match weight " + weight->type_string());
  }
  std::vector<int64_t> sizes(input->sizes().begin(), input->sizes().end() - 1);
  sizes.push_back(weight->sizes()[0]);
  NRT_TRY(out, cpu::bind_output(ctx, 0, input->dtype(), sizes));
  const int64_t in = weight->sizes()[1];
  int64_t m = 1;  // the rows of input folded to [m, in]
  for (size_t d = 0; d + 1 < input->sizes().size(); ++d) m *= input->sizes()[d];
  NRT_TRY(x, contiguous(ctx, *input));
  const Tensor a = x->as_strided({m, in}, {in, 1}, x->storage_offset());
  const Tensor wt = weight->as_strided({in, weight->sizes()[0]}, {weight->strides()[1], weight->strides()[0]},
                                       weight->storage_offset());
  const Tensor flat_out = out->is_contiguous() ? out->as_strided({m, weight->sizes()[0]}, {weight->sizes()[0], 1},
                                                                  out->storage_offset())
                                               : Tensor::empty(out->dtype(), {m, weight->sizes()[0]}, out->device());
  NRT_RETURN_IF_ERROR(product(ctx, a, wt, flat_out, *bias ? &**bias : nullptr, 1, 1));
  if (!out->is_contiguous()) {
    NRT_RETURN_IF_ERROR(copy_into(ctx, *out, flat_out.as_strided(sizes, Tensor::contiguous_strides(sizes), 0)));
  }
  return {};
}

// matmul(Tensor self, Tensor other): torch.matmul's cases, batch dims broadcast.
Status matmul(KernelContext& ctx) {
  NRT_TRY(a0, ctx.tensor("self", 0));
  NRT_TRY(b0, ctx.tensor("other", 1));
  if (a0->dim() == 0 || b0->dim() == 0) return ctx.error("both arguments need at least 1 dimension");
  // Vectors become matrices ([k] -> [1, k] on the left, [k, 1] on the right) and lose that dim after.
  const bool a_vector = a0->dim() == 1, b_vector = b0->dim() == 1;
  const Tensor a = a_vector ? a0->as_strided({1, a0->sizes()[0]}, {0, a0->strides()[0]}, a0->storage_offset()) : *a0;
  const Tensor b = b_vector ? b0->as_strided({b0->sizes()[0], 1}, {b0->strides()[0], 0}, b0->storage_offset()) : *b0;
  const int64_t m = a.sizes()[a.dim() - 2], k = a.sizes()[a.dim() - 1], n = b.sizes()[b.dim() - 1];
  if (b.sizes()[b.dim() - 2] != k) return ctx.error("shapes " + a0->type_string() + " and " + b0->type_string() + " cannot be multiplied");
  const std::span<const int64_t> a_batch(a.sizes().data(), a.sizes().size() - 2);
  const std::span<const int64_t> b_batch(b.sizes().data(), b.sizes().size() - 2);
  auto batch = cpu::broadcast_shapes(a_batch, b_batch);
  if (!batch) return ctx.error("batch dims of " + a0->type_string() + " and " + b0->type_string() + " do not broadcast");
  std::vector<int64_t> out_sizes = *batch;
  if (!a_vector) out_sizes.push_back(m);
  if (!b_vector) out_sizes.push_back(n);
  NRT_TRY(out, cpu::bind_output(ctx, 0, a0->dtype(), out_sizes));
  int64_t count = 1;
  for (int64_t s : *batch) count *= s;
  // Operands broadcast to the batch, then folded into one batch dim (copies only where needed).
  auto folded = [&](const Tensor& t, int64_t rows, int64_t cols) -> Result<Tensor> {
    std::vector<int64_t> full = *batch;
    full.push_back(rows);
    full.push_back(cols);
    const Tensor expanded = cpu::expand_to(t, full);
    NRT_TRY(c, contiguous(ctx, expanded));
    return c->as_strided({count, rows, cols}, {rows * cols, cols, 1}, c->storage_offset());
  };
  NRT_TRY(fa, folded(a, m, k));
  NRT_TRY(fb, folded(b, k, n));
  Tensor result = Tensor::empty(a0->dtype(), {count, m, n}, out->device());
  NRT_RETURN_IF_ERROR(product(ctx, *fa, *fb, result, nullptr, 1, 0));
  return copy_into(ctx, *out, result.as_strided(out_sizes, Tensor::contiguous_strides(out_sizes), 0));
}

}  // namespace

Status batched_product(KernelContext& ctx, const Tensor& a, const Tensor& b, const Tensor& out, double alpha) {
  return product(ctx, a, b, out, nullptr, alpha, 0);
}

namespace {

constexpr DeviceKind kCuda = DeviceKind::kCuda;
const KernelRegistration kRegistrations[] = {
    {"aten::mm.default", kCuda, {&mm, false}},
    {"aten::bmm.default", kCuda, {&bmm, false}},
    {"aten::addmm.default", kCuda, {&addmm, false}},
    {"aten::linear.default", kCuda, {&linear, false}},
    {"aten::matmul.default", kCuda, {&matmul, false}},
};

}  // namespace
}  // namespace nrt::exec::cuda
