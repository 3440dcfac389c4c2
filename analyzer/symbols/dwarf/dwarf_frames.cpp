#include "symbols/dwarf/dwarf_frames.h"

#include "symbols/dwarf/demangle.h"

#include <dwarf.h>
#include <elfutils/libdw.h>

#include <string>
#include <utility>

namespace gmt::analyzer::symbolize {

namespace {

struct Location {
    std::string file;
    int line = 0;
};

std::string nameOf(const char* raw, const FrameOptions& options) {
    if (raw == nullptr) {
        return {};
    }
    return options.demangle ? demangle(raw) : std::string(raw);
}

// The linkage name gives the qualified C++ name (namespaces, classes, parameters) that
// DW_AT_name lacks. The _integrate lookups follow DW_AT_abstract_origin and
// DW_AT_specification, which is where inlined and out-of-class definitions keep it.
std::string functionName(Dwarf_Die* die, const FrameOptions& options) {
    Dwarf_Attribute attr;
    const char* linkage = dwarf_formstring(dwarf_attr_integrate(die, DW_AT_linkage_name, &attr));
    if (linkage == nullptr) {
        linkage = dwarf_formstring(dwarf_attr_integrate(die, DW_AT_MIPS_linkage_name, &attr));
    }
    if (linkage != nullptr) {
        return nameOf(linkage, options);
    }
    return nameOf(dwarf_diename(die), options);
}

std::string symbolName(Dwfl_Module* module, uint64_t address, const FrameOptions& options) {
    GElf_Off offset = 0;
    GElf_Sym sym;
    return nameOf(dwfl_module_addrinfo(module, address, &offset, &sym, nullptr, nullptr, nullptr),
                  options);
}

Location lineTableLocation(Dwarf_Die* cudie, Dwarf_Addr pc) {
    Location location;
    Dwarf_Line* line = dwarf_getsrc_die(cudie, pc);
    if (line == nullptr) {
        return location;
    }
    if (const char* file = dwarf_linesrc(line, nullptr, nullptr)) {
        location.file = file;
    }
    dwarf_lineno(line, &location.line);
    return location;
}

// Where the inlined subroutine was called: the position the caller's frame is at.
Location callSite(Dwarf_Die* inlined) {
    Location location;
    Dwarf_Attribute attr;
    Dwarf_Word value = 0;
    if (dwarf_formudata(dwarf_attr(inlined, DW_AT_call_line, &attr), &value) == 0) {
        location.line = static_cast<int>(value);
    }
    if (dwarf_formudata(dwarf_attr(inlined, DW_AT_call_file, &attr), &value) != 0) {
        return location;
    }
    Dwarf_Die cu;
    Dwarf_Files* files = nullptr;
    size_t count = 0;
    if (dwarf_diecu(inlined, &cu, nullptr, nullptr) == nullptr ||
        dwarf_getsrcfiles(&cu, &files, &count) != 0 || value >= count) {
        return location;
    }
    if (const char* file = dwarf_filesrc(files, value, nullptr, nullptr)) {
        location.file = file;
    }
    return location;
}

// Aggregate initialisation would name every Frame member to stay -Wextra clean.
Frame frameAt(std::string function, const Location& location, bool inlined) {
    Frame frame;
    frame.function = std::move(function);
    frame.file = location.file;
    frame.line = location.line;
    frame.inlined = inlined;
    return frame;
}

// Deeper nesting than this is a corrupt file, not code.
constexpr int kMaxScopeDepth = 128;

// Appends the DIEs below `parent` that contain `pc`, outermost first, following the
// concrete tree (an inlined instance's callers, not its abstract definition's scopes).
// Written out rather than using dwarf_getscopes, which in elfutils 0.188 does not look
// inside namespaces and classes, where clang places function definitions.
bool appendScopes(Dwarf_Die* parent, Dwarf_Addr pc, std::vector<Dwarf_Die>& chain, int depth) {
    Dwarf_Die child;
    if (depth > kMaxScopeDepth || dwarf_child(parent, &child) != 0) {
        return false;
    }
    do {
        switch (dwarf_tag(&child)) {
        case DW_TAG_subprogram:
        case DW_TAG_inlined_subroutine:
        case DW_TAG_lexical_block:
        case DW_TAG_try_block:
        case DW_TAG_catch_block:
        case DW_TAG_with_stmt:
        case DW_TAG_entry_point:
            if (dwarf_haspc(&child, pc) > 0) {
                chain.push_back(child);
                appendScopes(&child, pc, chain, depth + 1);
                return true;
            }
            break;
        case DW_TAG_namespace:
        case DW_TAG_module:
        case DW_TAG_class_type:
        case DW_TAG_structure_type:
        case DW_TAG_union_type:
            if (appendScopes(&child, pc, chain, depth + 1)) {
                return true;
            }
            break;
        default:
            break;
        }
    } while (dwarf_siblingof(&child, &child) == 0);
    return false;
}

} // namespace

std::vector<Frame> resolveFrames(Dwfl_Module* module, CuIndex& cus, uint64_t address,
                                 const FrameOptions& options) {
    std::vector<Frame> frames;
    Location location;
    bool have_function = false;
    Dwarf_Addr bias = 0;
    if (Dwarf_Die* cudie = cus.find(module, address, &bias)) {
        const Dwarf_Addr pc = address - bias;
        // The line table describes the innermost frame; each inlined level up takes its
        // position from the call site recorded on the level below.
        location = lineTableLocation(cudie, pc);
        std::vector<Dwarf_Die> scopes;
        appendScopes(cudie, pc, scopes, 0);
        for (auto it = scopes.rbegin(); it != scopes.rend() && !have_function; ++it) {
            Dwarf_Die* die = &*it;
            switch (dwarf_tag(die)) {
            case DW_TAG_inlined_subroutine:
                if (options.inline_frames) {
                    frames.push_back(frameAt(functionName(die, options), location, true));
                }
                location = callSite(die);
                break;
            case DW_TAG_subprogram:
                frames.push_back(frameAt(functionName(die, options), location, false));
                have_function = true;
                break;
            default:
                break; // lexical blocks and the like
            }
        }
    }
    if (!have_function) {
        // No DWARF, or code DWARF does not describe (assembly, PLT stubs).
        frames.push_back(frameAt({}, location, false));
    }
    // The symbol table names the out-of-line function, so it can only stand in for the
    // outermost frame.
    if (frames.back().function.empty()) {
        frames.back().function = symbolName(module, address, options);
    }
    return frames;
}

} // namespace gmt::analyzer::symbolize
