// Copyright (c) 2026 The libmscclpp authors
// SPDX-License-Identifier: MIT

#include <mscclpp/errors.hpp>

#include "bindings.hpp"

namespace mscclpp::python {

namespace {

// Raises `type` with args == (code, what()), the form programs written for the reference unpack. A message
// may quote bytes that are not UTF-8 (a path or a name the caller gave as bytes): those arrive escaped
// (\xff), so that the caller still gets this error and not a UnicodeDecodeError raised in its place.
void raise(PyObject* type, int code, const char* what) {
  PyObject* message = PyUnicode_DecodeUTF8(what, static_cast<Py_ssize_t>(std::strlen(what)), "backslashreplace");
  if (message == nullptr) return;  // out of memory: the MemoryError is already set
  PyErr_SetObject(type, py::make_tuple(code, py::reinterpret_steal<py::str>(message)).ptr());
}

}  // namespace

void registerErrors(py::module_& m) {
  py::enum_<ErrorCode> errorCode(m, "ErrorCode", py::arithmetic());
#define MSCCLPP_PY_ERROR_CODE(name) errorCode.value(#name, ErrorCode::name);
  MSCCLPP_FOR_EACH_ERROR_CODE(MSCCLPP_PY_ERROR_CODE)
#undef MSCCLPP_PY_ERROR_CODE
  // Equal to the int it stands for, as an IntEnum is: e.args[0] is a plain int.
  errorCode
      .def(
          "__eq__", [](ErrorCode self, int other) { return static_cast<int>(self) == other; }, py::is_operator(),
          py::prepend())
      .def(
          "__ne__", [](ErrorCode self, int other) { return static_cast<int>(self) != other; }, py::is_operator(),
          py::prepend())
      .def("__hash__", [](ErrorCode self) { return static_cast<int>(self); });
  m.def("error_to_string", &errorToString, py::arg("error"));

  // Subclasses of RuntimeError, so that generic handlers catch them too.
  // The types live as long as the process: the translator may run during interpreter shutdown, and a
  // static py::object would be released after the interpreter is gone.
  auto makeType = [&m](const char* name, PyObject* base) {
    std::string qualified = std::string("mscclpp._mscclpp.") + name;
    PyObject* type = PyErr_NewException(qualified.c_str(), base, nullptr);
    if (type == nullptr) throw py::error_already_set();
    m.attr(name) = py::reinterpret_borrow<py::object>(type);
    return type;
  };
  static PyObject* baseError = makeType("BaseError", PyExc_RuntimeError);
  static PyObject* error = makeType("Error", baseError);
  static PyObject* sysError = makeType("SysError", baseError);
  static PyObject* cudaError = makeType("CudaError", baseError);
  static PyObject* cuError = makeType("CuError", baseError);
  static PyObject* ibError = makeType("IbError", baseError);

  py::register_exception_translator([](std::exception_ptr p) {
    try {
      if (p) std::rethrow_exception(p);
    } catch (const Error& e) {
      raise(error, static_cast<int>(e.getErrorCode()), e.what());
    } catch (const SysError& e) {
      raise(sysError, e.getErrorCode(), e.what());
    } catch (const CudaError& e) {
      raise(cudaError, e.getErrorCode(), e.what());
    } catch (const CuError& e) {
      raise(cuError, e.getErrorCode(), e.what());
    } catch (const IbError& e) {
      raise(ibError, e.getErrorCode(), e.what());
    } catch (const BaseError& e) {
      raise(baseError, e.getErrorCode(), e.what());
    }
  });
}

}  // namespace mscclpp::python
