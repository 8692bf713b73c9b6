// The builtin data a spec names, as the splits the training loop and evaluation read.
#pragma once

#include "frontends/yaml/Spec.h"

#include "frontends/yaml/Importer.h"

#include "attn/data/Parallel.h"
#include "attn/data/Text.h"
#include "attn/data/Vocab.h"
#include "attn/train/Trainer.h"

#include <map>
#include <string>

namespace attnc {

/// A seq2seq model's data: vocabularies and compiled lengths (what a checkpoint must carry to
/// translate), and the pairs (only when built from the spec's data).
struct Seq2SeqData {
  attn::data::Vocab source, target;
  attn::data::Tokenize tokenize = attn::data::Tokenize::Word;
  int64_t sourceLength = 0, targetLength = 0; // S = data.max_len, T = S + 1 (room for eos)
  std::vector<attn::data::Pair> train, valid;
};

/// Generated, or read from TSV, with vocabularies built from the training pairs; built once
/// per process.
const Seq2SeqData &seq2seqData(const attn::yaml::Spec &spec);
/// The vocabularies and lengths, as checkpoint metadata, and back (no pairs).
std::map<std::string, std::string> seq2seqMetadata(const Seq2SeqData &data);
Seq2SeqData seq2seqFromMetadata(const attn::yaml::Spec &spec,
                                const std::map<std::string, std::string> &meta,
                                const std::string &file);
/// What the importer needs to know of the data.
attn::yaml::ImportOptions seq2seqImportOptions(const Seq2SeqData &data);
/// The pairs as the @loss inputs: src, src_mask, tgt_in, tgt_out[, teacher].
attn::train::Split seq2seqSplit(const attn::yaml::Spec &spec, const Seq2SeqData &data,
                                const std::vector<attn::data::Pair> &pairs);
/// Whether the spec trains with scheduled sampling (then @loss takes `teacher`).
bool scheduledSampling(const attn::yaml::Spec &spec);

/// The training and validation splits: (x, target) for `sine`, (tokens, next) for `text`.
attn::train::Split trainSplit(const attn::yaml::Spec &spec);
attn::train::Split validSplit(const attn::yaml::Spec &spec);

/// `text`: the vocabulary of the builtin corpus.
const attn::data::CharVocab &textVocab();

} // namespace attnc
