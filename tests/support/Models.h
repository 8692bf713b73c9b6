// What the tests that run every model of models/ share: the models' names, and each one's name
// as a parameterised test's. The including target defines ATTN_SOURCE_DIR (the repository).
#pragma once

#include <algorithm>
#include <filesystem>
#include <string>
#include <vector>

namespace attn::testing {

// The stems of models/*.yaml, sorted.
inline std::vector<std::string> modelNames() {
  std::vector<std::string> names;
  for (const auto &e :
       std::filesystem::directory_iterator(std::string(ATTN_SOURCE_DIR) + "/models"))
    if (e.path().extension() == ".yaml")
      names.push_back(e.path().stem().string());
  std::sort(names.begin(), names.end());
  return names;
}

// A model's name as a test name, which may not hold '-'.
inline std::string testName(std::string model) {
  std::replace(model.begin(), model.end(), '-', '_');
  return model;
}

} // namespace attn::testing
