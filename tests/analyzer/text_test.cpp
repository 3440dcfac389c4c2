// The pieces every text output shares: frames, stacks, durations, escaping, fitting a
// line to a width.
#include "base/human_time.h"
#include "base/text_safety.h"
#include "report/own_code.h"
#include "report/report_json.h"
#include "views/frame_text.h"
#include "views/styled_text.h"

#include <catch2/catch.hpp>

using namespace gmt;
using analyzer::Frame;
using analyzer::FrameLanguage;
using analyzer::Stack;

namespace {

Frame native(const std::string& function, const std::string& module, const std::string& file = "",
             int line = 0) {
    Frame f;
    f.address = 0x401234;
    f.offset = 0x1234;
    f.module = module;
    f.function = function;
    f.file = file;
    f.line = line;
    return f;
}

Frame python(const std::string& function, const std::string& file, int line) {
    Frame f;
    f.language = FrameLanguage::Python;
    f.function = function;
    f.file = file;
    f.line = line;
    return f;
}

std::vector<std::string> lines(const Stack& stack, analyzer::StackStyle style = {}) {
    std::vector<std::string> out;
    for (const auto& t : analyzer::stackText(stack, style)) {
        out.push_back(t.str());
    }
    return out;
}

} // namespace

TEST_CASE("frames: function at file:line, module+offset without symbols, Python frames") {
    CHECK(analyzer::frameText(native("f(int)", "/app/bin/app", "/src/app/f.cpp", 12)).str() ==
          "f(int) at f.cpp:12");
    CHECK(analyzer::frameText(native("", "/usr/lib/libfoo.so.1")).str() == "libfoo.so.1+0x1234");
    Frame inlined = native("g()", "/app/bin/app", "/src/g.h", 3);
    inlined.inlined = true;
    CHECK(analyzer::frameText(inlined).str() == "g() at g.h:3 (inlined)");
    CHECK(analyzer::frameText(python("load_model", "/srv/app/model.py", 41)).str() ==
          "load_model at /srv/app/model.py:41");
}

TEST_CASE("stacks hide the recorder, the CUDA libraries and headers, and libc start-up") {
    Stack stack{
        native("gmt::record", "/opt/lib/libgpumemtrace.so"),
        native("cudaMalloc", "/usr/local/cuda/lib64/libcudart.so.13"),
        native("cudaMalloc<float>", "/app/bin/app", "/usr/local/cuda/include/cuda_runtime.h", 164),
        native("make_buffer()", "/app/bin/app", "/src/app/buf.cpp", 7),
        native("main", "/app/bin/app", "/src/app/main.cpp", 3),
        native("__libc_start_call_main", "/lib/x86_64-linux-gnu/libc.so.6"),
        native("__libc_start_main", "/lib/x86_64-linux-gnu/libc.so.6"),
        native("_start", "/app/bin/app")};
    CHECK(lines(stack) ==
          std::vector<std::string>{"make_buffer() at buf.cpp:7", "main at main.cpp:3"});
    analyzer::StackStyle full;
    full.full = true;
    CHECK(lines(stack, full).size() == stack.size());
    analyzer::StackStyle one;
    one.max_frames = 1;
    CHECK(lines(stack, one) ==
          std::vector<std::string>{"make_buffer() at buf.cpp:7", "... 1 more frame"});
    CHECK(analyzer::siteLabel(stack) == "make_buffer() at buf.cpp:7");
    // Only hidden frames: shown whole rather than as nothing.
    Stack cuda_only{native("cudaMalloc", "/usr/lib/libcudart.so.13")};
    CHECK(lines(cuda_only) == std::vector<std::string>{"cudaMalloc"});
    CHECK(lines({}) == std::vector<std::string>{"(no stack recorded)"});
    // A Python frame is never hidden and counts in a site's identity with its file.
    Stack mixed{python("forward", "/srv/net.py", 9), stack[3]};
    CHECK(analyzer::siteKey(mixed) !=
          analyzer::siteKey({python("forward", "/srv/other.py", 9), stack[3]}));
}

