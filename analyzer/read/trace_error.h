// The one error type for unusable input. Every message names the file and the byte
// offset, because "corrupt trace" alone leaves the user nothing to act on.
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>

namespace gmt::analyzer {

class TraceError : public std::runtime_error {
  public:
    TraceError(std::string file, uint64_t offset, std::string reason);

    const std::string& file() const { return file_; }
    uint64_t offset() const { return offset_; }
    const std::string& reason() const { return reason_; }

  private:
    std::string file_;
    uint64_t offset_;
    std::string reason_;
};

} // namespace gmt::analyzer
