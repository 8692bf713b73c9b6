// The builtin data a spec names, as the splits the training loop and evaluation read.
#pragma once

#include "frontends/yaml/Importer.h"
#include "frontends/yaml/Spec.h"

#include "attn/data/Parallel.h"
#include "attn/data/Text.h"
#include "attn/data/Vocab.h"
#include "attn/train/Trainer.h"

#include <map>
#include <string>

namespace attnc {

/// The data of a model that learns from text pairs (seq2seq, tag, classify): vocabularies of
/// the sources and of the targets (output tokens, tags or labels) and the compiled lengths
/// (what a checkpoint must carry to decode), and the pairs (only when built from the spec's
/// data).
struct PairData {
  attn::data::Vocab source, target;
  attn::data::Tokenize tokenize = attn::data::Tokenize::Word;
  int64_t sourceLength = 0; // S = data.max_len
  int64_t targetLength = 0; // seq2seq: S + 1 (room for eos)
  std::vector<attn::data::Pair> train, valid;
};

/// Whether the task learns from text pairs.
bool usesPairs(const attn::yaml::Spec &spec);

/// Generated, or read from TSV, with vocabularies built from the training pairs; built once
/// per process.
const PairData &pairData(const attn::yaml::Spec &spec);
/// The vocabularies and lengths, as checkpoint metadata, and back (no pairs).
std::map<std::string, std::string> pairMetadata(const PairData &data);
PairData pairDataFromMetadata(const attn::yaml::Spec &spec,
                              const std::map<std::string, std::string> &meta,
                              const std::string &file);
/// What the importer needs to know of the data.
attn::yaml::ImportOptions pairImportOptions(const PairData &data);
/// The pairs as the @loss inputs: src, src_mask, tgt_in, tgt_out[, teacher] (seq2seq), or
/// src, src_mask, tags | label (tag, classify).
attn::train::Split pairSplit(const attn::yaml::Spec &spec, const PairData &data,
                             const std::vector<attn::data::Pair> &pairs);
/// Whether the spec trains with scheduled sampling (then @loss takes `teacher`).
bool scheduledSampling(const attn::yaml::Spec &spec);

/// The training and validation splits: (x, target) for `sine`, (tokens, next) for `text`.
attn::train::Split trainSplit(const attn::yaml::Spec &spec);
attn::train::Split validSplit(const attn::yaml::Spec &spec);

/// `text`: the vocabulary of the builtin corpus.
const attn::data::CharVocab &textVocab();

} // namespace attnc
