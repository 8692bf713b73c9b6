// model.graph and model.mlir: networks a researcher writes in attn ops, for regress, classify
// and tag, and (model.graph) lm and seq2seq; Graph.cpp reads and imports them.
#include "frontends/yaml/Graph.h"

namespace attn::yaml {
namespace {

bool claims(const Spec &s) { return s.model.graph.has_value() || !s.model.mlir.empty(); }

void validate(const Spec &s, Problems &p) {
  bool graph = s.model.graph.has_value();
  const char *form = graph ? "model.graph" : "model.mlir";
  Loc at = graph ? s.model.graph->loc : s.locOf("model.mlir", s.model.loc);
  bool decodes = graph && (s.task == Task::Lm || s.task == Task::Seq2seq);
  if (s.task != Task::Regress && s.task != Task::Classify && s.task != Task::Tag && !decodes) {
    p.error(at,
            std::string(form) +
                (graph ? " fills the entry points of task 'regress', 'classify', 'tag', 'lm' or "
                         "'seq2seq'"
                       : " fills the entry points of task 'regress', 'classify' or 'tag'") +
                ", not '" + nameOf(s.task) + "'",
            "write the network as model.graph, or use a family (model.rnn, model.transformer, "
            "model.conv)");
    return;
  }
  if (s.model.embedding.dim != EmbeddingSpec().dim)
    p.error(s.model.embedding.loc,
            std::string("model.embedding.dim does not apply to ") + form +
                ": its embedding is a parameter it reads",
            "remove model.embedding, and declare the table in the graph");
  if (s.task == Task::Regress)
    kRegressorFamily.validate(s, p); // the data, and output.size against the horizon
  else if (s.task == Task::Lm)
    checkTextData(s, p);
  else if (s.task == Task::Seq2seq) {
    checkSeq2SeqData(s, p);
    checkDecoding(s, p);
    checkTeacherForced(s, p, "a graph's decoder");
  } else
    checkLabelledData(s, p);
  if (graph)
    graph::readGraph(s, p);
}

} // namespace

const Family kGraphFamily = {"graph",
                             "networks written as attn ops (model.graph: regress, classify, tag, "
                             "lm, seq2seq) or as a module of attn IR (model.mlir: regress, "
                             "classify, tag)",
                             claims, validate, graph::importGraph};

} // namespace attn::yaml
