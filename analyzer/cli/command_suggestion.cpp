#include "cli/command_suggestion.h"

#include "base/text_safety.h"

#include <algorithm>
#include <vector>

namespace gmt::cli {

size_t editDistance(std::string_view a, std::string_view b) {
    // Three rows suffice: the swap of neighbours looks two rows back.
    std::vector<size_t> before(b.size() + 1), previous(b.size() + 1), current(b.size() + 1);
    for (size_t j = 0; j <= b.size(); ++j) {
        previous[j] = j;
    }
    for (size_t i = 1; i <= a.size(); ++i) {
        current[0] = i;
        for (size_t j = 1; j <= b.size(); ++j) {
            const size_t cost = a[i - 1] == b[j - 1] ? 0 : 1;
            current[j] = std::min({previous[j] + 1, current[j - 1] + 1, previous[j - 1] + cost});
            if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1]) {
                current[j] = std::min(current[j], before[j - 2] + 1);
            }
        }
        before.swap(previous);
        previous.swap(current);
    }
    return previous[b.size()];
}

std::optional<std::string> nearestCommand(const CLI::App& app, std::string_view typed) {
    std::optional<std::string> best;
    size_t best_distance = 3; // more than two edits is another word
    for (const CLI::App* sub : app.get_subcommands({})) {
        const std::string& name = sub->get_name();
        const size_t d = editDistance(typed, name);
        if (d < best_distance && 2 * d < std::max(typed.size(), name.size())) {
            best = name;
            best_distance = d;
        }
    }
    return best;
}

std::optional<std::string> unknownCommandError(const CLI::App& app, int argc, char** argv) {
    if (argc < 2 || argv[1][0] == '-') {
        return std::nullopt; // an option (--help, --version) or nothing: CLI11's to judge
    }
    const std::string typed = argv[1];
    for (const CLI::App* sub : app.get_subcommands({})) {
        if (sub->check_name(typed)) {
            return std::nullopt;
        }
    }
    std::string text = "gpumemtrace: unknown command '" + analyzer::printable(typed) + "'";
    if (const auto nearest = nearestCommand(app, typed)) {
        text += "; did you mean '" + *nearest + "'?";
    }
    return text + " (see `gpumemtrace --help`)";
}

} // namespace gmt::cli
