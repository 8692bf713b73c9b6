//===- AttnEnums.td - the attn dialect's enumerated attributes ----------------------------===//
//
// Every attribute of an attn op that picks one of a fixed set of variants is an enum: the
// verifier then never sees an unknown spelling (the parser refuses it, naming the choices),
// and passes switch over a C++ enum instead of comparing strings.
//
//===----------------------------------------------------------------------------------===//
#ifndef ATTN_ENUMS_TD
#define ATTN_ENUMS_TD

include "mlir/IR/EnumAttr.td"

// The score function of attn.attention_scores (formulas there); attn-fuse-attention writes
// each kind as an attn.fused_attention score region.
def Attn_ScoreKind : I32EnumAttr<"ScoreKind", "an attention score function", [
    I32EnumAttrCase<"dot", 0>,
    I32EnumAttrCase<"scaled_dot", 1>,
    I32EnumAttrCase<"general", 2>,
    I32EnumAttrCase<"additive", 3>,
    I32EnumAttrCase<"cosine", 4>]> {
  let genSpecializedAttr = 0;
  let cppNamespace = "::mlir::attn";
}
// Written bare in the ops' assembly: `attn.attention_scores dot %q, %k ...`.
def Attn_ScoreKindAttr : EnumAttr<Attn_Dialect, Attn_ScoreKind, "score">;

// How the runtime initialises an attn.param (zeros, ones, uniform in [-scale, scale], normal
// with standard deviation scale, constant: every element is scale, alibi: ALiBi's slopes
// 2^(-8 (k + 1) / n) over the n elements).
def Attn_Init : I32EnumAttr<"Init", "a parameter initialisation", [
    I32EnumAttrCase<"zeros", 0>,
    I32EnumAttrCase<"ones", 1>,
    I32EnumAttrCase<"uniform", 2>,
    I32EnumAttrCase<"normal", 3>,
    I32EnumAttrCase<"constant", 4>,
    I32EnumAttrCase<"alibi", 5>]> {
  let genSpecializedAttr = 0;
  let cppNamespace = "::mlir::attn";
}
// `{init = #attn.init<normal>}`.
def Attn_InitAttr : EnumAttr<Attn_Dialect, Attn_Init, "init"> {
  let assemblyFormat = "`<` $value `>`";
}

// The equations of attn.gru_cell (formulas there).
def Attn_GruForm : I32EnumAttr<"GruForm", "a GRU cell's equations", [
    I32EnumAttrCase<"pytorch", 0>,
    I32EnumAttrCase<"seed", 1>,
    I32EnumAttrCase<"minimal", 2>]> {
  let genSpecializedAttr = 0;
  let cppNamespace = "::mlir::attn";
}
// `{form = #attn.gru_form<seed>}`.
def Attn_GruFormAttr : EnumAttr<Attn_Dialect, Attn_GruForm, "gru_form"> {
  let assemblyFormat = "`<` $value `>`";
}

// The peephole connections of attn.lstm_cell (formulas there): per-unit weights on the cell
// state (oneDNN's and Gers & Schmidhuber's form) or full matrices (the seed's (3-3)).
def Attn_PeepholeForm : I32EnumAttr<"PeepholeForm", "an LSTM's peephole connections", [
    I32EnumAttrCase<"diagonal", 0>,
    I32EnumAttrCase<"full", 1>]> {
  let genSpecializedAttr = 0;
  let cppNamespace = "::mlir::attn";
}
// `{peephole_form = #attn.peephole_form<full>}`.
def Attn_PeepholeFormAttr : EnumAttr<Attn_Dialect, Attn_PeepholeForm, "peephole_form"> {
  let assemblyFormat = "`<` $value `>`";
}

// The number type a product computes in (attn-precision; docs/precision.md). f32: today's
// kernels. bf16: both factors rounded to bfloat16 and multiplied with f32 accumulation, the
// result f32 (AVX512_BF16's vdpbf16ps, oneDNN's bf16 matmul). int8 (inference only): a
// parameter's weights quantised once per output channel, the other factor per row at each
// call, multiplied with int32 sums (AVX512_VNNI's vpdpbusd, oneDNN's int8 matmul).
def Attn_Precision : I32EnumAttr<"Precision", "the number type of an op's products", [
    I32EnumAttrCase<"f32", 0>,
    I32EnumAttrCase<"bf16", 1>,
    I32EnumAttrCase<"int8", 2>]> {
  let genSpecializedAttr = 0;
  let cppNamespace = "::mlir::attn";
}
// `{precision = #attn.precision<bf16>}`.
def Attn_PrecisionAttr : EnumAttr<Attn_Dialect, Attn_Precision, "precision"> {
  let assemblyFormat = "`<` $value `>`";
}

#endif // ATTN_ENUMS_TD
