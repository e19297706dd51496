// The nrt.Runner type (python/runner_bindings.cc).
#pragma once

#include <nanobind/nanobind.h>

namespace nrt::python {

void add_runner_bindings(nanobind::module_& module);

}  // namespace nrt::python
