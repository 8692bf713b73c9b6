// What several verbs share: error reporting, output files, checkpoint paths.
#include "Verbs.h"

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

} // namespace attnc
