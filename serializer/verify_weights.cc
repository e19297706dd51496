// The checks of storages (inside the segment, aligned, checksums when deep) and of the weights
// viewing them.
#include <string>
#include <unordered_set>

#include "serializer/checksum.h"
#include "serializer/input_limits.h"
#include "core/schema_enums.h"
#include "serializer/schema_access.h"
#include "serializer/verify_checks.h"

namespace nrt::verify {
namespace {

// Bytes a strided view needs from its storage: (offset + sum((size-1)*stride) + 1) * element size.
Status check_weight_view(const fb::Program& program, uint32_t w) {
  const auto* weight = program.weights()->Get(w);
  const std::string at = "weight " + std::to_string(w) + " '" + weight->fqn()->str() + "': ";
  if (weight->storage() >= vector_size(program.storages())) {
    return make_error(ErrorCode::StorageIndexOutOfRange, at + "names storage " + std::to_string(weight->storage()) +
                                                             " of " + std::to_string(vector_size(program.storages())));
  }
  const auto* meta = weight->meta();
  const size_t elem = element_size(meta->dtype());
  if (elem == 0) {
    return make_error(ErrorCode::UnknownEnumValue,
                      at + "dtype " + std::to_string(static_cast<int>(meta->dtype())) + " has no known element size");
  }
  const uint32_t rank = vector_size(meta->sizes());
  if (vector_size(meta->strides()) != rank) {
    return make_error(ErrorCode::InvalidShape, at + std::to_string(rank) + " sizes but " +
                                                   std::to_string(vector_size(meta->strides())) + " strides");
  }
  auto literal = [](const fb::SymDim* dim, int64_t* out) {
    if (dim == nullptr) {
      *out = 0;
      return true;
    }
    *out = dim->literal();
    return dim->expr() == nullptr;
  };
  int64_t offset = 0;
  if (!literal(meta->storage_offset(), &offset) || offset < 0) {
    return make_error(ErrorCode::InvalidShape, at + "storage offset must be a non-negative literal");
  }
  uint64_t last = static_cast<uint64_t>(offset);
  bool empty = false;
  for (uint32_t d = 0; d < rank; ++d) {
    int64_t size = 0, stride = 0;
    if (!literal(meta->sizes()->Get(d), &size) || !literal(meta->strides()->Get(d), &stride) || size < 0 ||
        stride < 0) {
      return make_error(ErrorCode::InvalidShape,
                        at + "dimension " + std::to_string(d) + " needs a non-negative literal size and stride");
    }
    if (size == 0) empty = true;
    uint64_t reach = 0;
    if (size > 0 && (__builtin_mul_overflow(static_cast<uint64_t>(size - 1), static_cast<uint64_t>(stride), &reach) ||
                     __builtin_add_overflow(last, reach, &last))) {
      return make_error(ErrorCode::InvalidShape, at + "extent overflows 64 bits at dimension " + std::to_string(d));
    }
  }
  if (empty) return {};
  uint64_t bytes = 0;
  if (__builtin_add_overflow(last, uint64_t{1}, &bytes) || __builtin_mul_overflow(bytes, elem, &bytes) ||
      bytes > program.storages()->Get(weight->storage())->size()) {
    return make_error(ErrorCode::TensorViewOutOfStorage,
                      at + "view needs " + std::to_string(bytes) + " bytes but storage " +
                          std::to_string(weight->storage()) + " holds " +
                          std::to_string(program.storages()->Get(weight->storage())->size()));
  }
  return {};
}

}  // namespace

Status check_storages(const fb::Program& program, std::span<const uint8_t> segment, bool deep) {
  for (uint32_t s = 0; s < vector_size(program.storages()); ++s) {
    const auto* storage = program.storages()->Get(s);
    const std::string at = "storage " + std::to_string(s) + ": ";
    if (storage->inline_data() != nullptr) {
      return make_error(ErrorCode::InlineDataMismatch,
                        at + "carries inline data, which only the .nrt.json form may hold");
    }
    const uint32_t alignment = storage->alignment();
    if (alignment > kMaxStorageAlignment) {
      return make_error(ErrorCode::StorageMisaligned, at + "alignment " + std::to_string(alignment) +
                                                          " exceeds the limit of " +
                                                          std::to_string(kMaxStorageAlignment));
    }
    if (alignment == 0 || (alignment & (alignment - 1)) != 0 || storage->offset() % alignment != 0) {
      return make_error(ErrorCode::StorageMisaligned, at + "offset " + std::to_string(storage->offset()) +
                                                          " is not a multiple of its alignment " +
                                                          std::to_string(alignment));
    }
    uint64_t end = 0;
    if (__builtin_add_overflow(storage->offset(), storage->size(), &end) || end > segment.size()) {
      return make_error(ErrorCode::StorageOutOfSegment,
                        at + "bytes [" + std::to_string(storage->offset()) + ", +" + std::to_string(storage->size()) +
                            ") lie outside the weight segment of " + std::to_string(segment.size()) + " bytes");
    }
    if (deep) {
      const auto got = checksum_of(segment.subspan(storage->offset(), storage->size()));
      const auto* want = storage->checksum();
      if (want == nullptr || got.low() != want->low() || got.high() != want->high()) {
        return make_error(ErrorCode::ChecksumMismatch, at + "XXH3-128 of its " + std::to_string(storage->size()) +
                                                           " bytes does not match the recorded checksum");
      }
    }
  }
  return {};
}

Status check_weights(const fb::Program& program, WorkBudget& budget) {
  std::unordered_set<std::string_view> names;
  for (uint32_t w = 0; w < vector_size(program.weights()); ++w) {
    const auto* weight = program.weights()->Get(w);
    auto what = [&] { return "weight " + std::to_string(w) + " '" + weight->fqn()->str() + "'"; };
    if (!names.insert(weight->fqn()->string_view()).second) {
      return make_error(ErrorCode::DuplicateName, what() + " has the same name as an earlier weight");
    }
    // The checks a graph value's metadata gets (enums, ranks, extents); the view check below adds
    // what a weight needs beyond them.
    NRT_RETURN_IF_ERROR(check_tensor_meta(weight->meta(), budget, what));
    NRT_RETURN_IF_ERROR(check_weight_view(program, w));
    if (const auto* coordinate = weight->shard_coordinate(); coordinate != nullptr && coordinate->size() != 0) {
      if (coordinate->size() > kMaxMeshDims) {
        return make_error(ErrorCode::InvalidMesh, what() + " names a shard coordinate of " +
                                                      std::to_string(coordinate->size()) + " dims (at most " +
                                                      std::to_string(kMaxMeshDims) + ")");
      }
      for (int64_t c : *coordinate) {
        if (c < 0 || static_cast<uint64_t>(c) >= kMaxMeshRanks) {
          return make_error(ErrorCode::InvalidMesh, what() + " names shard coordinate entry " + std::to_string(c));
        }
      }
    }
  }
  return {};
}

}  // namespace nrt::verify
