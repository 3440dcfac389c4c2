// When a measurement was taken: at the peak, at a failed allocation, or at the end. The
// analysis takes measurements at these moments and the report names them.
#pragma once

#include <string_view>

namespace gmt::analyzer {

enum class Moment { Peak, Failure, End };

constexpr std::string_view momentName(Moment m) {
    switch (m) {
    case Moment::Peak:
        return "peak";
    case Moment::Failure:
        return "failure";
    case Moment::End:
        return "end";
    }
    return "end";
}

} // namespace gmt::analyzer
