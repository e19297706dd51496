// libFuzzer target: arbitrary bytes as what a `use_pickle` weight record of a .pt2 holds. A zip
// ("PK") is read as a torch.save archive (serializer/torch_export/torch_saved_tensor.h: the
// restricted pickle reader, then the tensor or DTensor it describes, its storages resolved in the
// zip); anything else as a bare pickle against the same allowlist. Either gives a clean error or
// a result; a tensor read must lie inside its storage. Built and run by scripts/fuzz.sh; seeds:
// testdata/torch/pickled_tensors/*.pt and the weight records (and their data.pkl) of
// testdata/torch/dtensor_mlp*/model_rank*.pt2.
#include <cstddef>
#include <cstdint>
#include <vector>

#include "core/schema_enums.h"
#include "serializer/pickle_reader.h"
#include "serializer/torch_export/torch_saved_tensor.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::vector<uint8_t> bytes(data, data + size);
  if (size >= 2 && data[0] == 'P' && data[1] == 'K') {
    auto tensor = nrt::torch_export::read_saved_tensor(std::move(bytes), "fuzz");
    if (!tensor) return 0;
    // The view was checked against the storage: its last element must be inside.
    const size_t element = nrt::element_size(tensor->meta.dtype);
    uint64_t last = tensor->meta.storage_offset ? static_cast<uint64_t>(tensor->meta.storage_offset->literal) : 0;
    bool empty = false;
    for (size_t d = 0; d < tensor->meta.sizes.size(); ++d) {
      const int64_t s = tensor->meta.sizes[d]->literal;
      empty |= s == 0;
      if (s > 0) last += static_cast<uint64_t>(s - 1) * static_cast<uint64_t>(tensor->meta.strides[d]->literal);
    }
    if (!empty && (last + 1) * element > tensor->storage.size()) __builtin_trap();
    return 0;
  }
  auto tree = nrt::pickle::read_pickle(bytes, nrt::torch_export::torch_save_allowset(), "fuzz");
  if (tree && tree->root() >= tree->size()) __builtin_trap();
  return 0;
}
