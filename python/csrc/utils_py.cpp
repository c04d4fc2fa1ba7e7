// Copyright (c) 2026 The libmscclpp authors
// SPDX-License-Identifier: MIT

#include <unistd.h>

#include <cerrno>
#include <mscclpp/errors.hpp>

#include "bindings.hpp"

namespace mscclpp::python {

void registerUtils(py::module_& m) {
  // The host name up to the first `delim` and at most `maxlen` characters (the reference's helper).
  m.def(
      "get_host_name",
      [](int maxlen, char delim) {
        char name[1024] = {};
        if (gethostname(name, sizeof(name) - 1) != 0) throw SysError("gethostname failed", errno);
        std::string host(name);
        size_t end = std::min(host.find(delim), host.size());
        if (maxlen >= 0) end = std::min(end, static_cast<size_t>(maxlen));
        return host.substr(0, end);
      },
      py::arg("maxlen") = 1024, py::arg("delim") = '.');
}

}  // namespace mscclpp::python