// A PyTorch-like stack, innermost first: the runtime's frames (the recorder hooked the
// driver under it), the allocator that called it, the binding, the Python frames where the
// evaluation frames ran them, the interpreter's start-up.
Stack pythonStack() {
    return {native("", "/usr/local/cuda/lib64/libcudart.so.13"),
            native("cudaMalloc", "/usr/local/cuda/lib64/libcudart.so.13"),
            native("c10::cuda::Allocator::malloc(unsigned long)", "/torch/lib/libc10_cuda.so",
                   "/src/c10/alloc.cpp", 120),
            native("at::empty_cuda(...)", "/torch/lib/libtorch_cuda.so", "/src/empty.cpp", 40),
            native("THPVariable_ones", "/torch/lib/libtorch_python.so"),
            native("_PyObject_MakeTpCall", "/usr/bin/python3.12"),
            python("Model.forward", "/srv/model.py", 41),
            python("train_step", "/srv/train.py", 12),
            native("_PyObject_Call", "/usr/bin/python3.12"),
            python("main", "/srv/train.py", 30),
            native("Py_RunMain", "/usr/bin/python3.12"),
            native("main", "/usr/bin/python3.12"),
            native("__libc_start_main", "/lib/x86_64-linux-gnu/libc.so.6")};
}

TEST_CASE("Python frames are always shown, native frames left out between them counted") {
    const Stack stack = pythonStack();
    analyzer::StackStyle two;
    two.max_frames = 2;
    CHECK(lines(stack, two) ==
          std::vector<std::string>{"c10::cuda::Allocator::malloc(unsigned long) at alloc.cpp:120",
                                   "at::empty_cuda(...) at empty.cpp:40", "... 2 native frames",
                                   "Model.forward at /srv/model.py:41",
                                   "train_step at /srv/train.py:12", "... 1 native frame",
                                   "main at /srv/train.py:30", "... 2 more frames"});
    // Enough room: every frame but the hidden ones, no count lines.
    CHECK(lines(stack).size() == 10);
    CHECK(analyzer::siteLabel(stack) ==
          "Model.forward at /srv/model.py:41 via c10::cuda::Allocator::malloc(unsigned long) at "
          "alloc.cpp:120");
}

TEST_CASE("python-only stacks: the CUDA call, its caller, and the Python frames") {
    analyzer::StackStyle only;
    only.python_only = true;
    const Stack stack = pythonStack();
    CHECK(lines(stack, only) ==
          std::vector<std::string>{"cudaMalloc",
                                   "c10::cuda::Allocator::malloc(unsigned long) at alloc.cpp:120",
                                   "... 3 native frames", "Model.forward at /srv/model.py:41",
                                   "train_step at /srv/train.py:12", "... 1 native frame",
                                   "main at /srv/train.py:30", "... 2 more frames"});
    // The recorder hooked the function the program called: the stack starts at the caller.
    const Stack called(std::vector<Frame>(stack.begin() + 2, stack.end()));
    CHECK(lines(called, only).front() ==
          "c10::cuda::Allocator::malloc(unsigned long) at alloc.cpp:120");
    CHECK(lines(called, only)[1] == "... 3 native frames");
    // --frames does not limit the Python frames.
    analyzer::StackStyle one = only;
    one.max_frames = 1;
    CHECK(lines(stack, one) == lines(stack, only));
    // A stack without Python frames (an XLA thread): the call and its caller.
    const Stack native_only{stack[0], stack[1], stack[2], stack[3], stack[12]};
    CHECK(lines(native_only, only) ==
          std::vector<std::string>{"cudaMalloc",
                                   "c10::cuda::Allocator::malloc(unsigned long) at alloc.cpp:120",
                                   "... 1 more frame"});
}

TEST_CASE("a Python frame in JSON: language python, no address, no module, no offset") {
    analyzer::Report r;
    r.kinds.push_back({format::Kind::Device, 0, 0, 0, 0});
    for (auto k : {format::Kind::Pool, format::Kind::Managed, format::Kind::HostPinned,
                   format::Kind::Array, format::Kind::Vmm}) {
        r.kinds.push_back({k, 0, 0, 0, 0});
    }
    analyzer::LeakSite leak;
    leak.bytes = 10;
    leak.allocations = 1;
    leak.api = "cudaMalloc";
    leak.stack = {native("make_buffer()", "/app/bin/app", "/src/buf.cpp", 7),
                  python("load_model", "/srv/app/model.py", 41)};
    r.leaks.push_back(leak);
    const auto j = analyzer::toJson(r);
    const auto& py = j["leaks"][0]["stack"][1];
    CHECK(py["language"] == "python");
    CHECK(py["address"] == "");
    CHECK(py["module"] == "");
    CHECK_FALSE(py.contains("offset"));
    CHECK(j["leaks"][0]["stack"][0]["language"] == "native");
    CHECK(j["leaks"][0]["stack"][0]["offset"] == "0x1234");
    const auto back = analyzer::fromJson(j);
    REQUIRE(back.leaks[0].stack.size() == 2);
    CHECK(back.leaks[0].stack[1].language == FrameLanguage::Python);
    CHECK(back.leaks[0].stack[1].function == "load_model");
    CHECK(back.leaks[0].stack[1].line == 41);
    CHECK(analyzer::toJson(back) == j);
}

