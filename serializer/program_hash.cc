#include "serializer/program_hash.h"

namespace nrt {

ProgramDigests hash_program(const ProgramFile& file, const HashOptions& options) {
  const fb::Program& program = file.program();
  StructureDigests structure = hash_structure(program, options.algorithm);
  WeightsDigests weights = hash_weights(file, {options.algorithm, options.threads, options.progress});

  ProgramDigests out;
  out.structure = structure.program;
  out.weights = weights.weights;
  StreamHasher full(options.algorithm);
  full.str("nrt1-full");
  full.digest(out.structure);
  full.digest(out.weights);
  out.full = full.finish();
  out.unstable_reprs = std::move(structure.unstable_reprs);

  for (uint32_t g = 0; g < structure.graphs.size(); ++g) {
    const auto* graph = program.graphs()->Get(g);
    const std::string name = graph->name()->str();
    const auto& digests = structure.graphs[g];
    out.parts.push_back({"graph", name, digests.graph});
    out.parts.push_back({"signature", name, digests.signature});
    for (uint32_t n = 0; n < digests.nodes.size(); ++n) {
      const auto* node = graph->nodes()->Get(n);
      const std::string node_name = node->name() ? node->name()->str() : "#" + std::to_string(n);
      out.parts.push_back({"node", name + "/" + node_name, digests.nodes[n]});
    }
  }
  for (uint32_t s = 0; s < weights.storages.size(); ++s) {
    std::string users;
    for (uint32_t w = 0; program.weights() && w < program.weights()->size(); ++w) {
      const auto* weight = program.weights()->Get(w);
      if (weight->storage() != s) continue;
      users += users.empty() ? "" : ",";
      users += weight->fqn()->str();
    }
    out.parts.push_back({"storage", std::to_string(s) + (users.empty() ? "" : " (" + users + ")"), weights.storages[s]});
  }
  return out;
}

}  // namespace nrt
