#include "compiler/Driver/CompileCache.h"

#include "attn/Cpu.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Config/llvm-config.h"
#include "llvm/Support/SHA256.h"
#include "llvm/TargetParser/Host.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <vector>

namespace fs = std::filesystem;

namespace attn::driver {
namespace {

// An entry file: the magic line, the manifest's and the code's sizes (u64, little-endian
// as this host writes them: entries never leave it), the SHA-256 of the key and both, then
// both. The code is the program's objects, each its size (u64) and its bytes. The key is in
// the checksum, so an entry copied over another key's file is not another program's.
constexpr char kMagic[] = "attnc compile cache 3\n";
constexpr size_t kMagicSize = sizeof kMagic - 1;
constexpr size_t kHeaderSize = kMagicSize + 2 * sizeof(uint64_t) + 32;

std::array<uint8_t, 32> checksum(const std::string &key, const std::string &manifest,
                                 const std::string &code) {
  llvm::SHA256 h;
  h.update(llvm::StringRef(key));
  h.update(llvm::StringRef(manifest));
  h.update(llvm::StringRef(code));
  return h.final();
}

// The bytes of `file` if it is a regular file of at most `limit` bytes; else why not. Opened
// without following a link and without blocking (a FIFO would wait for a writer forever).
std::optional<std::string> readEntry(const std::string &file, uint64_t limit, std::string &why) {
  int fd = ::open(file.c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) {
    why = errno == ELOOP ? "a symbolic link, not a compile-cache entry"
                         : std::string("cannot be opened: ") + std::strerror(errno);
    return std::nullopt;
  }
  struct stat st;
  std::string bytes;
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode))
    why = S_ISDIR(st.st_mode) ? "a directory, not a compile-cache entry"
                              : "not a regular file, not a compile-cache entry";
  else if ((uint64_t)st.st_size > limit)
    why = "larger (" + std::to_string(st.st_size) + " bytes) than the cache may hold";
  else {
    bytes.resize((size_t)st.st_size);
    size_t got = 0;
    while (got < bytes.size()) {
      ssize_t n = ::read(fd, bytes.data() + got, bytes.size() - got);
      if (n < 0 && errno == EINTR)
        continue;
      if (n <= 0)
        break;
      got += (size_t)n;
    }
    bytes.resize(got); // a file that shrank reads as truncated below
  }
  ::close(fd);
  if (!why.empty())
    return std::nullopt;
  return bytes;
}

std::string packObjects(const std::vector<std::string> &objects) {
  std::string code;
  for (const std::string &o : objects) {
    uint64_t size = o.size();
    code.append(reinterpret_cast<const char *>(&size), sizeof size);
    code += o;
  }
  return code;
}

// The objects of checksummed code; nullopt when the sizes do not add up.
std::optional<std::vector<std::string>> unpackObjects(const std::string &code) {
  std::vector<std::string> objects;
  for (size_t at = 0; at < code.size();) {
    uint64_t size;
    if (code.size() - at < sizeof size)
      return std::nullopt;
    std::memcpy(&size, code.data() + at, sizeof size);
    at += sizeof size;
    if (size > code.size() - at)
      return std::nullopt;
    objects.push_back(code.substr(at, size));
    at += size;
  }
  if (objects.empty())
    return std::nullopt;
  return objects;
}

} // namespace

CompileCache::CompileCache(std::string dir, uint64_t capBytes)
    : dir_(std::move(dir)), capBytes_(capBytes) {}

std::string CompileCache::defaultDir() {
  if (const char *xdg = std::getenv("XDG_CACHE_HOME"); xdg && *xdg)
    return std::string(xdg) + "/attnc";
  if (const char *home = std::getenv("HOME"); home && *home)
    return std::string(home) + "/.cache/attnc";
  return "";
}

std::string CompileCache::keyOf(const std::string &text) {
  llvm::SHA256 h;
  h.update(llvm::StringRef(text));
  auto digest = h.final();
  return llvm::toHex(llvm::ArrayRef<uint8_t>(digest.data(), digest.size()), /*LowerCase=*/true);
}

std::string CompileCache::identity() {
  std::ostringstream s;
  s << "attnc " << ATTN_VERSION << ", LLVM " << LLVM_VERSION_STRING << "\n";
  // The compiler is this executable: a rebuilt attnc (a changed pass, kernel ABI or
  // lowering) must not load what an older one compiled, whatever its version says.
  struct stat exe;
  if (::stat("/proc/self/exe", &exe) == 0)
    s << "exe " << exe.st_size << " " << exe.st_mtim.tv_sec << "." << exe.st_mtim.tv_nsec << " "
      << exe.st_ino << "\n";
  s << "cpu " << llvm::sys::getHostCPUName().str();
  std::vector<std::string> features;
  for (auto &[feature, enabled] : llvm::sys::getHostCPUFeatures())
    if (enabled)
      features.push_back(feature.str());
  std::sort(features.begin(), features.end());
  for (const std::string &f : features)
    s << " +" << f;
  // "native" compiles for ATTN_MAX_CPU's level where it is set.
  s << "\nmax cpu " << attn::cpuLevelCap();
  return s.str();
}

