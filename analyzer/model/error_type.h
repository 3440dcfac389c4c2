// The kinds of wrong frees the analysis finds and the report lists (docs/analysis.md).
#pragma once

#include <string_view>

namespace gmt::analyzer {

enum class ErrorType { DoubleFree, InvalidFree, MismatchedFree };

constexpr std::string_view errorTypeName(ErrorType t) {
    switch (t) {
    case ErrorType::DoubleFree:
        return "double_free";
    case ErrorType::InvalidFree:
        return "invalid_free";
    case ErrorType::MismatchedFree:
        return "mismatched_free";
    }
    return "unknown";
}

} // namespace gmt::analyzer
