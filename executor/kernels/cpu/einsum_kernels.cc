// einsum(str equation, Tensor[] tensors, *, int[]? path=None) with torch's equation rules: labels
// [a-zA-Z], "..." for the dims no label names (broadcast across operands, right-aligned), an
// explicit output after "->" or the implicit one (the ellipsis dims, then every label used once,
// uppercase before lowercase), spaces ignored, a label repeated in one operand takes its diagonal,
// a label of size 1 broadcasts against the same label's size elsewhere.
//
// Evaluation goes through the GEMM path, never a loop over every label: operands are contracted
// left to right (`path` only reorders torch's contraction; the result is the same up to rounding),
// each pair as one batched product [batch, left, contracted] @ [batch, contracted, right]; a label
// no later operand or the output needs is summed first, as a product with a vector of ones.
// Operands share one dtype (as torch requires); float16/bfloat16 compute in float32, integers
// exactly; bool is refused (torch has no bool product).
#include <algorithm>
#include <string>

#include "executor/kernels/cpu/batched_product.h"
#include "executor/kernels/cpu/broadcast.h"
#include "executor/kernels/cpu/dtype_dispatch.h"
#include "executor/kernels/cpu/output_slot.h"
#include "executor/kernels/cpu/tensor_copy.h"
#include "executor/kernels/cpu/view_strides.h"

