// The tensor names of the contract between compiled programs and the runtime: the compiler
// writes them into entry signatures (`attn.name`, then the manifest) and the runtime finds
// tensors by them. One list, so neither side spells a name the other does not know.
#ifndef ATTN_NAMES_H
#define ATTN_NAMES_H

namespace attn::names {

// The runtime kernels attn-to-cuda calls (attn/cuda/Offload.h: attn_rt_cuda_flash_attention,
// ..._backward): a program calling one needs a GPU (attn_program_info::device).
inline constexpr const char *kCudaKernelPrefix = "attn_rt_cuda_";

// @loss_grad: the loss, then "grad:<param>" per trainable parameter (attn-autodiff).
inline constexpr const char *kGradPrefix = "grad:";
// @train_step(inputs..., lr, step) -> (loss, grad_norm, "update:<param or state>"...)
// (attn-train-step): the runtime moves each update into the parameter it names.
inline constexpr const char *kUpdatePrefix = "update:";
// @apply_update(grad:<param>..., lr, step) -> (grad_norm, update:...) (attn-train-step
// split-update): @train_step's update from gradients the caller has combined.
// @loss_weight(@loss's inputs) -> weight (attn-loss-weight): what the batch's mean loss
// weighs when shards of a larger batch are combined.
inline constexpr const char *kWeight = "weight";
inline constexpr const char *kLoss = "loss";
inline constexpr const char *kGradNorm = "grad_norm";
inline constexpr const char *kLearningRate = "lr";
inline constexpr const char *kStep = "step";
// @loss inputs drawn per training step (attn::task::perStepInputs): scheduled sampling's
// coins, and dropout keep masks ("dropout.<site>").
inline constexpr const char *kTeacher = "teacher";
// A forecaster's coins (task regress, horizon > 1): drawn like `teacher` in training, but all
// 0 in validation, so that its validation loss is that of its free-running forecast.
inline constexpr const char *kForecastTeacher = "forecast_teacher";
inline constexpr const char *kDropoutPrefix = "dropout";
// Hard attention's draws: Gumbel noise [B, T, S] (the decoder's position at step t of row b
// is argmax_j log alpha_j + noise) and coins [B, T] (1: the step reads the soft expectation).
// Validation gets zeros: the most likely positions, never the expectation.
inline constexpr const char *kHardNoise = "hard_noise";
inline constexpr const char *kHardSoft = "hard_soft";
// @decode_step and @step results: the next token's log-probabilities, and the attention
// weights over the source when the model has them.
inline constexpr const char *kLogProbs = "log_probs";
inline constexpr const char *kAttention = "attention";
// A cached Transformer's @step / @decode_step input: the position being decoded.
inline constexpr const char *kPosition = "position";
// A language model's step without a cache (the graph form's): @step_full(tokens: i32 [1, L])
// -> (logits: f32 [1, L, V]), the network over L positions; the sampler runs it on the tokens
// so far and reads the logits at the last (attn/decode/Sample.h).
inline constexpr const char *kStepFull = "step_full";
// The entry-point attribute (an i64) that says how many steps a step entry's carried state
// holds (a cached Transformer's cache length): attn_entry_info::capacity.
inline constexpr const char *kCapacityAttr = "attn.capacity";

} // namespace attn::names

#endif
