#include "executor/kernels/cpu/batch_norm_folding.h"

#include <array>
#include <cmath>
#include <cstring>
#include <vector>

#include "executor/kernels/cpu/kept_by_storage.h"
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

constexpr size_t kSources = 6;  // weight, bias, and the batch norm's four tensors
// By the addresses of the tensors folded and eps.
using FoldKey = std::array<const void*, kSources + 1>;
using KeptFolds = KeptByStorage<FoldKey, FoldedConvolution, kSources>;  // at most 1 GiB

}  // namespace

FoldedConvolution fold_batch_norm(const Tensor& weight, const Tensor& bias, const BatchNormParameters& bn) {
  const Tensor none;
  const std::array<const Tensor*, kSources> tensors = {&weight, &bias, bn.weight ? &*bn.weight : &none,
                                                       bn.bias ? &*bn.bias : &none, &bn.running_mean, &bn.running_var};
  FoldKey key{};
  KeptFolds::Sources storages;
  for (size_t i = 0; i < kSources; ++i) {
    if (!tensors[i]->defined()) continue;
    if (!tensors[i]->storage()->constant()) return fold_now(weight, bias, bn);
    key[i] = tensors[i]->raw_data();
    storages[i] = tensors[i]->storage();
  }
  static_assert(sizeof(double) == sizeof(void*));
  std::memcpy(&key[kSources], &bn.eps, sizeof(double));
  static KeptFolds kept(size_t{1} << 30);
  if (auto found = kept.find(key, storages)) return std::move(*found);
  FoldedConvolution folded = fold_now(weight, bias, bn);
  folded = {as_constant(folded.weight), as_constant(folded.bias)};
  return kept.keep(key, storages, folded, folded.weight.nbytes() + folded.bias.nbytes());
}

}  // namespace nrt::exec::cpu
