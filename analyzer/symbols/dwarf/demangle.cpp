#include "symbols/dwarf/demangle.h"

#include <cstdlib>
#include <cxxabi.h>
#include <memory>

namespace gmt::analyzer::symbolize {

std::string demangle(std::string_view name) {
    // __cxa_demangle also accepts bare type encodings, so a C function named "f" or "i"
    // would come back as "float" or "int": only mangled function names are handed over.
    if (!name.starts_with("_Z")) {
        return std::string(name);
    }
    std::string input(name); // needs NUL termination
    int status = 0;
    std::unique_ptr<char, decltype(&std::free)> out(
        abi::__cxa_demangle(input.c_str(), nullptr, nullptr, &status), &std::free);
    if (status != 0 || !out) {
        return input;
    }
    return std::string(out.get());
}

} // namespace gmt::analyzer::symbolize
