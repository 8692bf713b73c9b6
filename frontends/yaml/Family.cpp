// The registry of model families, and what their validators share.
#include "frontends/yaml/Family.h"

namespace attn::yaml {

void Problems::error(const std::string &key, const Loc &fallback, std::string message,
                     std::string hint) {
  diags.push_back({spec.locOf(key, fallback), std::move(message), std::move(hint)});
}

void Problems::error(const Loc &loc, std::string message, std::string hint) {
  diags.push_back({loc, std::move(message), std::move(hint)});
}

const std::vector<const Family *> &families() {
  // The Transformer first: it claims every task its stack takes; the families that claim a
  // spec by its model section before those that claim it by its task.
  static const std::vector<const Family *> all = {
      &kTransformerFamily, &kConvFamily,          &kGraphFamily,    &kSeq2SeqFamily,
      &kLabellerFamily,    &kLanguageModelFamily, &kRegressorFamily};
  return all;
}

const Family *familyOf(const Spec &spec) {
  for (const Family *f : families())
    if (f->claims(spec))
      return f;
  return nullptr;
}

std::string dataSource(const Spec &s) {
  return s.data.builtin.empty() ? "data.path" : "data.builtin: " + s.data.builtin;
}

static void checkLengths(const Spec &s, Problems &p) {
  if (s.data.minLen > s.data.maxLen)
    p.error(s.data.loc,
            "data.min_len (" + std::to_string(s.data.minLen) + ") is larger than data.max_len (" +
                std::to_string(s.data.maxLen) + ")");
}

void checkSeq2SeqData(const Spec &s, Problems &p) {
  // The pair sets of the other tasks (pos, majority) would train too, but as another task's
  // data they are a slip for task: tag or classify; docs/yaml-reference.md names these three.
  const std::string &b = s.data.builtin;
  if (!b.empty() && b != "copy" && b != "reverse" && b != "dates")
    p.error(s.data.loc,
            "task 'seq2seq' learns from pairs of sequences, but the data is '" + dataSource(s) +
                "'",
            "set data.builtin to copy, reverse or dates, or data.path to a TSV file" +
                std::string(b == "pos"        ? " (pos is task tag's data)"
                            : b == "majority" ? " (majority is task classify's data)"
                                              : ""));
  if (s.data.builtin == "dates" && s.data.tokens != Tokens::Char)
    p.error(s.data.loc, "the dates data is written character by character",
            "set data.tokens: char");
  if (s.data.builtin == "copy" || s.data.builtin == "reverse")
    checkLengths(s, p);
}

// A ladder of buckets (`key`: decode.buckets, decode.batch_buckets): increasing, each below
// `bound`, the model's own (`boundKey`, `whatBound` "the longest length").
static void checkLadder(const Spec &s, Problems &p, const std::string &key,
                        const std::vector<int64_t> &v, int64_t bound, const std::string &boundKey,
                        const std::string &whatBound, const std::string &items,
                        const std::string &order) {
  Loc at = s.locOf(key, s.decode.loc);
  for (size_t i = 0; i < v.size(); ++i) {
    if (v[i] >= bound) {
      p.error(key, at,
              key + " holds " + std::to_string(v[i]) + ", but " + boundKey + " (" +
                  std::to_string(bound) + ") is " + whatBound + " already",
              "list " + items + " below " + boundKey);
      return;
    }
    if (i > 0 && v[i] <= v[i - 1]) {
      p.error(key, at,
              key + " must increase, but " + std::to_string(v[i]) + " follows " +
                  std::to_string(v[i - 1]),
              "list the " + items + " " + order + " first, each once");
      return;
    }
  }
}

void checkDecoding(const Spec &s, Problems &p) {
  checkLadder(s, p, "decode.buckets", s.decode.buckets, s.data.maxLen, "data.max_len",
              "the longest length", "lengths", "shortest");
  const std::vector<int64_t> &r = s.decode.batchBuckets;
  checkLadder(s, p, "decode.batch_buckets", r, s.decode.batch, "decode.batch", "the most rows",
              "row counts", "fewest");
  if (!r.empty() && s.decode.beam > 1)
    p.error("decode.batch_buckets", s.locOf("decode.batch_buckets", s.decode.loc),
            "decode.batch_buckets are row counts of greedy decoding; beam search decodes one "
            "sentence at a time in decode.beam rows",
            "drop decode.batch_buckets, or set decode.beam: 1");
  if (s.decode.sample && s.decode.beam > 1)
    p.error("decode.sample", s.locOf("decode.beam", s.decode.loc),
            "decode.sample draws one output per row; beam search keeps the likeliest " +
                std::to_string(s.decode.beam),
            "set decode.beam: 1 (or --beam 1) to sample, or drop decode.sample");
  if (s.decode.nbest > s.decode.beam)
    p.error("decode.nbest", s.locOf("decode.beam", s.decode.loc),
            "decode.nbest (" + std::to_string(s.decode.nbest) + ") cannot exceed decode.beam (" +
                std::to_string(s.decode.beam) + ")",
            "raise decode.beam or lower decode.nbest");
}

void checkTeacherForced(const Spec &s, Problems &p, const std::string &decoder) {
  if (s.train.teacherForcing.schedule != TeacherSchedule::Constant ||
      s.train.teacherForcing.ratio < 1.0)
    p.error(s.train.teacherForcing.loc,
            "scheduled sampling feeds a recurrent decoder its own predictions step by step; " +
                decoder + " trains on all positions at once",
            "remove train.teacher_forcing (teacher forcing is what it trains with)");
}

void checkLabelledData(const Spec &s, Problems &p) {
  std::string wants = s.task == Task::Tag ? "pos" : "majority";
  if (!s.data.builtin.empty() && s.data.builtin != wants)
    p.error(s.data.loc,
            "task '" + nameOf(s.task) + "' learns from labelled sequences, but the data is '" +
                dataSource(s) + "'",
            "set data.builtin: " + wants + ", or data.path to a TSV file");
  if (s.data.builtin == "majority")
    checkLengths(s, p);
}

void checkTextData(const Spec &s, Problems &p) {
  if (!s.data.path.empty()) // the user's text (task::buildText); the schema keeps builtin out
    return;
  if (s.data.builtin != "text")
    p.error(s.data.loc,
            "task 'lm' learns from text, but data.builtin is '" + s.data.builtin + "'",
            "set data.builtin: text, or data.path to a text file of your own");
  else if (s.data.tokens != DataSpec().tokens)
    p.error("data.tokens", s.data.loc,
            "the builtin text is read as characters: data.tokens is for a data.path text",
            "remove data.tokens, or set data.path to a text file of your own");
}

} // namespace attn::yaml
