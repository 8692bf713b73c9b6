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
#include <iostream>
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
    fileError(path, lineNo,
              "the line is not UTF-8 text (byte " + std::to_string(bad + 1) + " of the line)");
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

void BadLines::add(const std::string &error) {
  if (shown_.size() < kShown)
    shown_.push_back(error);
  ++count_;
}

void BadLines::finish() const {
  if (count_ == 0)
    return;
  if (count_ == 1 && !skip_)
    throw std::runtime_error(shown_[0]);
  std::string list;
  for (const std::string &e : shown_)
    list += "\n  " + e;
  if (count_ > (int64_t)shown_.size())
    list += "\n  ... and " + std::to_string(count_ - (int64_t)shown_.size()) + " more";
  if (!skip_)
    throw std::runtime_error(path_ + ": error: " + std::to_string(count_) +
                             " lines cannot be read:" + list +
                             "\n  hint: fix them, or set data.skip_bad_lines: true to train "
                             "without them");
  std::cerr << path_ << ": warning: left out " << count_
            << (count_ == 1 ? " line that cannot" : " lines that cannot")
            << " be read (data.skip_bad_lines):" << list << "\n";
}

namespace {

// The pairs of `path` in order, each handed to `sink` until it returns false; the lines that
// cannot be read go to `bad`.
template <typename Sink>
void forEachPair(const std::string &path, uint64_t cap, BadLines &bad, Sink sink) {
  checkRegularFile(path, cap, "data file");
  std::ifstream in(path, std::ios::binary);
  if (!in)
    fileError(path, 0, std::string("cannot open file: ") + std::strerror(errno));
  std::string line;
  int64_t lineNo = 0;
  Pair pair;
  while (std::getline(in, line)) {
    ++lineNo;
    bool read = false;
    try {
      read = parseTsvLine(line, lineNo, path, pair);
    } catch (const std::runtime_error &e) {
      bad.add(e.what());
    }
    if (read && !sink(std::move(pair)))
      return;
  }
  if (in.bad())
    fileError(path, 0, "read error");
}

} // namespace

std::vector<Pair> readTsv(const std::string &path, bool skipBadLines) {
  std::vector<Pair> pairs;
  BadLines bad(path, skipBadLines);
  forEachPair(path, kMaxDataFileBytes, bad, [&](Pair &&p) {
    pairs.push_back(std::move(p));
    return true;
  });
  bad.finish();
  return pairs;
}

std::vector<Pair> readTsvSample(const std::string &path, int64_t count, int64_t holdOut) {
  // The last holdOut pairs read are kept back until a later pair shows they are not the file's
  // last: a sample never holds a validation pair.
  std::vector<Pair> sample;
  std::deque<Pair> pending;
  // Bad lines are left out here: the index, built next from the whole file, reports them.
  BadLines bad(path, /*skip=*/true);
  forEachPair(path, UINT64_MAX, bad, [&](Pair &&p) {
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
