#include "records/convert.h"

#include "core/format.h"

#include "core/stable_hash.h"

namespace opsched::records {

WorkloadProto ToProto(const Workload& workload) {
  WorkloadProto p;
  p.set_op(workload.op());
  for (const TensorArg& t : workload.tensors()) {
    TensorProto* tp = p.add_tensors();
    tp->set_name(t.name);
    tp->set_dtype(std::string(DTypeName(t.desc.dtype())));
    for (int64_t d : t.desc.shape()) tp->add_shape(d);
    for (int64_t s : t.desc.strides()) tp->add_strides(s);
  }
  for (const Attr& a : workload.attrs()) {
    AttrProto* ap = p.add_attrs();
    ap->set_name(a.name);
    std::visit(
        [ap](const auto& v) {
          using T = std::decay_t<decltype(v)>;
          if constexpr (std::is_same_v<T, int64_t>) {
            ap->set_i(v);
          } else if constexpr (std::is_same_v<T, double>) {
            ap->set_f(v);
          } else if constexpr (std::is_same_v<T, bool>) {
            ap->set_b(v);
          } else if constexpr (std::is_same_v<T, std::string>) {
            ap->set_s(v);
          } else {
            for (int64_t x : v) ap->mutable_ints()->add_values(x);
          }
        },
        a.value);
  }
  p.set_key(workload.ToString());
  p.set_hash(workload.hash());
  return p;
}

StatusOr<Workload> FromProto(const WorkloadProto& p) {
  Workload w(p.op());
  for (const TensorProto& tp : p.tensors()) {
    OPSCHED_ASSIGN_OR_RETURN(DType dtype, ParseDType(tp.dtype()));
    Dims shape(tp.shape().begin(), tp.shape().end());
    Dims strides(tp.strides().begin(), tp.strides().end());
    StatusOr<TensorDesc> desc = TensorDesc::Strided(dtype, shape, strides);
    if (!desc.ok()) return Annotate(desc.status(), fmt::format("tensor '{}'", tp.name()));
    w.SetTensor(tp.name(), *desc);
  }
  for (const AttrProto& ap : p.attrs()) {
    switch (ap.value_case()) {
      case AttrProto::kI:
        w.SetAttr(ap.name(), ap.i());
        break;
      case AttrProto::kF:
        w.SetAttr(ap.name(), ap.f());
        break;
      case AttrProto::kB:
        w.SetAttr(ap.name(), ap.b());
        break;
      case AttrProto::kS:
        w.SetAttr(ap.name(), ap.s());
        break;
      case AttrProto::kInts:
        w.SetAttr(ap.name(), Dims(ap.ints().values().begin(), ap.ints().values().end()));
        break;
      default:
        return absl::InvalidArgumentError(
            fmt::format("attribute '{}' has no value", ap.name()));
    }
  }
  return w;
}

TargetProto ToProto(const Target& t) {
  TargetProto p;
  p.set_fingerprint(t.fingerprint());
  p.set_kind(std::string(DeviceKindName(t.kind)));
  p.set_device_name(t.device_name);
  p.set_arch(t.arch);
  p.set_sm_count(t.sm_count);
  p.set_memory_bytes(t.memory_bytes);
  p.set_l2_bytes(t.l2_bytes);
  p.set_driver_version(t.driver_version);
  p.set_runtime_version(t.runtime_version);
  p.set_cublas_version(t.cublas_version);
  p.set_cudnn_version(t.cudnn_version);
  return p;
}

StatusOr<Target> FromProto(const TargetProto& p) {
  Target t;
  OPSCHED_ASSIGN_OR_RETURN(Device device, ParseDevice(p.kind()));
  t.kind = device.kind;
  t.device_name = p.device_name();
  t.arch = p.arch();
  t.sm_count = p.sm_count();
  t.memory_bytes = p.memory_bytes();
  t.l2_bytes = p.l2_bytes();
  t.driver_version = p.driver_version();
  t.runtime_version = p.runtime_version();
  t.cublas_version = p.cublas_version();
  t.cudnn_version = p.cudnn_version();
  return t;
}

ConfigProto ToProto(const Config& config) {
  ConfigProto p;
  for (const Knob& k : config.knobs()) {
    KnobProto* kp = p.add_knobs();
    kp->set_name(k.name);
    if (const auto* i = std::get_if<int64_t>(&k.value)) {
      kp->set_i(*i);
    } else {
      kp->set_s(std::get<std::string>(k.value));
    }
  }
  return p;
}

StatusOr<Config> FromProto(const ConfigProto& p) {
  Config c;
  for (const KnobProto& kp : p.knobs()) {
    if (c.Find(kp.name()) != nullptr) {
      return absl::InvalidArgumentError(fmt::format("knob '{}' appears twice", kp.name()));
    }
    if (kp.value_case() == KnobProto::kS) {
      c.Set(kp.name(), kp.s());
    } else {
      c.Set(kp.name(), kp.i());
    }
  }
  return c;
}

uint64_t ConfigHash(const ConfigProto& p) {
  // Mirrors Config::hash() over knobs sorted by name (records store them sorted; an
  // unsorted proto is converted first).
  for (int i = 1; i < p.knobs_size(); ++i) {
    if (!(p.knobs(i - 1).name() < p.knobs(i).name())) {
      StatusOr<Config> c = FromProto(p);
      return c.ok() ? c->hash() : 0;
    }
  }
  StableHasher h;
  h.Int(p.knobs_size());
  for (const KnobProto& kp : p.knobs()) {
    h.String(kp.name());
    if (kp.value_case() == KnobProto::kS) {
      h.Int(1).String(kp.s());
    } else {
      h.Int(0).Int(kp.i());
    }
  }
  return h.value();
}

std::string_view StatusName(RecordStatus status) {
  switch (status) {
    case OK:
      return "ok";
    case NOT_APPLICABLE:
      return "not_applicable";
    case LAUNCH_ERROR:
      return "launch_error";
    case WRONG_RESULT:
      return "wrong_result";
    case TIMEOUT:
      return "timeout";
    case OUT_OF_MEMORY:
      return "out_of_memory";
    case CRASHED:
      return "crashed";
    default:
      return "unspecified";
  }
}

}  // namespace opsched::records
