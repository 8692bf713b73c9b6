// model.conv: the convolutional encoder-decoder (seq2seq only); Conv.cpp imports it.
#include "frontends/yaml/Family.h"

namespace attn::yaml {
namespace {

bool claims(const Spec &s) { return s.model.conv.has_value(); }

void validate(const Spec &s, Problems &p) {
  const ConvSpec &c = *s.model.conv;
  if (s.task != Task::Seq2seq) {
    p.error(c.loc,
            "model.conv is a convolutional encoder-decoder, for task 'seq2seq', not '" +
                nameOf(s.task) + "'",
            "set task: seq2seq, or use model.rnn or model.transformer");
    return; // nothing else about it means anything
  }
  checkTeacherForced(s, p, "the convolutional decoder");
  if (s.model.attention)
    p.error(s.model.attention->loc,
            "model.attention is the recurrent decoder's attention; every block of the "
            "convolutional decoder has its own",
            "remove model.attention");
  const Seq2SeqSpec &ss = s.model.seq2seq, plain;
  if (ss.context != plain.context || ss.decoderHidden != plain.decoderHidden)
    p.error(ss.loc,
            "model.seq2seq.context and decoder_hidden shape a recurrent decoder; the "
            "convolutional one reads the encoder through attention, model.conv.channels wide",
            "remove them");
  int64_t decoderLayers = c.decoderLayers > 0 ? c.decoderLayers : c.layers;
  if (s.decode.attentionLayer > decoderLayers)
    p.error("decode.attention_layer", s.decode.loc,
            "decode.attention_layer is " + std::to_string(s.decode.attentionLayer) +
                ", but the decoder has " + std::to_string(decoderLayers) + " blocks",
            "blocks count from 1; 0 plots the last");
  if (s.decode.attentionHead != 0)
    p.error("decode.attention_head", s.decode.loc,
            "decode.attention_head chooses a Transformer's head; the convolutional decoder's "
            "attention has one",
            "remove decode.attention_head");
  checkSeq2SeqData(s, p);
  checkDecoding(s, p);
}

} // namespace

const Family kConvFamily = {
    "conv", "Convolutional encoder-decoders with GLU and multi-step attention (seq2seq)", claims,
    validate, importConv};

} // namespace attn::yaml
