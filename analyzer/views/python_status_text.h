// What the text views say of a process's CPython: which one ran, and whether its stacks
// have Python frames or why not (the statuses are those of docs/python.md).
#pragma once

#include "model/report.h"

#include <string>

namespace gmt::analyzer {

// "CPython 3.12.3: Python frames recorded", or the reason there are none.
std::string pythonRuntimeText(const PythonRuntime& python);

} // namespace gmt::analyzer
