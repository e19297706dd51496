// torch's stateless random ops (torch.func._random): key split and fold-in, and uniform, normal
// and randint drawn from a key, bit for bit as torch draws them (executor/random/torch_philox.h,
// docs/RANDOM.md). The ops torch exports are in place on an aten.empty (_philox_uniform_ ...); the
// functional forms registered here serve them through the executor's write-back. Arguments are
// checked as torch checks them, with torch's words.
#include <optional>
#include <string>
#include <vector>

#include "executor/kernels/cpu/draw_runs.h"
#include "executor/kernels/cpu/dtype_dispatch.h"
#include "executor/kernels/cpu/output_slot.h"
#include "executor/random/torch_philox.h"
#include "executor/runtime/tensor_copy.h"

namespace nrt::exec::cpu {
namespace {

using random::TorchIntRange;
using random::TorchPhiloxKey;

std::string sizes_text(const std::vector<int64_t>& sizes) {
  std::string text = "[";
  for (size_t i = 0; i < sizes.size(); ++i) text += (i ? ", " : "") + std::to_string(sizes[i]);
  return text + "]";
}

// A key tensor: uint64 of shape (*batch, 2).
Status check_key(const KernelContext& ctx, const Tensor& key) {
  if (key.dtype() != ScalarType::UINT64) {
    return ctx.error("key must have dtype uint64, got " + std::string(short_name(key.dtype())));
  }
  if (key.dim() < 1 || key.size(-1) != 2) {
    return ctx.error("key must have shape (2,) or (*batch, 2), got shape " + sizes_text(key.sizes()));
  }
  return Status::Ok();
}

// The keys of a key tensor, row-major over its batch.
std::vector<TorchPhiloxKey> read_keys(const Tensor& key) {
  const Tensor dense = contiguous_copy(key);
  const auto* words = dense.data<uint64_t>();
  std::vector<TorchPhiloxKey> keys(static_cast<size_t>(dense.numel() / 2));
  for (size_t i = 0; i < keys.size(); ++i) keys[i] = {words[2 * i], words[2 * i + 1]};
  return keys;
}

Status write_keys(KernelContext& ctx, std::vector<int64_t> sizes, const std::vector<TorchPhiloxKey>& keys) {
  NRT_TRY(slot, OutputSlot::bind(ctx, 0, ScalarType::UINT64, std::move(sizes)));
  Tensor out = slot->staging(ScalarType::UINT64);
  auto* words = out.data<uint64_t>();
  for (size_t i = 0; i < keys.size(); ++i) {
    words[2 * i] = keys[i].seed;
    words[2 * i + 1] = keys[i].offset;
  }
  slot->commit();
  return Status::Ok();
}

// _philox_key_split(Tensor key, int num_splits) -> Tensor: shape (num_splits, *batch, 2), split
// s of every key at [s].
Status key_split(KernelContext& ctx) {
  NRT_TRY(key, ctx.tensor("key", 0));
  NRT_TRY(num_splits, ctx.int64("num_splits", 1));
  NRT_RETURN_IF_ERROR(check_key(ctx, *key));
  if (*num_splits <= 0) return ctx.error("num_splits must be positive, got " + std::to_string(*num_splits));
  const std::vector<TorchPhiloxKey> parents = read_keys(*key);
  std::vector<TorchPhiloxKey> children;
  children.reserve(parents.size() * static_cast<size_t>(*num_splits));
  for (int64_t s = 0; s < *num_splits; ++s) {
    for (const TorchPhiloxKey& parent : parents) children.push_back(random::torch_key_split(parent, static_cast<uint64_t>(s)));
  }
  std::vector<int64_t> sizes = {*num_splits};
  sizes.insert(sizes.end(), key->sizes().begin(), key->sizes().end());
  return write_keys(ctx, std::move(sizes), children);
}

Status fold_in_keys(KernelContext& ctx, const Tensor& key, uint64_t data) {
  NRT_RETURN_IF_ERROR(check_key(ctx, key));
  std::vector<TorchPhiloxKey> keys = read_keys(key);
  for (TorchPhiloxKey& k : keys) k = random::torch_key_fold_in(k, data);
  return write_keys(ctx, key.sizes(), keys);
}

// _philox_key_fold_in(Tensor key, int data): data as uint64 (torch passes values past 2^63 negative).
Status key_fold_in(KernelContext& ctx) {
  NRT_TRY(key, ctx.tensor("key", 0));
  NRT_TRY(data, ctx.int64("data", 1));
  return fold_in_keys(ctx, *key, static_cast<uint64_t>(*data));
}

// _philox_key_fold_in.Tensor(Tensor key, Tensor data): data a one-element uint64 tensor.
Status key_fold_in_tensor(KernelContext& ctx) {
  NRT_TRY(key, ctx.tensor("key", 0));
  NRT_TRY(data, ctx.tensor("data", 1));
  if (data->dtype() != ScalarType::UINT64) {
    return ctx.error("data must have dtype uint64, got " + std::string(short_name(data->dtype())));
  }
  if (data->numel() != 1) return ctx.error("data must be a single value, got " + std::to_string(data->numel()) + " elements");
  return fold_in_keys(ctx, *key, contiguous_copy(*data).data<uint64_t>()[0]);
}

// Which key draws which elements. A 1-d key draws the whole output. A batched key has one more
// dim than the output, its batch broadcastable to the output's shape: the trailing output dims
// where the key has size 1 form one key's run of elements (row-major), the leading ones pick the
// key (a size-1 key dim repeats its key).
struct KeyLayout {
  std::vector<TorchPhiloxKey> keys;   // one per run, in output order
  int64_t run = 0;                    // elements per run
};

Result<KeyLayout> key_layout(const KernelContext& ctx, const Tensor& key, const std::vector<int64_t>& sizes) {
  NRT_RETURN_IF_ERROR(check_key(ctx, key));
  const auto rank = static_cast<int64_t>(sizes.size());
  int64_t numel = 1;
  for (int64_t s : sizes) numel *= s;
  const std::vector<TorchPhiloxKey> keys = read_keys(key);
  KeyLayout layout;
  if (key.dim() == 1) {
    layout.keys = keys;
    layout.run = numel;
    return layout;
  }
  if (key.dim() != rank + 1) {
    return ctx.error("batched key must have ndim == output ndim + 1, got key shape " + sizes_text(key.sizes()) +
                     " with output shape " + sizes_text(sizes));
  }
  for (int64_t d = 0; d < rank; ++d) {
    if (key.size(d) != 1 && key.size(d) != sizes[static_cast<size_t>(d)]) {
      std::vector<int64_t> batch(key.sizes().begin(), key.sizes().end() - 1);
      return ctx.error("key batch shape " + sizes_text(batch) + " is not broadcastable with output shape " +
                       sizes_text(sizes));
    }
  }
  int64_t key_dims = rank;
  layout.run = 1;
  while (key_dims > 0 && key.size(key_dims - 1) == 1) {
    layout.run *= sizes[static_cast<size_t>(key_dims - 1)];
    --key_dims;
  }
  if (numel == 0) return layout;
  const int64_t runs = numel / layout.run;
  // Row-major strides of the dense key batch, 0 where a size-1 dim broadcasts.
  std::vector<int64_t> stride(static_cast<size_t>(key_dims), 0);
  int64_t step = 1;
  for (int64_t d = rank - 1; d >= 0; --d) {
    if (d < key_dims && key.size(d) != 1) stride[static_cast<size_t>(d)] = step;
    step *= key.size(d);
  }
  layout.keys.reserve(static_cast<size_t>(runs));
  for (int64_t r = 0; r < runs; ++r) {
    int64_t rest = r, index = 0;
    for (int64_t d = key_dims - 1; d >= 0; --d) {
      const int64_t size = sizes[static_cast<size_t>(d)];
      index += (rest % size) * stride[static_cast<size_t>(d)];
      rest /= size;
    }
    layout.keys.push_back(keys[static_cast<size_t>(index)]);
  }
  return layout;
}

// The output of a draw: self's dtype and shape, every run drawn from its key. draw(key, first,
// count, out) draws elements [first, first + count) of a key's stream. A sharded draw (one key:
// the sharding pass shards only those) draws this rank's elements by their global indices.
template <class Draw>
Status draw_like_self(KernelContext& ctx, const Tensor& self, const Tensor& key, Draw&& draw) {
  NRT_TRY(layout, key_layout(ctx, key, self.sizes()));
  NRT_TRY(runs, draw_runs(ctx, self.sizes()));
  const bool sharded = ctx.find(kDrawGlobalSizesArg, -1) != nullptr;
  if (sharded && key.dim() != 1) return ctx.error("a sharded draw takes one key, not a batch of keys");
  NRT_TRY(slot, OutputSlot::bind(ctx, 0, self.dtype(), self.sizes()));
  Tensor out = slot->staging(self.dtype());
  if (out.numel() > 0) {
    uint8_t* bytes = out.raw_data();
    const size_t element = out.element_size();
    if (sharded) {
      for (const DrawRun& run : *runs) {
        draw(layout->keys[0], run.global_first, run.count, bytes + static_cast<size_t>(run.local_first) * element);
      }
    } else {
      const auto run_bytes = static_cast<size_t>(layout->run) * element;
      for (size_t r = 0; r < layout->keys.size(); ++r) draw(layout->keys[r], 0, layout->run, bytes + r * run_bytes);
    }
  }
  slot->commit();
  return Status::Ok();
}

Status floating_self(const KernelContext& ctx, const Tensor& self) {
  if (!random::torch_draws_floating(self.dtype())) {
    return ctx.error("self must be a floating point tensor, got " + std::string(short_name(self.dtype())));
  }
  return Status::Ok();
}

// _philox_uniform(Tensor self, Tensor key, float low=0., float high=1.)
Status philox_uniform(KernelContext& ctx) {
  NRT_TRY(self, ctx.tensor("self", 0));
  NRT_TRY(key, ctx.tensor("key", 1));
  NRT_TRY(low, ctx.real("low", 2, 0.0));
  NRT_TRY(high, ctx.real("high", 3, 1.0));
  NRT_RETURN_IF_ERROR(floating_self(ctx, *self));
  const ScalarType dtype = self->dtype();
  return draw_like_self(ctx, *self, *key, [&](TorchPhiloxKey k, int64_t first, int64_t n, void* out) {
    random::torch_uniform(k, dtype, *low, *high, first, n, out);
  });
}

// _philox_normal(Tensor self, Tensor key, float mean=0., float std=1.)
Status philox_normal(KernelContext& ctx) {
  NRT_TRY(self, ctx.tensor("self", 0));
  NRT_TRY(key, ctx.tensor("key", 1));
  NRT_TRY(mean, ctx.real("mean", 2, 0.0));
  NRT_TRY(std, ctx.real("std", 3, 1.0));
  NRT_RETURN_IF_ERROR(floating_self(ctx, *self));
  const ScalarType dtype = self->dtype();
  return draw_like_self(ctx, *self, *key, [&](TorchPhiloxKey k, int64_t first, int64_t n, void* out) {
    random::torch_normal(k, dtype, *mean, *std, first, n, out);
  });
}

Result<std::optional<int64_t>> optional_int(const KernelContext& ctx, std::string_view name, int position) {
  const RuntimeValue* value = ctx.find(name, position);
  if (value == nullptr || std::holds_alternative<std::monostate>(*value)) return std::optional<int64_t>();
  NRT_TRY(v, ctx.int64(name, position));
  return std::optional<int64_t>(*v);
}

// randint's bounds in the sampled width, as torch reduces them: an absent low is the dtype's
// minimum, an absent high its exclusive maximum; both absent (or low at the minimum and high
// absent) is the full range.
Result<TorchIntRange> int_range(const KernelContext& ctx, ScalarType dtype, std::optional<int64_t> low,
                                std::optional<int64_t> high) {
  const size_t bytes = element_size(dtype);
  const bool is_signed = dtype == ScalarType::INT8 || dtype == ScalarType::INT16 || dtype == ScalarType::INT32 ||
                         dtype == ScalarType::INT64;
  const uint64_t dtype_low = is_signed ? uint64_t{1} << (8 * bytes - 1) : 0;  // the minimum as unsigned bits
  const uint64_t width_mask = bytes == 8 ? ~uint64_t{0} : 0xffffffffull;
  const uint64_t sign_extended_low = uint64_t{0} - dtype_low;  // the minimum as int64 bits (unsigned: 0)
  const bool spans_low = !low.has_value() || static_cast<uint64_t>(*low) == sign_extended_low;
  TorchIntRange range;
  if (spans_low && !high.has_value()) return range;
  range.full = false;
  const uint64_t lo = low.has_value() ? static_cast<uint64_t>(*low) : sign_extended_low;
  // The dtype's count of values wraps to 0 when it fills the sampled width.
  const uint64_t count = bytes >= 4 ? 0 : uint64_t{1} << (8 * bytes);
  const uint64_t hi = high.has_value() ? static_cast<uint64_t>(*high) : sign_extended_low + count;
  range.low = lo & width_mask;
  range.range = (hi - lo) & width_mask;
  if (range.range == 0) {
    return ctx.error("[low, high) must be non-empty; pass high=None for the dtype's full range");
  }
  if (bytes < 8) {
    const uint64_t remainder = ((uint64_t{1} << 32) - range.range) % range.range;
    if (remainder != 0 && range.range >= (uint64_t{1} << 28)) {
      return ctx.error("range (high - low = " + std::to_string(range.range) +
                       ") does not divide 2^32 evenly and is too large for the output dtype " +
                       std::string(short_name(dtype)) +
                       ": each element draws only 32 random bits; use a power-of-two range or a 64-bit dtype");
    }
  }
  return range;
}

// _philox_randint(Tensor self, Tensor key, int? low=None, int? high=None)
Status philox_randint(KernelContext& ctx) {
  NRT_TRY(self, ctx.tensor("self", 0));
  NRT_TRY(key, ctx.tensor("key", 1));
  NRT_TRY(low, optional_int(ctx, "low", 2));
  NRT_TRY(high, optional_int(ctx, "high", 3));
  const ScalarType dtype = self->dtype();
  if (!random::torch_draws_integer(dtype)) {
    return ctx.error("self must have an integer dtype, got " + std::string(short_name(dtype)));
  }
  NRT_RETURN_IF_ERROR(check_key(ctx, *key));
  NRT_TRY(range, int_range(ctx, dtype, *low, *high));
  return draw_like_self(ctx, *self, *key, [&](TorchPhiloxKey k, int64_t first, int64_t n, void* out) {
    random::torch_randint(k, dtype, *range, first, n, out);
  });
}

constexpr DeviceKind kCpu = DeviceKind::kCpu;
const KernelRegistration kRegistrations[] = {
    {"aten::_philox_key_split.default", kCpu, {&key_split, false}},
    {"aten::_philox_key_fold_in.default", kCpu, {&key_fold_in, false}},
    {"aten::_philox_key_fold_in.Tensor", kCpu, {&key_fold_in_tensor, false}},
    {"aten::_philox_uniform.default", kCpu, {&philox_uniform, false}},
    {"aten::_philox_normal.default", kCpu, {&philox_normal, false}},
    {"aten::_philox_randint.default", kCpu, {&philox_randint, false}},
};

}  // namespace
}  // namespace nrt::exec::cpu
