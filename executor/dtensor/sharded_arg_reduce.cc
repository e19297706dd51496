#include "executor/dtensor/sharded_arg_reduce.h"

#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include "executor/runtime/reduced_float.h"
#include "executor/runtime/tensor_copy.h"

namespace nrt::dist {
namespace {

using exec::Tensor;

// A value in the domain it compares in.
struct Key {
  bool nan = false;
  bool floating = false;
  double real = 0;
  int64_t integer = 0;
};

Result<Key> key_at(const uint8_t* p, ScalarType dtype) {
  Key k;
  auto real = [&](double v) {
    k.floating = true;
    k.nan = std::isnan(v);
    k.real = v;
  };
  switch (dtype) {
    case ScalarType::FLOAT32: { float v; std::memcpy(&v, p, 4); real(v); break; }
    case ScalarType::FLOAT64: { double v; std::memcpy(&v, p, 8); real(v); break; }
    case ScalarType::FLOAT16: { uint16_t v; std::memcpy(&v, p, 2); real(exec::half_to_float(v)); break; }
    case ScalarType::BFLOAT16: { uint16_t v; std::memcpy(&v, p, 2); real(exec::bfloat16_to_float(v)); break; }
    case ScalarType::INT64: std::memcpy(&k.integer, p, 8); break;
    case ScalarType::INT32: { int32_t v; std::memcpy(&v, p, 4); k.integer = v; break; }
    case ScalarType::INT16: { int16_t v; std::memcpy(&v, p, 2); k.integer = v; break; }
    case ScalarType::INT8: { int8_t v; std::memcpy(&v, p, 1); k.integer = v; break; }
    case ScalarType::UINT8:
    case ScalarType::BOOL: k.integer = *p; break;
    default:
      return make_error(ErrorCode::NotSupported, "sharded arg reduction of " + std::string(short_name(dtype)));
  }
  return k;
}

// True when `candidate` replaces `best` (which comes first): a NaN beats everything but an
// earlier NaN; otherwise strictly better, so ties keep the first.
bool better(const Key& candidate, const Key& best, bool maximum) {
  if (best.nan) return false;
  if (candidate.nan) return true;
  if (candidate.floating) return maximum ? candidate.real > best.real : candidate.real < best.real;
  return maximum ? candidate.integer > best.integer : candidate.integer < best.integer;
}

}  // namespace

int64_t arg_reduce_bytes_sent(int64_t outputs, size_t element_size, int group_size) {
  // all_gather: each rank's records go to the group_size - 1 others.
  return outputs * static_cast<int64_t>(8 + element_size) * (group_size - 1);
}

Result<ArgReduceResult> sharded_arg_reduce(const Tensor& local_in, int64_t dim, bool keepdim, bool maximum,
                                           int64_t offset, exec::ProcessGroup& group) {
  if (dim < 0 || dim >= local_in.dim()) {
    return make_error(ErrorCode::InvalidArgument, "sharded arg reduction: dim " + std::to_string(dim) +
                                                      " outside " + local_in.type_string());
  }
  const Tensor local = exec::contiguous_copy(local_in);
  const size_t elem = local.element_size();
  const auto& sizes = local.sizes();
  int64_t outer = 1, inner = 1;
  for (int64_t d = 0; d < dim; ++d) outer *= sizes[static_cast<size_t>(d)];
  for (int64_t d = dim + 1; d < local.dim(); ++d) inner *= sizes[static_cast<size_t>(d)];
  const int64_t extent = sizes[static_cast<size_t>(dim)];
  const int64_t outputs = outer * inner;

  // This rank's candidates: [global index (int64, -1: none)][value bytes] per output element.
  const size_t record = 8 + elem;
  Tensor mine = Tensor::empty(ScalarType::UINT8, {outputs * static_cast<int64_t>(record)});
  const uint8_t* data = local.raw_data();
  for (int64_t o = 0; o < outer; ++o) {
    for (int64_t i = 0; i < inner; ++i) {
      int64_t best = -1;
      Key best_key;
      for (int64_t r = 0; r < extent; ++r) {
        NRT_TRY(k, key_at(data + ((o * extent + r) * inner + i) * elem, local.dtype()));
        if (best < 0 || better(*k, best_key, maximum)) {
          best = r;
          best_key = *k;
        }
      }
      uint8_t* out = mine.raw_data() + (o * inner + i) * static_cast<int64_t>(record);
      const int64_t global = best < 0 ? -1 : best + offset;
      std::memcpy(out, &global, 8);
      if (best >= 0) {
        std::memcpy(out + 8, data + ((o * extent + best) * inner + i) * elem, elem);
      } else {
        std::memset(out + 8, 0, elem);
      }
    }
  }

  const int n = group.size();
  Tensor all = Tensor::empty(ScalarType::UINT8, {n * outputs * static_cast<int64_t>(record)});
  if (Status s = exec::wait_for(group.all_gather_into_tensor(mine, all)); !s) {
    return make_error(s.error().code == ErrorCode::CollectiveTimeout ? s.error().code : ErrorCode::CollectiveFailed,
                      "sharded arg reduction on process group '" + group.name() + "': " + s.error().message);
  }

  std::vector<int64_t> out_sizes;
  for (int64_t d = 0; d < local.dim(); ++d) {
    if (d != dim) out_sizes.push_back(sizes[static_cast<size_t>(d)]);
    else if (keepdim) out_sizes.push_back(1);
  }
  ArgReduceResult result{Tensor::empty(local.dtype(), out_sizes), Tensor::empty(ScalarType::INT64, out_sizes)};
  for (int64_t e = 0; e < outputs; ++e) {
    int64_t best = -1;
    Key best_key;
    const uint8_t* best_value = nullptr;
    for (int r = 0; r < n; ++r) {  // rank order is index order
      const uint8_t* rec = all.raw_data() + (static_cast<int64_t>(r) * outputs + e) * static_cast<int64_t>(record);
      int64_t index;
      std::memcpy(&index, rec, 8);
      if (index < 0) continue;
      NRT_TRY(k, key_at(rec + 8, local.dtype()));
      if (best < 0 || better(*k, best_key, maximum)) {
        best = index;
        best_key = *k;
        best_value = rec + 8;
      }
    }
    if (best < 0) {
      return make_error(ErrorCode::InvalidArgument, std::string(maximum ? "argmax" : "argmin") +
                                                        ": the reduced dim is empty on every rank");
    }
    result.indices.data<int64_t>()[e] = best;
    std::memcpy(result.values.raw_data() + e * static_cast<int64_t>(elem), best_value, elem);
  }
  return result;
}

}  // namespace nrt::dist
