// Translation quality as a translation user reads it: corpus BLEU and chrF on detokenised
// text, one reference per line, computed as sacreBLEU 2.x computes them by default (its
// signatures: `nrefs:1|case:mixed|eff:no|tok:13a|smooth:exp` for BLEU,
// `nrefs:1|case:mixed|eff:yes|nc:6|nw:0|space:no` for chrF2), so a figure printed here
// compares with one a paper reports. Debian ships no sacreBLEU: the tokenisation and the
// formulas are implemented here and tested on hand-computed cases (tests/unit/runtime/BleuTest).
#ifndef ATTN_TASK_BLEU_H
#define ATTN_TASK_BLEU_H

#include <array>
#include <cstdint>
#include <string>
#include <vector>

namespace attn::task {

/// sacreBLEU's `13a` tokenisation (mteval-v13a.pl's): `<skipped>` and `-\n` removed, newlines
/// as spaces, the entities &quot; &amp; &lt; &gt; unescaped; then spaces around ASCII
/// punctuation and symbols (not `'` `-` `.` `,`), around `.` and `,` unless between digits,
/// after `-` that follows a digit; runs of whitespace as one space, none at either end.
/// (Python splits at Unicode whitespace; this splits at ASCII whitespace.)
std::string tokenize13a(const std::string &line);

struct Bleu {
  double score = 0;                  // 0..100
  std::array<double, 4> precisions{}; // n-gram precisions, percent (smoothed where 0)
  double brevityPenalty = 0;
  int64_t hypLength = 0, refLength = 0;
  /// "BLEU = 34.56 67.1/41.2/27.5/18.9 (BP = 1.000 ratio = 1.023 hyp_len = 1234
  /// ref_len = 1206)", as sacreBLEU prints it.
  std::string str() const;
};

/// Corpus BLEU of `hypotheses` against `references` (line i against line i): clipped 1- to
/// 4-gram counts of the 13a tokens summed over the corpus, a geometric mean of the
/// precisions, the brevity penalty exp(1 - r/c) when c < r; a precision with no match counts
/// 100 / (2^k total) for the k-th such order ('exp' smoothing).
Bleu corpusBleu(const std::vector<std::string> &hypotheses,
                const std::vector<std::string> &references);

/// Corpus chrF2: character (Unicode code point) 1- to 6-grams of each line without its
/// whitespace, counts summed over the corpus; precision and recall averaged over the orders
/// that both sides have, then F_beta with beta = 2; 0..100.
double corpusChrf(const std::vector<std::string> &hypotheses,
                  const std::vector<std::string> &references);

} // namespace attn::task

#endif // ATTN_TASK_BLEU_H
