// The field lists of the report's structs: each struct in model/report.h names its fields
// once, next to its declaration, with GMT_DESCRIBE. The JSON writer and reader
// (report/report_json_*.cpp), the schema test (tests/analyzer/report_fields_test.cpp) and
// the NDJSON export walk these lists instead of naming the fields again, so a new report
// field is its member and its list entry.
#pragma once

#include <string_view>
#include <tuple>
#include <type_traits>

namespace gmt::analyzer {

// What a list entry says beyond its name and member. The JSON name is the member's name.
enum FieldTrait : unsigned {
    kRequired = 0,
    // May be absent in a saved report (added since the first reports): reads as the
    // member's default, or what report_json_reader.cpp's afterRead derives for it.
    kOptional = 1u << 0,
    // Written only when set (an engaged optional, a true bool); absent otherwise.
    kOmitted = 1u << 1,
    // A struct whose fields are written into the enclosing object, each as NAME_FIELD.
    kFlattened = 1u << 2,
    // Not written as a member: the key the enclosing object lists the struct under.
    kKey = 1u << 3,
};

// How a value is written, where its C++ type does not say it.
enum class FieldCodec {
    Value,
    Hex,           // an address or handle: "0x1f"
    StackIndex,    // StackRef: an index into Report::stacks, checked when read
    DevicePeak,    // (ordinal, bytes) pairs as {"device", "peak_bytes"} objects
    CachingMoment, // Moment::Failure as "oom": the caching allocator's OOM
};

template <typename S, typename M> struct FieldInfo {
    using Struct = S;
    using Member = M;
    std::string_view name;
    M S::*member;
    unsigned traits = kRequired;
    FieldCodec codec = FieldCodec::Value;

    constexpr bool has(unsigned t) const { return (traits & t) != 0; }
    // Required in a saved report: neither optional nor written only when set.
    constexpr bool required() const { return !has(kOptional | kOmitted); }
};

template <typename S, typename M>
constexpr FieldInfo<S, M> fieldInfo(std::string_view name, M S::*member, unsigned traits = 0,
                                    FieldCodec codec = FieldCodec::Value) {
    return {name, member, traits, codec};
}
template <typename S, typename M>
constexpr FieldInfo<S, M> fieldInfo(std::string_view name, M S::*member, FieldCodec codec) {
    return {name, member, kRequired, codec};
}

// One entry: GMT_MEMBER(member) or GMT_MEMBER(member, traits[, codec]) or GMT_MEMBER(member,
// codec).
#define GMT_MEMBER(member, ...)                                                                    \
    ::gmt::analyzer::fieldInfo(#member, &Self::member __VA_OPT__(, ) __VA_ARGS__)

// The list of Type, found by argument-dependent lookup: describe(static_cast<const Type*>(0)).
#define GMT_DESCRIBE(Type, ...)                                                                    \
    constexpr auto describe(const Type*) {                                                         \
        using Self = Type;                                                                         \
        return std::tuple{__VA_ARGS__};                                                            \
    }

template <typename S>
concept Described = requires {
    describe(static_cast<const S*>(nullptr));
};

template <Described S> inline constexpr auto kFields = describe(static_cast<const S*>(nullptr));

// Calls fn(entry) for each entry of S's list, in order.
template <Described S, typename Fn> constexpr void forEachField(Fn&& fn) {
    std::apply([&](const auto&... field) { (fn(field), ...); }, kFields<S>);
}

} // namespace gmt::analyzer
