#include "python/errors.h"

namespace nb = nanobind;

namespace nrt::python {
namespace {

PyObject* g_error = nullptr;             // nrt.Error
PyObject* g_invalid_argument = nullptr;  // nrt.InvalidArgumentError(nrt.Error, ValueError)

void set_python_error(const Error& error) {
  PyObject* type = error.code == ErrorCode::InvalidArgument ? g_invalid_argument : g_error;
  const std::string text = error.to_string();
  PyObject* instance = PyObject_CallFunction(type, "s", text.c_str());
  if (instance == nullptr) return;  // the call's own error stands
  const std::string id = error_id(error.code);
  const std::string_view name = error_name(error.code);
  PyObject* code = PyUnicode_FromString(id.c_str());
  PyObject* name_text = PyUnicode_FromStringAndSize(name.data(), static_cast<Py_ssize_t>(name.size()));
  PyObject* message = PyUnicode_DecodeUTF8(error.message.data(), static_cast<Py_ssize_t>(error.message.size()),
                                           "replace");
  if (code && name_text && message) {
    PyObject_SetAttrString(instance, "code", code);
    PyObject_SetAttrString(instance, "name", name_text);
    PyObject_SetAttrString(instance, "message", message);
  }
  Py_XDECREF(code);
  Py_XDECREF(name_text);
  Py_XDECREF(message);
  PyErr_SetObject(type, instance);
  Py_DECREF(instance);
}

}  // namespace

void add_error_types(nb::module_& module) {
  g_error = PyErr_NewExceptionWithDoc(
      "nrt.Error",
      "An nrt error: .code is its stable code (\"NRT-E101\"; docs/ERRORS.md), .name its name, .message the "
      "text that names the place (file, node, value, byte offset).",
      PyExc_Exception, nullptr);
  PyObject* bases = PyTuple_Pack(2, g_error, PyExc_ValueError);
  g_invalid_argument = PyErr_NewExceptionWithDoc(
      "nrt.InvalidArgumentError", "NRT-E104: the caller passed an invalid argument (also a ValueError).", bases,
      nullptr);
  Py_DECREF(bases);
  module.attr("Error") = nb::handle(g_error);
  module.attr("InvalidArgumentError") = nb::handle(g_invalid_argument);
  nb::register_exception_translator([](const std::exception_ptr& p, void*) {
    try {
      std::rethrow_exception(p);
    } catch (const ErrorRaised& e) {
      set_python_error(e.error);
    }
  });
}

void raise_if_error(const Status& status) {
  if (!status) throw ErrorRaised(status.error());
}

}  // namespace nrt::python
