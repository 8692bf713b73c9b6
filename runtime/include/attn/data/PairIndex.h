// A TSV file of pairs too big to hold in memory (data.stream): one pass over it validates every
// line as readTsv does and records, per pair, where it lies in the file and how many tokens each
// side has; the same pass counts the tokens for the vocabularies. The index lives in a file
// (reused while the corpus and the tokenizers are the same), and training reads the pairs back
// a block of consecutive lines at a time, so memory holds one block, not the corpus.
#ifndef ATTN_DATA_PAIRINDEX_H
#define ATTN_DATA_PAIRINDEX_H

#include "attn/data/Parallel.h"
#include "attn/data/Tokenizer.h"

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

namespace attn::data {

// How often each token occurs (the input of Vocab::fromCounts).
using TokenCounts = std::map<std::string, int64_t>;

class PairIndex {
public:
  // One pair of the file. Token counts saturate at 65535 (longer than any data.max_len).
  struct Entry {
    uint64_t offset = 0; // of the line's first byte
    int64_t line = 0;    // 1-based line number, for messages
    uint32_t bytes = 0;  // the line without its "\n" (and "\r")
    uint16_t sourceTokens = 0, targetTokens = 0;
  };
  static_assert(sizeof(Entry) == 24, "the index file stores Entry as it is");

  struct Options {
    Tokenizer source, target; // how each side is counted (a tagger's targets: words)
    // The last `holdOut` pairs validate: their tokens are not counted into the vocabularies.
    int64_t holdOut = 0;
    // Where the index is kept: PATH.idx (the entries) and PATH.meta (what it was built from,
    // the token counts). Reused when they match the file and the tokenizers; empty: built in
    // a temporary file every time.
    std::string cachePath;
    // Called for every pair as it is indexed (a tagger's one-tag-per-token rule); throws to
    // reject the file.
    std::function<void(const Pair &, const std::string &path)> check;
    // data.skip_bad_lines: lines that cannot be read (or that `check` rejects) are left out
    // and counted, rather than all reported as one error (BadLines).
    bool skipBadLines = false;
  };

  // Builds (or reuses) the index of `path`. Errors as readTsv's ("pairs.tsv:3: error: ...").
  // A file over 4 GiB a line or 2^32 lines is fine; a line over 4 GiB is an error.
  static PairIndex open(const std::string &path, const Options &options);

  PairIndex(PairIndex &&) noexcept;
  PairIndex &operator=(PairIndex &&) noexcept;
  ~PairIndex();

  const std::string &path() const { return path_; }
  int64_t size() const { return size_; }       // pairs (empty lines are not pairs)
  bool reused() const { return reused_; }      // whether open() found a matching index
  // fnv1a64 of the file's bytes (hex): two runs on the same corpus agree.
  const std::string &fingerprint() const { return fingerprint_; }
  // The tokens of all but the last holdOut pairs, per side.
  const TokenCounts &sourceCounts() const { return sourceCounts_; }
  const TokenCounts &targetCounts() const { return targetCounts_; }

  // Entries [first, first + count) and their pairs, read from the index and the file.
  std::vector<Entry> entries(int64_t first, int64_t count) const;
  std::vector<Pair> pairs(const std::vector<Entry> &entries) const;

private:
  PairIndex() = default;
  std::string path_;
  int64_t size_ = 0;
  bool reused_ = false;
  std::string fingerprint_;
  TokenCounts sourceCounts_, targetCounts_;
  int corpusFd_ = -1, indexFd_ = -1;
};

// The first `count` pairs of the file that `holdOut` pairs at its end do not reach: what a
// subword model of a streamed corpus is trained on. Fewer when the file has fewer.
std::vector<Pair> readTsvSample(const std::string &path, int64_t count, int64_t holdOut);

} // namespace attn::data

#endif // ATTN_DATA_PAIRINDEX_H
