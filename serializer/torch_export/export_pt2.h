// An nrt program as a .pt2 archive in the layout torch.export.load reads (archive format "pt2",
// version 0): one models/<graph>.json per entry graph (export_json.h), its weights and constants
// configs, and each storage once as a raw record (weight_<i> / tensor_<i>), uncompressed and
// 64-byte aligned (pt2_archive.h). Parameters and persistent buffers go to the weights config,
// tensor constants and non-persistent buffers to the constants config, as torch.export.save
// does; weights no signature names go to the weights config of the first entry graph.
// data/sample_inputs/<graph>.pt is written empty (torch reads that as "no example inputs").
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/error.h"
#include "serializer/json_form.h"

namespace nrt::torch_export {

struct Pt2ExportOptions {
  std::string root = "model";  // the archive's root folder (torch uses the file's stem)
  std::string model;           // one entry graph to write; empty: every entry graph
};

Result<std::vector<uint8_t>> export_pt2(const ProgramWithWeights& program, const Pt2ExportOptions& options);

}  // namespace nrt::torch_export
