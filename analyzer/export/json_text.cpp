#include "export/json_text.h"

namespace gmt::analyzer {

void appendMicroseconds(std::string& out, uint64_t ns) {
    appendInt(out, ns / 1000);
    const auto frac = static_cast<unsigned>(ns % 1000);
    if (frac != 0) {
        out.push_back('.');
        out.push_back(static_cast<char>('0' + frac / 100));
        out.push_back(static_cast<char>('0' + frac / 10 % 10));
        out.push_back(static_cast<char>('0' + frac % 10));
    }
}

} // namespace gmt::analyzer
