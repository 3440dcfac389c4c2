// C++ symbol names for people.
#pragma once

#include <string>
#include <string_view>

namespace gmt::analyzer::symbolize {

// The demangled form of an Itanium-mangled name; any other name (C functions, names
// the demangler rejects) unchanged.
std::string demangle(std::string_view name);

} // namespace gmt::analyzer::symbolize
