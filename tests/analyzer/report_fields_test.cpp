// The report's field lists (GMT_DESCRIBE in model/report.h) against docs/report.schema.json:
// walking the schema from its root by the structs' nesting (Report -> processes[] ->
// ProcessReport -> ...), every listed field has a property of a matching type, every
// property is listed, and a field is required in the schema exactly when its list entry
// is neither optional nor written only when set. The JSON writer and reader follow the
// lists, so the schema cannot drift from what they do.
#include "model/describe_members.h"
#include "model/report.h"

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include <fstream>
#include <map>
#include <set>

namespace analyzer = gmt::analyzer;
using analyzer::FieldCodec;
using nlohmann::json;

namespace {

const json& schema() {
    static const json s = [] {
        std::ifstream f(GMT_REPORT_SCHEMA);
        return json::parse(f);
    }();
    return s;
}

// Follows "$ref": "#/$defs/NAME" to the definition.
const json& resolve(const json& node) {
    if (node.contains("$ref")) {
        const std::string ref = node["$ref"];
        REQUIRE(ref.rfind("#/$defs/", 0) == 0);
        return resolve(schema()["$defs"].at(ref.substr(8)));
    }
    return node;
}

// The JSON types a property allows: "type" (one or a list), or those of its enum or const.
std::set<std::string> typesOf(const json& node) {
    std::set<std::string> out;
    if (node.contains("type")) {
        if (node["type"].is_array()) {
            for (const json& t : node["type"]) {
                out.insert(t.get<std::string>());
            }
        } else {
            out.insert(node["type"].get<std::string>());
        }
    }
    auto add = [&](const json& v) {
        out.insert(v.is_string() ? "string" : v.is_number_integer() ? "integer" : "other");
    };
    if (node.contains("enum")) {
        for (const json& v : node["enum"]) {
            add(v);
        }
    }
    if (node.contains("const")) {
        add(node["const"]);
    }
    return out;
}

std::set<std::string> enumOf(const json& node) {
    std::set<std::string> out;
    for (const json& v : node.value("enum", json::array())) {
        out.insert(v.get<std::string>());
    }
    return out;
}

template <typename T> struct IsOptional : std::false_type {};
template <typename T> struct IsOptional<std::optional<T>> : std::true_type {};
template <typename T> struct IsVector : std::false_type {};
template <typename T> struct IsVector<std::vector<T>> : std::true_type {};

template <typename T> void checkValue(const json& node, FieldCodec codec, const std::string& path);

// A listed field as the schema should have it: its JSON name and whether it is required.
struct Expected {
    bool required = false;
};

template <analyzer::Described S> void listedFields(std::map<std::string, Expected>& out) {
    S object{};
    analyzer::forEachMember(object, [&](const auto&, const auto&, const std::string& name,
                                        bool required) { out[name] = Expected{required}; });
}

template <analyzer::Described S> void checkValues(const json& properties, const std::string& path) {
    S object{};
    analyzer::forEachMember(object, [&](const auto& field, const auto& value,
                                        const std::string& name, bool) {
        using M = std::decay_t<decltype(value)>;
        if (!properties.contains(name)) {
            return; // reported by checkObject
        }
        const json& node = properties[name];
        const std::string at = path + "." + name;
        if constexpr (IsOptional<M>::value) {
            INFO(at);
            // Unset is written as null, unless the field is then left out.
            CHECK(typesOf(resolve(node)).count("null") == (field.has(analyzer::kOmitted) ? 0 : 1));
            checkValue<typename M::value_type>(node, field.codec, at);
        } else {
            checkValue<M>(node, field.codec, at);
        }
    });
}

template <analyzer::Described S> void checkObject(const json& schemaNode, const std::string& path) {
    INFO(path);
    const json& node = resolve(schemaNode);
    REQUIRE(typesOf(node).count("object") == 1);
    std::map<std::string, Expected> listed;
    listedFields<S>(listed);
    const json& properties = node.at("properties");
    std::set<std::string> required;
    for (const json& r : node.value("required", json::array())) {
        required.insert(r.get<std::string>());
    }
    for (const auto& [name, expected] : listed) {
        INFO("field " << path << "." << name);
        CHECK(properties.contains(name));
        CHECK(required.count(name) == (expected.required ? 1 : 0));
    }
    for (const auto& [name, property] : properties.items()) {
        INFO("schema property " << path << "." << name << " is in no field list");
        CHECK(listed.count(name) == 1);
    }
    for (const std::string& name : required) {
        INFO("schema requires " << path << "." << name);
        CHECK(properties.contains(name));
    }
    checkValues<S>(properties, path);
}

template <typename T> void checkValue(const json& raw, FieldCodec codec, const std::string& path) {
    INFO(path);
    const json& node = resolve(raw);
    const std::set<std::string> types = typesOf(node);
    namespace format = gmt::format;
    if constexpr (std::is_same_v<T, bool>) {
        CHECK(types.count("boolean") == 1);
    } else if constexpr (std::is_same_v<T, double>) {
        CHECK(types.count("number") == 1);
    } else if constexpr (std::is_integral_v<T> && std::is_unsigned_v<T>) {
        if (codec == FieldCodec::Hex) {
            CHECK(types.count("string") == 1);
            CHECK(node.value("pattern", std::string()).find("0x") != std::string::npos);
        } else {
            CHECK(types.count("integer") == 1);
            CHECK(node.value("minimum", -1) >= 0); // never negative
        }
    } else if constexpr (std::is_integral_v<T>) {
        CHECK(types.count("integer") == 1);
    } else if constexpr (std::is_same_v<T, std::string>) {
        CHECK(types.count("string") == 1);
    } else if constexpr (std::is_same_v<T, format::Kind>) {
        std::set<std::string> all;
        for (auto k : {format::Kind::None, format::Kind::Device, format::Kind::Pool,
                       format::Kind::Managed, format::Kind::HostPinned, format::Kind::Array,
                       format::Kind::Vmm, format::Kind::Block}) {
            all.insert(std::string(format::kindName(k)));
        }
        CHECK(enumOf(node) == all);
    } else if constexpr (std::is_same_v<T, format::PhaseKind>) {
        CHECK(enumOf(node) ==
              std::set<std::string>{std::string(format::phaseKindName(format::PhaseKind::Mark)),
                                    std::string(format::phaseKindName(format::PhaseKind::Push)),
                                    std::string(format::phaseKindName(format::PhaseKind::Pop))});
    } else if constexpr (std::is_same_v<T, format::PythonStatus>) {
        std::set<std::string> all;
        for (auto s : {format::PythonStatus::NotDetected, format::PythonStatus::Captured,
                       format::PythonStatus::Disabled, format::PythonStatus::Unsupported,
                       format::PythonStatus::Failed, format::PythonStatus::Pending}) {
            all.insert(std::string(format::pythonStatusName(s)));
        }
        CHECK(enumOf(node) == all);
    } else if constexpr (std::is_same_v<T, analyzer::ErrorType>) {
        using analyzer::ErrorType;
        std::set<std::string> all;
        for (auto t : {ErrorType::DoubleFree, ErrorType::InvalidFree, ErrorType::MismatchedFree}) {
            all.insert(std::string(analyzer::errorTypeName(t)));
        }
        CHECK(enumOf(node) == all);
    } else if constexpr (std::is_same_v<T, analyzer::Moment>) {
        using analyzer::Moment;
        CHECK(enumOf(node) == (codec == FieldCodec::CachingMoment
                                   ? std::set<std::string>{"peak", "oom"}
                                   : std::set<std::string>{"peak", "failure", "end"}));
    } else if constexpr (std::is_same_v<T, analyzer::Stack>) {
        CHECK(node == schema()["$defs"]["stack"]); // frames: report_json_writer.cpp frameJson
    } else if constexpr (std::is_same_v<T, std::vector<analyzer::KindReport>>) {
        // An object with one member per reported kind.
        REQUIRE(types.count("object") == 1);
        std::set<std::string> kinds, required;
        for (auto k : analyzer::kReportedKinds) {
            kinds.insert(std::string(format::kindName(k)));
            checkObject<analyzer::KindReport>(node["properties"][std::string(format::kindName(k))],
                                              path + "." + std::string(format::kindName(k)));
        }
        for (const json& r : node["required"]) {
            required.insert(r.get<std::string>());
        }
        CHECK(required == kinds);
        CHECK(node["properties"].size() == kinds.size());
    } else if constexpr (std::is_same_v<T, std::vector<std::pair<int64_t, uint64_t>>>) {
        REQUIRE(codec == FieldCodec::DevicePeak);
        REQUIRE(types.count("array") == 1);
        const json& item = resolve(node["items"]);
        CHECK(item["required"] == json::array({"device", "peak_bytes"}));
        CHECK(item["properties"].size() == 2);
        checkValue<int64_t>(item["properties"]["device"], FieldCodec::Value, path + ".device");
        checkValue<uint64_t>(item["properties"]["peak_bytes"], FieldCodec::Value,
                             path + ".peak_bytes");
    } else if constexpr (std::is_same_v<T, std::pair<uint64_t, uint64_t>>) {
        CHECK(types.count("array") == 1);
        CHECK(node["minItems"] == 2);
        CHECK(node["maxItems"] == 2);
        checkValue<uint64_t>(node["items"], codec, path + "[]");
    } else if constexpr (IsVector<T>::value) {
        REQUIRE(types.count("array") == 1);
        checkValue<typename T::value_type>(node["items"], codec, path + "[]");
    } else {
        checkObject<T>(raw, path);
    }
}

} // namespace

TEST_CASE("Every report struct's field list matches docs/report.schema.json") {
    checkObject<analyzer::Report>(schema(), "report");
}