namespace nrt::exec::cpu {
namespace {

constexpr int kLetters = 52;  // A-Z are labels 0-25, a-z 26-51; ellipsis dims follow
constexpr int kEllipsis = -1;  // the marker of "..." in a parsed term

using Labels = std::vector<int>;

char letter(int label) { return static_cast<char>(label < 26 ? 'A' + label : 'a' + (label - 26)); }

std::string label_name(int label) {
  return label < kLetters ? std::string(1, letter(label)) : "..." + std::to_string(label - kLetters);
}

bool has(const Labels& labels, int label) { return std::find(labels.begin(), labels.end(), label) != labels.end(); }

// One side of the equation: terms separated by commas, each a sequence of labels and at most one
// ellipsis.
Result<std::vector<Labels>> parse_terms(const KernelContext& ctx, std::string_view text, bool output) {
  std::vector<Labels> terms(1);
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (c == ' ') continue;
    if (c == ',' && !output) {
      terms.emplace_back();
    } else if (c == '.') {
      if (text.substr(i, 3) != "..." || has(terms.back(), kEllipsis)) {
        return ctx.error("einsum(): a term may hold one ellipsis '...', and '.' appears only in it");
      }
      terms.back().push_back(kEllipsis);
      i += 2;
    } else if (c >= 'A' && c <= 'Z') {
      terms.back().push_back(c - 'A');
    } else if (c >= 'a' && c <= 'z') {
      terms.back().push_back(26 + (c - 'a'));
    } else {
      return ctx.error("einsum(): invalid subscript '" + std::string(1, c) + "', subscripts must be in [a-zA-Z]");
    }
  }
  return terms;
}

// An operand as a view with one dim per distinct label (diagonals taken, size-1 dims expanded to
// the label's size).
struct Operand {
  Tensor view;
  Labels labels;
};

// `t` with its dims reordered to `order` (a permutation of `labels`).
Tensor permuted(const Tensor& t, const Labels& labels, const Labels& order) {
  std::vector<int64_t> sizes, strides;
  for (int label : order) {
    const auto d = static_cast<size_t>(std::find(labels.begin(), labels.end(), label) - labels.begin());
    sizes.push_back(t.sizes()[d]);
    strides.push_back(t.strides()[d]);
  }
  return t.as_strided(sizes, strides, t.storage_offset());
}

int64_t extent(const Operand& o, const Labels& labels) {
  int64_t n = 1;
  for (int label : labels) {
    n *= o.view.sizes()[static_cast<size_t>(std::find(o.labels.begin(), o.labels.end(), label) - o.labels.begin())];
  }
  return n;
}

// `o` (compute dtype) reordered to `order` and viewed as `shape`: in place where its strides allow
// (GEMM reads transposed and strided matrices as they are), else copied contiguous first.
Tensor gathered(const Operand& o, const Labels& order, const std::vector<int64_t>& shape) {
  const Tensor p = permuted(o.view, o.labels, order);
  if (auto strides = view_strides(p.sizes(), p.strides(), shape)) return p.as_strided(shape, *strides, p.storage_offset());
  const Tensor t = contiguous_as(p, o.view.dtype());
  return t.as_strided(shape, Tensor::contiguous_strides(shape), t.storage_offset());
}

Labels without(const Labels& labels, const Labels& removed) {
  Labels kept;
  for (int label : labels) {
    if (!has(removed, label)) kept.push_back(label);
  }
  return kept;
}

// `o` with the `summed` labels added up: [kept, summed] @ ones[summed].
Operand sum_out(const Operand& o, const Labels& summed) {
  if (summed.empty()) return o;
  const Labels kept = without(o.labels, summed);
  const int64_t rows = extent(o, kept), columns = extent(o, summed);
  Labels order = kept;
  order.insert(order.end(), summed.begin(), summed.end());
  const Tensor ones = Tensor::empty(o.view.dtype(), {columns, 1});
  fill_with(ones, ScalarValue::of_int(1));
  std::vector<int64_t> sizes;
  for (int label : kept) sizes.push_back(extent(o, {label}));
  const Tensor out = Tensor::empty(o.view.dtype(), sizes);
  if (columns == 0) {
    fill_with(out, ScalarValue::of_int(0));  // an empty sum
  } else if (rows > 0) {
    product_2d(gathered(o, order, {rows, columns}), ones, out.as_strided({rows, 1}, {1, 1}, 0));
  }
  return {out, kept};
}

// a and b contracted over their shared labels no later operand or the output needs; labels of one
// side only are kept (sum_out removed the rest). When the result's labels come out in the order
// `final_order`, it is written into `final` (the output's staging) instead of a new tensor.
Operand contract(const Operand& a, const Operand& b, const Labels& needed, const Labels& final_order,
                 const Tensor& final) {
  Labels batch, contracted, left, right;
  for (int label : a.labels) {
    (has(b.labels, label) ? (has(needed, label) ? batch : contracted) : left).push_back(label);
  }
  for (int label : b.labels) {
    if (!has(a.labels, label)) right.push_back(label);
  }
  const int64_t batches = extent(a, batch), m = extent(a, left), k = extent(a, contracted), n = extent(b, right);
  Labels a_order = batch, b_order = batch;
  a_order.insert(a_order.end(), left.begin(), left.end());
  a_order.insert(a_order.end(), contracted.begin(), contracted.end());
  b_order.insert(b_order.end(), contracted.begin(), contracted.end());
  b_order.insert(b_order.end(), right.begin(), right.end());
  Labels labels = batch;
  labels.insert(labels.end(), left.begin(), left.end());
  labels.insert(labels.end(), right.begin(), right.end());
  std::vector<int64_t> sizes;
  for (int label : labels) sizes.push_back(has(a.labels, label) ? extent(a, {label}) : extent(b, {label}));
  const bool in_place = labels == final_order && final.dtype() == a.view.dtype() && final.sizes() == sizes &&
                        final.strides() == Tensor::contiguous_strides(sizes);
  const Tensor out = in_place ? final : Tensor::empty(a.view.dtype(), sizes);
  if (k == 0) {
    fill_with(out, ScalarValue::of_int(0));  // an empty sum
  } else if (out.numel() > 0) {
    batched_product(gathered(a, a_order, {batches, m, k}), gathered(b, b_order, {batches, k, n}),
                    out.as_strided({batches, m, n}, {m * n, n, 1}, out.storage_offset()), {batches});
  }
  return {out, labels};
}

Status einsum(KernelContext& ctx) {
  const RuntimeValue* eq = ctx.find("equation", 0);
  const auto* equation = eq ? std::get_if<std::string>(eq) : nullptr;
  if (equation == nullptr) return ctx.error("argument 'equation' must be a string");
  NRT_TRY(tensors, ctx.tensor_list("tensors", 1));
  if (tensors->empty()) return ctx.error("einsum(): must provide at least one operand");
  const ScalarType dtype = (*tensors)[0].dtype();
  for (const Tensor& t : *tensors) {
    if (t.dtype() != dtype) {
      return ctx.error("einsum(): operands must share one dtype, got " + std::string(short_name(dtype)) + " and " +
                       std::string(short_name(t.dtype())));
    }
  }
  if (!is_floating_dtype(dtype) && !is_integral_dtype(dtype)) return unsupported_dtype(ctx, dtype);

  const size_t arrow = equation->find("->");
  NRT_TRY(terms, parse_terms(ctx, std::string_view(*equation).substr(0, arrow), false));
  if (terms->size() != tensors->size()) {
    return ctx.error("einsum(): the equation names " + std::to_string(terms->size()) + " operands, " +
                     std::to_string(tensors->size()) + " were given");
  }
  // Ellipsis dims get labels kLetters + j, right-aligned across operands.
  int64_t ellipsis_rank = 0;
  for (size_t i = 0; i < terms->size(); ++i) {
    const Labels& term = (*terms)[i];
    const auto named = static_cast<int64_t>(term.size()) - (has(term, kEllipsis) ? 1 : 0);
    const int64_t rank = (*tensors)[i].dim();
    if (has(term, kEllipsis) ? rank < named : rank != named) {
      return ctx.error("einsum(): the subscripts of operand " + std::to_string(i) + " do not match its " +
                       std::to_string(rank) + " dimensions");
    }
    if (has(term, kEllipsis)) ellipsis_rank = std::max(ellipsis_rank, rank - named);
  }
  std::vector<Labels> dims(terms->size());  // per operand, a label for every dim
  for (size_t i = 0; i < terms->size(); ++i) {
    const auto covered = static_cast<int>((*tensors)[i].dim() - static_cast<int64_t>((*terms)[i].size()) + 1);
    for (int label : (*terms)[i]) {
      if (label != kEllipsis) {
        dims[i].push_back(label);
        continue;
      }
      for (int j = 0; j < covered; ++j) dims[i].push_back(kLetters + static_cast<int>(ellipsis_rank) - covered + j);
    }
  }
  // Every label's size: equal wherever it appears, or 1 (broadcast); a label repeated in one
  // operand (a diagonal) has one size there.
  std::vector<int64_t> size(static_cast<size_t>(kLetters + ellipsis_rank), -1);
  for (size_t i = 0; i < dims.size(); ++i) {
    for (size_t d = 0; d < dims[i].size(); ++d) {
      const int label = dims[i][d];
      const int64_t here = (*tensors)[i].sizes()[d];
      const size_t first = static_cast<size_t>(std::find(dims[i].begin(), dims[i].end(), label) - dims[i].begin());
      if (first < d && (*tensors)[i].sizes()[first] != here) {
        return ctx.error("einsum(): subscript " + label_name(label) + " is repeated for operand " + std::to_string(i) +
                         " but the sizes don't match, " + std::to_string((*tensors)[i].sizes()[first]) +
                         " != " + std::to_string(here));
      }
      int64_t& s = size[static_cast<size_t>(label)];
      if (s == -1 || s == 1) {
        s = here;
      } else if (here != 1 && here != s) {
        return ctx.error("einsum(): subscript " + label_name(label) + " has size " + std::to_string(here) +
                         " for operand " + std::to_string(i) + ", which does not broadcast with " + std::to_string(s));
      }
    }
  }
  // The output's labels.
  Labels output;
  if (arrow != std::string::npos) {
    NRT_TRY(out_terms, parse_terms(ctx, std::string_view(*equation).substr(arrow + 2), true));
    for (int label : (*out_terms)[0]) {
      if (label == kEllipsis) {
        for (int j = 0; j < ellipsis_rank; ++j) output.push_back(kLetters + j);
        continue;
      }
      if (has(output, label)) {
        return ctx.error("einsum(): output subscript " + label_name(label) + " appears more than once in the output");
      }
      if (size[static_cast<size_t>(label)] == -1) {
        return ctx.error("einsum(): output subscript " + label_name(label) +
                         " does not appear in the equation for any input operand");
      }
      output.push_back(label);
    }
  } else {
    for (int j = 0; j < ellipsis_rank; ++j) output.push_back(kLetters + j);
    for (int label = 0; label < kLetters; ++label) {
      int uses = 0;
      for (const Labels& d : dims) uses += static_cast<int>(std::count(d.begin(), d.end(), label));
      if (uses == 1) output.push_back(label);
    }
  }
  std::vector<int64_t> out_sizes;
  for (int label : output) out_sizes.push_back(size[static_cast<size_t>(label)]);
  NRT_TRY(slot, OutputSlot::bind(ctx, 0, dtype, out_sizes));

  // Each operand as a view over its distinct labels, in the compute dtype.
  const ScalarType compute = product_dtype(dtype);
  std::vector<Operand> operands;
  for (size_t i = 0; i < dims.size(); ++i) {
    const Tensor& t = (*tensors)[i];
    Operand o;
    std::vector<int64_t> sizes, strides;
    for (size_t d = 0; d < dims[i].size(); ++d) {
      const int label = dims[i][d];
      const auto at = std::find(o.labels.begin(), o.labels.end(), label);
      if (at != o.labels.end()) {  // a repeated label: the diagonal (its sizes checked above)
        strides[static_cast<size_t>(at - o.labels.begin())] += t.strides()[d];
        continue;
      }
      o.labels.push_back(label);
      sizes.push_back(t.sizes()[d]);
      strides.push_back(t.strides()[d]);
    }
    for (size_t j = 0; j < o.labels.size(); ++j) {
      const int64_t wanted = size[static_cast<size_t>(o.labels[j])];
      if (sizes[j] != wanted) {  // size 1 against the label's size
        sizes[j] = wanted;
        strides[j] = 0;
      }
    }
    const Tensor view = t.as_strided(sizes, strides, t.storage_offset());
    o.view = t.dtype() == compute ? view : converted_copy(view, compute);
    operands.push_back(o);
  }

  // Labels needed after operand i: the output's and those of operands i+1...
  auto needed_after = [&](size_t i) {
    Labels needed = output;
    for (size_t j = i + 1; j < operands.size(); ++j) needed.insert(needed.end(), operands[j].labels.begin(), operands[j].labels.end());
    return needed;
  };
  auto unneeded = [](const Operand& o, const Labels& needed, const Operand* partner) {
    Labels summed;
    for (int label : o.labels) {
      if (!has(needed, label) && (partner == nullptr || !has(partner->labels, label))) summed.push_back(label);
    }
    return summed;
  };
  const Tensor staging = slot->staging(compute);
  Operand result = operands[0];
  for (size_t i = 1; i < operands.size(); ++i) {
    const Labels needed = needed_after(i);
    result = sum_out(result, unneeded(result, needed, &operands[i]));
    const Operand next = sum_out(operands[i], unneeded(operands[i], needed, &result));
    // Only the last product may land in the output: its labels are then the output's.
    result = contract(result, next, needed, i + 1 == operands.size() ? output : Labels{kEllipsis}, staging);
  }
  result = sum_out(result, unneeded(result, output, nullptr));
  const bool written = result.view.storage() == staging.storage() && result.view.storage_offset() == staging.storage_offset();
  if (!written) copy_into(staging, permuted(result.view, result.labels, output));
  slot->commit();
  return Status::Ok();
}

constexpr DeviceKind kCpu = DeviceKind::kCpu;
const KernelRegistration kRegistrations[] = {
    {"aten::einsum.default", kCpu, {&einsum, false}},
};

}  // namespace
}  // namespace nrt::exec::cpu
