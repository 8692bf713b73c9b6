# lit configuration of attnc's IR and frontend tests.
import os
import lit.formats
from lit.llvm import llvm_config

config.name = "attnc"
config.test_format = lit.formats.ShTest(not llvm_config.use_lit_shell)
config.suffixes = [".mlir", ".test"]
config.test_source_root = os.path.dirname(__file__)
config.test_exec_root = os.path.join(config.attn_binary_dir, "tests", "lit")
config.excludes = ["CMakeLists.txt", "lit.cfg.py", "lit.site.cfg.py.in", "inputs"]

config.substitutions.append(("%models", os.path.join(config.attn_source_dir, "models")))
config.substitutions.append(("%inputs", os.path.join(os.path.dirname(__file__), "inputs")))
config.substitutions.append(("%src", config.attn_source_dir))
config.substitutions.append(("%bin", config.attn_binary_dir))

# Our tools first, then LLVM's (FileCheck, not), then the system's (diff).
config.environment["PATH"] = os.pathsep.join(
    [config.attn_tools_dir, config.llvm_tools_dir, os.environ.get("PATH", "/usr/bin:/bin")])
llvm_config.add_tool_substitutions(["FileCheck", "not", "count"], [config.llvm_tools_dir])

# CPU features the precision policies need (docs/precision.md): `REQUIRES: avx512vnni`.
try:
    with open("/proc/cpuinfo") as cpuinfo:
        flags = cpuinfo.read()
    for flag, feature in [("avx512_vnni", "avx512vnni"), ("avx512_bf16", "avx512bf16")]:
        if " " + flag in flags:
            config.available_features.add(feature)
except OSError:
    pass
