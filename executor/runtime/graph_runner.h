// The seam between control-flow kernels and the executor. A GraphRef argument (a subgraph of the
// program, e.g. a branch of `higher_order::cond` or the body of `higher_order::while_loop`) is
// bound by the executor at load time to a GraphRunner that runs that subgraph, on the same
// device and with the same process groups as its parent.
//
// `run_graph` takes the subgraph's inputs by position and returns its outputs in order. Tensor
// outputs may view the runner's own memory (the frame the run used): that memory stays reserved
// for them while `hold` lives, so a kernel copies what it keeps past dropping it. Runners are
// thread-safe (concurrent runs of one program call the same runners), and the verifier rejects
// recursive subgraphs.
#pragma once

#include <memory>
#include <span>
#include <string>
#include <vector>

#include "executor/runtime/runtime_value.h"
#include "core/error.h"

namespace nrt::exec {

struct GraphOutputs {
  std::vector<RuntimeValue> values;
  std::shared_ptr<void> hold;  // keeps the memory `values` view
};

class GraphRunner {
 public:
  virtual ~GraphRunner() = default;
  virtual const std::string& graph_name() const = 0;
  virtual size_t num_graph_inputs() const = 0;
  virtual Result<GraphOutputs> run_graph(std::span<const RuntimeValue> inputs) = 0;
};

}  // namespace nrt::exec
