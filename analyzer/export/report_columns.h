// The columns of the NDJSON tables that copy the report (processes, devices, leaks, peak):
// each column is a member of the row's report struct, named by its entry in the struct's
// field list (model/report.h). The column's JSON value and its SQL type in schema.sql are
// derived from that member's C++ type, so a column cannot disagree with the report it
// copies, and a name that is not in the list does not compile (knownColumns below).
#pragma once

#include "export/json_text.h"
#include "model/describe.h"
#include "model/report.h"

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>

namespace gmt::analyzer {

struct ReportColumn {
    std::string_view field;   // the member's name in its struct's field list
    std::string_view as = {}; // the column's name where it differs (a published column)

    constexpr std::string_view name() const { return as.empty() ? field : as; }
};

// The SQL type (DuckDB's names) of a member shown as a column; empty for a type no column
// can show (stacks, lists, nested structs).
template <typename M> constexpr std::string_view sqlType() {
    if constexpr (std::is_same_v<M, bool>) {
        return "BOOLEAN";
    } else if constexpr (std::is_same_v<M, uint64_t>) {
        return "UBIGINT";
    } else if constexpr (std::is_same_v<M, int64_t> || std::is_same_v<M, std::optional<int64_t>>) {
        return "BIGINT";
    } else if constexpr (std::is_same_v<M, std::string> || std::is_same_v<M, format::Kind>) {
        return "VARCHAR";
    } else {
        return {};
    }
}

// Whether every column names a member of S's list that a column can show: checked at
// compile time where a table's columns are declared.
template <Described S, size_t N>
consteval bool knownColumns(const std::array<ReportColumn, N>& columns) {
    for (const ReportColumn& c : columns) {
        bool found = false;
        forEachField<S>([&](const auto& f) {
            using M = typename std::remove_cvref_t<decltype(f)>::Member;
            found = found || (f.name == c.field && !sqlType<M>().empty());
        });
        if (!found) {
            return false;
        }
    }
    return true;
}

// `'name': 'TYPE', ` for each column, as read_ndjson's `columns` wants them.
template <Described S, size_t N>
std::string sqlColumns(const std::array<ReportColumn, N>& columns) {
    std::string out;
    for (const ReportColumn& c : columns) {
        forEachField<S>([&](const auto& f) {
            using M = typename std::remove_cvref_t<decltype(f)>::Member;
            if (f.name == c.field) {
                out.append("'").append(c.name()).append("': '").append(sqlType<M>()).append("', ");
            }
        });
    }
    return out;
}

// Appends the columns' values of `row` to `line`.
template <Described S, size_t N>
void writeColumns(JsonLine& line, const S& row, const std::array<ReportColumn, N>& columns) {
    for (const ReportColumn& c : columns) {
        forEachField<S>([&](const auto& f) {
            using M = typename std::remove_cvref_t<decltype(f)>::Member;
            if constexpr (!sqlType<M>().empty()) {
                if (f.name != c.field) {
                    return;
                }
                const M& value = row.*(f.member);
                if constexpr (std::is_same_v<M, bool>) {
                    line.boolean(c.name(), value);
                } else if constexpr (std::is_same_v<M, std::string>) {
                    line.str(c.name(), value);
                } else if constexpr (std::is_same_v<M, format::Kind>) {
                    line.name(c.name(), format::kindName(value));
                } else if constexpr (std::is_same_v<M, std::optional<int64_t>>) {
                    value ? line.num(c.name(), *value) : line.null(c.name());
                } else {
                    line.num(c.name(), value);
                }
            }
        });
    }
}

} // namespace gmt::analyzer
