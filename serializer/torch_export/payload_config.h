// The weights and constants configs of a .pt2 (PayloadConfig JSON):
//   {"config": {fqn: {"path_name": "weight_0", "is_param": true, "use_pickle": false,
//                     "tensor_meta": TensorMeta | null}}}
// in document order, both ways.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "schema/nrt_generated.h"
#include "core/error.h"
#include "serializer/torch_export/torch_extras.h"

namespace nrt::torch_export {

struct PayloadEntry {
  std::string fqn;
  std::string path_name;
  bool is_param = false;
  bool use_pickle = false;
  std::unique_ptr<fb::TensorMetaT> tensor_meta;  // null for custom objects
};

// `what` names the config in messages ("data/weights/model_weights_config.json").
Result<std::vector<PayloadEntry>> read_payload_config(std::string_view text, const std::string& what,
                                                      std::vector<std::string>* warnings);
Result<std::string> write_payload_config(const std::vector<PayloadEntry>& entries, const NoneStyle& style);

}  // namespace nrt::torch_export
