#include "interpreter.h"

#include "../logging.h"
#include "../real_functions.h"
#include "safe_memory.h"

#include <dlfcn.h>
#include <link.h>

#include <cstdlib>

namespace gmt::preload::python {
namespace {

void* symbol(const char* name) {
    return realDlsym(RTLD_DEFAULT, name);
}

// "3.10.12 (main, ...)" -> 0x030a0cf0. Release levels as PY_VERSION_HEX writes them.
uint32_t parseVersion(const char* text) {
    char* end = nullptr;
    unsigned long major = std::strtoul(text, &end, 10);
    if (*end != '.') {
        return 0;
    }
    unsigned long minor = std::strtoul(end + 1, &end, 10);
    unsigned long micro = 0;
    if (*end == '.') {
        micro = std::strtoul(end + 1, &end, 10);
    }
    unsigned level = 0xf, serial = 0;
    if (*end == 'a' || *end == 'b' || (end[0] == 'r' && end[1] == 'c')) {
        level = *end == 'a' ? 0xa : *end == 'b' ? 0xb : 0xc;
        serial = static_cast<unsigned>(std::strtoul(end + (level == 0xc ? 2 : 1), &end, 10));
    }
    if (major > 255 || minor > 255 || micro > 255 || serial > 15) {
        return 0;
    }
    return static_cast<uint32_t>(major << 24 | minor << 16 | micro << 8 | level << 4 | serial);
}

uint32_t interpreterVersion() {
    // Py_Version (3.11+) is the PY_VERSION_HEX the interpreter was built as.
    if (auto* hex = static_cast<const unsigned long*>(symbol("Py_Version"))) {
        return static_cast<uint32_t>(*hex);
    }
    // 3.10: the version string, formatted into a static buffer (no allocation, no GIL).
    if (auto* get = reinterpret_cast<const char* (*)()>(symbol("Py_GetVersion"))) {
        return parseVersion(get());
    }
    return 0;
}

void evalRange(void* eval, Interpreter& in) {
    Dl_info info{};
    void* entry = nullptr;
    if (!dladdr1(eval, &info, &entry, RTLD_DL_SYMENT) || !entry) {
        return;
    }
    const auto* sym = static_cast<const ElfW(Sym)*>(entry);
    if (sym->st_size > 0) {
        in.eval_begin = reinterpret_cast<uintptr_t>(eval);
        in.eval_end = in.eval_begin + sym->st_size;
    }
}

template <typename T> bool read(uintptr_t address, T& out) {
    return safeReadValue(address, out);
}

} // namespace

Interpreter detectInterpreter(bool enabled) {
    Interpreter in;
    void* this_thread = symbol("PyGILState_GetThisThreadState");
    void* eval = symbol("_PyEval_EvalFrameDefault");
    if (!this_thread || !eval) {
        return in;
    }
    in.version = interpreterVersion();
    if (!enabled) {
        in.status = format::PythonStatus::Disabled;
        return in;
    }
    in.status = format::PythonStatus::Unsupported;
    const uint32_t minor = in.version >> 16;
    if (minor < 0x030a || minor > 0x030d) {
        logger().info("CPython {:#x}: no Python frames (3.10 to 3.13 are read)", in.version);
        return in;
    }
    // Py_REF_DEBUG (every debug build) exports this; such builds are not laid out as the
    // release headers say.
    if (symbol("_Py_NegativeRefcount")) {
        logger().info("a debug build of CPython: no Python frames");
        return in;
    }
    std::optional<Layout> layout;
    if (minor == 0x030d) {
        if (void* runtime = symbol("_PyRuntime")) {
            layout = layoutFromDebugOffsets(reinterpret_cast<uintptr_t>(runtime), in.version);
        }
    } else {
        layout = builtinLayout(in.version);
    }
    auto main_interpreter = reinterpret_cast<void* (*)()>(symbol("PyInterpreterState_Main"));
    in.is_finalizing = reinterpret_cast<int (*)()>(
        symbol(minor >= 0x030d ? "Py_IsFinalizing" : "_Py_IsFinalizing"));
    in.code_type = reinterpret_cast<uintptr_t>(symbol("PyCode_Type"));
    in.str_type = reinterpret_cast<uintptr_t>(symbol("PyUnicode_Type"));
    in.bytes_type = reinterpret_cast<uintptr_t>(symbol("PyBytes_Type"));
    if (!layout || !main_interpreter || !in.is_finalizing || !in.code_type || !in.str_type ||
        !in.bytes_type) {
        logger().info("CPython {:#x}: its layout or symbols are not as expected; no Python "
                      "frames",
                      in.version);
        return in;
    }
    in.layout = *layout;
    in.this_thread_state = reinterpret_cast<void* (*)()>(this_thread);
    in.main_interpreter = main_interpreter;
    evalRange(eval, in);
    in.status = format::PythonStatus::Pending;
    return in;
}

Check checkThread(const Interpreter& in, uintptr_t tstate) {
    const Layout& l = in.layout;
    uintptr_t interp = 0;
    if (!read(tstate + l.tstate_interp, interp) || interp == 0 ||
        interp != reinterpret_cast<uintptr_t>(in.main_interpreter())) {
        return Check::Failed;
    }
    uintptr_t frame = 0;
    if (l.tstate_cframe != kNoField) {
        uintptr_t cframe = 0;
        if (!read(tstate + l.tstate_cframe, cframe) ||
            (cframe && !read(cframe + l.cframe_current_frame, frame))) {
            return Check::Failed;
        }
    } else if (!read(tstate + l.tstate_frame, frame)) {
        return Check::Failed;
    }
    uint32_t verified = 0;
    for (int walked = 0; frame != 0 && walked < 256; ++walked) {
        uint8_t owner = 0;
        if (l.frame_owner != kNoField && !read(frame + l.frame_owner, owner)) {
            return Check::Failed;
        }
        uintptr_t code = 0, next = 0, code_type = 0;
        if (!read(frame + l.frame_previous, next) || !read(frame + l.frame_code, code)) {
            return Check::Failed;
        }
        if (owner != kOwnedByCStack) {
            if (code != 0 && !read(code + l.object_type, code_type)) {
                return Check::Failed;
            }
            if (code_type != in.code_type) {
                // 3.13 frames hold an "executable" that only code objects run; anything
                // else in an earlier version means the layout is wrong.
                if ((l.version >> 16) < 0x030d) {
                    return Check::Failed;
                }
                frame = next;
                continue;
            }
            uintptr_t filename = 0, name = 0, table = 0, type = 0;
            if (!read(code + l.code_filename, filename) || !read(code + l.code_name, name) ||
                !read(code + l.code_line_table, table) || !read(filename + l.object_type, type) ||
                type != in.str_type || !read(name + l.object_type, type) || type != in.str_type ||
                !read(table + l.object_type, type) || type != in.bytes_type) {
                return Check::Failed;
            }
            // The instruction lies inside the code.
            int64_t units = 0, index = 0;
            if (l.instruction == Instruction::PointerToUnit) {
                uintptr_t at = 0;
                if (!read(code + l.code_size, units) || !read(frame + l.frame_instruction, at)) {
                    return Check::Failed;
                }
                index = (static_cast<int64_t>(at) - static_cast<int64_t>(code + l.code_units)) / 2;
            } else {
                uintptr_t bytecode = 0;
                int32_t lasti = 0;
                if (!read(code + l.code_bytecode, bytecode) ||
                    !read(bytecode + l.object_type, type) || type != in.bytes_type ||
                    !read(bytecode + l.bytes_size, units) ||
                    !read(frame + l.frame_instruction, lasti)) {
                    return Check::Failed;
                }
                units /= 2;
                index = lasti;
            }
            if (index < -1 || index >= units) {
                return Check::Failed;
            }
            ++verified;
        }
        frame = next;
    }
    return verified > 0 ? Check::Passed : Check::NothingToCheck;
}

} // namespace gmt::preload::python
