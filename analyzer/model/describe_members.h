// The JSON members a field list makes: what the JSON writer, the strict reader and the
// schema test all walk. An entry marked kKey is no member (the enclosing object lists the
// struct under it), and a kFlattened struct's own members stand in its place, each named
// NAME_MEMBER. Apart from describe.h so that only those three compile it.
#pragma once

#include "model/describe.h"

#include <string>
#include <type_traits>

namespace gmt::analyzer {

// Calls fn(entry, value, name, required) for each member of `object`'s list in order, where
// `value` is the member in `object` (const when `object` is), `name` its JSON name and
// `required` whether a saved report must have it (its own entry's and, when flattened, its
// enclosing entries' marks).
template <Described S, typename Fn>
void forEachMember(S& object, Fn&& fn, const std::string& prefix = "", bool required = true) {
    using Plain = std::remove_const_t<S>;
    forEachField<Plain>([&](const auto& field) {
        if (field.has(kKey)) {
            return;
        }
        auto& value = object.*(field.member);
        using M = typename std::decay_t<decltype(field)>::Member;
        const std::string name = prefix + std::string(field.name);
        const bool needed = required && field.required();
        if constexpr (Described<M>) {
            if (field.has(kFlattened)) {
                forEachMember(value, fn, name + "_", needed);
                return;
            }
        }
        fn(field, value, name, needed);
    });
}

} // namespace gmt::analyzer
