// libFuzzer target: arbitrary bytes as a .npy file. Parsing must give a clean error or a tensor
// whose every byte can be read; a parsed tensor must encode and parse back to the same dtype,
// shape and bytes (bf16 aside, which .npy cannot hold). Built and run by scripts/fuzz.sh.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <span>

#include "io/npy.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  auto tensor = nrt::exec::parse_npy(std::span<const uint8_t>(data, size), "fuzz");
  if (!tensor) return 0;
  auto bytes = nrt::exec::encode_npy(*tensor);
  if (!bytes) std::abort();  // every dtype parse_npy produces can be written
  auto again = nrt::exec::parse_npy(*bytes, "fuzz round trip");
  if (!again || again->dtype() != tensor->dtype() || again->sizes() != tensor->sizes() ||
      again->nbytes() != tensor->nbytes() ||
      (tensor->nbytes() > 0 && std::memcmp(again->raw_data(), tensor->raw_data(), tensor->nbytes()) != 0)) {
    std::abort();
  }
  return 0;
}
