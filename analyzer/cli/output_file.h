// Writing what a command produces, with one rule for a failed write: a report that did
// not reach its destination (a full disk, /dev/full, a closed pipe's error) must not end
// with exit status 0. Each failure is an OutputError naming the destination and the
// reason; the commands let it reach main, which prints it as one line (exit status 2).
#pragma once

#include <iosfwd>
#include <stdexcept>
#include <string>
#include <string_view>

namespace gmt::cli {

class OutputError : public std::runtime_error {
  public:
    using std::runtime_error::runtime_error;
};

// Throws OutputError when a write to standard output has failed (cheap: for a command
// that streams, after each piece, so the reason is still known).
void checkStdout();
// Flushes `stream`; throws OutputError ("cannot write NAME: reason") when any write to it
// failed.
void finishStream(std::ostream& stream, const std::string& name);
// finishStream(std::cout, "standard output").
void finishStdout();
// Writes `text` to standard output, after what std::cout holds; throws OutputError.
void writeStdout(std::string_view text);

// Creates or truncates `path` and writes `text` to it; throws OutputError on failure.
void writeOutputFile(const std::string& path, std::string_view text);

} // namespace gmt::cli
