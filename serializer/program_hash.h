// `nrt-inspect hash` as a library: the structure, weights and full digests of a verified program,
// identical across processes, ranks, hosts and file layouts (see structure_hash.h and
// weights_hash.h for what each covers). The runtime compares `full` (or `structure`) across ranks.
#pragma once

#include <string>
#include <vector>

#include "serializer/structure_hash.h"
#include "serializer/weights_hash.h"

namespace nrt {

struct HashOptions {
  HashAlgorithm algorithm = HashAlgorithm::kXxh3;
  unsigned threads = 0;
  std::function<void(uint64_t, uint64_t)> progress;  // weights hashing progress
};

// One line of `--explain`: kind is "graph", "signature", "node" or "storage".
struct PartDigest {
  std::string kind;
  std::string name;
  Digest digest;
};

struct ProgramDigests {
  Digest structure;
  Digest weights;
  Digest full;  // digest of (structure, weights)
  std::vector<std::string> unstable_reprs;
  std::vector<PartDigest> parts;  // every graph, signature, node and storage, for --explain
};

ProgramDigests hash_program(const ProgramFile& file, const HashOptions& options = {});

}  // namespace nrt
