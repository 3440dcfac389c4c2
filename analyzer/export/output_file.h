// Where an export writes: a file, standard output, or an unnamed scratch file that is read
// back once (memory-viz keeps each GPU's events apart while the trace streams, then joins
// them in device order). Buffered; every failure to open or write becomes an ExportError
// naming the file, so a full disk fails the command instead of leaving a truncated export
// that looks whole.
#pragma once

#include <cstdint>
#include <cstring>
#include <memory>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace gmt::analyzer {

class ExportError : public std::runtime_error {
  public:
    using std::runtime_error::runtime_error;
};

class OutputFile {
  public:
    // "-" is standard output. A file is created or truncated.
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

// The directory `path` names, created with its parents when missing; throws ExportError
// when it cannot be made or is not a directory.
void makeDirectory(const std::string& path);

// The directory a file would be written in ("." for a bare name).
std::string directoryOf(const std::string& path);

} // namespace gmt::analyzer
