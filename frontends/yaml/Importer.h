// Spec -> attn IR: importSpec hands the spec to its family's importer (Family.h);
// everything after it sees plain attn functions.
#pragma once

#include "frontends/yaml/Spec.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/OwningOpRef.h"

#include <string>

namespace attn::yaml {

struct ImportOptions {
  /// `task: lm`: the number of characters in the vocabulary (from the data).
  int64_t vocabSize = 0;
  /// `task: seq2seq`: vocabulary sizes (with the specials) and the compiled lengths: sources
  /// of `sourceLength` tokens, targets of `targetLength` (the longest target and its eos).
  /// `tag` / `classify`: the tokens' and the tags' or labels' vocabularies, `sourceLength`.
  int64_t sourceVocab = 0, targetVocab = 0;
  int64_t sourceLength = 0, targetLength = 0;
  /// `model.transformer` or `model.conv`, seq2seq: also build @decode_full, the decoder over
  /// every position at once, for decoding without the step cache (attnc --no-cache).
  bool decodeFull = false;
};

/// Builds the spec's model as attn functions reading named `attn.param` ops:
///   @forward(x) -> y            inference;
///   @loss(x, target) -> loss    the training objective (mean squared error), which
///                               attn-autodiff differentiates;
/// or, for `task: lm`, @loss(tokens, next) -> cross-entropy and @step(token, states...) ->
/// (logits, states...) for sampling;
/// or, for `task: seq2seq`, @loss(src, src_mask, tgt_in, tgt_out[, teacher]) -> cross-entropy
/// and, for decoding, @encode(src, src_mask) -> (decoder states..., [context]) and
/// @decode_step(token, states..., [context]) -> (log_probs, states...), with
/// `spec.decode.batch` (greedy) or `spec.decode.beam` rows;
/// or, for `task: tag` / `classify`, @loss(src, src_mask, tags | label) -> cross-entropy and
/// @forward(src, src_mask) -> scores per token / per sequence.
/// Inputs and results carry `attn.name` attributes that become the tensor names of the
/// compiled program's manifest. Needs the attn and func dialects loaded in `context`.
mlir::OwningOpRef<mlir::ModuleOp> importSpec(const Spec &spec, mlir::MLIRContext &context,
                                             const ImportOptions &options = {});

/// The model's name as a C identifier: "rnn-sine" -> "rnn_sine".
std::string cName(const std::string &name);

} // namespace attn::yaml
