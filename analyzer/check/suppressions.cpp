#include "check/suppressions.h"

#include "base/saturating.h"
#include "symbols/pattern_file.h"

namespace gmt::cli {

Suppressions Suppressions::load(const std::string& path) {
    try {
        return fromLines(analyzer::readPatternFile(path, "suppressions file"));
    } catch (const analyzer::PatternFileError& e) {
        throw SuppressionError(e.what());
    }
}

Suppressions Suppressions::parse(std::istream& in, const std::string& name) {
    return fromLines(analyzer::patternLines(in, name));
}

Suppressions Suppressions::fromLines(const std::vector<analyzer::PatternLine>& lines) {
    Suppressions out;
    for (const analyzer::PatternLine& line : lines) {
        const std::string& text = line.text;
        size_t colon = text.find(':');
        std::string type =
            colon == std::string::npos ? std::string() : analyzer::trimmed(text.substr(0, colon));
        Suppression s;
        if (type == "leak") {
            s.type = Suppression::Type::Leak;
        } else if (type == "error") {
            s.type = Suppression::Type::Error;
        } else {
            throw SuppressionError(
                line.origin + ": expected 'leak:PATTERN' or 'error:PATTERN', got '" + text + "'");
        }
        s.pattern = analyzer::trimmed(text.substr(colon + 1));
        if (s.pattern.empty()) {
            throw SuppressionError(line.origin + ": empty pattern");
        }
        s.origin = line.origin;
        out.entries_.push_back(std::move(s));
    }
    return out;
}

void Suppressions::add(std::vector<Suppression> more) {
    for (Suppression& s : more) {
        entries_.push_back(std::move(s));
    }
}

Suppression* Suppressions::matchLeak(const analyzer::LeakSite& leak) {
    for (Suppression& s : entries_) {
        if (s.type == Suppression::Type::Leak && stackMatches(s.pattern, leak.stack)) {
            ++s.uses;
            analyzer::addSaturating(s.bytes, leak.bytes);
            s.allocations += leak.allocations;
            return &s;
        }
    }
    return nullptr;
}

std::vector<analyzer::SuppressionReport> usedLeakSuppressions(const Suppressions& suppressions) {
    std::vector<analyzer::SuppressionReport> used;
    for (const Suppression& s : suppressions.entries()) {
        if (s.type == Suppression::Type::Leak && s.uses > 0) {
            used.push_back({s.text(), s.origin, s.why, s.uses, s.allocations, s.bytes});
        }
    }
    std::stable_sort(used.begin(), used.end(),
                     [](const auto& a, const auto& b) { return a.bytes > b.bytes; });
    return used;
}

Suppression* Suppressions::matchError(const analyzer::ErrorReport& error) {
    for (Suppression& s : entries_) {
        if (s.type == Suppression::Type::Error &&
            (stackMatches(s.pattern, error.stack) ||
             stackMatches(s.pattern, error.allocation_stack))) {
            ++s.uses;
            return &s;
        }
    }
    return nullptr;
}

} // namespace gmt::cli
