"""What the reference scripts share: the test's error measure and a safetensors writer.

Imported by make-*-reference.py (run them from any directory; they add this folder to the
module path)."""

import json
import os
import struct

import numpy as np


def rel_err(a, b):
    """max|a - b| / max(max|b|, 1e-6): the test's measure, per tensor."""
    return float(np.max(np.abs(a - b)) / max(float(np.max(np.abs(b))), 1e-6))


def write_safetensors(path, tensors, metadata):
    """tensors: list of (name, float32 or int32 array). Little-endian F32/I32, header padded
    to 8 bytes; written to a temporary file and renamed."""
    header = {"__metadata__": metadata}
    offset = 0
    blobs = []
    for name, array in tensors:
        if array.dtype == np.int32:
            dtype, data = "I32", np.ascontiguousarray(array, dtype="<i4").tobytes()
        else:
            dtype, data = "F32", np.ascontiguousarray(array, dtype="<f4").tobytes()
        header[name] = {"dtype": dtype, "shape": list(array.shape),
                        "data_offsets": [offset, offset + len(data)]}
        offset += len(data)
        blobs.append(data)
    text = json.dumps(header, separators=(",", ":")).encode("utf-8")
    text += b" " * ((8 - (8 + len(text)) % 8) % 8)
    tmp = path + ".tmp"
    with open(tmp, "wb") as f:
        f.write(struct.pack("<Q", len(text)))
        f.write(text)
        for blob in blobs:
            f.write(blob)
    os.replace(tmp, path)
