// What a kernel keeps between calls of one node: derived from the node's arguments that do not
// change from run to run (a convolution's batch norm folded into its weights, and where its
// per-run tensors lie among its arguments; constant_arguments.h says whether they changed). Each
// ExecutionFrame holds one slot per node (KernelContext::kernel_state), so concurrent runs, each
// on a frame of its own, never share one and a slot needs no lock. A kernel owns what it keeps
// there, and checks before each use that it still applies; a call made without a slot (constant
// folding, tests) derives everything afresh.
#pragma once

#include <memory>

namespace nrt::exec {

class KernelState {
 public:
  virtual ~KernelState() = default;
};

using KernelStateSlot = std::unique_ptr<KernelState>;

}  // namespace nrt::exec
