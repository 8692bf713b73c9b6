// Checkpoints: named tensors plus string metadata, stored in the safetensors format
// (https://github.com/huggingface/safetensors), so that other tools (Python's `safetensors`,
// PyTorch, NumPy readers) can open what attnc writes and vice versa for f32/i32 tensors.
//
// File layout: an 8-byte little-endian uint64 N, then N bytes of UTF-8 JSON (padded with spaces
// to a multiple of 8 so the data is aligned), then the raw little-endian tensor data:
//
//   {"__metadata__":{"k":"v"},"w":{"dtype":"F32","shape":[2,3],"data_offsets":[0,24]}, ...}
//
// data_offsets are [begin, end) byte offsets relative to the start of the data section.
#ifndef ATTN_CHECKPOINT_CHECKPOINT_H
#define ATTN_CHECKPOINT_CHECKPOINT_H

#include "attn/Tensor.h"

#include <map>
#include <string>
#include <utility>
#include <vector>

namespace attn::checkpoint {

struct Checkpoint {
  // In file order (ascending data offsets); names are unique and not "__metadata__".
  std::vector<std::pair<std::string, attn::Tensor>> tensors;
  // The safetensors "__metadata__" map (string -> string); omitted from the file when empty.
  std::map<std::string, std::string> metadata;

  // The tensor named `name`, or nullptr if absent.
  const attn::Tensor *find(const std::string &name) const;
};

// Writes `ckpt` to `path` atomically: the file goes to `path + ".tmp-<pid>"`, is fsync'ed, renamed
// over `path`, and then the directory is fsync'ed. A kill at any moment leaves either the old file
// or the new one, never a torn file (a stale temp file may remain; load() never reads it). Missing
// parent directories are created. Throws std::runtime_error("<path>: <reason>") on an invalid
// checkpoint (duplicate or reserved names, non-UTF-8 strings) or any I/O error, after removing
// the temp file. Not safe for concurrent saves to the same path from one process (same temp name).
void save(const std::string &path, const Checkpoint &ckpt);

// Reads and fully validates a safetensors file: header length sane and within the file, JSON
// well-formed, dtypes F32/I32 only, shape * dtype size == offsets span, offsets within the data
// section, non-overlapping and covering it exactly. Throws std::runtime_error("<path>: <what is
// wrong>") otherwise; never crashes on garbage input.
Checkpoint load(const std::string &path);

// The same over `size` bytes in memory (an executable's embedded weights); `name` stands for
// the path in messages.
Checkpoint parse(const void *bytes, size_t size, const std::string &name);
// The metadata of the safetensors file at `path`, its header validated as load() does, without
// reading the tensors (a checkpoint's spec and vocabularies are wanted before its weights).
std::map<std::string, std::string> loadMetadata(const std::string &path);

} // namespace attn::checkpoint

#endif // ATTN_CHECKPOINT_CHECKPOINT_H
