// Spec -> YAML: the validated spec with every default filled in. `attnc emit --stage=spec`
// prints it, and checkpoints carry it, so a checkpoint alone can rebuild its model. yaml-cpp's
// emitter writes it: free text (names, paths, the sampling prime) is double-quoted, so a name
// such as "a: b", "null" or "[1, 2]" reads back as the same string; numbers are written in
// their shortest form that reads back to the same double.
#include "frontends/yaml/Schema.h"
#include "frontends/yaml/Spec.h"

#include <yaml-cpp/yaml.h>


namespace attn::yaml {
namespace {

// An exclusive key that is not written (data.path beside data.builtin) has no value to print.
bool written(const KeySchema &key, const Spec &s) {
  if (key.type != KeyType::String || !key.defaultValue.empty() || key.required)
    return true;
  std::optional<KeyValue> value = key.bind.get(s);
  return value && !std::get<std::string>(*value).empty();
}

// The keys under `parent`, in schema order, through their bindings (Schema.h).
void emitChildren(const std::string &parent, const Spec &s, YAML::Emitter &out) {
  for (const KeySchema *key : childrenOf(parent)) {
    if (key->type == KeyType::Map) {
      if (key->bind.present && !key->bind.present(s))
        continue; // an optional section the spec does not have
      out << YAML::Key << key->name() << YAML::Value << YAML::BeginMap;
      emitChildren(key->path, s, out);
      out << YAML::EndMap;
      continue;
    }
    std::optional<KeyValue> value = key->bind.get(s);
    if (!value || !written(*key, s))
      continue;
    out << YAML::Key << key->name() << YAML::Value;
    if (key->type == KeyType::Yaml)
      emitTree(out, std::get<YamlTree>(*value));
    else if (key->type == KeyType::String && !key->plain)
      out << YAML::DoubleQuoted << std::get<std::string>(*value);
    else if (key->type == KeyType::IntList) {
      out << YAML::Flow << YAML::BeginSeq;
      for (int64_t v : std::get<std::vector<int64_t>>(*value))
        out << std::to_string(v);
      out << YAML::EndSeq;
    } else
      out << valueText(*key, *value);
  }
}

} // namespace

void resolveDependentDefaults(Spec &s) {
  if (auto &a = s.model.attention; a && a->type == AttentionType::Local && !a->gaussian)
    a->gaussian = a->gaussianWeighting();
}

std::string specToYaml(const Spec &spec) {
  Spec s = spec;
  resolveDependentDefaults(s);
  YAML::Emitter out;
  out << YAML::BeginMap;
  emitChildren("", s, out);
  out << YAML::EndMap;
  return std::string(out.c_str()) + "\n";
}

} // namespace attn::yaml
