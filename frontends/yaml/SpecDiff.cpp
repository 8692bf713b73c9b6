// Differences between two specs, compared key by key in their printed form (specToYaml), so
// that every key, default or not, takes part and a new key needs no code here.
#include "frontends/yaml/Spec.h"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <map>

namespace attn::yaml {
namespace {

// Dotted key -> value text; a sequence as "[a, b]".
void flatten(const YAML::Node &node, const std::string &prefix,
             std::vector<std::pair<std::string, std::string>> &out) {
  if (node.IsMap()) {
    for (const auto &entry : node)
      flatten(entry.second, prefix.empty() ? entry.first.Scalar()
                                           : prefix + "." + entry.first.Scalar(),
              out);
    return;
  }
  bool nested = node.IsSequence() && std::any_of(node.begin(), node.end(),
                                                 [](const YAML::Node &n) { return !n.IsScalar(); });
  if (nested) { // model.graph.nodes: each item by its index
    for (size_t i = 0; i < node.size(); ++i)
      flatten(node[i], prefix + "[" + std::to_string(i) + "]", out);
    return;
  }
  // In the graph form a quoted scalar is a string, whatever it spells ("1.0" is not 1.0).
  bool graph = prefix.rfind("model.graph.", 0) == 0;
  auto scalar = [&](const YAML::Node &n) {
    return graph && n.Tag() == "!" ? "\"" + n.Scalar() + "\"" : n.Scalar();
  };
  std::string text;
  if (node.IsSequence()) {
    for (const auto &item : node)
      text += (text.empty() ? "" : ", ") + scalar(item);
    text = "[" + text + "]";
  } else {
    text = scalar(node);
  }
  out.push_back({prefix, text});
}

bool startsWith(const std::string &s, const char *prefix) { return s.rfind(prefix, 0) == 0; }

} // namespace

std::vector<SpecDifference> specDifferences(const Spec &stored, const Spec &given,
                                            bool (*relevant)(const std::string &)) {
  std::vector<std::pair<std::string, std::string>> a, b;
  flatten(YAML::Load(specToYaml(stored)), "", a);
  flatten(YAML::Load(specToYaml(given)), "", b);
  std::map<std::string, std::string> inGiven(b.begin(), b.end());
  std::vector<SpecDifference> out;
  for (const auto &[key, value] : a) {
    auto it = inGiven.find(key);
    std::string other = it == inGiven.end() ? "" : it->second;
    if (it != inGiven.end())
      inGiven.erase(it);
    if (value != other && relevant(key))
      out.push_back({key, value, other});
  }
  for (const auto &[key, value] : b) // keys only the given spec has, in its order
    if (inGiven.count(key) && relevant(key))
      out.push_back({key, "", value});
  return out;
}

bool upgradeStoredSpec(Spec &s) {
  auto &a = s.model.attention;
  if (!a || a->type != AttentionType::Local || a->align != Align::Monotonic || a->gaussian)
    return false;
  a->gaussian = true;
  return true;
}

bool changesEquations(const std::string &key) {
  return key == "task" || startsWith(key, "model.") || key == "data.tokens";
}

std::map<std::string, std::string> equationValues(const Spec &s) {
  std::vector<std::pair<std::string, std::string>> all;
  flatten(YAML::Load(specToYaml(s)), "", all);
  std::map<std::string, std::string> out;
  // model.mlir is a path (made absolute): the same module found elsewhere is the same model,
  // and an executable has no spec to give instead, as attnc's user can.
  for (auto &[key, value] : all)
    if (changesEquations(key) && key != "model.mlir")
      out.emplace(key, value);
  return out;
}

bool resumable(const std::string &key) {
  return key == "train.steps" || key == "train.eval_every" || key == "train.eval_bleu" ||
         key == "train.log_every" ||
         startsWith(key, "train.checkpoint.") || key == "train.early_stopping.patience" ||
         startsWith(key, "decode.") || startsWith(key, "sample.");
}

} // namespace attn::yaml
