// Pairs read from TSV files (attn/data/Parallel.h: readTsv).
#include "attn/data/Parallel.h"

#include "attn/File.h"
#include "attn/Utf8.h"

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <stdexcept>

namespace attn::data {

namespace {

[[noreturn]] void fileError(const std::string &path, int64_t line, const std::string &msg) {
  std::string where = path + (line > 0 ? ":" + std::to_string(line) : std::string());
  throw std::runtime_error(where + ": error: " + msg);
}

} // namespace

std::vector<Pair> readTsv(const std::string &path) {
  checkRegularFile(path, kMaxDataFileBytes, "data file");
  std::ifstream in(path, std::ios::binary);
  if (!in)
    fileError(path, 0, std::string("cannot open file: ") + std::strerror(errno));
  std::vector<Pair> pairs;
  std::string line;
  int64_t lineNo = 0;
  while (std::getline(in, line)) {
    ++lineNo;
    if (!line.empty() && line.back() == '\r')
      line.pop_back();
    if (std::all_of(line.begin(), line.end(), [](unsigned char c) { return std::isspace(c); }))
      continue;
    // Tokens become vocabulary entries and translations: a file in another encoding (Latin-1,
    // UTF-16) or a binary one would train on mangled tokens without a word.
    if (size_t bad = invalidUtf8(line); bad != std::string::npos)
      fileError(path, lineNo,
                "is not UTF-8 text (byte " + std::to_string(bad + 1) + " of the line)");
    size_t tabs = std::count(line.begin(), line.end(), '\t');
    if (tabs != 1)
      fileError(path, lineNo,
                "expected one tab between source and target, found " + std::to_string(tabs));
    size_t tab = line.find('\t');
    pairs.push_back({line.substr(0, tab), line.substr(tab + 1), lineNo});
  }
  if (in.bad())
    fileError(path, 0, "read error");
  return pairs;
}

} // namespace attn::data
