#include "attn/task/Metadata.h"

#include "attn/Numbers.h"
#include "attn/Random.h"

#include <cstdio>
#include <filesystem>
#include <stdexcept>

namespace attn::task {

std::string dataFingerprint(const std::vector<data::Pair> &pairs) {
  // Each field ends with a byte no text holds, so ("ab", "c") and ("a", "bc") differ.
  std::string all;
  for (const data::Pair &p : pairs)
    all += p.source + '\x1f' + p.target + '\x1e';
  char hex[17];
  std::snprintf(hex, sizeof hex, "%016llx", (unsigned long long)fnv1a64(all));
  return hex;
}

std::string dataFingerprint(const PairData &d) {
  // A streamed corpus's is its file's (with the held-out count, which moves pairs between
  // the splits).
  if (d.stream)
    return d.stream->fingerprint() + "-" + std::to_string(d.stream->size() - d.streamTrain);
  if (!d.textFingerprint.empty()) { // a language model's text: its windows' ids
    std::string all = d.textFingerprint + ":";
    for (int32_t id : d.textWindows[0])
      all.append(reinterpret_cast<const char *>(&id), sizeof id);
    char hex[17];
    std::snprintf(hex, sizeof hex, "%016llx", (unsigned long long)fnv1a64(all));
    return hex;
  }
  return dataFingerprint(d.train);
}

Metadata pairMetadata(const PairData &d) {
  Metadata m = {{"source_vocab", d.source.serialize()},
                {"target_vocab", d.target.serialize()},
                {"source_length", std::to_string(d.sourceLength)},
                {"target_length", std::to_string(d.targetLength)},
                {"data_fingerprint", dataFingerprint(d)}};
  // Subword models travel with the weights: translate, an executable and a library split and
  // join text with the run's own models, not with a file that may be gone.
  if (data::isSubwords(d.sourceTokens.kind()))
    m[kSourceTokenizerKey] = d.sourceTokens.serialize();
  if (data::isSubwords(d.targetTokens.kind()))
    m[kTargetTokenizerKey] = d.targetTokens.serialize();
  return m;
}

PairData pairDataFromMetadata(Task task, data::Tokenize tokens, bool reverseSource,
                              const Metadata &meta, const std::string &file) {
  // data_fingerprint is optional: checkpoints written before it existed still load.
  for (const char *key : {"source_vocab", "target_vocab", "source_length", "target_length"})
    if (!meta.count(key))
      throw std::runtime_error(file + ": a " + taskName(task) + " checkpoint needs '" + key +
                               "' in its metadata");
  PairData d;
  // Characters and words as the spec says; subword models from the metadata (below). Tags and
  // labels are words.
  if (!data::isSubwords(tokens))
    d.sourceTokens = tokens;
  if (!data::isSubwords(tokens) && (task == Task::Seq2Seq || task == Task::Lm))
    d.targetTokens = tokens;
  d.reverseSource = reverseSource;
  // Every field is checked before it shapes a program: a seq2seq target_length of "0"
  // crashed the lowering. The lengths are those the importer makes of data.max_len (<= 4096):
  // the source's, and a seq2seq target's with its end token (taggers and classifiers have
  // no target sequence: 0).
  try {
    d.source = data::Vocab::deserialize(meta.at("source_vocab"));
    d.target = data::Vocab::deserialize(meta.at("target_vocab"));
    d.sourceLength = parseInt(meta.at("source_length"), 1, 8192, "'source_length'");
    d.targetLength = parseInt(meta.at("target_length"), task == Task::Seq2Seq ? 2 : 0, 8192,
                              "'target_length'");
    if (meta.count(kSourceTokenizerKey))
      d.sourceTokens = data::Tokenizer::deserialize(meta.at(kSourceTokenizerKey),
                                                    "'" + std::string(kSourceTokenizerKey) + "'");
    if (meta.count(kTargetTokenizerKey))
      d.targetTokens = data::Tokenizer::deserialize(meta.at(kTargetTokenizerKey),
                                                    "'" + std::string(kTargetTokenizerKey) + "'");
  } catch (const std::exception &e) {
    throw std::runtime_error(file + ": the checkpoint's metadata is damaged: " + e.what());
  }
  if (data::isSubwords(tokens) && !data::isSubwords(d.sourceTokens.kind()))
    throw std::runtime_error(file + ": the model reads " + data::tokenizeName(tokens) +
                             " tokens, but the checkpoint carries no subword model");
  return d;
}

std::string stepOf(const Metadata &meta) {
  auto it = meta.find(kStepKey);
  return it == meta.end() ? "?" : it->second;
}

std::string checkpointFile(const std::string &path, std::string *warning) {
  if (!std::filesystem::is_directory(path))
    return path;
  std::string best = path + "/best.safetensors", last = path + "/last.safetensors";
  bool haveBest = std::filesystem::exists(best), haveLast = std::filesystem::exists(last);
  if (haveBest && haveLast) {
    // A best.safetensors left by another model's run in the same directory must not be taken
    // for this run's best: both files of one run carry the same spec.
    auto specOf = [](const std::string &file) {
      Metadata meta = train::readCheckpointMetadata(file);
      auto it = meta.find(kSpecKey);
      return it == meta.end() ? std::string() : it->second;
    };
    if (specOf(best) != specOf(last)) {
      if (warning)
        *warning = best + " was trained with another spec than " + last +
                   " (a different run); using " + last;
      return last;
    }
  }
  if (haveBest)
    return best;
  if (haveLast)
    return last;
  throw std::runtime_error(path + ": no best.safetensors or last.safetensors in this directory");
}

} // namespace attn::task
