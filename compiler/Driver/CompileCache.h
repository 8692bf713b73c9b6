// The compile cache: the native object of every program a JIT verb compiled, with its
// manifest, keyed by everything that changes the code (the module, the passes still to run
// and their options, this attnc build, the host CPU). A verb that compiled a model once loads
// it the next time in milliseconds instead of recompiling it (seconds to a minute).
//
// Entries are files `<key>.entry` in one directory, written atomically (a temporary, then a
// rename) and checksummed: a damaged or truncated entry is reported, removed and rebuilt,
// never loaded. The directory is kept under a size cap by removing the least recently used
// entries.
#pragma once

#include "compiler/Target/Manifest.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace attn::driver {

class CompileCache {
public:
  static constexpr uint64_t kDefaultCapBytes = 1ull << 30; // 1 GiB

  /// `dir` is created when first stored into.
  explicit CompileCache(std::string dir, uint64_t capBytes = kDefaultCapBytes);

  /// $XDG_CACHE_HOME/attnc, else $HOME/.cache/attnc; "" when neither variable is set.
  static std::string defaultDir();
  /// The key of `text` (what identifies a compilation): its SHA-256 in hex.
  static std::string keyOf(const std::string &text);
  /// What identifies this build of the compiler and the machine it compiles for: attnc's
  /// version and executable (size and modification time), LLVM's version, the host CPU and
  /// its features. Part of every key.
  static std::string identity();

  struct Entry {
    target::Manifest manifest;
    std::vector<std::string> objects; // relocatable objects for this host: one program
  };
  /// The entry stored under `key`, or nullopt. A damaged one is removed, and `damaged` (when
  /// given) says what was wrong with it.
  std::optional<Entry> find(const std::string &key, std::string *damaged = nullptr) const;
  /// Stores `entry` under `key`, then evicts the least recently used entries beyond the cap.
  /// Returns an error message, empty on success (a failed store leaves no partial entry).
  std::string store(const std::string &key, const Entry &entry) const;

  const std::string &dir() const { return dir_; }

private:
  std::string path(const std::string &key) const;
  void evict(const std::string &keep) const;

  std::string dir_;
  uint64_t capBytes_;
};

} // namespace attn::driver
