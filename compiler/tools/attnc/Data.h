// The builtin data a spec names, as the splits the training loop and evaluation read.
#pragma once

#include "frontends/yaml/Spec.h"

#include "attn/data/Text.h"
#include "attn/train/Trainer.h"

namespace attnc {

/// The training and validation splits: (x, target) for `sine`, (tokens, next) for `text`.
attn::train::Split trainSplit(const attn::yaml::Spec &spec);
attn::train::Split validSplit(const attn::yaml::Spec &spec);

/// `text`: the vocabulary of the builtin corpus.
const attn::data::CharVocab &textVocab();

} // namespace attnc
