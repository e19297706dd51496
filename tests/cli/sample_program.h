// Programs the nrt-inspect tests run the binary on, built through the object API so the tests do
// not depend on any exporter. `sample_program` is valid and uses every Argument union member,
// every value kind print renders, a DTensor on a 2-D mesh, a process group, weights (two of them
// parameters), a signature with each common input kind, and a subgraph.
#pragma once

#include <string>

#include "core/error.h"
#include "serializer/json_form.h"

namespace nrt::testing {

ProgramWithWeights sample_program();

// sample_program with node 0's first argument pointing at value 999: fails with NRT-E302.
ProgramWithWeights program_with_bad_value_index();

// Writes `program` as an .nrt container at `path`.
Status write_program(const std::string& path, const ProgramWithWeights& program);

}  // namespace nrt::testing
