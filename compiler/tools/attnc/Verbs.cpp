// What several verbs share: error reporting, output files, loading the spec.
#include "Verbs.h"

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

int load(attn::driver::Session &session, const Common &c, const std::string &ckpt) {
  if (!c.files.empty() && !session.loadSpec(c.files, c.overrides))
    return 1;
  if (!ckpt.empty() && !session.openCheckpoint(ckpt, c.overrides))
    return 1;
  return 0;
}

} // namespace attnc
