#include "compiler/Driver/Checkpoint.h"

#include <optional>
#include <stdexcept>

namespace attn::driver {

std::vector<yaml::SpecDifference> checkpointDifferences(const yaml::Spec &given,
                                                        const task::Metadata &meta,
                                                        const std::string &file,
                                                        bool (*relevant)(const std::string &)) {
  auto it = meta.find(task::kSpecKey);
  if (it == meta.end())
    return {};
  std::vector<yaml::Diagnostic> diags;
  std::optional<yaml::Spec> stored = yaml::parseSpecString(it->second, file + ":spec", diags);
  if (!stored)
    throw std::runtime_error(file + ": the spec stored in the checkpoint does not parse (" +
                             (diags.empty() ? std::string("?") : diags[0].str()) + ")");
  yaml::upgradeStoredSpec(*stored);
  return yaml::specDifferences(*stored, given, relevant);
}

void checkCheckpointSpec(const yaml::Spec &given, const task::Metadata &meta,
                         const std::string &file, bool (*relevant)(const std::string &),
                         const std::string &why, const std::string &hint) {
  std::vector<yaml::SpecDifference> diffs = checkpointDifferences(given, meta, file, relevant);
  if (diffs.empty())
    return;
  auto show = [](const std::string &v) { return v.empty() ? std::string("(none)") : v; };
  std::string msg = file + ": " + why + ":";
  // Where the given value came from: the file (or -c layer) that wrote the key, the --set
  // that set it, else (a default) the spec.
  auto source = [&](const std::string &key) {
    auto written = given.keyLocs.find(key);
    std::string where = written != given.keyLocs.end() ? written->second.file : given.file;
    if (where.rfind("--", 0) == 0) // --set, or a flag such as --precision
      return "from " + where;
    return "in " + (where.empty() ? std::string("the spec") : where);
  };
  for (const auto &d : diffs)
    msg += "\n  " + d.key + ": " + show(d.stored) + " in the checkpoint, " + show(d.given) + " " +
           source(d.key);
  throw std::runtime_error(msg + "\n  hint: " + hint);
}

void checkModelMatches(const yaml::Spec &given, const task::Metadata &meta,
                       const std::string &file) {
  checkCheckpointSpec(given, meta, file, yaml::changesEquations,
                      "the checkpoint was trained as another model",
                      "omit MODEL.yaml to use the spec the checkpoint carries, or give the one "
                      "it was trained with");
}

std::vector<std::string> checkResumable(const yaml::Spec &given, const task::Metadata &meta,
                                        const std::string &file, bool acceptChanges,
                                        const std::string &dataFingerprint) {
  // A changed learning rate or optimizer used to be taken silently (and a switch to sgd
  // dropped Adam's moments). Changes to how long it trains and how often it validates, logs
  // and saves are the point of resuming; other training changes need acceptChanges; a
  // different model never.
  checkCheckpointSpec(given, meta, file, yaml::changesEquations,
                      "--resume continues a run of another model",
                      "train into another --out, or resume with the spec the run was trained with");
  auto changed = [](const std::string &k) { return !yaml::resumable(k); };
  std::vector<std::string> accepted;
  auto stored = meta.find("data_fingerprint");
  bool dataChanged = !dataFingerprint.empty() && stored != meta.end() &&
                     stored->second != dataFingerprint;
  if (acceptChanges) { // listed, not refused
    for (const auto &d : checkpointDifferences(given, meta, file, changed))
      accepted.push_back("resuming with " + d.key + " changed from " + d.stored + " to " +
                         d.given);
    if (dataChanged)
      accepted.push_back("resuming on other training data (fingerprint " + stored->second +
                         " in the checkpoint, " + dataFingerprint + " now)");
    return accepted;
  }
  checkCheckpointSpec(given, meta, file, changed,
                      "--resume would continue the run with other training settings",
                      "restore them, add --accept-changes to resume with them anyway, or train "
                      "into another --out");
  if (dataChanged)
    throw std::runtime_error(
        file + ": --resume would continue the run on other training data (its pairs' "
               "fingerprint is " + stored->second + " in the checkpoint, " + dataFingerprint +
        " now: the data file changed)\n  hint: restore the data, add --accept-changes to "
        "resume on it anyway, or train into another --out");
  return accepted;
}

} // namespace attn::driver
