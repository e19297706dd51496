// A node's arguments as a kernel saw them when it derived something to keep (kernel_state.h),
// but for those a call reads afresh (its per-run tensors): whether a later call's are the same.
// Only arguments whose contents cannot change while a frame holds them take part: tensors in
// constant storages (Storage::constant(): a loaded program's weights), compared by identity
// (storage, dtype, offset, sizes, strides), and plain values (None, ints, floats, bools, strings,
// their lists, dtypes), compared by value. A node with any other argument keeps nothing.
#pragma once

#include <optional>
#include <span>
#include <string_view>
#include <vector>

#include "executor/runtime/kernel.h"

namespace nrt::exec {

class ConstantArguments {
 public:
  // ctx's arguments but those named in `per_call`; nullopt where another is neither kind.
  static std::optional<ConstantArguments> of(const KernelContext& ctx, std::span<const std::string_view> per_call);

  // Whether ctx has as many arguments and each but the per-call ones is the one seen.
  bool match(const KernelContext& ctx) const;

 private:
  std::vector<RuntimeValue> values_;  // by argument index
  std::vector<bool> per_call_;
};

}  // namespace nrt::exec
