#include "executor/dtensor/schema_args.h"

#include <algorithm>
#include <numeric>

namespace nrt::dist {
namespace {

const fb::NamedArgumentT* find_argument(const fb::NodeT& node, std::string_view name, size_t position) {
  for (size_t i = 0; i < node.inputs.size(); ++i) {
    const auto& a = *node.inputs[i];
    if (a.name == name || (a.name.empty() && i == position)) return &a;
  }
  return nullptr;
}

}  // namespace

std::optional<std::vector<int64_t>> literal_sizes(const std::vector<std::unique_ptr<fb::SymDimT>>& dims) {
  std::vector<int64_t> out;
  for (const auto& d : dims) {
    if (!d || !d->expr.empty()) return std::nullopt;
    out.push_back(d->literal);
  }
  return out;
}

std::vector<std::unique_ptr<fb::SymDimT>> literal_dims(const std::vector<int64_t>& values) {
  std::vector<std::unique_ptr<fb::SymDimT>> out;
  for (int64_t v : values) {
    auto d = std::make_unique<fb::SymDimT>();
    d->literal = v;
    out.push_back(std::move(d));
  }
  return out;
}

std::vector<int64_t> dense_strides(const std::vector<int64_t>& sizes, const std::optional<std::vector<int64_t>>& like) {
  std::vector<size_t> order(sizes.size());
  std::iota(order.begin(), order.end(), 0);
  if (like && like->size() == order.size()) {
    std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return (*like)[a] > (*like)[b]; });
  }
  std::vector<int64_t> strides(order.size());
  int64_t running = 1;
  for (size_t k = order.size(); k-- > 0;) {
    strides[order[k]] = running;
    running *= std::max<int64_t>(1, sizes[order[k]]);
  }
  return strides;
}

std::optional<int64_t> int_argument(const fb::NodeT& node, std::string_view name, size_t position) {
  const auto* a = find_argument(node, name, position);
  if (const auto* v = a ? a->arg.AsIntArg() : nullptr) return v->value;
  return std::nullopt;
}

std::optional<bool> bool_argument(const fb::NodeT& node, std::string_view name, size_t position) {
  const auto* a = find_argument(node, name, position);
  if (const auto* v = a ? a->arg.AsBoolArg() : nullptr) return v->value;
  return std::nullopt;
}

std::optional<std::vector<int64_t>> int_list_argument(const fb::NodeT& node, std::string_view name, size_t position) {
  const auto* a = find_argument(node, name, position);
  if (const auto* v = a ? a->arg.AsIntListArg() : nullptr) return v->values;
  return std::nullopt;
}

fb::ArgumentUnion tensor_arg(uint32_t value) {
  fb::ArgumentUnion a;
  a.Set(fb::TensorArgT{});
  a.AsTensorArg()->value = value;
  return a;
}

fb::ArgumentUnion int_arg(int64_t value) {
  fb::ArgumentUnion a;
  a.Set(fb::IntArgT{});
  a.AsIntArg()->value = value;
  return a;
}

fb::ArgumentUnion bool_arg(bool value) {
  fb::ArgumentUnion a;
  a.Set(fb::BoolArgT{});
  a.AsBoolArg()->value = value;
  return a;
}

fb::ArgumentUnion string_arg(std::string value) {
  fb::ArgumentUnion a;
  a.Set(fb::StringArgT{});
  a.AsStringArg()->value = std::move(value);
  return a;
}

fb::ArgumentUnion int_list_arg(std::vector<int64_t> values) {
  fb::ArgumentUnion a;
  a.Set(fb::IntListArgT{});
  a.AsIntListArg()->values = std::move(values);
  return a;
}

std::unique_ptr<fb::NamedArgumentT> named(std::string name, fb::ArgumentUnion arg) {
  auto a = std::make_unique<fb::NamedArgumentT>();
  a->name = std::move(name);
  a->arg = std::move(arg);
  a->kind = fb::ArgumentKind::POSITIONAL;
  return a;
}

std::unique_ptr<fb::ArgumentHolderT> output_of(uint32_t value) {
  auto holder = std::make_unique<fb::ArgumentHolderT>();
  holder->arg = tensor_arg(value);
  return holder;
}

}  // namespace nrt::dist
