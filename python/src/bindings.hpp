// The parts of parity._core, each in its own file (module.cpp calls them in order).
#pragma once

#include <nanobind/nanobind.h>

namespace parity::python {

void bind_hw(nanobind::module_& module);
void bind_gemm(nanobind::module_& module);
void bind_tbe(nanobind::module_& module);

}  // namespace parity::python
