#include "serializer/verify_program.h"

#include <string>
#include <unordered_set>
#include <vector>

#include "serializer/schema_access.h"
#include "serializer/verify_checks.h"

namespace nrt {
namespace {

// Subgraph references must form a DAG (a graph may not call itself, directly or not).
Status check_graph_recursion(const std::vector<std::vector<uint32_t>>& calls) {
  enum : uint8_t { kNew, kOpen, kDone };
  std::vector<uint8_t> state(calls.size(), kNew);
  for (uint32_t root = 0; root < calls.size(); ++root) {
    if (state[root] != kNew) continue;
    std::vector<std::pair<uint32_t, size_t>> stack{{root, 0}};
    state[root] = kOpen;
    while (!stack.empty()) {
      auto& [g, next] = stack.back();
      if (next == calls[g].size()) {
        state[g] = kDone;
        stack.pop_back();
        continue;
      }
      const uint32_t callee = calls[g][next++];
      if (state[callee] == kOpen) {
        return make_error(ErrorCode::GraphRecursion,
                          "graph " + std::to_string(g) + " reaches graph " + std::to_string(callee) +
                              " which is already on the call path (recursive subgraphs)");
      }
      if (state[callee] == kNew) {
        state[callee] = kOpen;
        stack.emplace_back(callee, 0);
      }
    }
  }
  return {};
}

}  // namespace

Status verify_program(const fb::Program& program, uint64_t flatbuffer_size, std::span<const uint8_t> segment,
                      const VerifyOptions& options) {
  verify::WorkBudget budget(16 * flatbuffer_size + (uint64_t{1} << 20));
  const auto* version = program.schema_version();
  if (version == nullptr) return make_error(ErrorCode::MissingField, "program has no schema_version");
  if (version->major() != kSchemaMajor) {
    return make_error(ErrorCode::UnsupportedSchemaVersion,
                      "schema version " + std::to_string(version->major()) + "." + std::to_string(version->minor()) +
                          "; this build reads major version " + std::to_string(kSchemaMajor));
  }
  const uint32_t num_graphs = vector_size(program.graphs());
  if (vector_size(program.entry_points()) == 0) return make_error(ErrorCode::NoEntryPoint, "program lists no entry point");
  std::vector<bool> is_entry(num_graphs, false);
  for (uint32_t e = 0; e < vector_size(program.entry_points()); ++e) {
    const uint32_t g = program.entry_points()->Get(e);
    if (g >= num_graphs) {
      return make_error(ErrorCode::GraphIndexOutOfRange, "entry point " + std::to_string(e) + " names graph " +
                                                             std::to_string(g) + " of " + std::to_string(num_graphs));
    }
    if (is_entry[g]) {
      return make_error(ErrorCode::DuplicateName, "graph " + std::to_string(g) + " is listed twice as entry point");
    }
    is_entry[g] = true;
  }
  std::unordered_set<std::string_view> graph_names;
  for (uint32_t g = 0; g < num_graphs; ++g) {
    if (!graph_names.insert(program.graphs()->Get(g)->name()->string_view()).second) {
      return make_error(ErrorCode::DuplicateName,
                        "graph " + std::to_string(g) + " '" + program.graphs()->Get(g)->name()->str() +
                            "' has the same name as an earlier graph");
    }
  }
  NRT_RETURN_IF_ERROR(budget.charge(vector_size(program.entry_points())));
  NRT_RETURN_IF_ERROR(verify::check_meshes(program, budget));
  NRT_RETURN_IF_ERROR(verify::check_process_groups(program, budget));
  NRT_RETURN_IF_ERROR(verify::check_storages(program, segment, options.deep));
  NRT_RETURN_IF_ERROR(verify::check_weights(program, budget));
  std::vector<std::vector<uint32_t>> calls(num_graphs);
  for (uint32_t g = 0; g < num_graphs; ++g) {
    NRT_TRY(subgraphs, verify::check_graph(program, g, is_entry[g], budget));
    calls[g] = std::move(*subgraphs);
  }
  return check_graph_recursion(calls);
}

}  // namespace nrt
