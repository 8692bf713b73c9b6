// Model families, the plug-ins of the frontend: each owns the combinations of keys it accepts
// beyond the schema (validated with every problem reported at once, each at the file:line:col
// of the key that causes it) and the importer of its models. A spec belongs to the first
// family that claims it; adding a family is one file defining its Family and one line in
// Family.cpp's registry.
#pragma once

#include "frontends/yaml/Importer.h"
#include "frontends/yaml/Spec.h"

#include <string>
#include <vector>

namespace attn::yaml {

/// Collects a validator's problems, each located at the key that causes it.
class Problems {
public:
  Problems(const Spec &spec, std::vector<Diagnostic> &diags) : spec(spec), diags(diags) {}
  /// An error at `key` (where the file or flag wrote it), else at `fallback` (its section).
  void error(const std::string &key, const Loc &fallback, std::string message,
             std::string hint = "");
  /// An error at `loc` (a section as a whole).
  void error(const Loc &loc, std::string message, std::string hint = "");
  size_t count() const { return diags.size() - before; }

private:
  const Spec &spec;
  std::vector<Diagnostic> &diags;
  size_t before = diags.size();
};

using ImportFn = mlir::OwningOpRef<mlir::ModuleOp> (*)(const Spec &, mlir::MLIRContext &,
                                                       const ImportOptions &);

struct Family {
  const char *name;    // "seq2seq", as `attnc check` and the docs name it
  const char *summary; // one line for the reference
  bool (*claims)(const Spec &spec);
  void (*validate)(const Spec &spec, Problems &problems);
  ImportFn import;
};

/// Every family, in the order they are asked to claim a spec.
const std::vector<const Family *> &families();
/// The family of `spec`; null when none claims it (an unknown task, which the schema rules out).
const Family *familyOf(const Spec &spec);

// The families (one file each).
extern const Family kTransformerFamily;   // TransformerFamily.cpp: model.transformer, any task
extern const Family kConvFamily;          // ConvFamily.cpp: model.conv, seq2seq
extern const Family kGraphFamily;         // GraphFamily.cpp: model.graph, model.mlir
extern const Family kSeq2SeqFamily;       // Seq2SeqFamily.cpp: recurrent encoder-decoders
extern const Family kLabellerFamily;      // LabellerFamily.cpp: recurrent taggers, classifiers
extern const Family kLanguageModelFamily; // LanguageModelFamily.cpp: recurrent lm
extern const Family kRegressorFamily;     // RegressorFamily.cpp: regress (mlp, rnn)

// What families share.
/// The data of a task that learns from pairs (seq2seq): a pair source, and valid lengths.
void checkSeq2SeqData(const Spec &spec, Problems &problems);
/// decode: what a seq2seq model's decoding asks (sampling and beams, n-best).
void checkDecoding(const Spec &spec, Problems &problems);
/// train.teacher_forcing refused for a decoder that trains on all positions at once
/// (`decoder`: "the Transformer's decoder", ...): scheduled sampling needs a step-by-step one.
void checkTeacherForced(const Spec &spec, Problems &problems, const std::string &decoder);
/// tag / classify: labelled sequences, valid lengths.
void checkLabelledData(const Spec &spec, Problems &problems);
/// lm: the builtin text, or a text file of the user's (data.path; data.tokens applies to it).
void checkTextData(const Spec &spec, Problems &problems);
/// "data.builtin: X" or "data.path", for messages.
std::string dataSource(const Spec &spec);

/// The importers: the recurrent families' (Importer.cpp, which holds their shared layers) and
/// the Transformer's (Transformer.cpp) and the convolutional one's (Conv.cpp). Each builds the
/// module's entry points (Importer.h).
mlir::OwningOpRef<mlir::ModuleOp> importRegressor(const Spec &, mlir::MLIRContext &,
                                                  const ImportOptions &);
mlir::OwningOpRef<mlir::ModuleOp> importLanguageModel(const Spec &, mlir::MLIRContext &,
                                                      const ImportOptions &);
mlir::OwningOpRef<mlir::ModuleOp> importLabeller(const Spec &, mlir::MLIRContext &,
                                                 const ImportOptions &);
mlir::OwningOpRef<mlir::ModuleOp> importSeq2Seq(const Spec &, mlir::MLIRContext &,
                                                const ImportOptions &);
mlir::OwningOpRef<mlir::ModuleOp> importTransformer(const Spec &, mlir::MLIRContext &,
                                                    const ImportOptions &);
mlir::OwningOpRef<mlir::ModuleOp> importConv(const Spec &, mlir::MLIRContext &,
                                             const ImportOptions &);

} // namespace attn::yaml