TEST_CASE("durations in the unit that reads best") {
    CHECK(analyzer::humanDuration(850) == "850 ns");
    CHECK(analyzer::humanDuration(12'500) == "12.5 \u00b5s");
    CHECK(analyzer::humanDuration(1'250'000) == "1.25 ms");
    CHECK(analyzer::humanDuration(431'000'000) == "431 ms");
    CHECK(analyzer::humanDuration(3'400'000'000) == "3.40 s");
    CHECK(analyzer::humanDuration(150'000'000'000) == "2.50 min");
    CHECK(analyzer::relativeTime(1500, 1000) == "+500 ns");
    CHECK(analyzer::relativeTime(1000, 3000) == "-2.00 \u00b5s");
}

TEST_CASE("text safety: escapes for a terminal, U+FFFD for JSON and XML") {
    CHECK(analyzer::printable("caf\xe9 \x1b[31mred\x07") == "caf\\xe9 \\x1b[31mred\\x07");
    CHECK(analyzer::printable("caf\xc3\xa9 \xe2\x80\xa6") == "caf\xc3\xa9 \xe2\x80\xa6");
    CHECK(analyzer::printable("\xc2\x9b"
                              "1m") == "\\xc2\\x9b1m"); // C1 CSI
    CHECK(analyzer::validUtf8("caf\xe9!") == "caf\xef\xbf\xbd!");
    CHECK(analyzer::validUtf8("ok \xc3\xa9") == "ok \xc3\xa9");
    CHECK(analyzer::columns("caf\xc3\xa9") == 4);
    CHECK(analyzer::fitColumns("abcdefgh", 5) == "abcd\u2026");
    CHECK(analyzer::fitColumns("abc", 5) == "abc");
}

TEST_CASE("styled lines: colour when asked, frames shortened, other lines wrapped") {
    analyzer::TextStyle plain;
    analyzer::StyledText a(plain);
    a.line({{"FAIL", analyzer::Tone::Bad}, {" leaks", analyzer::Tone::Plain}});
    CHECK(a.str() == "FAIL leaks\n");
    analyzer::TextStyle colour;
    colour.colour = true;
    analyzer::StyledText b(colour);
    b.line({{"FAIL", analyzer::Tone::Bad}, {" leaks", analyzer::Tone::Plain}});
    CHECK(b.str() == "\033[1;31mFAIL\033[0m leaks\n");

    analyzer::TextStyle narrow;
    narrow.width = 32;
    analyzer::StyledText c(narrow);
    c.stack(
        {native("cache_activations(std::vector<void*>&, unsigned long)", "/a", "/s/train.cpp", 7)},
        "    ");
    CHECK(c.str() == "    cache_activa\u2026 at train.cpp:7\n");
    analyzer::StyledText d(narrow);
    d.line("  device 0 NVIDIA H200: peak 112.00 MiB of 80.00 GiB");
    CHECK(d.str() == "  device 0 NVIDIA H200: peak\n      112.00 MiB of 80.00 GiB\n");
    // Escaping happens in every line, whatever the view passed.
    analyzer::StyledText e(plain);
    e.line("cmd \x1b]0;x\x07");
    CHECK(e.str() == "cmd \\x1b]0;x\\x07\n");
}

namespace {

Stack marked(const Stack& stack, const analyzer::OwnCode& own) {
    std::vector<Frame> frames = stack.frames();
    for (Frame& f : frames) {
        f.own = own.own(f);
    }
    return frames;
}

} // namespace

TEST_CASE("own code: Python outside the standard library and packages, native under the "
          "program's directory, or under the roots given") {
    const analyzer::OwnCode python_defaults({}, "/usr/bin/python3.12");
    CHECK(python_defaults.own(python("step", "/srv/train.py", 16)));
    CHECK(python_defaults.own(python("<module>", "<string>", 1))); // python -c
    CHECK_FALSE(python_defaults.own(
        python("forward", "/venv/lib/python3.12/site-packages/torch/nn/modules/linear.py", 134)));
    CHECK_FALSE(python_defaults.own(python("f", "/usr/lib/python3/dist-packages/numpy/x.py", 3)));
    CHECK_FALSE(python_defaults.own(python("run", "/usr/lib/python3.12/threading.py", 1010)));
    CHECK_FALSE(python_defaults.own(python("_load", "<frozen importlib._bootstrap>", 2)));
    // The interpreter's own frames are never the user's, though the program is in /usr/bin.
    CHECK_FALSE(python_defaults.own(native("_PyObject_Call", "/usr/bin/python3.12")));

    const analyzer::OwnCode native_defaults({}, "/home/u/app/build/app");
    CHECK(native_defaults.own(native("make_buffer()", "/home/u/app/build/app")));
    CHECK(native_defaults.own(native("helper()", "/home/u/app/build/libhelper.so")));
    CHECK_FALSE(native_defaults.own(native("cublasCreate_v2", "/usr/lib/libcublas.so.13")));
    // Recorder and CUDA frames are never own, wherever they lie.
    CHECK_FALSE(native_defaults.own(native("hook", "/home/u/app/build/libgpumemtrace.so")));
    CHECK_FALSE(native_defaults.own(native("cudaMalloc", "/home/u/app/build/libcudart.so.13")));

    // Roots given: exactly the frames under them, as directories.
    const analyzer::OwnCode roots({.roots = {"/srv/app/"}, .extra_roots = {}},
                                  "/home/u/app/build/app");
    CHECK(roots.own(python("step", "/srv/app/train.py", 16)));
    CHECK_FALSE(roots.own(python("step", "/srv/apple.py", 16)));
    CHECK_FALSE(roots.own(native("make_buffer()", "/home/u/app/build/app")));
    CHECK(roots.own(native("inl()", "/usr/lib/libx.so", "/srv/app/src/inl.h", 3)));
    // --source-root adds to the defaults.
    const analyzer::OwnCode extra({.roots = {}, .extra_roots = {"/src"}}, "/opt/bin/app");
    CHECK(extra.own(native("f()", "/opt/lib/libf.so", "/src/f.cpp", 9)));
    CHECK(extra.own(native("main", "/opt/bin/app")));
}

TEST_CASE("own code first: the user's line, how it reached CUDA, its own callers") {
    std::vector<Frame> frames = pythonStack().frames();
    frames[6] = python("Linear.forward",
                       "/venv/lib/python3.12/site-packages/torch/nn/modules/linear.py", 134);
    Stack stack = marked(frames, analyzer::OwnCode({}, "/usr/bin/python3.12"));
    CHECK(lines(stack) ==
          std::vector<std::string>{"train_step at /srv/train.py:12",
                                   "  via torch.nn.modules.linear.Linear.forward \u2192 "
                                   "Allocator::malloc",
                                   "... 1 library frame", "main at /srv/train.py:30",
                                   "... 2 more frames"});
    CHECK(analyzer::siteLabel(stack) == "train_step at /srv/train.py:12");
    CHECK(analyzer::sourceFrame(stack)->line == 12);
    std::vector<std::string> user;
    for (const Frame* f : analyzer::userFrames(stack, false)) {
        user.push_back(f->function);
    }
    CHECK(user == std::vector<std::string>{"train_step", "main"});
    // --frames limits the own callers; --full-stacks and --python-only show as before.
    analyzer::StackStyle none;
    none.max_frames = 0; // Python frames are shown all the same
    CHECK(lines(stack, none) == lines(stack));
    analyzer::StackStyle full;
    full.full = true;
    full.max_frames = SIZE_MAX;
    CHECK(lines(stack, full).size() == stack.size());
    CHECK(analyzer::userFrames(stack, true).size() == stack.size());

    // A native program calling CUDA through a library: the program's frame, via the
    // library's; without symbols the library is named by its module.
    const analyzer::OwnCode app({}, "/home/u/app/build/app");
    Stack lib = marked({native("cudaMalloc", "/usr/local/cuda/lib64/libcudart.so.13"),
                        native("", "/usr/lib/x86_64-linux-gnu/libffi.so.8"),
                        native("make_buffer()", "/home/u/app/build/app", "/home/u/app/buf.cpp", 7),
                        native("main", "/home/u/app/build/app", "/home/u/app/main.cpp", 3)},
                       app);
    CHECK(lines(lib) == std::vector<std::string>{"make_buffer() at buf.cpp:7", "  via libffi.so.8",
                                                 "main at main.cpp:3"});
    // The program made the call itself: no via line.
    Stack direct(std::vector<Frame>(lib.begin() + 2, lib.end()));
    CHECK(analyzer::viaText(direct).empty());
    none.max_frames = 0;
    CHECK(lines(direct, none) ==
          std::vector<std::string>{"make_buffer() at buf.cpp:7", "... 1 more frame"});
    CHECK(lines(direct) ==
          std::vector<std::string>{"make_buffer() at buf.cpp:7", "main at main.cpp:3"});
}
