#include "compiler/Target/Manifest.h"

#include "attn/Names.h"
#include "attn/Tensor.h"
#include "dialect/AttnDialect.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinAttributes.h"

#include <nlohmann/json.hpp>

#include <cstdio>
#include <sstream>

using namespace mlir;

namespace attn::target {

std::string entryPrefix(const std::string &cname) { return "attn_" + cname + "_"; }

namespace {
using nlohmann::json;

json toJson(const TensorDesc &t) {
  return {{"name", t.name},
          {"dtype", dtypeName(t.dtype)},
          {"shape", t.shape},
          {"init", t.init},
          {"scale", t.scale}};
}

TensorDesc tensorFrom(const json &j) {
  TensorDesc t;
  t.name = j.at("name").get<std::string>();
  std::string dtype = j.at("dtype").get<std::string>();
  if (dtype != "f32" && dtype != "i32")
    throw std::runtime_error("dtype " + dtype);
  t.dtype = dtype == "f32" ? ATTN_F32 : ATTN_I32;
  t.shape = j.at("shape").get<std::vector<int64_t>>();
  t.init = j.at("init").get<std::string>();
  t.scale = j.at("scale").get<float>();
  return t;
}

json toJson(const std::vector<TensorDesc> &list) {
  json out = json::array();
  for (const TensorDesc &t : list)
    out.push_back(toJson(t));
  return out;
}

std::vector<TensorDesc> tensorsFrom(const json &j) {
  std::vector<TensorDesc> out;
  for (const json &t : j)
    out.push_back(tensorFrom(t));
  return out;
}
} // namespace

std::string manifestToJson(const Manifest &m) {
  json entries = json::array();
  for (const EntryDesc &e : m.entries)
    entries.push_back({{"name", e.name},
                       {"symbol", e.symbol},
                       {"inputs", toJson(e.inputs)},
                       {"outputs", toJson(e.outputs)},
                       {"capacity", e.capacity}});
  return json{{"model", m.model},
              {"cname", m.cname},
              {"cpu", m.cpu},
              {"cpu_features", m.cpuFeatures},
              {"device", m.device},
              {"params", toJson(m.params)},
              {"entries", entries}}
      .dump();
}

std::optional<Manifest> manifestFromJson(const std::string &text) {
  try {
    json j = json::parse(text);
    Manifest m;
    m.model = j.at("model").get<std::string>();
    m.cname = j.at("cname").get<std::string>();
    m.cpu = j.at("cpu").get<std::string>();
    m.cpuFeatures = j.at("cpu_features").get<std::string>();
    m.device = j.at("device").get<std::string>();
    m.params = tensorsFrom(j.at("params"));
    for (const json &e : j.at("entries")) {
      EntryDesc d;
      d.name = e.at("name").get<std::string>();
      d.symbol = e.at("symbol").get<std::string>();
      d.inputs = tensorsFrom(e.at("inputs"));
      d.outputs = tensorsFrom(e.at("outputs"));
      d.capacity = e.at("capacity").get<int64_t>();
      m.entries.push_back(std::move(d));
    }
    return m;
  } catch (const std::exception &) {
    return std::nullopt;
  }
}

static FailureOr<TensorDesc> describe(Location loc, Type type, std::string name) {
  auto tensor = dyn_cast<RankedTensorType>(type);
  if (!tensor || !tensor.hasStaticShape() || tensor.getRank() > ATTN_MAX_RANK ||
      !(tensor.getElementType().isF32() || tensor.getElementType().isInteger(32)))
    return emitError(loc) << "'" << name << "' has type " << type
                          << "; entry points take static f32/i32 tensors of rank <= "
                          << ATTN_MAX_RANK;
  TensorDesc d;
  d.name = std::move(name);
  d.dtype = tensor.getElementType().isF32() ? ATTN_F32 : ATTN_I32;
  d.shape.assign(tensor.getShape().begin(), tensor.getShape().end());
  return d;
}

FailureOr<Manifest> readManifest(ModuleOp module, const std::string &model,
                                 const std::string &cname) {
  Manifest m;
  m.model = model;
  m.cname = cname;
  auto table = module->getAttrOfType<ArrayAttr>("attn.params");
  for (Attribute a : table ? table.getValue() : ArrayRef<Attribute>{}) {
    auto entry = cast<DictionaryAttr>(a);
    auto desc = describe(module.getLoc(), entry.getAs<TypeAttr>("type").getValue(),
                         entry.getAs<StringAttr>("name").str());
    if (failed(desc))
      return failure();
    desc->init =
        mlir::attn::stringifyInit(entry.getAs<mlir::attn::InitAttr>("init").getValue()).str();
    desc->scale = entry.getAs<FloatAttr>("scale").getValueAsDouble();
    m.params.push_back(*desc);
  }
  for (auto func : module.getOps<func::FuncOp>()) {
    // attn-to-cuda's kernel calls: the program needs a GPU where it runs.
    if (func.isExternal() && func.getSymName().starts_with(::attn::names::kCudaKernelPrefix))
      m.device = "cuda";
    if (func.isPrivate() || func.isExternal())
      continue;
    EntryDesc e;
    e.name = func.getSymName().str();
    e.symbol = entryPrefix(cname) + e.name;
    FunctionType type = func.getFunctionType();
    for (unsigned i = m.params.size(); i < type.getNumInputs(); ++i) {
      auto nameAttr = func.getArgAttrOfType<StringAttr>(i, "attn.name");
      auto desc = describe(func.getLoc(), type.getInput(i),
                           nameAttr ? nameAttr.str() : "arg" + std::to_string(i));
      if (failed(desc))
        return failure();
      e.inputs.push_back(*desc);
    }
    for (unsigned i = 0; i < type.getNumResults(); ++i) {
      auto nameAttr = func.getResultAttrOfType<StringAttr>(i, "attn.name");
      auto desc = describe(func.getLoc(), type.getResult(i),
                           nameAttr ? nameAttr.str() : "result" + std::to_string(i));
      if (failed(desc))
        return failure();
      e.outputs.push_back(*desc);
    }
    if (auto capacity = func->getAttrOfType<IntegerAttr>(::attn::names::kCapacityAttr))
      e.capacity = capacity.getInt();
    m.entries.push_back(std::move(e));
  }
  return m;
}

static std::string cString(const std::string &s) {
  std::string out = "\"";
  for (char c : s)
    out += (c == '"' || c == '\\') ? std::string("\\") + c : std::string(1, c);
  return out + "\"";
}

static std::string cFloat(float v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.9gf", v);
  std::string s = buf;
  // "1f" is not a C literal; "1.f" is.
  if (s.find_first_of(".en") == std::string::npos)
    s.insert(s.size() - 1, ".");
  return s;
}

static void renderTensors(std::ostringstream &os, const std::string &var,
                          const std::vector<TensorDesc> &tensors) {
  os << "static const attn_tensor_info " << var << "[] = {\n";
  for (const TensorDesc &t : tensors) {
    os << "  {" << cString(t.name) << ", " << (t.dtype == ATTN_F32 ? "ATTN_F32" : "ATTN_I32")
       << ", " << t.shape.size() << ", {";
    for (size_t i = 0; i < t.shape.size(); ++i)
      os << (i ? ", " : "") << t.shape[i];
    os << "}, " << (t.init.empty() ? "0" : cString(t.init)) << ", " << cFloat(t.scale)
       << "},\n";
  }
  if (tensors.empty()) // C forbids empty initialiser lists
    os << "  {0, ATTN_F32, 0, {0}, 0, 0.f},\n";
  os << "};\n";
}

std::string renderHeader(const Manifest &m, const std::string &source) {
  std::ostringstream os;
  std::string guard = "ATTN_MODEL_" + m.cname + "_H";
  for (char &c : guard)
    c = std::toupper((unsigned char)c);
  std::string p = "attn_" + m.cname;
  os << "/* Generated by `attnc compile` from " << source << ": do not edit.\n"
     << " * Link with the object file, the attn runtime and oneDNN. */\n"
     << "#ifndef " << guard << "\n#define " << guard << "\n\n#include \"attn/abi.h\"\n\n"
     << "#ifdef __cplusplus\nextern \"C\" {\n#endif\n\n";
  for (const EntryDesc &e : m.entries)
    os << "/* args: " << m.params.size() << " parameters, " << e.inputs.size() << " inputs, "
       << e.outputs.size() << " outputs */\nvoid " << e.symbol << "(void **args);\n";
  os << "\n";
  renderTensors(os, p + "_params", m.params);
  for (const EntryDesc &e : m.entries) {
    renderTensors(os, p + "_" + e.name + "_inputs", e.inputs);
    renderTensors(os, p + "_" + e.name + "_outputs", e.outputs);
  }
  os << "static const attn_entry_info " << p << "_entries[] = {\n";
  for (const EntryDesc &e : m.entries)
    os << "  {" << cString(e.name) << ", " << e.symbol << ", " << e.inputs.size() << ", " << p
       << "_" << e.name << "_inputs, " << e.outputs.size() << ", " << p << "_" << e.name
       << "_outputs, " << e.capacity << "},\n";
  os << "};\n"
     << "static const attn_program_info " << p << "_program = {" << cString(m.model) << ", "
     << m.params.size() << ", " << p << "_params, " << m.entries.size() << ", " << p << "_entries, "
     << (m.cpu.empty() ? "0" : cString(m.cpu)) << ", "
     << (m.cpuFeatures.empty() ? "0" : cString(m.cpuFeatures)) << ", "
     << (m.device.empty() ? "0" : cString(m.device))
     << "};\n\n#ifdef __cplusplus\n}\n#endif\n\n#endif\n";
  return os.str();
}

ProgramInfo::ProgramInfo(const Manifest &m,
                         const std::function<attn_entry_fn(const std::string &)> &resolve) {
  auto list = [&](const std::vector<TensorDesc> &ts) {
    tensorLists.emplace_back();
    for (const TensorDesc &t : ts)
      tensorLists.back().push_back(convert(t));
    return tensorLists.back().data();
  };
  // Reserve so that data() pointers stay valid while lists are added.
  tensorLists.reserve(1 + 2 * m.entries.size());
  const attn_tensor_info *params = list(m.params);
  for (const EntryDesc &e : m.entries) {
    attn_entry_info entry{};
    strings.push_back(std::make_unique<std::string>(e.name));
    entry.name = strings.back()->c_str();
    entry.fn = resolve(e.symbol);
    entry.num_inputs = e.inputs.size();
    entry.inputs = list(e.inputs);
    entry.num_outputs = e.outputs.size();
    entry.outputs = list(e.outputs);
    entry.capacity = e.capacity;
    entries.push_back(entry);
  }
  strings.push_back(std::make_unique<std::string>(m.model));
  info.name = strings.back()->c_str();
  info.num_params = m.params.size();
  info.params = params;
  info.num_entries = entries.size();
  info.entries = entries.data();
  // In-process code is compiled for this host: nothing to check (cpu, cpu_features null).
  if (!m.device.empty()) {
    strings.push_back(std::make_unique<std::string>(m.device));
    info.device = strings.back()->c_str();
  }
}

attn_tensor_info ProgramInfo::convert(const TensorDesc &t) {
  attn_tensor_info out{};
  strings.push_back(std::make_unique<std::string>(t.name));
  out.name = strings.back()->c_str();
  out.dtype = t.dtype;
  out.rank = t.shape.size();
  for (size_t i = 0; i < t.shape.size(); ++i)
    out.shape[i] = t.shape[i];
  if (!t.init.empty()) {
    strings.push_back(std::make_unique<std::string>(t.init));
    out.init = strings.back()->c_str();
  }
  out.scale = t.scale;
  return out;
}

} // namespace attn::target
