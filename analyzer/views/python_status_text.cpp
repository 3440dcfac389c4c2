#include "views/python_status_text.h"

namespace gmt::analyzer {

std::string pythonRuntimeText(const PythonRuntime& python) {
    const std::string name =
        "CPython " + (python.version.empty() ? std::string("(version unknown)") : python.version);
    switch (python.status) {
    case format::PythonStatus::Captured:
        return name + ": Python frames recorded";
    case format::PythonStatus::Disabled:
        return name + ": Python frames not recorded (GPUMEMTRACE_PYTHON=0)";
    case format::PythonStatus::Unsupported:
        return name + ": no Python frames, this CPython cannot be read (3.10 to 3.13 release "
                      "builds can)";
    case format::PythonStatus::Failed:
        return name + ": Python frames stopped, the interpreter's memory did not look as its "
                      "version says (the program's stderr has the warning)";
    case format::PythonStatus::Pending:
        return name + ": no Python frames, no thread running Python code made a CUDA call";
    case format::PythonStatus::NotDetected:
        break;
    }
    return name + ": no Python frames";
}

} // namespace gmt::analyzer
