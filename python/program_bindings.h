// The nrt.Program type and the module functions that open, inspect, compare, convert and shard
// programs (python/program_bindings.cc).
#pragma once

#include <nanobind/nanobind.h>

#include <memory>

#include "serializer/program_file.h"

namespace nrt::python {

// What nrt.Program holds: a verified program, shared by the Runners made from it.
struct Program {
  std::shared_ptr<const ProgramFile> file;
};

void add_program_bindings(nanobind::module_& module);

}  // namespace nrt::python
