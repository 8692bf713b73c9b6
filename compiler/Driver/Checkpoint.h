// A checkpoint's stored spec against the one given: what `attnc run / eval / translate`
// refuse (a checkpoint trained as another model) and what `train --resume` refuses or lists.
#pragma once

#include "frontends/yaml/Spec.h"

#include "attn/task/Metadata.h"

#include <string>
#include <vector>

namespace attn::driver {

/// The keys for which `relevant` holds on which the spec stored in checkpoint `file` (its
/// metadata `meta`) and `given` differ; none for a checkpoint without a stored spec (written
/// before specs were stored: its tensors' names and shapes are all there is to check).
/// Throws when the stored spec does not parse.
std::vector<yaml::SpecDifference> checkpointDifferences(const yaml::Spec &given,
                                                        const task::Metadata &meta,
                                                        const std::string &file,
                                                        bool (*relevant)(const std::string &));

/// Throws when checkpointDifferences finds any, naming each key with both values; `why` says
/// what that means and `hint` what to do.
void checkCheckpointSpec(const yaml::Spec &given, const task::Metadata &meta,
                         const std::string &file, bool (*relevant)(const std::string &),
                         const std::string &why, const std::string &hint);

/// checkCheckpointSpec for the keys that change a model's equations (yaml::changesEquations).
void checkModelMatches(const yaml::Spec &given, const task::Metadata &meta,
                       const std::string &file);

/// --resume continues a run only under the spec it was trained with (and on the same
/// training data): another model is refused; other training settings are refused unless
/// `acceptChanges`, when they are returned as lines to print instead.
std::vector<std::string> checkResumable(const yaml::Spec &given, const task::Metadata &meta,
                                        const std::string &file, bool acceptChanges,
                                        const std::string &dataFingerprint);

} // namespace attn::driver
