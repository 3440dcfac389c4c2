// A JSON Schema validator for the subset docs/report.schema.json uses (type, const, enum,
// required, properties, items, minItems, maxItems, minimum, maximum, pattern, local
// $ref). CI machines may lack python3-jsonschema, so the tests carry their own; a keyword
// outside the subset is reported as an error rather than silently ignored.
#pragma once

#include <nlohmann/json.hpp>

#include <regex>
#include <set>
#include <string>
#include <vector>

namespace gmt::test {

class SchemaValidator {
  public:
    explicit SchemaValidator(nlohmann::json schema) : root_(std::move(schema)) {}

    // Empty when `doc` is valid; else one message per violation, with its JSON path.
    template <typename J> std::vector<std::string> validate(const J& doc) {
        errors_.clear();
        check(nlohmann::json::parse(doc.dump()), root_, "$");
        return errors_;
    }

    // Every field the schema requires that `doc` has, with its path as the report reader
    // names it ("leaks[0].stack[0].address") and its schema; arrays are walked through
    // their first element.
    struct RequiredField {
        nlohmann::json::json_pointer pointer;
        std::string path;
        nlohmann::json schema;
    };
    std::vector<RequiredField> requiredFields(const nlohmann::json& doc) {
        std::vector<RequiredField> out;
        collect(doc, root_, nlohmann::json::json_pointer(), "", out);
        return out;
    }

  private:
    const nlohmann::json& resolved(const nlohmann::json& s) {
        return s.contains("$ref") ? resolve(s["$ref"].get<std::string>()) : s;
    }

    void collect(const nlohmann::json& v, const nlohmann::json& schema,
                 const nlohmann::json::json_pointer& at, const std::string& path,
                 std::vector<RequiredField>& out) {
        const nlohmann::json& s = resolved(schema);
        if (v.is_object() && s.contains("properties")) {
            std::set<std::string> required;
            for (const auto& r : s.value("required", nlohmann::json::array())) {
                required.insert(r.get<std::string>());
            }
            for (const auto& [key, sub] : s["properties"].items()) {
                if (!v.contains(key)) {
                    continue;
                }
                const std::string sub_path = path.empty() ? key : path + "." + key;
                if (required.contains(key)) {
                    out.push_back({at / key, sub_path, resolved(sub)});
                }
                collect(v[key], sub, at / key, sub_path, out);
            }
        }
        if (v.is_array() && !v.empty() && s.contains("items")) {
            collect(v[0], s["items"], at / 0, path + "[0]", out);
        }
    }

    static bool hasType(const nlohmann::json& v, const std::string& t) {
        if (t == "object")
            return v.is_object();
        if (t == "array")
            return v.is_array();
        if (t == "string")
            return v.is_string();
        if (t == "integer")
            return v.is_number_integer();
        if (t == "number")
            return v.is_number();
        if (t == "boolean")
            return v.is_boolean();
        if (t == "null")
            return v.is_null();
        return false;
    }

    const nlohmann::json& resolve(const std::string& ref) {
        const std::string prefix = "#/$defs/";
        if (ref.rfind(prefix, 0) != 0 || !root_["$defs"].contains(ref.substr(prefix.size()))) {
            errors_.push_back("unsupported $ref " + ref);
            static const nlohmann::json empty = nlohmann::json::object();
            return empty;
        }
        return root_["$defs"][ref.substr(prefix.size())];
    }

    void check(const nlohmann::json& v, const nlohmann::json& s, const std::string& path) {
        static const std::set<std::string> known = {
            "$schema", "$id",      "title",      "description", "type",     "const",
            "enum",    "required", "properties", "items",       "minItems", "maxItems",
            "minimum", "maximum",  "pattern",    "$ref",        "$defs"};
        for (const auto& [key, value] : s.items()) {
            if (!known.contains(key)) {
                errors_.push_back(path + ": schema keyword '" + key + "' not supported");
            }
        }
        if (s.contains("$ref")) {
            check(v, resolve(s["$ref"].get<std::string>()), path);
        }
        if (s.contains("type")) {
            bool ok = false;
            if (s["type"].is_array()) {
                for (const auto& t : s["type"]) {
                    ok = ok || hasType(v, t.get<std::string>());
                }
            } else {
                ok = hasType(v, s["type"].get<std::string>());
            }
            if (!ok) {
                errors_.push_back(path + ": expected type " + s["type"].dump() + ", got " +
                                  v.dump().substr(0, 80));
                return;
            }
        }
        if (s.contains("const") && v != s["const"]) {
            errors_.push_back(path + ": expected " + s["const"].dump());
        }
        if (s.contains("enum")) {
            bool found = false;
            for (const auto& e : s["enum"]) {
                found = found || e == v;
            }
            if (!found) {
                errors_.push_back(path + ": " + v.dump() + " not in " + s["enum"].dump());
            }
        }
        if (v.is_number()) {
            if (s.contains("minimum") && v.get<double>() < s["minimum"].get<double>()) {
                errors_.push_back(path + ": below minimum");
            }
            if (s.contains("maximum") && v.get<double>() > s["maximum"].get<double>()) {
                errors_.push_back(path + ": above maximum");
            }
        }
        if (v.is_string() && s.contains("pattern") &&
            !std::regex_search(v.get<std::string>(), std::regex(s["pattern"].get<std::string>()))) {
            errors_.push_back(path + ": " + v.dump() + " does not match " + s["pattern"].dump());
        }
        if (v.is_object()) {
            if (s.contains("required")) {
                for (const auto& r : s["required"]) {
                    if (!v.contains(r.get<std::string>())) {
                        errors_.push_back(path + ": missing required " + r.dump());
                    }
                }
            }
            if (s.contains("properties")) {
                for (const auto& [key, sub] : s["properties"].items()) {
                    if (v.contains(key)) {
                        check(v[key], sub, path + "." + key);
                    }
                }
            }
        }
        if (v.is_array()) {
            if (s.contains("minItems") && v.size() < s["minItems"].get<size_t>()) {
                errors_.push_back(path + ": fewer items than minItems");
            }
            if (s.contains("maxItems") && v.size() > s["maxItems"].get<size_t>()) {
                errors_.push_back(path + ": more items than maxItems");
            }
            if (s.contains("items")) {
                for (size_t i = 0; i < v.size(); ++i) {
                    check(v[i], s["items"], path + "[" + std::to_string(i) + "]");
                }
            }
        }
    }

    nlohmann::json root_;
    std::vector<std::string> errors_;
};

} // namespace gmt::test
