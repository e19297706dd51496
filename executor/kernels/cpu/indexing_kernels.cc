// Elements by integer index: embedding, index_select, gather and index.Tensor read them;
// index_put writes them (integer index tensors broadcast together, boolean masks in index_put;
// torch's placement of the indexed dims). Indices may be int32
// or int64 and negative ones count from the end, except in embedding; an index out of range is an
// error naming it, never a read outside the tensor. Elements are copied as bytes (every dtype).
#include <cstring>

#include "executor/kernels/cpu/broadcast.h"
#include "executor/kernels/cpu/dimensions.h"
#include "executor/kernels/cpu/dtype_dispatch.h"
#include "executor/kernels/cpu/output_slot.h"
#include "executor/kernels/cpu/strided_iteration.h"
#include "executor/kernels/cpu/tensor_copy.h"

namespace nrt::exec::cpu {
namespace {

Status check_index_dtype(const KernelContext& ctx, const Tensor& index) {
  if (index.dtype() != ScalarType::INT64 && index.dtype() != ScalarType::INT32) {
    return ctx.error("indices must be int64 or int32, got " + std::string(short_name(index.dtype())));
  }
  return Status::Ok();
}

// The index values of `index` (int32 or int64) in row-major order.
std::vector<int64_t> index_values(const Tensor& index) {
  std::vector<int64_t> values;
  values.reserve(static_cast<size_t>(index.numel()));
  const bool wide = index.dtype() == ScalarType::INT64;
  for_each_run<1>(index.sizes(), {&index}, [&](const std::array<uint8_t*, 1>& p, const std::array<int64_t, 1>& s, int64_t n) {
    for (int64_t i = 0; i < n; ++i) {
      values.push_back(wide ? *reinterpret_cast<const int64_t*>(p[0] + i * s[0])
                            : *reinterpret_cast<const int32_t*>(p[0] + i * s[0]));
    }
  });
  return values;
}

// Wraps negative indices; an error for anything outside [-size, size).
Status wrap_indices(const KernelContext& ctx, std::vector<int64_t>& values, int64_t size, bool allow_negative) {
  for (int64_t& v : values) {
    if (v < (allow_negative ? -size : 0) || v >= size) {
      return ctx.error("index " + std::to_string(v) + " is out of range for size " + std::to_string(size));
    }
    if (v < 0) v += size;
  }
  return Status::Ok();
}

Tensor select_view(const Tensor& t, size_t axis, int64_t i) {
  std::vector<int64_t> sizes = t.sizes(), strides = t.strides();
  const int64_t offset = t.storage_offset() + i * strides[axis];
  sizes.erase(sizes.begin() + static_cast<int64_t>(axis));
  strides.erase(strides.begin() + static_cast<int64_t>(axis));
  return t.as_strided(sizes, strides, offset);
}

// The lookup of both embeddings: `weight` (2-D) holds rows [first_row, first_row + rows) of a
// table of `table_rows`; each index reads its row, or zeros where `weight` does not hold it. An
// index outside [0, table_rows) is an error.
Status look_up_rows(KernelContext& ctx, const Tensor& weight, const Tensor& indices, int64_t first_row,
                    int64_t table_rows) {
  if (auto s = check_index_dtype(ctx, indices); !s.ok()) return s;
  std::vector<int64_t> values = index_values(indices);
  if (auto s = wrap_indices(ctx, values, table_rows, false); !s.ok()) return s;
  std::vector<int64_t> sizes = indices.sizes();
  sizes.push_back(weight.sizes()[1]);
  NRT_TRY(slot, OutputSlot::bind(ctx, 0, weight.dtype(), sizes));
  const Tensor staging = slot->staging(weight.dtype());
  const int64_t width = weight.sizes()[1];
  const Tensor rows =
      staging.as_strided({static_cast<int64_t>(values.size()), width}, {width, 1}, staging.storage_offset());
  // A contiguous table's rows are copied as bytes: through a view and copy_into per row, a
  // 32-token lookup took 14 us (llama_tiny's embedding), nearly all of it making views.
  const bool dense = weight.is_contiguous();
  const size_t row_bytes = static_cast<size_t>(width) * weight.element_size();
  for (size_t i = 0; i < values.size(); ++i) {
    uint8_t* to = rows.raw_data() + i * row_bytes;
    const int64_t held = values[i] - first_row;
    if (held < 0 || held >= weight.sizes()[0]) {
      std::memset(to, 0, row_bytes);
    } else if (dense) {
      std::memcpy(to, weight.raw_data() + static_cast<size_t>(held) * row_bytes, row_bytes);
    } else {
      copy_into(select_view(rows, 0, static_cast<int64_t>(i)), select_view(weight, 0, held));
    }
  }
  slot->commit();
  return Status::Ok();
}

// embedding(Tensor weight, Tensor indices, SymInt padding_idx=-1, bool scale_grad_by_freq=False, bool sparse=False)
Status embedding(KernelContext& ctx) {
  NRT_TRY(weight, ctx.tensor("weight", 0));
  NRT_TRY(indices, ctx.tensor("indices", 1));
  if (weight->dim() != 2) return ctx.error("weight must be 2-D, got " + shape_string(weight->sizes()));
  return look_up_rows(ctx, *weight, *indices, 0, weight->sizes()[0]);
}

// nrt::masked_embedding(Tensor weight, Tensor indices, int vocab_start, int vocab_size): the
// lookup of an embedding whose table is sharded by vocabulary (the sharding pass inserts it,
// executor/dtensor/sharding_rules.h): `weight` holds rows [vocab_start, vocab_start + rows)
// of a vocab_size-row table; an index this shard holds reads its row, any other gives zeros, so
// the shards' results sum to the whole lookup. An index outside [0, vocab_size) is an error.
Status masked_embedding(KernelContext& ctx) {
  NRT_TRY(weight, ctx.tensor("weight", 0));
  NRT_TRY(indices, ctx.tensor("indices", 1));
  NRT_TRY(start, ctx.int64("vocab_start", 2));
  NRT_TRY(vocab, ctx.int64("vocab_size", 3));
  if (weight->dim() != 2) return ctx.error("weight must be 2-D, got " + shape_string(weight->sizes()));
  if (*start < 0 || *vocab < 0 || *start > *vocab || weight->sizes()[0] > *vocab - *start) {
    return ctx.error("rows [" + std::to_string(*start) + ", " + std::to_string(*start + weight->sizes()[0]) +
                     ") are not a shard of a " + std::to_string(*vocab) + "-row table");
  }
  return look_up_rows(ctx, *weight, *indices, *start, *vocab);
}

// index_select(Tensor self, int dim, Tensor index)
Status index_select(KernelContext& ctx) {
  NRT_TRY(self, ctx.tensor("self", 0));
  NRT_TRY(dim, ctx.int64("dim", 1));
  NRT_TRY(index, ctx.tensor("index", 2));
  if (auto s = check_index_dtype(ctx, *index); !s.ok()) return s;
  if (index->dim() > 1) return ctx.error("index must be 0-D or 1-D, got " + shape_string(index->sizes()));
  NRT_TRY(d, wrap_dim(ctx, *dim, self->dim()));
  // A 0-d input behaves as [1].
  const Tensor input = self->dim() == 0 ? self->as_strided({1}, {1}, self->storage_offset()) : *self;
  const auto axis = static_cast<size_t>(*d);
  std::vector<int64_t> values = index_values(*index);
  if (auto s = wrap_indices(ctx, values, input.sizes()[axis], true); !s.ok()) return s;
  std::vector<int64_t> sizes = input.sizes();
  sizes[axis] = static_cast<int64_t>(values.size());
  if (self->dim() == 0) sizes.clear();
  NRT_TRY(out, bind_output(ctx, 0, self->dtype(), sizes));
  const Tensor target = self->dim() == 0 ? out->as_strided({1}, {1}, out->storage_offset()) : *out;
  for (size_t i = 0; i < values.size(); ++i) {
    copy_into(select_view(target, axis, static_cast<int64_t>(i)), select_view(input, axis, values[i]));
  }
  return Status::Ok();
}

// gather(Tensor self, int dim, Tensor index, *, bool sparse_grad=False)
Status gather(KernelContext& ctx) {
  NRT_TRY(self, ctx.tensor("self", 0));
  NRT_TRY(dim, ctx.int64("dim", 1));
  NRT_TRY(index, ctx.tensor("index", 2));
  if (auto s = check_index_dtype(ctx, *index); !s.ok()) return s;
  NRT_TRY(d, wrap_dim(ctx, *dim, self->dim()));
  const int64_t rank = std::max<int64_t>(self->dim(), 1);
  if (std::max<int64_t>(index->dim(), 1) != rank) {
    return ctx.error("index " + shape_string(index->sizes()) + " and input " + shape_string(self->sizes()) +
                     " must have the same number of dimensions");
  }
  const Tensor input = self->dim() == 0 ? self->as_strided({1}, {1}, self->storage_offset()) : *self;
  const Tensor idx = index->dim() == 0 ? index->as_strided({1}, {1}, index->storage_offset()) : *index;
  const auto axis = static_cast<size_t>(*d);
  for (size_t i = 0; i < idx.sizes().size(); ++i) {
    if (i != axis && idx.sizes()[i] > input.sizes()[i]) {
      return ctx.error("index " + shape_string(index->sizes()) + " is larger than the input " +
                       shape_string(self->sizes()) + " outside dimension " + std::to_string(*d));
    }
  }
  NRT_TRY(out, bind_output(ctx, 0, self->dtype(), index->sizes()));
  const Tensor target = index->dim() == 0 ? out->as_strided({1}, {1}, out->storage_offset()) : *out;
  // The input seen at the index's positions with the gathered dimension pinned at 0.
  std::vector<int64_t> source_strides = input.strides();
  const int64_t step_bytes = source_strides[axis] * static_cast<int64_t>(input.element_size());
  source_strides[axis] = 0;
  const Tensor source = input.as_strided(idx.sizes(), source_strides, input.storage_offset());
  const int64_t extent = input.sizes()[axis];
  const size_t element = input.element_size();
  const bool wide = idx.dtype() == ScalarType::INT64;
  int64_t bad = 0;
  bool out_of_range = false;
  for_each_run<3>(idx.sizes(), {&target, &idx, &source},
                  [&](const std::array<uint8_t*, 3>& p, const std::array<int64_t, 3>& s, int64_t n) {
                    for (int64_t i = 0; i < n && !out_of_range; ++i) {
                      int64_t v = wide ? *reinterpret_cast<const int64_t*>(p[1] + i * s[1])
                                       : *reinterpret_cast<const int32_t*>(p[1] + i * s[1]);
                      if (v < -extent || v >= extent) {
                        out_of_range = true;
                        bad = v;
                        return;
                      }
                      if (v < 0) v += extent;
                      std::memcpy(p[0] + i * s[0], p[2] + i * s[2] + v * step_bytes, element);
                    }
                  });
  if (out_of_range) {
    return ctx.error("index " + std::to_string(bad) + " is out of range for size " + std::to_string(extent));
  }
  return Status::Ok();
}

// The `indices` argument of index.Tensor and index_put: a list of optional tensors.
Result<std::vector<std::optional<Tensor>>> read_index_list(const KernelContext& ctx) {
  const RuntimeValue* list = ctx.find("indices", 1);
  if (list == nullptr) return ctx.error("missing argument 'indices'");
  if (const auto* optional = std::get_if<std::vector<std::optional<Tensor>>>(list)) return *optional;
  if (const auto* tensors = std::get_if<std::vector<Tensor>>(list)) {
    return std::vector<std::optional<Tensor>>(tensors->begin(), tensors->end());
  }
  return ctx.error("argument 'indices' is not a list of optional tensors");
}

// A boolean mask over dims [first, first + mask.dim()) of `self` as the integer indices of its true
// elements, one 1-D int64 tensor per dim (torch expands masks this way before indexing).
Result<std::vector<Tensor>> mask_coordinates(const KernelContext& ctx, const Tensor& mask, const Tensor& self,
                                             size_t first) {
  const auto dims = static_cast<size_t>(mask.dim());
  for (size_t d = 0; d < dims; ++d) {
    if (first + d >= self.sizes().size() || mask.sizes()[d] != self.sizes()[first + d]) {
      return ctx.error("mask " + shape_string(mask.sizes()) + " does not match the indexed shape " +
                       shape_string(self.sizes()) + " at dimension " + std::to_string(first + d));
    }
  }
  std::vector<std::vector<int64_t>> coordinates(dims);
  const std::vector<int64_t> strides = Tensor::contiguous_strides(mask.sizes());
  int64_t flat = 0;
  for_each_run<1>(mask.sizes(), {&mask}, [&](const std::array<uint8_t*, 1>& p, const std::array<int64_t, 1>& s, int64_t n) {
    for (int64_t i = 0; i < n; ++i, ++flat) {
      if (*(p[0] + i * s[0]) == 0) continue;
      for (size_t d = 0; d < dims; ++d) coordinates[d].push_back(flat / strides[d] % mask.sizes()[d]);
    }
  });
  std::vector<Tensor> out;
  for (const std::vector<int64_t>& c : coordinates) {
    Tensor t = Tensor::empty(ScalarType::INT64, {static_cast<int64_t>(c.size())});
    std::copy(c.begin(), c.end(), t.data<int64_t>());
    out.push_back(t);
  }
  return out;
}

// Advanced indexing's layout, shared by index.Tensor (reads) and index_put (writes): the indexed
// dims of self, their index values broadcast together, and where the index block sits in the
// result: (rest before the indexed block) + index shape + (rest after) when the indexed dims are
// adjacent, else index shape + rest (torch's placement).
struct AdvancedIndex {
  std::vector<size_t> indexed;               // dims of self that carry an index
  std::vector<std::vector<int64_t>> values;  // per indexed dim: wrapped, broadcast, row-major
  std::vector<int64_t> index_shape;
  std::vector<size_t> rest;                  // the other dims of self, in order
  size_t before = 0;                         // rest dims placed before the index block
  std::vector<int64_t> result_sizes;
};

Result<AdvancedIndex> plan_index(const KernelContext& ctx, const Tensor& self,
                                 std::vector<std::optional<Tensor>> indices, bool masks) {
  // Masks become integer indices over the dims they cover.
  std::vector<std::optional<Tensor>> expanded;
  for (const std::optional<Tensor>& index : indices) {
    if (!index || (index->dtype() != ScalarType::BOOL && index->dtype() != ScalarType::UINT8)) {
      expanded.push_back(index);
      continue;
    }
    if (!masks) return ctx.error("boolean mask indices are not supported (their result shape depends on the data)");
    if (index->dim() == 0) return ctx.error("a 0-d boolean mask index is not supported");
    NRT_TRY(columns, mask_coordinates(ctx, *index, self, expanded.size()));
    expanded.insert(expanded.end(), columns->begin(), columns->end());
  }
  indices = std::move(expanded);
  if (static_cast<int64_t>(indices.size()) > self.dim()) {
    return ctx.error("too many indices for a tensor of shape " + shape_string(self.sizes()));
  }
  AdvancedIndex ai;
  for (size_t i = 0; i < indices.size(); ++i) {
    if (!indices[i]) continue;
    if (auto s = check_index_dtype(ctx, *indices[i]); !s.ok()) return s.error();
    auto b = broadcast_shapes(ai.index_shape, indices[i]->sizes());
    if (!b) return ctx.error("index shapes do not broadcast");
    ai.index_shape = *b;
    ai.indexed.push_back(i);
  }
  if (ai.indexed.empty()) return ctx.error("expects at least one index tensor");
  const bool adjacent = ai.indexed.back() - ai.indexed.front() + 1 == ai.indexed.size();
  for (size_t d = 0; d < self.sizes().size(); ++d) {
    if (d >= indices.size() || !indices[d]) ai.rest.push_back(d);
  }
  ai.before = adjacent ? static_cast<size_t>(std::count_if(ai.rest.begin(), ai.rest.end(),
                                                           [&](size_t d) { return d < ai.indexed.front(); }))
                       : 0;
  for (size_t i = 0; i < ai.before; ++i) ai.result_sizes.push_back(self.sizes()[ai.rest[i]]);
  ai.result_sizes.insert(ai.result_sizes.end(), ai.index_shape.begin(), ai.index_shape.end());
  for (size_t i = ai.before; i < ai.rest.size(); ++i) ai.result_sizes.push_back(self.sizes()[ai.rest[i]]);
  for (size_t d : ai.indexed) {
    ai.values.push_back(index_values(expand_to(*indices[d], ai.index_shape)));
    if (auto s = wrap_indices(ctx, ai.values.back(), self.sizes()[d], true); !s.ok()) return s.error();
  }
  return ai;
}

// The non-indexed dims of `self` and of `result` (shaped ai.result_sizes): what each position of
// the index block copies.
struct RestLayout {
  std::vector<int64_t> sizes, self_strides, result_strides;
};

RestLayout rest_layout(const AdvancedIndex& ai, const Tensor& self, const Tensor& result) {
  RestLayout rest;
  for (size_t d : ai.rest) {
    rest.sizes.push_back(self.sizes()[d]);
    rest.self_strides.push_back(self.strides()[d]);
  }
  for (size_t i = 0; i < ai.result_sizes.size(); ++i) {
    if (i < ai.before || i >= ai.before + ai.index_shape.size()) rest.result_strides.push_back(result.strides()[i]);
  }
  return rest;
}

// Calls visit(self_offset, result_offset) for each position of the index block, in row-major
// order: the storage offsets of the position's region in `self` and in `result`.
template <class Visit>
void for_each_index_offset(const AdvancedIndex& ai, const Tensor& self, const Tensor& result, Visit&& visit) {
  const std::vector<int64_t> block_strides = Tensor::contiguous_strides(ai.index_shape);
  const int64_t positions = product(ai.index_shape);
  for (int64_t k = 0; k < positions; ++k) {
    int64_t self_offset = self.storage_offset();
    for (size_t j = 0; j < ai.indexed.size(); ++j) {
      self_offset += ai.values[j][static_cast<size_t>(k)] * self.strides()[ai.indexed[j]];
    }
    int64_t result_offset = result.storage_offset(), rem = k;
    for (size_t i = 0; i < ai.index_shape.size(); ++i) {
      const int64_t coordinate = rem / block_strides[i];
      rem %= block_strides[i];
      result_offset += coordinate * result.strides()[ai.before + i];
    }
    visit(self_offset, result_offset);
  }
}

// Calls visit(self_region, result_region) for each position of the index block, in row-major
// order: the views over the non-indexed dims of `self` at that position's indices and of
// `result` at that position.
template <class Visit>
void for_each_index_position(const AdvancedIndex& ai, const Tensor& self, const Tensor& result, Visit&& visit) {
  const RestLayout rest = rest_layout(ai, self, result);
  for_each_index_offset(ai, self, result, [&](int64_t self_offset, int64_t result_offset) {
    visit(self.as_strided(rest.sizes, rest.self_strides, self_offset),
          result.as_strided(rest.sizes, rest.result_strides, result_offset));
  });
}

// index.Tensor(Tensor self, Tensor?[] indices): advanced indexing with integer index tensors.
Status index_tensor(KernelContext& ctx) {
  NRT_TRY(self, ctx.tensor("self", 0));
  NRT_TRY(indices, read_index_list(ctx));
  NRT_TRY(ai, plan_index(ctx, *self, std::move(*indices), false));
  NRT_TRY(out, bind_output(ctx, 0, self->dtype(), ai->result_sizes));
  for_each_index_position(*ai, *self, *out, [](const Tensor& source, const Tensor& target) { copy_into(target, source); });
  return Status::Ok();
}

// d + v as index_put accumulates: integers wrap, bool is logical or, reduced floats in float.
template <class T>
T accumulated(T d, T v) {
  if constexpr (std::is_same_v<T, bool>) {
    return d || v;
  } else if constexpr (std::is_integral_v<T>) {
    using U = std::make_unsigned_t<T>;
    return static_cast<T>(static_cast<U>(static_cast<U>(d) + static_cast<U>(v)));
  } else {
    return store<T>(load(d) + load(v));
  }
}

// dst += src element-wise (one shape).
template <class T>
void accumulate_into(const Tensor& dst, const Tensor& src) {
  for_each_run<2>(dst.sizes(), {&dst, &src}, [](const std::array<uint8_t*, 2>& p, const std::array<int64_t, 2>& s, int64_t n) {
    for (int64_t i = 0; i < n; ++i) {
      auto* d = reinterpret_cast<T*>(p[0] + i * s[0]);
      *d = accumulated(*d, *reinterpret_cast<const T*>(p[1] + i * s[1]));
    }
  });
}

// index_put(Tensor self, Tensor?[] indices, Tensor values, bool accumulate=False): a copy of self
// with `values` (broadcast to the shape index.Tensor would return) written at the indexed
// positions; with accumulate, added there, every duplicate index counted. Without it a duplicate
// index keeps the last write (the order of the index elements). Boolean masks index the dims they
// cover. index_put_ runs as this kernel writing into self.
Status index_put(KernelContext& ctx) {
  NRT_TRY(self, ctx.tensor("self", 0));
  NRT_TRY(indices, read_index_list(ctx));
  NRT_TRY(values, ctx.tensor("values", 2));
  NRT_TRY(accumulate, ctx.boolean("accumulate", 3, false));
  if (!is_kernel_dtype(self->dtype())) return unsupported_dtype(ctx, self->dtype());
  if (values->dtype() != self->dtype()) {
    return ctx.error("values " + std::string(short_name(values->dtype())) + " and self " +
                     std::string(short_name(self->dtype())) + " must share one dtype");
  }
  NRT_TRY(ai, plan_index(ctx, *self, std::move(*indices), true));
  if (!broadcasts_to(values->sizes(), ai->result_sizes)) {
    return ctx.error("values " + shape_string(values->sizes()) + " do not broadcast to the indexed shape " +
                     shape_string(ai->result_sizes));
  }
  NRT_TRY(out, bind_output(ctx, 0, self->dtype(), self->sizes()));
  copy_into(*out, *self);
  const Tensor source = expand_to(*values, ai->result_sizes);
  // Regions that are one contiguous run in both (rows of a matrix, the common case) are copied or
  // added with plain loops; others through strided views.
  const RestLayout rest = rest_layout(*ai, *out, source);
  const std::vector<int64_t> contiguous = Tensor::contiguous_strides(rest.sizes);
  const bool runs = rest.self_strides == contiguous && rest.result_strides == contiguous;
  return dispatch_dtype<kAllDtypes>(ctx, out->dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    if (!runs) {
      for_each_index_position(*ai, *out, source, [&](const Tensor& target, const Tensor& value) {
        if (*accumulate) {
          accumulate_into<T>(target, value);
        } else {
          copy_into(target, value);
        }
      });
      return;
    }
    const int64_t run = product(rest.sizes);
    T* target = out->data<T>() - out->storage_offset();
    const T* value = source.data<T>() - source.storage_offset();
    for_each_index_offset(*ai, *out, source, [&](int64_t target_offset, int64_t value_offset) {
      T* d = target + target_offset;
      const T* v = value + value_offset;
      if (*accumulate) {
        for (int64_t i = 0; i < run; ++i) d[i] = accumulated(d[i], v[i]);
      } else {
        std::copy(v, v + run, d);
      }
    });
  });
}

constexpr DeviceKind kCpu = DeviceKind::kCpu;
const KernelRegistration kRegistrations[] = {
    {"aten::embedding.default", kCpu, {&embedding, false}},
    {"nrt::masked_embedding.default", kCpu, {&masked_embedding, false}},
    {"aten::index_select.default", kCpu, {&index_select, false}},
    {"aten::gather.default", kCpu, {&gather, false}},
    {"aten::index.Tensor", kCpu, {&index_tensor, false}},
    {"aten::index_put.default", kCpu, {&index_put, false}},
    {"aten::_unsafe_index_put.default", kCpu, {&index_put, false}},
};

}  // namespace
}  // namespace nrt::exec::cpu
