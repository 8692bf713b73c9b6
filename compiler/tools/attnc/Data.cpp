#include "Data.h"

#include "attn/data/Sine.h"

namespace attnc {
namespace {

attn::train::Split split(const attn::yaml::Spec &s, bool train) {
  int64_t count = train ? s.data.train : s.data.valid;
  // The validation split is drawn with the next seed (and, for text, from the held-out end).
  uint64_t seed = train ? s.data.seed : s.data.seed + 1;
  attn::data::Examples ex;
  if (s.data.builtin == "text") {
    const std::string &text = attn::data::builtinText();
    size_t cut = attn::data::validationStart(text);
    ex = train ? attn::data::makeCharWindows(text, textVocab(), 0, cut, s.data.window, count, seed)
               : attn::data::makeCharWindows(text, textVocab(), cut, text.size(), s.data.window,
                                             count, seed);
  } else {
    ex = attn::data::makeSine(s.data.window, count, seed);
  }
  return {std::move(ex.x), std::move(ex.y)};
}

} // namespace

attn::train::Split trainSplit(const attn::yaml::Spec &spec) { return split(spec, true); }
attn::train::Split validSplit(const attn::yaml::Spec &spec) { return split(spec, false); }

const attn::data::CharVocab &textVocab() {
  static const attn::data::CharVocab vocab(attn::data::builtinText());
  return vocab;
}

} // namespace attnc
