// Pairs read from TSV files (attn/data/Parallel.h: readTsv).
#include "attn/data/Parallel.h"

#include "attn/File.h"

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
    size_t tabs = std::count(line.begin(), line.end(), '\t');
    if (tabs != 1)
      fileError(path, lineNo,
                "expected one tab between source and target, found " + std::to_string(tabs));
    size_t tab = line.find('\t');
    pairs.push_back({line.substr(0, tab), line.substr(tab + 1)});
  }
  if (in.bad())
    fileError(path, 0, "read error");
  return pairs;
}

} // namespace attn::data
