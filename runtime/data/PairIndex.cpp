// The index of a streamed TSV corpus (attn/data/PairIndex.h).
//
// PATH.idx is the entries as they are in memory (24 bytes each, native byte order: the file
// is a cache of this machine's run, rebuilt when it does not match). PATH.meta is text:
//   attn-pair-index 2
//   corpus <path>  size <bytes>  mtime <ns>  source <hash>  target <hash>  hold_out <n>
//   pairs <n>
//   fingerprint <hex>
//   index <hex>          the FNV-1a hash of PATH.idx's bytes: a damaged index is rebuilt
//   source_counts <k>   then k lines "<count> <token>" (a token is the rest of its line)
//   target_counts <k>   likewise
// written last, so a PATH.meta that matches says that PATH.idx is complete.
#include "attn/data/PairIndex.h"

#include "attn/File.h"
#include "attn/Random.h"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <vector>

namespace attn::data {
namespace {

constexpr const char *kHeader = "attn-pair-index 2";

// FNV-1a over `bytes`, continuing from `h` (fnv1a64's, a block at a time).
uint64_t fnvMore(uint64_t h, const void *bytes, size_t n) {
  for (const unsigned char *p = static_cast<const unsigned char *>(bytes), *e = p + n; p < e; ++p)
    h = (h ^ *p) * 0x100000001B3ull;
  return h;
}
constexpr uint64_t kFnvStart = 0xCBF29CE484222325ull;

std::string hex(uint64_t h) {
  char text[17];
  std::snprintf(text, sizeof text, "%016llx", (unsigned long long)h);
  return text;
}

// What an index was built from: a different corpus, a changed file or other tokenizers make
// another index.
std::string keyOf(const std::string &path, const struct stat &st, const PairIndex::Options &o) {
  std::ostringstream key;
  key << "corpus " << std::filesystem::absolute(path).lexically_normal().string() << "  size "
      << (uint64_t)st.st_size << "  mtime "
      << (int64_t)st.st_mtim.tv_sec * 1000000000 + st.st_mtim.tv_nsec << "  source "
      << hex(fnv1a64(o.source.serialize())) << "  target " << hex(fnv1a64(o.target.serialize()))
      << "  hold_out " << o.holdOut << "  skip_bad_lines " << o.skipBadLines;
  return key.str();
}

uint16_t saturate(size_t n) { return (uint16_t)std::min<size_t>(n, 65535); }

void count(TokenCounts &counts, const std::vector<std::string> &tokens) {
  for (const std::string &t : tokens)
    ++counts[t];
}

[[noreturn]] void ioError(const std::string &path, const std::string &what) {
  throw FileError(path, what + ": " + std::strerror(errno));
}

void writeAll(int fd, const void *data, size_t bytes, const std::string &path) {
  auto *p = static_cast<const char *>(data);
  while (bytes > 0) {
    ssize_t n = ::write(fd, p, bytes);
    if (n < 0 && errno == EINTR)
      continue;
    if (n <= 0)
      ioError(path, "cannot write the corpus index");
    p += n;
    bytes -= (size_t)n;
  }
}

void readAll(int fd, void *data, size_t bytes, uint64_t offset, const std::string &path) {
  auto *p = static_cast<char *>(data);
  while (bytes > 0) {
    ssize_t n = ::pread(fd, p, bytes, (off_t)offset);
    if (n < 0 && errno == EINTR)
      continue;
    if (n < 0)
      ioError(path, "read error");
    if (n == 0)
      throw FileError(path, "ended early: the file changed while it was being read");
    p += n;
    bytes -= (size_t)n;
    offset += (uint64_t)n;
  }
}

std::string formatCounts(const char *name, const TokenCounts &counts) {
  std::string text = std::string(name) + " " + std::to_string(counts.size()) + "\n";
  for (const auto &[token, n] : counts)
    text += std::to_string(n) + " " + token + "\n";
  return text;
}

// The rest of a .meta file after its key line; false when it is not one this code wrote.
bool parseMeta(std::istream &in, int64_t &pairs, std::string &fingerprint, std::string &indexHash,
               TokenCounts &source, TokenCounts &target) {
  std::string word, line;
  if (!(in >> word >> pairs) || word != "pairs" || !(in >> word >> fingerprint) ||
      word != "fingerprint" || !(in >> word >> indexHash) || word != "index")
    return false;
  for (auto [name, counts] : {std::pair{"source_counts", &source}, {"target_counts", &target}}) {
    size_t k = 0;
    if (!(in >> word >> k) || word != name || !std::getline(in, line))
      return false;
    for (size_t i = 0; i < k; ++i) {
      if (!std::getline(in, line))
        return false;
      size_t space = line.find(' ');
      if (space == std::string::npos)
        return false;
      (*counts)[line.substr(space + 1)] = std::atoll(line.c_str());
    }
  }
  return true;
}

} // namespace

PairIndex::PairIndex(PairIndex &&o) noexcept { *this = std::move(o); }

PairIndex &PairIndex::operator=(PairIndex &&o) noexcept {
  std::swap(path_, o.path_);
  std::swap(size_, o.size_);
  std::swap(reused_, o.reused_);
  std::swap(fingerprint_, o.fingerprint_);
  std::swap(sourceCounts_, o.sourceCounts_);
  std::swap(targetCounts_, o.targetCounts_);
  std::swap(corpusFd_, o.corpusFd_);
  std::swap(indexFd_, o.indexFd_);
  return *this;
}

PairIndex::~PairIndex() {
  if (corpusFd_ >= 0)
    ::close(corpusFd_);
  if (indexFd_ >= 0)
    ::close(indexFd_);
}

PairIndex PairIndex::open(const std::string &path, const Options &o) {
  checkRegularFile(path, UINT64_MAX, "data file");
  PairIndex index;
  index.path_ = path;
  index.corpusFd_ = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (index.corpusFd_ < 0)
    ioError(path, "cannot open file");
  struct stat st;
  if (::fstat(index.corpusFd_, &st) != 0)
    ioError(path, "cannot open file");
  std::string key = keyOf(path, st, o);
  std::string idxPath = o.cachePath + ".idx", metaPath = o.cachePath + ".meta";

  // The cache is checked and built under an exclusive lock on CACHE.lock: the ranks of a
  // data-parallel run open the same cache at once, and one builds it while the others wait
  // for it, then reuse it (flock: released when the descriptor closes, whatever ends us).
  struct CacheLock {
    int fd = -1;
    ~CacheLock() {
      if (fd >= 0)
        ::close(fd);
    }
  } lock;
  if (!o.cachePath.empty()) {
    std::filesystem::create_directories(std::filesystem::path(idxPath).parent_path());
    std::string lockPath = o.cachePath + ".lock";
    lock.fd = ::open(lockPath.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    if (lock.fd < 0)
      ioError(lockPath, "cannot open the corpus index's lock");
    while (::flock(lock.fd, LOCK_EX) != 0)
      if (errno != EINTR)
        ioError(lockPath, "cannot lock the corpus index");
  }

  if (!o.cachePath.empty()) {
    std::ifstream meta(metaPath, std::ios::binary);
    std::string header, storedKey, indexHash;
    struct stat ist;
    if (meta && std::getline(meta, header) && header == kHeader && std::getline(meta, storedKey) &&
        storedKey == key &&
        parseMeta(meta, index.size_, index.fingerprint_, indexHash, index.sourceCounts_,
                  index.targetCounts_) &&
        ::stat(idxPath.c_str(), &ist) == 0 &&
        (uint64_t)ist.st_size == (uint64_t)index.size_ * sizeof(Entry)) {
      index.indexFd_ = ::open(idxPath.c_str(), O_RDONLY | O_CLOEXEC);
      if (index.indexFd_ >= 0) {
        // Its bytes against the hash written with them (24 bytes a pair, read once): an index
        // damaged on disk is rebuilt, not taken for a corpus that changed.
        uint64_t h = kFnvStart;
        std::vector<char> block(1 << 20);
        for (uint64_t at = 0, size = (uint64_t)ist.st_size; at < size;) {
          size_t n = (size_t)std::min<uint64_t>(block.size(), size - at);
          readAll(index.indexFd_, block.data(), n, at, idxPath);
          h = fnvMore(h, block.data(), n);
          at += n;
        }
        if (hex(h) == indexHash) {
          index.reused_ = true;
          return index;
        }
        std::fprintf(stderr,
                     "attn: note: %s: the corpus index is damaged (its hash does not match); "
                     "building it again\n",
                     idxPath.c_str());
        ::close(index.indexFd_);
        index.indexFd_ = -1;
      }
    }
    index.size_ = 0;
    index.fingerprint_.clear();
    index.sourceCounts_.clear();
    index.targetCounts_.clear();
  }

  // Built into a temporary file: renamed into place when complete, or, without a cache,
  // unlinked at once so that nothing is left behind however the process ends.
  std::string tmp;
  if (o.cachePath.empty()) {
    const char *dir = std::getenv("TMPDIR");
    tmp = std::string(dir && *dir ? dir : "/tmp") + "/attn-pair-index-XXXXXX";
  } else {
    tmp = idxPath + ".tmp-XXXXXX";
  }
  int fd = ::mkstemp(tmp.data());
  if (fd < 0)
    ioError(tmp, "cannot create the corpus index");
  if (o.cachePath.empty())
    ::unlink(tmp.c_str());
  else
    (void)::fchmod(fd, 0644); // as the run's other files (mkstemp makes it 0600)
  index.indexFd_ = fd;

  std::ifstream in(path, std::ios::binary);
  if (!in)
    ioError(path, "cannot open file");
  std::vector<Entry> pending;            // written in blocks
  std::deque<std::pair<std::vector<std::string>, std::vector<std::string>>> last; // held out
  std::string line;
  Pair pair;
  uint64_t offset = 0, hash = kFnvStart, indexHash = kFnvStart;
  int64_t lineNo = 0;
  BadLines bad(path, o.skipBadLines);
  try {
    while (std::getline(in, line)) {
      ++lineNo;
      uint64_t start = offset;
      offset += line.size() + (in.eof() ? 0 : 1);
      hash = fnvMore(fnvMore(hash, line.data(), line.size()), "\n", 1);
      if (line.size() > UINT32_MAX)
        throw std::runtime_error(path + ":" + std::to_string(lineNo) +
                                 ": error: the line is over 4 GiB");
      try {
        if (!parseTsvLine(line, lineNo, path, pair))
          continue;
        if (o.check)
          o.check(pair, path);
      } catch (const FileError &) {
        throw;
      } catch (const std::runtime_error &e) {
        bad.add(e.what());
        continue;
      }
      std::vector<std::string> s = o.source.tokenize(pair.source);
      std::vector<std::string> t = o.target.tokenize(pair.target);
      pending.push_back({start, lineNo, (uint32_t)line.size(), saturate(s.size()),
                         saturate(t.size())});
      last.emplace_back(std::move(s), std::move(t));
      if ((int64_t)last.size() > o.holdOut) {
        count(index.sourceCounts_, last.front().first);
        count(index.targetCounts_, last.front().second);
        last.pop_front();
      }
      if (pending.size() == 65536) {
        writeAll(fd, pending.data(), pending.size() * sizeof(Entry), tmp);
        indexHash = fnvMore(indexHash, pending.data(), pending.size() * sizeof(Entry));
        pending.clear();
      }
      ++index.size_;
    }
    if (in.bad())
      ioError(path, "read error");
    bad.finish();
    writeAll(fd, pending.data(), pending.size() * sizeof(Entry), tmp);
    indexHash = fnvMore(indexHash, pending.data(), pending.size() * sizeof(Entry));
  } catch (...) {
    if (!o.cachePath.empty())
      ::unlink(tmp.c_str());
    throw;
  }
  index.fingerprint_ = hex(hash);
  if (!o.cachePath.empty()) {
    if (::fsync(fd) != 0 || ::rename(tmp.c_str(), idxPath.c_str()) != 0) {
      ::unlink(tmp.c_str());
      ioError(idxPath, "cannot write the corpus index");
    }
    writeFileAtomically(metaPath, std::string(kHeader) + "\n" + key + "\npairs " +
                                      std::to_string(index.size_) + "\nfingerprint " +
                                      index.fingerprint_ + "\nindex " + hex(indexHash) + "\n" +
                                      formatCounts("source_counts", index.sourceCounts_) +
                                      formatCounts("target_counts", index.targetCounts_));
  }
  return index;
}

std::vector<PairIndex::Entry> PairIndex::entries(int64_t first, int64_t count) const {
  if (first < 0 || count < 0 || first + count > size_)
    throw std::out_of_range("attn: pair index entries [" + std::to_string(first) + ", " +
                            std::to_string(first + count) + ") of " + std::to_string(size_));
  std::vector<Entry> out((size_t)count);
  readAll(indexFd_, out.data(), out.size() * sizeof(Entry), (uint64_t)first * sizeof(Entry),
          path_ + " (its index)");
  return out;
}

std::vector<Pair> PairIndex::pairs(const std::vector<Entry> &entries) const {
  std::vector<Pair> out(entries.size());
  std::string line;
  for (size_t i = 0; i < entries.size(); ++i) {
    const Entry &e = entries[i];
    line.resize(e.bytes);
    readAll(corpusFd_, line.data(), e.bytes, e.offset, path_);
    // Validated when indexed; parsed again only to split it the same way.
    if (!parseTsvLine(line, e.line, path_, out[i]))
      throw FileError(path_, "line " + std::to_string(e.line) +
                                 " changed after the corpus was indexed; train again");
  }
  return out;
}

} // namespace attn::data
