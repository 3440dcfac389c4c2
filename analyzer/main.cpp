// gpumemtrace: the analyzer's command line. Subcommands live in cli/, one file each.
#include "base/output_file.h"
#include "cli/command_suggestion.h"
#include "cli/commands.h"

#include <exception>
#include <iostream>
#include <new>
#include <string>

namespace {

int run(int argc, char** argv) {
    CLI::App app{"gpumemtrace: find GPU memory leaks, explain peaks and fragmentation"};
    app.require_subcommand(1);
    int exit_code = gmt::cli::kExitOk;
    gmt::cli::addDumpCommand(app, exit_code);
    gmt::cli::addReportCommand(app, exit_code);
    gmt::cli::addRecordCommand(app, exit_code);
    gmt::cli::addCheckCommand(app, exit_code);
    gmt::cli::addDiffCommand(app, exit_code);
    gmt::cli::addExportCommand(app, exit_code);
    gmt::cli::addWhatIfCommand(app, exit_code);
    gmt::cli::addTopCommand(app, exit_code);
    gmt::cli::addSnapshotCommand(app, exit_code);
    gmt::cli::addControlCommand(app, exit_code);
    gmt::cli::finishApp(app);
    if (argc < 2) {
        // No command is a usage error (exit 2), but the help is what the user needs.
        std::cout << app.help();
        return gmt::cli::kExitBadInput;
    }
    if (const auto error = gmt::cli::unknownCommandError(app, argc, argv)) {
        std::cerr << *error << '\n';
        return gmt::cli::kExitBadInput;
    }
    try {
        app.parse(argc, argv);
    } catch (const CLI::CallForHelp& e) {
        return app.exit(e);
    } catch (const CLI::CallForAllHelp& e) {
        return app.exit(e);
    } catch (const CLI::CallForVersion& e) {
        return app.exit(e);
    } catch (const CLI::ParseError& e) {
        app.exit(e);
        return gmt::cli::kExitBadInput;
    } catch (...) {
        // Whatever a command did not handle itself (a failed write, memory exhausted, a
        // library's exception on odd input) still ends as one line and status 2, never
        // as std::terminate's abort.
        std::string where = "gpumemtrace";
        for (const CLI::App* sub : app.get_subcommands()) {
            where += " " + sub->get_name();
        }
        std::cerr << where << ": " << gmt::cli::describeException(std::current_exception()) << '\n';
        return gmt::cli::kExitBadInput;
    }
    return exit_code;
}

} // namespace

int main(int argc, char** argv) {
    const int status = run(argc, argv);
    // Whatever reached standard output (help, the version, a command's output) must have
    // arrived: `--help > /dev/full` is a failure, not exit 0. A run that already failed
    // with bad input said so in its one line.
    if (status != gmt::cli::kExitBadInput) {
        try {
            gmt::analyzer::finishStdout();
        } catch (const gmt::analyzer::OutputError& e) {
            std::cerr << "gpumemtrace: " << e.what() << '\n';
            return gmt::cli::kExitBadInput;
        }
    }
    return status;
}
