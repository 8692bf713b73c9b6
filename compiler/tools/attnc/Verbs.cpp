// What several verbs share: error reporting, output files, checkpoint paths.
#include "Verbs.h"

#include "attn/Init.h"
#include "attn/train/Trainer.h"

#include <filesystem>
#include <fstream>
#include <iostream>

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
  for (const char *name : {"best.safetensors", "last.safetensors"})
    if (std::filesystem::exists(path + "/" + name))
      return path + "/" + name;
  throw std::runtime_error(path + ": no best.safetensors or last.safetensors in this directory");
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
  return c.load(o.model, o.overrides) ? 0 : 1;
}

std::unique_ptr<PairModel> loadPairModel(Compiler &c, const Options &o) {
  const attn::yaml::Spec &s = c.spec();
  auto m = std::make_unique<PairModel>();
  std::string file;
  std::map<std::string, std::string> meta;
  if (!o.ckpt.empty()) {
    file = checkpointFile(o.ckpt);
    meta = attn::train::readCheckpointMetadata(file);
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
