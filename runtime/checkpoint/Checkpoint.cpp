#include "attn/checkpoint/Checkpoint.h"

#include <nlohmann/json.hpp>
#include <zlib.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <limits>
#include <set>
#include <stdexcept>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

namespace attn::checkpoint {

// The header as nlohmann's JSON with members in file order (the order of the tensors).
using Json = nlohmann::ordered_json;

// Tensor data is written and read as raw host memory; safetensors data is little-endian.
static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__, "checkpoint I/O assumes a little-endian host");

namespace {

// `s` as a JSON string literal for messages (bytes that are not UTF-8 shown as U+FFFD).
std::string quote(const std::string &s) {
  return Json(s).dump(-1, ' ', false, Json::error_handler_t::replace);
}

// Whether `s` is well-formed UTF-8: what a JSON header can hold and read back.
bool isValidUtf8(const std::string &s) {
  try {
    (void)Json(s).dump();
    return true;
  } catch (const Json::type_error &) {
    return false;
  }
}


constexpr const char *kMetadataKey = "__metadata__";
// The metadata entry holding each tensor's CRC-32 (a JSON object of tensor name -> 8 hex
// digits), written by save() and checked by every read of the data; not in Checkpoint::metadata.
constexpr const char *kChecksumKey = "attn.crc32";

std::string crc32Of(const attn::Tensor &tensor) {
  uLong crc = crc32_z(0L, Z_NULL, 0);
  if (tensor.nbytes())
    crc = crc32_z(crc, static_cast<const Bytef *>(tensor.raw()), tensor.nbytes());
  char hex[9];
  std::snprintf(hex, sizeof hex, "%08lx", (unsigned long)(crc & 0xffffffffu));
  return hex;
}
// The reference implementation's limit; it also bounds what a corrupt length makes us allocate.
constexpr uint64_t kMaxHeaderSize = 100u << 20;
constexpr size_t kLengthPrefixSize = 8;

[[noreturn]] void fail(const std::string &path, const std::string &reason) {
  throw std::runtime_error(path + ": " + reason);
}

std::string errnoText() { return std::strerror(errno); }

// Owns a POSIX file descriptor so that every error path closes it.
class Fd {
public:
  explicit Fd(int fd) : fd_(fd) {}
  Fd(const Fd &) = delete;
  Fd &operator=(const Fd &) = delete;
  ~Fd() {
    if (fd_ >= 0)
      ::close(fd_);
  }
  int get() const { return fd_; }
  bool valid() const { return fd_ >= 0; }
  // Closes now and reports the result: close() can be where a deferred write error surfaces.
  int close() {
    int rc = ::close(fd_);
    fd_ = -1;
    return rc;
  }

private:
  int fd_;
};

// ---- writing -----------------------------------------------------------------------------------

const char *safetensorsDtype(attn_dtype dtype) { return dtype == ATTN_I32 ? "I32" : "F32"; }

// Rejects what could not be read back: duplicate or reserved names, strings that are not UTF-8.
void validateForSave(const std::string &path, const Checkpoint &ckpt) {
  std::set<std::string> names;
  for (const auto &[name, tensor] : ckpt.tensors) {
    if (name == kMetadataKey)
      fail(path, "tensor name \"__metadata__\" is reserved");
    if (!names.insert(name).second)
      fail(path, "duplicate tensor name " + quote(name));
    if (!isValidUtf8(name))
      fail(path, "tensor name " + quote(name) + " is not valid UTF-8");
    dtypeSize(tensor.dtype()); // throws on an unknown dtype
  }
  for (const auto &[key, value] : ckpt.metadata)
    if (!isValidUtf8(key) || !isValidUtf8(value))
      fail(path, "metadata entry " + quote(key) + " is not valid UTF-8");
}


// The length prefix plus the JSON header, padded with spaces so that the data starts at a
// multiple of 8 bytes. Tensors are laid out back to back in `ckpt.tensors` order.
std::string buildHeader(const Checkpoint &ckpt) {
  Json header = Json::object();
  Json metadata = Json::object();
  for (const auto &[key, value] : ckpt.metadata)
    if (key != kChecksumKey)
      metadata[key] = value;
  Json sums = Json::object();
  for (const auto &[name, tensor] : ckpt.tensors)
    sums[name] = crc32Of(tensor);
  if (!ckpt.tensors.empty())
    metadata[kChecksumKey] = sums.dump();
  if (!metadata.empty())
    header[kMetadataKey] = std::move(metadata);
  int64_t offset = 0;
  for (const auto &[name, tensor] : ckpt.tensors) {
    int64_t end = offset + static_cast<int64_t>(tensor.nbytes());
    Json info = Json::object();
    info["dtype"] = safetensorsDtype(tensor.dtype());
    info["shape"] = tensor.shape();
    info["data_offsets"] = {offset, end};
    header[name] = std::move(info);
    offset = end;
  }
  std::string text = header.dump(); // compact, members in insertion (file) order
  text.resize((text.size() + 7) / 8 * 8, ' ');

  std::string bytes(kLengthPrefixSize, '\0');
  uint64_t n = text.size();
  for (size_t i = 0; i < kLengthPrefixSize; ++i)
    bytes[i] = static_cast<char>((n >> (8 * i)) & 0xFF);
  return bytes + text;
}

// write() until done, retrying on EINTR and short writes. Returns false with errno set.
bool writeAll(int fd, const void *data, size_t size) {
  const char *p = static_cast<const char *>(data);
  while (size > 0) {
    ssize_t n = ::write(fd, p, size);
    if (n < 0 && errno == EINTR)
      continue;
    if (n == 0)
      errno = EIO; // no progress and no error code: report it as an I/O error
    if (n <= 0)
      return false;
    p += n;
    size -= static_cast<size_t>(n);
  }
  return true;
}

std::filesystem::path parentDirectory(const std::string &path) {
  std::filesystem::path parent = std::filesystem::path(path).parent_path();
  return parent.empty() ? std::filesystem::path(".") : parent;
}

void createParentDirectories(const std::string &path) {
  std::filesystem::path parent = parentDirectory(path);
  std::error_code ec;
  std::filesystem::create_directories(parent, ec);
  if (ec)
    fail(path, "cannot create directory '" + parent.string() + "': " + ec.message());
}

// Makes the rename durable: a directory entry change is only persistent once the directory is.
void fsyncDirectory(const std::string &path) {
  std::filesystem::path dir = parentDirectory(path);
  Fd fd(::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (!fd.valid() || ::fsync(fd.get()) != 0)
    fail(path, "cannot sync directory '" + dir.string() + "': " + errnoText());
}

// Writes the complete file to `tmpPath` and fsyncs it, so that it is on disk before the rename
// makes it visible under the real name.
void writeTempFile(const std::string &path, const std::string &tmpPath, const std::string &header,
                   const Checkpoint &ckpt) {
  Fd fd(::open(tmpPath.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666));
  if (!fd.valid())
    fail(path, "cannot create temporary file '" + tmpPath + "': " + errnoText());
  bool ok = writeAll(fd.get(), header.data(), header.size());
  for (size_t i = 0; ok && i < ckpt.tensors.size(); ++i) {
    const Tensor &t = ckpt.tensors[i].second;
    if (t.nbytes() > 0)
      ok = writeAll(fd.get(), t.raw(), t.nbytes());
  }
  if (!ok)
    fail(path, "cannot write '" + tmpPath + "': " + errnoText());
  if (::fsync(fd.get()) != 0)
    fail(path, "cannot sync '" + tmpPath + "': " + errnoText());
  if (fd.close() != 0)
    fail(path, "cannot close '" + tmpPath + "': " + errnoText());
}

// ---- reading -----------------------------------------------------------------------------------

// One tensor's header entry, validated on its own; layout checks come after all are parsed.
struct Entry {
  std::string name;
  attn_dtype dtype = ATTN_F32;
  std::vector<int64_t> shape;
  uint64_t begin = 0, end = 0;
};

// Where a safetensors file's bytes come from: a file (read with pread, retrying on EINTR and
// short reads) or a buffer in memory (an executable's embedded weights). `name` names it in
// every message.
struct Source {
  std::string name;
  uint64_t size = 0;
  int fd = -1;                          // a file, or
  const unsigned char *bytes = nullptr; // memory

  // Exactly `n` bytes at `offset` (the callers have checked that they lie within `size`).
  void read(uint64_t offset, void *data, size_t n) const {
    if (bytes) {
      std::memcpy(data, bytes + offset, n);
      return;
    }
    char *p = static_cast<char *>(data);
    while (n > 0) {
      ssize_t got = ::pread(fd, p, n, static_cast<off_t>(offset));
      if (got < 0 && errno == EINTR)
        continue;
      if (got < 0)
        fail(name, "read error: " + errnoText());
      if (got == 0)
        fail(name, "unexpected end of file (was it truncated while being read?)");
      p += got;
      offset += static_cast<uint64_t>(got);
      n -= static_cast<size_t>(got);
    }
  }
};

std::string describeTensor(const std::string &name) { return "tensor " + quote(name); }

// "an object", "an array", "a string", "an integer" (the only kinds a header may hold).
std::string withArticle(Json::value_t kind) {
  switch (kind) {
  case Json::value_t::object: return "an object";
  case Json::value_t::array: return "an array";
  case Json::value_t::string: return "a string";
  default: return "an integer";
  }
}

const Json &requireMember(const std::string &path, const std::string &name, const Json &info,
                          const char *key, Json::value_t kind) {
  auto member = info.find(key);
  if (member == info.end())
    fail(path, describeTensor(name) + ": missing \"" + key + "\"");
  Json::value_t got = member->is_number_unsigned() ? Json::value_t::number_integer : member->type();
  if (got != kind)
    fail(path, describeTensor(name) + ": \"" + key + "\" must be " + withArticle(kind) +
                   ", got " + withArticle(got));
  return *member;
}

attn_dtype parseDtype(const std::string &path, const std::string &name, const std::string &dtype) {
  if (dtype == "F32")
    return ATTN_F32;
  if (dtype == "I32")
    return ATTN_I32;
  fail(path, describeTensor(name) + ": unsupported dtype " + quote(dtype) +
                 " (only F32 and I32 are supported)");
}

// Non-negative dimensions whose element count (ignoring zeros, so that Tensor's running product
// cannot overflow either) fits comfortably in int64_t.
std::vector<int64_t> parseShape(const std::string &path, const std::string &name,
                                const Json &shape) {
  std::vector<int64_t> dims;
  int64_t product = 1;
  for (const Json &d : shape) {
    if (!d.is_number_integer() || d.get<int64_t>() < 0)
      fail(path, describeTensor(name) + ": shape must hold non-negative integers");
    int64_t n = d.get<int64_t>();
    if (n > 0 && product > std::numeric_limits<int64_t>::max() / 16 / n)
      fail(path, describeTensor(name) + ": shape is too large");
    if (n > 0)
      product *= n;
    dims.push_back(n);
  }
  return dims;
}

Entry parseEntry(const std::string &path, const std::string &name, const Json &info) {
  if (!info.is_object())
    fail(path, describeTensor(name) + ": expected an object, got " + withArticle(info.type()));
  for (const auto &member : info.items())
    if (member.key() != "dtype" && member.key() != "shape" && member.key() != "data_offsets")
      fail(path, describeTensor(name) + ": unknown key " + quote(member.key()));

  Entry entry;
  entry.name = name;
  entry.dtype = parseDtype(
      path, name,
      requireMember(path, name, info, "dtype", Json::value_t::string).get<std::string>());
  entry.shape =
      parseShape(path, name, requireMember(path, name, info, "shape", Json::value_t::array));

  const Json &offsets = requireMember(path, name, info, "data_offsets", Json::value_t::array);
  bool wellFormed = offsets.size() == 2;
  for (const Json &o : offsets)
    wellFormed = wellFormed && o.is_number_integer() && o.get<int64_t>() >= 0;
  if (!wellFormed)
    fail(path, describeTensor(name) + ": data_offsets must be two non-negative integers [begin, end]");
  entry.begin = static_cast<uint64_t>(offsets[0].get<int64_t>());
  entry.end = static_cast<uint64_t>(offsets[1].get<int64_t>());
  if (entry.begin > entry.end)
    fail(path, describeTensor(name) + ": data_offsets [" + std::to_string(entry.begin) + ", " +
                   std::to_string(entry.end) + "] end before they begin");
  return entry;
}

std::map<std::string, std::string> parseMetadata(const std::string &path, const Json &value) {
  if (!value.is_object())
    fail(path, "\"__metadata__\" must be an object, got " + withArticle(value.type()));
  std::map<std::string, std::string> metadata;
  for (const auto &member : value.items()) {
    if (!member.value().is_string())
      fail(path, "\"__metadata__\" value for " + quote(member.key()) +
                     " must be a string, got " + withArticle(member.value().type()));
    metadata[member.key()] = member.value().get<std::string>();
  }
  return metadata;
}

// Each tensor's data against the CRC-32 save() wrote with it; the entry leaves the metadata.
// A file without checksums (written before they were, or by another tool) loads, said once.
void checkSums(const std::string &path, Checkpoint &ckpt) {
  auto written = ckpt.metadata.find(kChecksumKey);
  if (written == ckpt.metadata.end()) {
    static bool said = false;
    if (!ckpt.tensors.empty() && !said) {
      said = true;
      std::cerr << "attn: note: " << path << " has no checksums (written before attnc wrote "
                << "them, or by another tool): its tensors' data cannot be checked\n";
    }
    return;
  }
  Json sums = Json::parse(written->second, nullptr, /*allow_exceptions=*/false);
  if (!sums.is_object())
    fail(path, std::string("the metadata's \"") + kChecksumKey +
                   "\" is not a JSON object: the file is damaged");
  for (const auto &[name, tensor] : ckpt.tensors) {
    auto sum = sums.find(name);
    if (sum == sums.end() || !sum->is_string())
      fail(path, describeTensor(name) + " has no checksum in the metadata: the file is damaged");
    if (std::string actual = crc32Of(tensor); actual != sum->get<std::string>())
      fail(path, describeTensor(name) + ": its data does not match the checksum written with it "
                                        "(CRC-32 " + actual + ", written " +
                     sum->get<std::string>() + "): the file is damaged");
  }
  ckpt.metadata.erase(written);
}

std::string rangeText(const Entry &e) {
  return "[" + std::to_string(e.begin) + ", " + std::to_string(e.end) + "]";
}

// Each entry's byte span lies within the data section and matches its shape.
void checkEntrySize(const std::string &path, const Entry &e, uint64_t dataSize) {
  if (e.end > dataSize)
    fail(path, describeTensor(e.name) + ": data_offsets " + rangeText(e) +
                   " are out of range: the data section has " + std::to_string(dataSize) + " bytes");
  uint64_t expected = static_cast<uint64_t>(shapeNumel(e.shape)) * dtypeSize(e.dtype);
  if (e.end - e.begin != expected)
    fail(path, describeTensor(e.name) + ": shape " + shapeToString(e.shape) + " of " +
                   safetensorsDtype(e.dtype) + " needs " + std::to_string(expected) +
                   " bytes but data_offsets " + rangeText(e) + " span " +
                   std::to_string(e.end - e.begin));
}

// Sorted by offset, the tensors must tile the data section exactly: no overlap, no gap, no
// trailing bytes (the safetensors rule, which also rejects files with extra data appended).
void checkLayout(const std::string &path, const std::vector<Entry> &sorted, uint64_t dataSize) {
  uint64_t covered = 0;
  const Entry *previous = nullptr;
  for (const Entry &e : sorted) {
    if (e.begin < covered)
      fail(path, describeTensor(e.name) + " " + rangeText(e) + " overlaps " +
                     describeTensor(previous->name) + " " + rangeText(*previous));
    if (e.begin > covered)
      fail(path, "bytes [" + std::to_string(covered) + ", " + std::to_string(e.begin) +
                     ") of the data section belong to no tensor");
    covered = e.end;
    previous = &e;
  }
  if (covered != dataSize)
    fail(path, "the data section has " + std::to_string(dataSize) + " bytes but the tensors cover " +
                   std::to_string(covered));
}

// Returns the header length N after checking that 8 + N bytes fit in the file.
uint64_t readHeaderLength(const Source &source) {
  const std::string &path = source.name;
  uint64_t fileSize = source.size;
  if (fileSize < kLengthPrefixSize)
    fail(path, "file is too small (" + std::to_string(fileSize) +
                   " bytes) to hold the 8-byte header length; not a safetensors file?");
  unsigned char prefix[kLengthPrefixSize];
  source.read(0, prefix, sizeof prefix);
  uint64_t n = 0;
  for (size_t i = 0; i < kLengthPrefixSize; ++i)
    n |= static_cast<uint64_t>(prefix[i]) << (8 * i);
  if (n > kMaxHeaderSize)
    fail(path, "header length " + std::to_string(n) + " exceeds the limit of " +
                   std::to_string(kMaxHeaderSize) + " bytes; not a safetensors file?");
  if (n > fileSize - kLengthPrefixSize)
    fail(path, "header length " + std::to_string(n) + " exceeds the file size (" +
                   std::to_string(fileSize) + " bytes); truncated file?");
  return n;
}

// A safetensors header holds objects, arrays, strings and integers only; every object's keys
// are distinct (nlohmann's parser would keep the last of duplicates silently) and nesting is
// bounded (its parser does not recurse, but a hostile header should not build deep trees).
constexpr int kMaxDepth = 64;

void checkKinds(const std::string &path, const Json &value) {
  if (value.is_number_float())
    fail(path, "malformed JSON header: only integers are supported, got " + value.dump());
  if (value.is_boolean() || value.is_null())
    fail(path, "malformed JSON header: true, false and null are not supported");
  if (value.is_structured())
    for (const Json &child : value)
      checkKinds(path, child); // depth bounded by kMaxDepth at parse time
}

Json parseHeaderJson(const std::string &path, const std::string &text) {
  std::vector<std::set<std::string>> keys; // per open object: the keys seen so far
  auto callback = [&](int depth, Json::parse_event_t event, Json &parsed) {
    if (depth > kMaxDepth)
      fail(path, "malformed JSON header: nesting deeper than " + std::to_string(kMaxDepth) +
                     " levels");
    if (event == Json::parse_event_t::object_start)
      keys.emplace_back();
    else if (event == Json::parse_event_t::object_end)
      keys.pop_back();
    else if (event == Json::parse_event_t::key &&
             !keys.back().insert(parsed.get<std::string>()).second)
      fail(path, "malformed JSON header: duplicate key " + parsed.dump());
    return true;
  };
  Json header;
  try {
    header = Json::parse(text, callback);
  } catch (const Json::parse_error &e) {
    // "at byte N: <reason>", N 0-based, without nlohmann's "[json.exception...] at line..."
    // and without its "; last read: '...'", which quotes raw (maybe binary) header bytes.
    std::string what = e.what();
    auto colon = what.find(": ", what.find("column"));
    std::string reason = colon == std::string::npos ? what : what.substr(colon + 2);
    auto lastRead = reason.find("; last read: ");
    if (lastRead != std::string::npos) {
      auto next = reason.find("'; ", lastRead);
      reason.erase(lastRead, next == std::string::npos ? std::string::npos
                                                       : next + 1 - lastRead);
    }
    fail(path, "malformed JSON header: at byte " + std::to_string(e.byte ? e.byte - 1 : 0) +
                   ": " + reason);
  }
  checkKinds(path, header);
  if (!header.is_object())
    fail(path, "header must be a JSON object, got " + withArticle(header.type()));
  return header;
}

} // namespace

const Tensor *Checkpoint::find(const std::string &name) const {
  for (const auto &[n, tensor] : tensors)
    if (n == name)
      return &tensor;
  return nullptr;
}

void save(const std::string &path, const Checkpoint &ckpt) {
  validateForSave(path, ckpt);
  std::string header = buildHeader(ckpt);
  // load() rejects larger headers, so refuse to write a file that could not be read back.
  if (header.size() - kLengthPrefixSize > kMaxHeaderSize)
    fail(path, "header of " + std::to_string(header.size() - kLengthPrefixSize) +
                   " bytes exceeds the limit of " + std::to_string(kMaxHeaderSize) + " bytes");
  createParentDirectories(path);

  std::string tmpPath = path + ".tmp-" + std::to_string(::getpid());
  try {
    writeTempFile(path, tmpPath, header, ckpt);
    // rename() atomically replaces `path`: readers see the old or the new file, never a mix.
    if (::rename(tmpPath.c_str(), path.c_str()) != 0)
      fail(path, "cannot rename '" + tmpPath + "' over it: " + errnoText());
  } catch (...) {
    ::unlink(tmpPath.c_str());
    throw;
  }
  fsyncDirectory(path);
}

namespace {

// The header of `source`, validated as load() validates it; the tensors' data too when `data`.
Checkpoint read(const Source &source, bool data) {
  const std::string &path = source.name;
  uint64_t headerSize = readHeaderLength(source);
  std::string text(headerSize, '\0');
  source.read(kLengthPrefixSize, text.data(), text.size());
  Json header = parseHeaderJson(path, text);

  Checkpoint ckpt;
  std::vector<Entry> entries;
  uint64_t dataStart = kLengthPrefixSize + headerSize;
  uint64_t dataSize = source.size - dataStart;
  for (const auto &member : header.items()) {
    const std::string &name = member.key();
    if (name == kMetadataKey) {
      ckpt.metadata = parseMetadata(path, member.value());
      continue;
    }
    entries.push_back(parseEntry(path, name, member.value()));
    checkEntrySize(path, entries.back(), dataSize);
  }

  // File order; stable so that empty tensors sharing an offset keep their header order.
  std::stable_sort(entries.begin(), entries.end(), [](const Entry &a, const Entry &b) {
    return a.begin != b.begin ? a.begin < b.begin : a.end < b.end;
  });
  checkLayout(path, entries, dataSize);
  if (!data) {
    ckpt.metadata.erase(kChecksumKey);
    return ckpt;
  }

  for (Entry &e : entries) {
    Tensor tensor(e.dtype, e.shape);
    if (tensor.nbytes() > 0)
      source.read(dataStart + e.begin, tensor.raw(), tensor.nbytes());
    ckpt.tensors.emplace_back(std::move(e.name), std::move(tensor));
  }
  checkSums(path, ckpt);
  return ckpt;
}

Checkpoint readFile(const std::string &path, bool data) {
  // O_NONBLOCK: opening a FIFO for reading would otherwise wait for a writer forever; it is
  // then refused below like any other file that is not regular (no effect on regular files).
  Fd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK));
  if (!fd.valid())
    fail(path, "cannot open: " + errnoText());
  struct stat st;
  if (::fstat(fd.get(), &st) != 0)
    fail(path, "cannot stat: " + errnoText());
  if (!S_ISREG(st.st_mode))
    fail(path, "not a regular file");
  Source source{path, static_cast<uint64_t>(st.st_size), fd.get()};
  return read(source, data);
}

} // namespace

Checkpoint load(const std::string &path) { return readFile(path, /*data=*/true); }

Checkpoint parse(const void *bytes, size_t size, const std::string &name) {
  Source source{name, size};
  source.bytes = static_cast<const unsigned char *>(bytes);
  return read(source, /*data=*/true);
}

std::map<std::string, std::string> loadMetadata(const std::string &path) {
  return readFile(path, /*data=*/false).metadata;
}

} // namespace attn::checkpoint
