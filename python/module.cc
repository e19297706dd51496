// The extension module nrt._nrt, which the `nrt` package (python/nrt/__init__.py) re-exports.
#include <nanobind/nanobind.h>

#include "python/errors.h"
#include "python/program_bindings.h"
#include "python/runner_bindings.h"

NB_MODULE(_nrt, m) {
  m.doc() = "nrt's C++ library: open, verify, hash, diff, convert, shard and run PyTorch-exported programs.";
  nrt::python::add_error_types(m);
  nrt::python::add_program_bindings(m);
  nrt::python::add_runner_bindings(m);
}
