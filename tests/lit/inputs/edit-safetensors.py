"""Writes a damaged copy of a safetensors checkpoint, for robustness.test:
  edit-safetensors.py IN OUT --meta KEY=VALUE   (a metadata field replaced)
  edit-safetensors.py IN OUT --nan NAME         (the first float of tensor NAME made NaN;
                                                "-": of the first weight by name)
  edit-safetensors.py IN OUT --flip NAME        (the same byte changed, checksums kept: a file
                                                damaged on disk)
--nan writes the tensors' CRC-32s anew (the metadata's "attn.crc32"), as attnc would have: a
NaN that was saved, not damage."""
import json
import struct
import sys
import zlib

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
    sums = {k: "%08x" % zlib.crc32(bytes(data[v["data_offsets"][0]:v["data_offsets"][1]]))
            for k, v in header.items() if k != "__metadata__"}
    header["__metadata__"]["attn.crc32"] = json.dumps(sums, separators=(",", ":"))
elif what == "--flip":
    if arg == "-":
        arg = min(k for k in header if k != "__metadata__" and "/" not in k)
    begin = header[arg]["data_offsets"][0]
    data[begin] ^= 0x40
text = json.dumps(header).encode()
text += b" " * (-len(text) % 8)
open(dst, "wb").write(struct.pack("<Q", len(text)) + text + bytes(data))
