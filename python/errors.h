// nrt's errors as Python exceptions: `nrt.Error` carries the stable code (`.code`, "NRT-E101"),
// its name (`.name`, "IoOpen") and the message the CLI prints (`.message`; str(e) is the whole
// "NRT-E101 IoOpen: ..." line). An error whose code says the caller passed a bad argument
// (NRT-E104) is `nrt.InvalidArgumentError`, a subclass of both nrt.Error and ValueError, so that
// Python code catching ValueError sees it too.
#pragma once

#include <nanobind/nanobind.h>

#include <stdexcept>

#include "core/error.h"

namespace nrt::python {

// Thrown by the bindings; translated into the Python exception when it reaches Python.
struct ErrorRaised : std::exception {
  explicit ErrorRaised(Error e) : error(std::move(e)) {}
  const char* what() const noexcept override { return "nrt error"; }
  Error error;
};

// Creates nrt.Error and nrt.InvalidArgumentError in `module` and registers the translator.
void add_error_types(nanobind::module_& module);

// The value of a Result, or the raised error.
template <typename T>
T value_or_raise(Result<T> result) {
  if (!result) throw ErrorRaised(result.error());
  return std::move(*result);
}
void raise_if_error(const Status& status);

}  // namespace nrt::python
