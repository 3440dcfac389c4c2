// The subcommands of `gpumemtrace`, one file each. Each registers itself on the app and
// stores its exit status in `exit_code` when it runs.
//
// Exit statuses shared by every command: 0 ok, 1 the command's own "not ok" (e.g. an
// incomplete trace for dump), 2 bad input or usage (one line on stderr naming the file
// and offset).
#pragma once

#include <CLI/CLI.hpp>

#include <exception>
#include <string>

namespace gmt::cli {

inline constexpr int kExitOk = 0;
inline constexpr int kExitNotOk = 1;
inline constexpr int kExitBadInput = 2;

void addDumpCommand(CLI::App& app, int& exit_code);
void addReportCommand(CLI::App& app, int& exit_code);
void addRecordCommand(CLI::App& app, int& exit_code);
void addCheckCommand(CLI::App& app, int& exit_code);
void addDiffCommand(CLI::App& app, int& exit_code);
void addExportCommand(CLI::App& app, int& exit_code);
void addWhatIfCommand(CLI::App& app, int& exit_code);
void addTopCommand(CLI::App& app, int& exit_code);
void addSnapshotCommand(CLI::App& app, int& exit_code);
void addControlCommand(CLI::App& app, int& exit_code);

// After every command is added: --version, one-line parse errors, examples in --help.
void finishApp(CLI::App& app);

// One line describing an exception that reached main ("out of memory" for bad_alloc).
std::string describeException(std::exception_ptr error);

} // namespace gmt::cli
