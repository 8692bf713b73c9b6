// Deterministic parameter initialisation from a program manifest.
//
// Algorithm (bit-exact; RNG primitives are specified in attn/Random.h):
//   For parameter p (in manifest order), independently of every other parameter:
//     rng = Rng(seed ^ fnv1a64(p.name))
//   so adding, removing or reordering parameters never changes the values of the others.
//   Elements are filled in row-major order:
//     "zeros":   0
//     "ones":    1
//     "constant": (float)scale   (a learned scalar's starting value: an ALiBi slope)
//     "alibi":   x[k] = (float)2^(-8 (k + 1) / n), n = numel   (ALiBi's slope of head k of n;
//                Press et al. 2022, the geometric sequence for any n)
//     "uniform": u = rng.nextDouble();  x = (float)((2*u - 1) * scale)        in [-scale, scale]
//     "normal":  Box-Muller on pairs of elements (2k, 2k+1):
//                u1 = rng.nextDouble(); u2 = rng.nextDouble();   (u1 drawn first)
//                r  = sqrt(-2 * log(1 - u1));                    (1 - u1 is in (0, 1])
//                x[2k]   = (float)(scale * r * cos(2*pi*u2));
//                x[2k+1] = (float)(scale * r * sin(2*pi*u2));     (dropped if past the end)
//   All arithmetic before the final float cast is in double.
//   i32 parameters accept only "zeros" and "ones"; "constant" and "alibi" need f32.
//   A missing (NULL) or unknown init string throws std::runtime_error naming the parameter.
#ifndef ATTN_INIT_H
#define ATTN_INIT_H

#include "attn/Tensor.h"
#include "attn/abi.h"

#include <cstdint>
#include <vector>

namespace attn {

// One tensor per program parameter, in manifest order (ready for Program::call).
std::vector<Tensor> initParams(const attn_program_info &info, uint64_t seed);

// The same for a single parameter (what initParams does for each).
Tensor initParam(const attn_tensor_info &param, uint64_t seed);

} // namespace attn

#endif // ATTN_INIT_H
