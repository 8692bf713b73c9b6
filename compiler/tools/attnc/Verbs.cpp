// What several verbs share: error reporting, output files, checkpoint paths.
#include "Verbs.h"

#include "attn/Init.h"
#include "attn/train/Trainer.h"

#include <filesystem>
#include <fstream>
#include <iostream>
#include <optional>

namespace attnc {

int usageError(const std::string &msg) {
  std::cerr << "attnc: error: " << msg << "\n(see attnc --help)\n";
  return 2;
}

int writeText(const std::string &path, const std::string &text) {
  if (path.empty() || path == "-") {
    std::cout << text;
    return 0;
  }
  std::ofstream out(path);
  out << text;
  if (!out)
    return std::cerr << "attnc: error: cannot write " << path << "\n", 1;
  return 0;
}

std::string checkpointFile(const std::string &path) {
  if (!std::filesystem::is_directory(path))
    return path;
  std::string best = path + "/best.safetensors", last = path + "/last.safetensors";
  bool haveBest = std::filesystem::exists(best), haveLast = std::filesystem::exists(last);
  if (haveBest && haveLast) {
    // A best.safetensors left by another model's run in the same directory must not be taken
    // for this run's best: both files of one run carry the same spec.
    auto specOf = [](const std::string &file) {
      auto meta = attn::train::readCheckpointMetadata(file);
      auto it = meta.find("spec");
      return it == meta.end() ? std::string() : it->second;
    };
    if (specOf(best) != specOf(last)) {
      std::cerr << "attnc: warning: " << best << " was trained with another spec than " << last
                << " (a different run); using " << last << "\n";
      return last;
    }
  }
  if (haveBest)
    return best;
  if (haveLast)
    return last;
  throw std::runtime_error(path + ": no best.safetensors or last.safetensors in this directory");
}

std::vector<attn::yaml::SpecDifference>
checkpointDifferences(const attn::yaml::Spec &given, const std::map<std::string, std::string> &meta,
                      const std::string &file, bool (*relevant)(const std::string &key)) {
  auto it = meta.find("spec");
  if (it == meta.end())
    return {}; // a checkpoint without a spec: its tensors' names and shapes are all there is
  std::vector<attn::yaml::Diagnostic> diags;
  std::optional<attn::yaml::Spec> stored =
      attn::yaml::parseSpecString(it->second, file + ":spec", diags);
  if (!stored)
    throw std::runtime_error(file + ": the spec stored in the checkpoint does not parse (" +
                             (diags.empty() ? std::string("?") : diags[0].str()) + ")");
  return attn::yaml::specDifferences(*stored, given, relevant);
}

void checkCheckpointSpec(const attn::yaml::Spec &given, const std::map<std::string, std::string> &meta,
                         const std::string &file,
                         bool (*relevant)(const std::string &key), const std::string &why,
                         const std::string &hint) {
  std::vector<attn::yaml::SpecDifference> diffs =
      checkpointDifferences(given, meta, file, relevant);
  if (diffs.empty())
    return;
  auto show = [](const std::string &v) { return v.empty() ? std::string("(none)") : v; };
  std::string msg = file + ": " + why + ":";
  for (const auto &d : diffs)
    msg += "\n  " + d.key + ": " + show(d.stored) + " in the checkpoint, " + show(d.given) +
           " in " + (given.file.empty() ? std::string("the spec") : given.file);
  throw std::runtime_error(msg + "\n  hint: " + hint);
}

void checkModelMatches(const attn::yaml::Spec &given, const std::map<std::string, std::string> &meta,
                       const std::string &file) {
  checkCheckpointSpec(given, meta, file, attn::yaml::changesEquations,
                      "the checkpoint was trained as another model",
                      "omit MODEL.yaml to use the spec the checkpoint carries, or give the one "
                      "it was trained with");
}

int loadForCheckpoint(Compiler &c, const Options &o, std::string &file,
                      std::map<std::string, std::string> &meta) {
  if (o.ckpt.empty())
    return usageError(o.verb + " needs --ckpt DIR|FILE");
  file = checkpointFile(o.ckpt);
  meta = attn::train::readCheckpointMetadata(file);
  if (o.model.empty()) {
    // The checkpoint carries the spec it was trained from.
    if (!meta.count("spec"))
      throw std::runtime_error(file + ": holds no spec; name the MODEL.yaml");
    return c.loadText(meta.at("spec"), file + ":spec", o.overrides) ? 0 : 1;
  }
  if (!c.load(o.model, o.overrides))
    return 1;
  checkModelMatches(c.spec(), meta, file);
  return 0;
}

std::unique_ptr<PairModel> loadPairModel(Compiler &c, const Options &o) {
  const attn::yaml::Spec &s = c.spec();
  auto m = std::make_unique<PairModel>();
  std::string file;
  std::map<std::string, std::string> meta;
  if (!o.ckpt.empty()) {
    file = checkpointFile(o.ckpt);
    meta = attn::train::readCheckpointMetadata(file);
    checkModelMatches(s, meta, file);
    m->data = pairDataFromMetadata(s, meta, file);
  } else {
    m->data = pairData(s);
  }
  m->data.valid = pairData(s).valid;
  c.setImportOptions(pairImportOptions(m->data));
  if (!c.import() || !c.lower() || !c.lowerToLLVM() || !(m->jit = c.jit()))
    return nullptr;
  m->program = std::make_unique<attn::Program>(m->jit->info());
  uint64_t seed = o.seed.value_or(s.train.seed);
  m->params = attn::initParams(m->program->info(), seed);
  m->origin = "initialised from seed " + std::to_string(seed);
  if (!file.empty()) {
    attn::train::loadCheckpoint(file, m->program->info(), m->params, /*statesOptional=*/true);
    m->origin = "from " + file + " (step " + (meta.count("step") ? meta.at("step") : "?") + ")";
  }
  return m;
}

} // namespace attnc
