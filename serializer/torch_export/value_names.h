// Value name -> value index for one graph during import: an open-addressing table with the
// names as views into the JSON document (which outlives the import). A 100k-node graph resolves
// several hundred thousand references; one probe sequence over a flat array keeps that to about
// one cache miss each, where std::unordered_map's node chains cost several.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

namespace nrt::torch_export {

class ValueNames {
 public:
  // Room for `count` names without growing (more still work).
  void reserve(size_t count);
  // False when `name` is present already (the table is unchanged).
  bool insert(std::string_view name, uint32_t index);
  std::optional<uint32_t> find(std::string_view name) const;

 private:
  struct Slot {
    uint64_t hash = 0;
    std::string_view name;
    uint32_t index = kEmpty;
  };
  static constexpr uint32_t kEmpty = UINT32_MAX;

  static uint64_t hash_of(std::string_view name);
  void grow();

  std::vector<Slot> slots_;
  size_t size_ = 0;
};

}  // namespace nrt::torch_export
