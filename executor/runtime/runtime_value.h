// What a graph value holds at run time. Symbolic ints are concrete int64 here; None is
// monostate; ProcessGroup values hold the group's name and the ProcessGroup the executor bound
// to it (executor/comm/process_group.h); subgraph arguments hold the graph and the GraphRunner the
// executor bound to it (executor/runtime/graph_runner.h). Device, memory format and layout arguments keep
// their types.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "core/runtime_enums.h"
#include "executor/runtime/tensor.h"

namespace nrt::exec {

class GraphRunner;
class ProcessGroup;

struct ProcessGroupRef {
  std::string name;
  ProcessGroup* group = nullptr;  // bound by the executor at load time; null when unbound
};

struct GraphRef {
  uint32_t graph = 0;            // index into Program.graphs
  std::string name;
  GraphRunner* runner = nullptr;  // bound by the executor at load time
};

using RuntimeValue = std::variant<std::monostate,                     // None
                                  Tensor,                             // Tensor, DTensor local shard
                                  std::vector<Tensor>,                // Tensor[]
                                  std::vector<std::optional<Tensor>>, // Tensor?[]
                                  int64_t,                            // int, SymInt, bool-free ints
                                  double,                             // float, SymFloat
                                  bool,                               // bool, SymBool
                                  std::string,                        // str
                                  std::vector<int64_t>,               // int[], SymInt[]
                                  std::vector<double>,                // float[]
                                  std::vector<bool>,                  // bool[]
                                  ScalarType,                         // dtype
                                  ProcessGroupRef,                    // process group handle
                                  // Appended (keep existing alternatives in place):
                                  Device,                             // device
                                  MemoryFormat,                       // memory_format
                                  Layout,                             // layout
                                  std::vector<std::string>,           // str[]
                                  GraphRef>;                          // subgraph

}  // namespace nrt::exec
