// `gpumemtrace control PID|TRACE pause|resume|status`: pauses or resumes the recording of a
// running process through its trace's control word (docs/trace-format.md, Prologue;
// docs/live.md). The trace file is mapped shared, as the recorder maps it, and the word
// stored into: no signal, nothing the program could notice. The recorder sees it at its
// next intercepted call and writes a Pause or Resume record there.
#include "cli/commands.h"

#include "base/text_safety.h"
#include "cli/live_traces.h"
#include "cli/report_input.h"

#include <atomic>
#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <iostream>
#include <memory>
#include <sys/mman.h>
#include <unistd.h>

#include <gpumemtrace/format/file_layout.h>

namespace gmt::cli {

namespace {

struct ControlArgs {
    std::string target;
    std::string action;
};

const char* controlName(uint32_t control) {
    switch (control) {
    case format::kControlRecording:
        return "recording";
    case format::kControlPaused:
        return "paused";
    case format::kControlResumeRequested:
        return "resume requested (the recorder resumes at the process's next CUDA call)";
    default:
        return "paused (unknown control value)";
    }
}

// The word the action leaves, from the word now: a resume of a recording trace changes
// nothing, and a pause is always a plain pause.
uint32_t nextControl(const std::string& action, uint32_t now) {
    if (action == "pause") {
        return format::kControlPaused;
    }
    if (action == "resume") {
        return now == format::kControlRecording ? now : format::kControlResumeRequested;
    }
    return now;
}

int runControl(const ControlArgs& args) {
    const std::string path = isPidInput(args.target) ? traceOfProcess(args.target) : args.target;
    const int fd = ::open(path.c_str(), (args.action == "status" ? O_RDONLY : O_RDWR) | O_CLOEXEC);
    if (fd < 0) {
        throw InputError(path + ": cannot open: " + std::strerror(errno));
    }
    struct Closer {
        int fd;
        ~Closer() { ::close(fd); }
    } closer{fd};
    format::Prologue prologue{};
    if (::pread(fd, &prologue, sizeof prologue, 0) != static_cast<ssize_t>(sizeof prologue) ||
        std::memcmp(prologue.magic, format::kMagic, sizeof format::kMagic) != 0 ||
        format::prologueChecksum(prologue) != prologue.checksum) {
        throw InputError(path + ": not a gpumemtrace trace");
    }
    if (prologue.format_version != format::kFormatVersion ||
        prologue.prologue_size < sizeof(format::Prologue)) {
        throw InputError(path + ": written by a recorder without a control word (an older "
                                "gpumemtrace): it cannot be paused");
    }
    const int prot = args.action == "status" ? PROT_READ : PROT_READ | PROT_WRITE;
    void* map = ::mmap(nullptr, format::kPrologueSize, prot, MAP_SHARED, fd, 0);
    if (map == MAP_FAILED) {
        throw InputError(path + ": cannot map: " + std::strerror(errno));
    }
    auto* mapped = static_cast<format::Prologue*>(map);
    std::atomic_ref<uint32_t> word(mapped->control);
    uint32_t now = word.load(std::memory_order_relaxed);
    // The recorder may store into it meanwhile (taking a resume): retried from what it left.
    while (args.action != "status" &&
           !word.compare_exchange_weak(now, nextControl(args.action, now),
                                       std::memory_order_relaxed)) {
    }
    const uint32_t after = nextControl(args.action, now);
    ::munmap(map, format::kPrologueSize);
    std::cout << analyzer::printable(path) << ": " << controlName(after) << '\n';
    return kExitOk;
}

} // namespace

void addControlCommand(CLI::App& app, int& exit_code) {
    auto* cmd = app.add_subcommand(
        "control", "Pause or resume the recording of a running process (or show which)");
    auto args = std::make_shared<ControlArgs>();
    cmd->add_option("target", args->target, "A traced process's id, or its trace file")
        ->type_name("PID|TRACE")
        ->required();
    cmd->add_option("action", args->action,
                    "pause: calls pass through unrecorded from the next one on; resume: "
                    "recorded again; status: which it is")
        ->check(CLI::IsMember({"pause", "resume", "status"}))
        ->required();
    cmd->footer("The recorder reads the trace's control word at every CUDA call it intercepts "
                "(docs/live.md). Start paused with GPUMEMTRACE_START=paused.\n\n"
                "Example:\n"
                "  GPUMEMTRACE_START=paused gpumemtrace record -- ./server &\n"
                "  gpumemtrace control $(pgrep server) resume\n"
                "  gpumemtrace control $(pgrep server) pause");
    cmd->callback([args, &exit_code] {
        try {
            exit_code = runControl(*args);
        } catch (const InputError& e) {
            std::cerr << "gpumemtrace control: " << analyzer::printable(e.what()) << '\n';
            exit_code = kExitBadInput;
        }
    });
}

} // namespace gmt::cli
