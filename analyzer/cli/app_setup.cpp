// What every subcommand shares: --version, one-line usage errors, an example in each
// --help, help wrapped to the terminal. Applied after all commands are registered so it
// covers them all.
#include "cli/commands.h"

#include "base/text_safety.h"
#include "cli/help_formatter.h"
#include "cli/terminal_style.h"

#include <new>
#include <unistd.h>

#ifndef GMT_VERSION
#define GMT_VERSION "0.1.0"
#endif

namespace gmt::cli {

namespace {

// Fallback examples for commands whose help has no footer of its own.
const char* defaultExample(const std::string& name) {
    if (name == "report") {
        return "Example:\n  gpumemtrace report gpumemtrace.1234.gmtrace\n"
               "  gpumemtrace report app.*.gmtrace --format json -o report.json";
    }
    if (name == "dump") {
        return "Example:\n  gpumemtrace dump gpumemtrace.1234.gmtrace | head";
    }
    return nullptr;
}

} // namespace

void finishApp(CLI::App& app) {
    app.name("gpumemtrace");
    app.set_version_flag("--version", std::string("gpumemtrace ") + GMT_VERSION);
    app.footer("Exit status: 0 ok, 1 the command's check failed, 2 bad input or usage.\n"
               "Run `gpumemtrace COMMAND --help` for a command's options.\n\n"
               "Example:\n"
               "  gpumemtrace record -- ./my_app\n"
               "  gpumemtrace report gpumemtrace.*.gmtrace\n"
               "  gpumemtrace check gpumemtrace.*.gmtrace --max-leaked-bytes 0\n");
    // CLI11's default adds a second "Run with --help" line; one line is easier to grep
    // in a CI log. The message echoes what was given: a value holding a newline or an
    // escape sequence is shown as \x0a, never acted on.
    app.failure_message([](const CLI::App* top, const CLI::Error& e) {
        std::string where = "gpumemtrace";
        for (const CLI::App* sub : top->get_subcommands()) {
            where += " " + sub->get_name();
        }
        return "gpumemtrace: " + analyzer::printable(e.what()) + " (see `" + where + " --help`)\n";
    });
    useWrappingFormatter(app, terminalStyle(STDOUT_FILENO).width);
    for (CLI::App* sub : app.get_subcommands({})) {
        if (sub->get_footer().empty()) {
            if (const char* example = defaultExample(sub->get_name())) {
                sub->footer(example);
            }
        }
        // CLI11 prints the footer without a final newline; the shell prompt would follow it.
        std::string footer = sub->get_footer();
        if (!footer.empty() && footer.back() != '\n') {
            sub->footer(footer + "\n");
        }
    }
}

std::string describeException(std::exception_ptr error) {
    std::string text;
    try {
        std::rethrow_exception(error);
    } catch (const std::bad_alloc&) {
        text = "out of memory";
    } catch (const std::exception& e) {
        text = e.what();
    } catch (...) {
        text = "unexpected error";
    }
    // One line: a message that spans several would break a CI log's one-line-per-error
    // (a library's message may; what it quotes from a trace or an option may hold any
    // control character).
    for (char& c : text) {
        if (c == '\n' || c == '\r') {
            c = ' ';
        }
    }
    return analyzer::printable(text);
}

} // namespace gmt::cli
