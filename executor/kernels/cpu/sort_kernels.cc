// Ordering along a dim: sort (stable or not: always stable here), argsort and topk. torch's
// order: NaN is greater than every number (last when ascending, first when descending), equal
// elements keep their index order, bool compares as 0/1. topk returns the k first of that order
// (largest: descending), sorted whatever `sorted` says (sorted output is a valid unsorted one).
#include <algorithm>
#include <cmath>
#include <numeric>
#include <optional>
#include <vector>

#include "executor/kernels/cpu/dimensions.h"
#include "executor/kernels/cpu/dtype_dispatch.h"
#include "executor/kernels/cpu/output_slot.h"
#include "executor/kernels/cpu/tensor_copy.h"

namespace nrt::exec::cpu {
namespace {

template <class C>
bool is_nan_value(C v) {
  if constexpr (std::is_floating_point_v<C>) {
    return std::isnan(v);
  } else {
    return false;
  }
}

// `self` with `dim` moved last, and the order that puts it back.
std::vector<int64_t> dim_last(int64_t rank, int64_t dim) {
  std::vector<int64_t> order;
  for (int64_t d = 0; d < rank; ++d) {
    if (d != dim) order.push_back(d);
  }
  order.push_back(dim);
  return order;
}

Tensor permuted(const Tensor& t, const std::vector<int64_t>& order) {
  std::vector<int64_t> sizes, strides;
  for (int64_t d : order) {
    sizes.push_back(t.sizes()[static_cast<size_t>(d)]);
    strides.push_back(t.strides()[static_cast<size_t>(d)]);
  }
  return t.as_strided(sizes, strides, t.storage_offset());
}

// The first `k` of each line of `self` along `dim` in torch's order, into outputs 0 (values) and
// 1 (int64 indices), each with `dim` of size k.
Status ordered(KernelContext& ctx, const Tensor& self_arg, int64_t dim_arg, bool descending, std::optional<int64_t> k_arg) {
  if (!is_kernel_dtype(self_arg.dtype())) return unsupported_dtype(ctx, self_arg.dtype());
  const Tensor self = self_arg.dim() == 0 ? self_arg.as_strided({1}, {1}, self_arg.storage_offset()) : self_arg;
  NRT_TRY(dim, wrap_dim(ctx, dim_arg, self.dim()));
  const int64_t n = self.sizes()[static_cast<size_t>(*dim)];
  const int64_t k = k_arg.value_or(n);
  if (k < 0 || k > n) return ctx.error("k (" + std::to_string(k) + ") is out of range for a dim of size " + std::to_string(n));
  std::vector<int64_t> sizes = self_arg.sizes();
  if (self_arg.dim() > 0) sizes[static_cast<size_t>(*dim)] = k;
  NRT_TRY(values, bind_output(ctx, 0, self_arg.dtype(), sizes));
  NRT_TRY(indices, OutputSlot::bind_secondary(ctx, 1, ScalarType::INT64, sizes));
  if (values->numel() == 0) return Status::Ok();
  const std::vector<int64_t> order = dim_last(self.dim(), *dim);
  const Tensor lines = contiguous_as(permuted(self, order), self.dtype());
  const int64_t rows = n == 0 ? 0 : lines.numel() / n;
  std::vector<int64_t> dense_sizes = lines.sizes();
  dense_sizes.back() = k;
  Tensor value_rows = Tensor::empty(self.dtype(), dense_sizes);
  Tensor index_rows = Tensor::empty(ScalarType::INT64, dense_sizes);
  NRT_RETURN_IF_ERROR(dispatch_dtype<kAllDtypes>(ctx, self.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    using C = compute_t<T>;
    std::vector<int64_t> position(static_cast<size_t>(n));
    for (int64_t r = 0; r < rows; ++r) {
      const T* line = lines.data<T>() + r * n;
      // a before b: NaN is the largest; equal values keep their index order.
      auto before = [&](int64_t a, int64_t b) {
        const C x = load(line[a]), y = load(line[b]);
        const bool x_nan = is_nan_value(x), y_nan = is_nan_value(y);
        if (x_nan || y_nan) {
          if (x_nan && y_nan) return a < b;
          return descending ? x_nan : y_nan;
        }
        if (x == y) return a < b;
        return descending ? x > y : x < y;
      };
      std::iota(position.begin(), position.end(), int64_t{0});
      std::partial_sort(position.begin(), position.begin() + k, position.end(), before);
      T* v = value_rows.data<T>() + r * k;
      int64_t* i = index_rows.data<int64_t>() + r * k;
      for (int64_t j = 0; j < k; ++j) {
        v[j] = line[position[static_cast<size_t>(j)]];
        i[j] = position[static_cast<size_t>(j)];
      }
    }
  }));
  // The outputs seen with `dim` last receive the rows.
  const Tensor v_out = self_arg.dim() == 0 ? values->as_strided({1}, {1}, values->storage_offset()) : *values;
  const Tensor i_out = self_arg.dim() == 0 ? indices->tensor().as_strided({1}, {1}, indices->tensor().storage_offset())
                                           : indices->tensor();
  copy_into(permuted(v_out, order), value_rows);
  copy_into(permuted(i_out, order), index_rows);
  return Status::Ok();
}

// sort(Tensor self, int dim=-1, bool descending=False) -> (values, indices)
Status sort(KernelContext& ctx) {
  NRT_TRY(self, ctx.tensor("self", 0));
  NRT_TRY(dim, ctx.int64("dim", 1, -1));
  NRT_TRY(descending, ctx.boolean("descending", 2, false));
  return ordered(ctx, *self, *dim, *descending, std::nullopt);
}

// sort.stable(Tensor self, *, bool? stable, int dim=-1, bool descending=False)
Status sort_stable(KernelContext& ctx) {
  NRT_TRY(self, ctx.tensor("self", 0));
  NRT_TRY(dim, ctx.int64("dim", 2, -1));
  NRT_TRY(descending, ctx.boolean("descending", 3, false));
  return ordered(ctx, *self, *dim, *descending, std::nullopt);
}

// topk(Tensor self, SymInt k, int dim=-1, bool largest=True, bool sorted=True) -> (values, indices)
Status topk(KernelContext& ctx) {
  NRT_TRY(self, ctx.tensor("self", 0));
  NRT_TRY(k, ctx.int64("k", 1));
  NRT_TRY(dim, ctx.int64("dim", 2, -1));
  NRT_TRY(largest, ctx.boolean("largest", 3, true));
  return ordered(ctx, *self, *dim, *largest, *k);
}

constexpr DeviceKind kCpu = DeviceKind::kCpu;
const KernelRegistration kRegistrations[] = {
    {"aten::sort.default", kCpu, {&sort, false}},
    {"aten::sort.stable", kCpu, {&sort_stable, false}},
    {"aten::topk.default", kCpu, {&topk, false}},
};

}  // namespace
}  // namespace nrt::exec::cpu
