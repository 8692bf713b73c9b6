"""Writes a damaged copy of a safetensors checkpoint, for robustness.test:
  edit-safetensors.py IN OUT --meta KEY=VALUE   (a metadata field replaced)
  edit-safetensors.py IN OUT --nan NAME         (the first float of tensor NAME made NaN;
                                                "-": of the first weight by name)"""
import json
import struct
import sys

src, dst, what, arg = sys.argv[1:5]
raw = open(src, "rb").read()
(n,) = struct.unpack("<Q", raw[:8])
header = json.loads(raw[8:8 + n])
data = bytearray(raw[8 + n:])
if what == "--meta":
    key, value = arg.split("=", 1)
    header["__metadata__"][key] = value
elif what == "--nan":
    if arg == "-":
        arg = min(k for k in header if k != "__metadata__" and "/" not in k)
    begin = header[arg]["data_offsets"][0]
    data[begin:begin + 4] = struct.pack("<f", float("nan"))
text = json.dumps(header).encode()
text += b" " * (-len(text) % 8)
open(dst, "wb").write(struct.pack("<Q", len(text)) + text + bytes(data))
