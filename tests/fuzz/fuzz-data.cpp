// libFuzzer harness for the data-file readers: the bytes as a TSV pair file (readTsv), a
// numbers file (readNumbers, 3 per line), a series (readSeries) and a vocabulary (Vocab::deserialize, the format
// checkpoints carry) either parse or throw a std::exception with a message.
#include "attn/data/Parallel.h"
#include "attn/data/TextFile.h"
#include "attn/data/Vocab.h"

#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <exception>
#include <string>

namespace {
template <class F> void expectCleanly(F &&f) {
  try {
    f();
  } catch (const std::exception &e) {
    if (!*e.what())
      std::abort();
  }
}
} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  static const std::string path = "/tmp/attn-fuzz-data-" + std::to_string(getpid());
  std::FILE *f = std::fopen(path.c_str(), "wb");
  if (!f || std::fwrite(data, 1, size, f) != size || std::fclose(f) != 0)
    std::abort();
  expectCleanly([&] {
    auto pairs = attn::data::readTsv(path);
    // Whatever was read also builds vocabularies and encodes.
    if (!pairs.empty()) {
      std::vector<std::vector<std::string>> sources;
      for (const auto &p : pairs)
        sources.push_back(attn::data::tokenize(p.source, attn::data::Tokenize::Word));
      attn::data::Vocab v = attn::data::Vocab::build(sources, 1, 0);
      if (attn::data::Vocab::deserialize(v.serialize()).size() != v.size())
        std::abort(); // serialize and deserialize are inverses
    }
  });
  expectCleanly([&] { attn::data::readNumbers(path, 3); });
  expectCleanly([&] { attn::data::readSeries(path); });
  expectCleanly([&] {
    attn::data::Vocab::deserialize(std::string(reinterpret_cast<const char *>(data), size));
  });
  return 0;
}
