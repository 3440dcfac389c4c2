// Where every command writes what it produces: a file, standard output ("-"), or an unnamed
// scratch file read back once (memory-viz keeps each GPU's events apart while the trace
// streams, then joins them in device order). One rule for a failed write: output that did
// not reach its destination (a full disk, /dev/full, a closed pipe's error) must not end
// with exit status 0 or look whole. Every failure to open or write is an OutputError naming
// the destination and the reason; the commands let it reach main, which prints it as one
// line (exit status 2).
#pragma once

#include <cstdint>
#include <cstring>
#include <iosfwd>
#include <memory>
#include <stdexcept>
#include <string>
#include <string_view>

namespace gmt::analyzer {

class OutputError : public std::runtime_error {
  public:
    using std::runtime_error::runtime_error;
};

// Buffered; a file is written in place (created 0600, or truncated keeping its mode, when
// opened), so a device such as /dev/full or a FIFO that a process reads works as a
// destination. Refused at once, never waited on: a FIFO no process reads, a block
// device, an empty name (docs/configuration.md, "Files in and out").
class OutputFile {
  public:
    // "-" is standard output (after what std::cout holds). A file is created or truncated.
    explicit OutputFile(const std::string& path);
    // An unnamed scratch file in `directory`, gone when closed.
    static OutputFile scratch(const std::string& directory);
    OutputFile(OutputFile&& other) noexcept;
    OutputFile& operator=(OutputFile&&) = delete;
    ~OutputFile();

    // Inline and branch-light: a snapshot or a JSON event is written a few bytes at a time.
    void write(std::string_view bytes) {
        if (used_ + bytes.size() > kBufferSize) [[unlikely]] {
            flushBuffer();
            if (bytes.size() >= kBufferSize) {
                writeAll(bytes);
                return;
            }
        }
        std::memcpy(buffer_.get() + used_, bytes.data(), bytes.size());
        used_ += bytes.size();
    }
    void put(char c) {
        if (used_ == kBufferSize) [[unlikely]] {
            flushBuffer();
        }
        buffer_[used_++] = c;
    }
    // Everything written reaches the file; throws when it cannot.
    void close();
    // Appends a scratch file's whole content (and closes it).
    void append(OutputFile& scratch);
    uint64_t bytesWritten() const { return written_ + used_; }
    const std::string& name() const { return name_; }

  private:
    OutputFile() = default;
    static constexpr size_t kBufferSize = 1 << 20;
    void flushBuffer();
    void writeAll(std::string_view bytes);

    int fd_ = -1;
    bool owned_ = false;
    std::string name_;
    std::unique_ptr<char[]> buffer_ = std::make_unique<char[]>(kBufferSize);
    size_t used_ = 0;
    uint64_t written_ = 0;
};

// `text` as the whole content of `path` ("-": standard output); throws OutputError.
void writeOutputFile(const std::string& path, std::string_view text);

// For a command that prints through std::cout as it goes. Throws OutputError when a write
// to standard output has failed (cheap: for a command that streams, after each piece, so
// the reason is still known).
void checkStdout();
// Flushes `stream`; throws OutputError ("cannot write NAME: reason") when any write to it
// failed.
void finishStream(std::ostream& stream, const std::string& name);
// finishStream(std::cout, "standard output"), then C stdio's stdout the same way.
void finishStdout();

// The directory `path` names, created with its parents when missing; throws OutputError
// when it cannot be made or is not a directory.
void makeDirectory(const std::string& path);

// The directory a file would be written in ("." for a bare name).
std::string directoryOf(const std::string& path);

} // namespace gmt::analyzer
