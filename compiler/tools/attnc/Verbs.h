// The verbs of attnc, one function each (attnc.cpp parses the command line and dispatches).
#pragma once

#include "Compiler.h"

#include <optional>
#include <string>
#include <vector>

namespace attnc {

struct Options {
  std::string verb, model, stage, output, header, input, out, ckpt;
  std::string cpu = "native";
  std::vector<attn::yaml::Override> overrides;
  std::optional<uint64_t> seed;
  std::optional<int64_t> count, steps;
  std::optional<double> temperature;
  std::optional<uint64_t> sampleSeed;
  std::optional<std::string> prime;
  bool resume = false;
  bool fuse = true;
  bool help = false;
};

/// Prints `attnc: error: msg` and a pointer to --help; returns the exit code 2.
int usageError(const std::string &msg);
/// Writes `text` to `path` ("" or "-": stdout); returns an exit code.
int writeText(const std::string &path, const std::string &text);

/// A checkpoint named on the command line: DIR means DIR/best.safetensors, else
/// DIR/last.safetensors; a file is itself.
std::string checkpointFile(const std::string &path);

int check(Compiler &c, const Options &o);    // Inspect.cpp
int emit(Compiler &c, const Options &o);     // Inspect.cpp
int run(Compiler &c, const Options &o);      // Run.cpp
int compile(Compiler &c, const Options &o);  // Run.cpp
int train(Compiler &c, const Options &o);    // Train.cpp
int eval(Compiler &c, const Options &o);     // Train.cpp

} // namespace attnc
