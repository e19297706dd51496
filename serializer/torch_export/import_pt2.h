// A torch.export .pt2 archive (archive_format "pt2", archive_version "0", written by
// torch.export.save since torch 2.6) into an nrt program with its weights.
//
// Every models/<name>.json becomes an entry graph <name> (import_json.h); `model` picks one.
// data/weights/<name>_weights_config.json and data/constants/<name>_constants_config.json list
// the parameters, buffers and tensor constants: each raw record (weight_<i>, tensor_<i>) becomes
// one nrt storage, however many tensors view it, and each tensor a WeightTensor with its sizes,
// strides and storage offset. A view reaching outside its record, or a record whose size is not
// a whole number of elements, is an error naming the entry (codes::kWeightsConfigMismatch).
//
// Refused with an error naming the entry and why: pickled payloads (use_pickle tensor
// subclasses such as DTensor, custom_obj_<i> TorchBind objects), and the legacy archives of
// torch < 2.6 (serialized_exported_program.json with a pickled state dict; data/weights/<name>.pt).
// Ignored with a warning: sample inputs (a pickle), extra/ files, AOTInductor artifacts.
#pragma once

#include <string>

#include "core/error.h"
#include "serializer/torch_export/import_json.h"
#include "serializer/torch_export/pt2_archive.h"

namespace nrt::torch_export {

Result<TorchImport> import_pt2(const Pt2Reader& archive, const std::string& model = "");

// Opens `path` and imports it; messages start with the path.
Result<TorchImport> import_pt2_file(const std::string& path, const std::string& model = "");

}  // namespace nrt::torch_export
