// One source-level frame, the unit every stack in a report is made of. Here, below both the
// symbolizer that makes frames and the views that print them, so that neither needs the other.
#pragma once

#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace gmt::analyzer {

// Where a frame's code lives: machine code, or a Python function (the recorder may record
// the interpreter's stack beside the native one).
enum class FrameLanguage : uint8_t { Native, Python };

// An address inside inlined code yields several native frames, the innermost first; all but
// the last (the real, outermost function) have inlined = true. A Python frame has function,
// file and line; its address, module and offset are empty.
struct Frame {
    FrameLanguage language = FrameLanguage::Native;
    uint64_t address = 0;           // the recorded address (return address - 1), absolute
    std::optional<uint64_t> offset; // address - the module's load bias, when a module covers it
    std::string module;             // path of the ELF object, empty when no module covers it
    std::string function;           // demangled; empty when unknown
    std::string file;               // source file; empty when unknown
    int line = 0;                   // 0 when unknown
    bool inlined = false;
    // The user's own code (report/own_code.h): views lead a stack with its innermost own
    // frame and fold the library frames around it.
    bool own = false;
};

// A stack's frames, innermost first. Copies share one frame list: a report names a stack in
// several places (its leak, peak, growth and detail lists, a verdict's findings), and at
// hundreds of thousands of sites a copy per place was most of a large report's memory. A
// stack never changes once made (views only read it), so sharing it needs no care; a
// changed stack is a new Stack.
class Stack {
  public:
    Stack() = default;
    Stack(std::vector<Frame> frames) // NOLINT: a frame list is a stack
        : frames_(frames.empty() ? nullptr
                                 : std::make_shared<const std::vector<Frame>>(std::move(frames))) {}
    Stack(std::initializer_list<Frame> frames) : Stack(std::vector<Frame>(frames)) {}

    // A handle that does not keep the frames alive, for a cache of stacks that must not
    // hold every stack it ever made (report/stack_symbolizer.h); a Stack made from it is
    // empty once every Stack sharing those frames is gone.
    using Weak = std::weak_ptr<const std::vector<Frame>>;
    Weak weak() const { return frames_; }
    explicit Stack(const Weak& weak) : frames_(weak.lock()) {}

    const std::vector<Frame>& frames() const { return frames_ ? *frames_ : kNoFrames; }
    std::vector<Frame>::const_iterator begin() const { return frames().begin(); }
    std::vector<Frame>::const_iterator end() const { return frames().end(); }
    const Frame* data() const { return frames().data(); }
    size_t size() const { return frames().size(); }
    bool empty() const { return frames().empty(); }
    const Frame& operator[](size_t i) const { return frames()[i]; }
    const Frame& front() const { return frames().front(); }
    const Frame& back() const { return frames().back(); }

  private:
    static inline const std::vector<Frame> kNoFrames;
    std::shared_ptr<const std::vector<Frame>> frames_;
};

} // namespace gmt::analyzer
