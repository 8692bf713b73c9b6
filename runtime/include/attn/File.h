// Reading user-named files safely: only regular files, and only up to a size cap, so that a
// device (/dev/zero), a FIFO (whose open() blocks until a writer comes) or a directory given
// where a file belongs is an error with a message instead of a hang or a runaway read.
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>

namespace attn {

// What the functions below throw: what() is "<path>: error: <why>".
struct FileError : std::runtime_error {
  FileError(std::string path, std::string why)
      : std::runtime_error(path + ": error: " + why), path(std::move(path)), why(std::move(why)) {}
  std::string path, why;
};

// Caps of the files attnc reads (the message names them when a file is over).
constexpr uint64_t kMaxSpecBytes = 1ull << 20;        // a YAML spec: 1 MiB
constexpr uint64_t kMaxDataFileBytes = 1ull << 30;    // a data or input file: 1 GiB
constexpr uint64_t kMaxCheckpointBytes = 16ull << 30; // a safetensors checkpoint: 16 GiB

// Throws FileError unless `path` names a regular file (after
// symbolic links) of at most `maxBytes`; `what` says what the file is for ("data file").
// Returns its size.
uint64_t checkRegularFile(const std::string &path, uint64_t maxBytes, const char *what);

// checkRegularFile, then the whole file.
std::string readRegularFile(const std::string &path, uint64_t maxBytes, const char *what);

// Writes `bytes` to `path` whole or not at all: to `path + ".tmp-<pid>"`, then renamed over it
// (readers see the old file or the new one). Throws FileError naming `path`.
void writeFileAtomically(const std::string &path, const std::string &bytes);

// "1 MiB", "16 GiB", "512 B": a size as the messages show it.
std::string formatBytes(uint64_t bytes);

} // namespace attn
