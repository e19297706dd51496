#include "executor/kernels/cpu/batch_norm_folding.h"

#include <array>
#include <cmath>
#include <cstring>
#include <map>
#include <mutex>
#include <vector>

#include "executor/kernels/cpu/tensor_copy.h"

namespace nrt::exec::cpu {
namespace {

template <class C>
FoldedConvolution fold(const Tensor& weight, const Tensor& bias, const BatchNormParameters& bn) {
  const int64_t channels = weight.sizes()[0];
  const int64_t per_channel = channels == 0 ? 0 : weight.numel() / channels;
  auto doubles = [](const std::optional<Tensor>& t) {
    return t ? contiguous_as(*t, ScalarType::FLOAT64) : Tensor();
  };
  const Tensor gain = doubles(bn.weight), offset = doubles(bn.bias);
  const Tensor mean = doubles(bn.running_mean), var = doubles(bn.running_var);
  FoldedConvolution folded{Tensor::empty(weight.dtype(), weight.sizes()), Tensor::empty(weight.dtype(), {channels})};
  const C* w = weight.data<C>();
  C* folded_weight = folded.weight.data<C>();
  for (int64_t c = 0; c < channels; ++c) {
    const double scale = (gain.defined() ? gain.data<double>()[c] : 1.0) / std::sqrt(var.data<double>()[c] + bn.eps);
    const double shift = (offset.defined() ? offset.data<double>()[c] : 0.0) - mean.data<double>()[c] * scale;
    const double b = bias.defined() ? static_cast<double>(bias.data<C>()[c]) : 0.0;
    folded.bias.data<C>()[c] = static_cast<C>(b * scale + shift);
    for (int64_t i = c * per_channel; i < (c + 1) * per_channel; ++i) {
      folded_weight[i] = static_cast<C>(static_cast<double>(w[i]) * scale);
    }
  }
  return folded;
}

FoldedConvolution fold_now(const Tensor& weight, const Tensor& bias, const BatchNormParameters& bn) {
  return weight.dtype() == ScalarType::FLOAT64 ? fold<double>(weight, bias, bn) : fold<float>(weight, bias, bn);
}

// A tensor's bytes as constant (Storage::constant), so that what is derived from it may be kept.
Tensor as_constant(const Tensor& owned) {
  auto storage = Storage::borrow_constant(owned.storage()->data(), owned.storage()->bytes(), owned.storage());
  return Tensor(std::move(storage), owned.dtype(), owned.sizes(), owned.strides(), owned.storage_offset());
}

// Kept folds: by the addresses of the tensors folded and eps, with their storages (weakly: an
// entry one of whose storages is gone is replaced, never used). At most kKeptBytes in all.
constexpr size_t kKeptBytes = size_t{1} << 30;
constexpr size_t kSources = 6;  // weight, bias, and the batch norm's four tensors

struct Kept {
  std::array<std::weak_ptr<const Storage>, kSources> sources;  // empty where the tensor is absent
  std::array<bool, kSources> present{};
  FoldedConvolution folded;
  size_t bytes = 0;
};

}  // namespace

FoldedConvolution fold_batch_norm(const Tensor& weight, const Tensor& bias, const BatchNormParameters& bn) {
  const Tensor none;
  const std::array<const Tensor*, kSources> tensors = {&weight, &bias, bn.weight ? &*bn.weight : &none,
                                                       bn.bias ? &*bn.bias : &none, &bn.running_mean, &bn.running_var};
  std::array<const void*, kSources + 1> key{};
  std::array<std::shared_ptr<const Storage>, kSources> storages;
  for (size_t i = 0; i < kSources; ++i) {
    if (!tensors[i]->defined()) continue;
    if (!tensors[i]->storage()->constant()) return fold_now(weight, bias, bn);
    key[i] = tensors[i]->raw_data();
    storages[i] = tensors[i]->storage();
  }
  static_assert(sizeof(double) == sizeof(void*));
  std::memcpy(&key[kSources], &bn.eps, sizeof(double));

  static std::mutex mutex;
  static std::map<std::array<const void*, kSources + 1>, Kept> kept;
  static size_t kept_bytes = 0;
  auto current = [&](const Kept& entry) {
    for (size_t i = 0; i < kSources; ++i) {
      if (entry.sources[i].lock() != storages[i]) return false;
    }
    return true;
  };
  {
    std::lock_guard<std::mutex> lock(mutex);
    auto found = kept.find(key);
    if (found != kept.end()) {
      if (current(found->second)) return found->second.folded;
      kept_bytes -= found->second.bytes;
      kept.erase(found);
    }
  }
  FoldedConvolution folded = fold_now(weight, bias, bn);
  folded = {as_constant(folded.weight), as_constant(folded.bias)};
  const size_t bytes = folded.weight.nbytes() + folded.bias.nbytes();
  std::lock_guard<std::mutex> lock(mutex);
  for (auto it = kept.begin(); it != kept.end();) {  // what programs since unloaded left behind
    bool expired = false;
    for (size_t i = 0; i < kSources; ++i) expired = expired || (it->second.present[i] && it->second.sources[i].expired());
    if (expired) {
      kept_bytes -= it->second.bytes;
      it = kept.erase(it);
    } else {
      ++it;
    }
  }
  if (kept_bytes + bytes > kKeptBytes) return folded;
  Kept entry{{}, {}, folded, bytes};
  for (size_t i = 0; i < kSources; ++i) {
    entry.sources[i] = storages[i];
    entry.present[i] = storages[i] != nullptr;
  }
  if (kept.emplace(key, std::move(entry)).second) kept_bytes += bytes;
  return folded;
}

}  // namespace nrt::exec::cpu
