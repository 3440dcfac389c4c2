#include "diff/diff_json.h"
#include "base/version.h"

namespace gmt::cli {

using analyzer::Json;

namespace {

Json rows(const std::vector<DiffRow>& rows) {
    Json out = Json::array();
    for (const DiffRow& r : rows) {
        out.push_back(Json{{"label", r.label},
                           {"base", r.base},
                           {"new", r.now},
                           {"unit", r.bytes ? "bytes" : "count"},
                           {"over_limit", r.over}});
    }
    return out;
}

Json strings(const std::vector<std::string>& items) {
    Json out = Json::array();
    for (const std::string& item : items) {
        out.push_back(item);
    }
    return out;
}

} // namespace

Json diffJson(const std::string& base, const std::string& now, const std::vector<DiffPair>& pairs,
              const std::vector<std::string>& only_in_base,
              const std::vector<std::string>& only_in_new) {
    Json out_pairs = Json::array();
    std::vector<std::string> violations;
    for (const DiffPair& p : pairs) {
        for (const std::string& v : p.diff.violations) {
            violations.push_back(p.name.empty() ? v : p.name + ": " + v);
        }
        out_pairs.push_back(Json{{"name", p.name},
                                 {"base_pid", p.base_pid},
                                 {"new_pid", p.new_pid},
                                 {"peak", rows(p.diff.peak)},
                                 {"leaks", rows(p.diff.leaks)},
                                 {"counts", rows(p.diff.counts)},
                                 {"violations", strings(p.diff.violations)}});
    }
    return Json{{"schema_version", kDiffSchemaVersion},
                {"generator", analyzer::generatorName()},
                {"base", base},
                {"new", now},
                {"within_limits", violations.empty()},
                {"violations", strings(violations)},
                {"pairs", std::move(out_pairs)},
                {"only_in_base", strings(only_in_base)},
                {"only_in_new", strings(only_in_new)}};
}

} // namespace gmt::cli
