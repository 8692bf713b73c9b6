// The metadata a checkpoint carries beside its tensors, and what reads it back. A checkpoint
// is a safetensors file whose `__metadata__` holds strings (attn/checkpoint/Checkpoint.h):
//   model          the model's name
//   spec           the spec it was trained from, with every default filled in (YAML)
//   equations      the spec's keys that change the model's equations, with their values (a
//                  JSON object; yaml::equationValues): what an executable, which reads no
//                  spec, checks a checkpoint against (absent from checkpoints before 2026-12)
//   step           the training step it was saved at (written by the training loop)
//   source_vocab, target_vocab   pair tasks: the vocabularies (attn::data::Vocab::serialize)
//   source_length, target_length pair tasks: the lengths the program was compiled for
//   data_fingerprint              pair tasks: fnv1a64 of the training pairs (hex; of a
//                                 streamed corpus: of its file, then -<held-out pairs>)
//   source_tokenizer, target_tokenizer  pair tasks with subword tokens: the SentencePiece
//                                 models (attn::data::Tokenizer::serialize)
#ifndef ATTN_TASK_METADATA_H
#define ATTN_TASK_METADATA_H

#include "attn/task/Data.h"

#include <map>
#include <string>

namespace attn::task {

using Metadata = std::map<std::string, std::string>;

inline constexpr const char *kSpecKey = "spec";
inline constexpr const char *kModelKey = "model";
inline constexpr const char *kStepKey = "step";
inline constexpr const char *kEquationsKey = "equations";
inline constexpr const char *kSourceTokenizerKey = "source_tokenizer";
inline constexpr const char *kTargetTokenizerKey = "target_tokenizer";

/// The vocabularies, lengths and data fingerprint of `data`, as metadata.
Metadata pairMetadata(const PairData &data);
/// Back (no pairs): throws, naming `file`, when a key is missing or damaged. `task` bounds
/// the lengths (a seq2seq target holds at least one token and eos); `tokens` is the spec's
/// data.tokens (subword models come from the metadata).
PairData pairDataFromMetadata(Task task, data::Tokenize tokens, bool reverseSource,
                              const Metadata &meta, const std::string &file);
/// fnv1a64 of the training pairs, in hex: two runs on the same data agree.
std::string dataFingerprint(const std::vector<data::Pair> &pairs);
/// The training data's: its pairs', or a streamed corpus's file's.
std::string dataFingerprint(const PairData &data);
/// The step a checkpoint was saved at, "?" when it does not say.
std::string stepOf(const Metadata &meta);

/// A checkpoint named on the command line: DIR means DIR/best.safetensors, else
/// DIR/last.safetensors (also when best.safetensors holds another run's: their specs
/// differ; `warning` then says so); a file is itself. Throws when DIR holds neither.
std::string checkpointFile(const std::string &path, std::string *warning = nullptr);

} // namespace attn::task

#endif