std::string CompileCache::path(const std::string &key) const { return dir_ + "/" + key + ".entry"; }

std::optional<CompileCache::Entry> CompileCache::find(const std::string &key,
                                                      std::string *damaged) const {
  std::string file = path(key);
  std::error_code ec;
  fs::file_status status = fs::symlink_status(file, ec);
  if (ec || !fs::exists(status))
    return std::nullopt;
  auto reject = [&](const std::string &why) -> std::optional<Entry> {
    if (damaged)
      *damaged = file + ": " + why;
    std::error_code ec;
    // Removed, to be rebuilt: a link itself (not what it points to), a directory whole.
    if (fs::is_directory(status))
      fs::remove_all(file, ec);
    else
      fs::remove(file, ec);
    return std::nullopt;
  };
  std::string unreadable;
  std::optional<std::string> read = readEntry(file, capBytes_, unreadable);
  if (!read)
    return reject(unreadable);
  const std::string &bytes = *read;
  if (bytes.size() < kHeaderSize || bytes.compare(0, kMagicSize, kMagic) != 0)
    return reject("not a compile-cache entry (or truncated)");
  uint64_t sizes[2];
  std::memcpy(sizes, bytes.data() + kMagicSize, sizeof sizes);
  if (sizes[0] > bytes.size() || sizes[1] > bytes.size() ||
      kHeaderSize + sizes[0] + sizes[1] != bytes.size())
    return reject("truncated: its header describes " +
                  std::to_string(kHeaderSize + sizes[0] + sizes[1]) + " bytes, the file has " +
                  std::to_string(bytes.size()));
  std::string manifest = bytes.substr(kHeaderSize, sizes[0]);
  std::string code = bytes.substr(kHeaderSize + sizes[0]);
  auto sum = checksum(key, manifest, code);
  if (std::memcmp(sum.data(), bytes.data() + kMagicSize + sizeof sizes, sum.size()) != 0)
    return reject("its checksum does not match its contents and key (damaged, or another "
                  "program's entry)");
  std::optional<target::Manifest> m = target::manifestFromJson(manifest);
  if (!m)
    return reject("its manifest does not parse");
  std::optional<std::vector<std::string>> objects = unpackObjects(code);
  if (!objects)
    return reject("its objects' sizes do not add up");
  // Recently used: eviction removes the entries used longest ago.
  fs::last_write_time(file, fs::file_time_type::clock::now(), ec);
  return Entry{std::move(*m), std::move(*objects)};
}

std::string CompileCache::store(const std::string &key, const Entry &entry) const {
  std::error_code ec;
  fs::create_directories(dir_, ec);
  if (ec)
    return dir_ + ": cannot create the compile cache: " + ec.message();
  std::string manifest = target::manifestToJson(entry.manifest);
  std::string code = packObjects(entry.objects);
  uint64_t sizes[2] = {manifest.size(), code.size()};
  auto sum = checksum(key, manifest, code);
  std::string file = path(key), tmp = file + ".tmp-" + std::to_string(::getpid());
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    out.write(kMagic, kMagicSize);
    out.write(reinterpret_cast<const char *>(sizes), sizeof sizes);
    out.write(reinterpret_cast<const char *>(sum.data()), (std::streamsize)sum.size());
    out << manifest << code;
    out.flush();
    if (!out) {
      fs::remove(tmp, ec);
      return tmp + ": cannot write the compile cache entry";
    }
  }
  fs::rename(tmp, file, ec);
  if (ec) {
    fs::remove(tmp, ec);
    return file + ": cannot store the compile cache entry: " + ec.message();
  }
  evict(file);
  return "";
}

// Removes the least recently used entries (and temporaries over an hour old: a store that
// was killed) until the directory is under the cap; `keep` stays.
void CompileCache::evict(const std::string &keep) const {
  struct File {
    fs::path path;
    uint64_t size;
    fs::file_time_type used;
  };
  std::vector<File> entries;
  uint64_t total = 0;
  std::error_code ec;
  auto now = fs::file_time_type::clock::now();
  for (const auto &e : fs::directory_iterator(dir_, ec)) {
    std::string name = e.path().filename().string();
    auto used = e.last_write_time(ec);
    if (ec)
      continue;
    if (name.find(".entry.tmp-") != std::string::npos) {
      if (now - used > std::chrono::hours(1))
        fs::remove(e.path(), ec);
      continue;
    }
    if (e.path().extension() != ".entry")
      continue;
    uint64_t size = e.file_size(ec);
    if (ec)
      continue;
    entries.push_back({e.path(), size, used});
    total += size;
  }
  std::sort(entries.begin(), entries.end(),
            [](const File &a, const File &b) { return a.used < b.used; });
  for (const File &f : entries) {
    if (total <= capBytes_)
      break;
    if (f.path == keep)
      continue;
    if (fs::remove(f.path, ec))
      total -= f.size;
  }
}

} // namespace attn::driver
