// Pairs read from TSV files (attn/data/Parallel.h: readTsv; attn/data/PairIndex.h:
// readTsvSample).
#include "attn/data/Parallel.h"
#include "attn/data/PairIndex.h"

#include "attn/File.h"
#include "attn/Utf8.h"

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstring>
#include <deque>
#include <fstream>
#include <stdexcept>

namespace attn::data {

namespace {

[[noreturn]] void fileError(const std::string &path, int64_t line, const std::string &msg) {
  std::string where = path + (line > 0 ? ":" + std::to_string(line) : std::string());
  throw std::runtime_error(where + ": error: " + msg);
}

} // namespace

bool parseTsvLine(std::string &line, int64_t lineNo, const std::string &path, Pair &pair) {
  if (!line.empty() && line.back() == '\r')
    line.pop_back();
  // A byte-order mark (files saved by Windows editors) is not part of the first source.
  if (lineNo == 1 && line.rfind("\xEF\xBB\xBF", 0) == 0)
    line.erase(0, 3);
  if (std::all_of(line.begin(), line.end(), [](unsigned char c) { return std::isspace(c); }))
    return false;
  // Tokens become vocabulary entries and translations: a file in another encoding (Latin-1,
  // UTF-16) or a binary one would train on mangled tokens without a word.
  if (size_t bad = invalidUtf8(line); bad != std::string::npos)
    fileError(path, lineNo, "is not UTF-8 text (byte " + std::to_string(bad + 1) + " of the line)");
  size_t tabs = std::count(line.begin(), line.end(), '\t');
  if (tabs != 1)
    fileError(path, lineNo,
              "expected one tab between source and target, found " + std::to_string(tabs));
  size_t tab = line.find('\t');
  pair.source.assign(line, 0, tab);
  pair.target.assign(line, tab + 1, std::string::npos);
  pair.line = lineNo;
  return true;
}

namespace {

// The pairs of `path` in order, `take` of them at most (-1: all), each handed to `sink`.
template <typename Sink> void forEachPair(const std::string &path, uint64_t cap, Sink sink) {
  checkRegularFile(path, cap, "data file");
  std::ifstream in(path, std::ios::binary);
  if (!in)
    fileError(path, 0, std::string("cannot open file: ") + std::strerror(errno));
  std::string line;
  int64_t lineNo = 0;
  Pair pair;
  while (std::getline(in, line)) {
    ++lineNo;
    if (parseTsvLine(line, lineNo, path, pair) && !sink(std::move(pair)))
      return;
  }
  if (in.bad())
    fileError(path, 0, "read error");
}

} // namespace

std::vector<Pair> readTsv(const std::string &path) {
  std::vector<Pair> pairs;
  forEachPair(path, kMaxDataFileBytes, [&](Pair &&p) {
    pairs.push_back(std::move(p));
    return true;
  });
  return pairs;
}

std::vector<Pair> readTsvSample(const std::string &path, int64_t count, int64_t holdOut) {
  // The last holdOut pairs read are kept back until a later pair shows they are not the file's
  // last: a sample never holds a validation pair.
  std::vector<Pair> sample;
  std::deque<Pair> pending;
  forEachPair(path, UINT64_MAX, [&](Pair &&p) {
    pending.push_back(std::move(p));
    if ((int64_t)pending.size() > holdOut) {
      sample.push_back(std::move(pending.front()));
      pending.pop_front();
    }
    return (int64_t)sample.size() < count;
  });
  return sample;
}

} // namespace attn::data
