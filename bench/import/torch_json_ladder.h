// A synthetic torch.export ExportedProgram JSON (schema 8.20) of any size for the import
// benchmark: `num_nodes` nodes cycling aten.add.Tensor(h, p_w, alpha=1), aten.mul.Tensor(h, x)
// and aten.relu.default(h) over f32[8,64] CPU tensors, each node with the metadata real exports
// carry (stack_trace, nn_module_stack, torch_fn), written with torch's own separators.
#pragma once

#include <cstdint>
#include <string>

namespace nrt::bench {

std::string make_torch_json_ladder(uint32_t num_nodes);

}  // namespace nrt::bench
