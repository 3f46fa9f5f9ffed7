#include "records/database.h"

#include <algorithm>
#include <cmath>
#include <map>

#include "core/format.h"

#include "core/log.h"
#include "core/stable_hash.h"
#include "records/call_time.h"
#include "records/convert.h"
#include "records/validate.h"

namespace opsched::records {
namespace {

uint64_t ArchHash(std::string_view kind, std::string_view arch) {
  StableHasher h;
  h.String(kind).String("/").String(arch);
  return h.value();
}

}  // namespace

TargetKey TargetKey::Of(const Target& target) {
  return TargetKey{target.fingerprint(), ArchHash(DeviceKindName(target.kind), target.arch),
                   target.platform_fingerprint(), target.cublas_version, target.cudnn_version};
}

TargetKey TargetKey::Of(const TargetProto& target) {
  StatusOr<Target> t = FromProto(target);  // an unknown kind has no platform
  return TargetKey{target.fingerprint(), ArchHash(target.kind(), target.arch()),
                   t.ok() ? t->platform_fingerprint() : 0, target.cublas_version(), target.cudnn_version()};
}

uint64_t WorkloadFamily(const Workload& w) {
  StableHasher h;
  h.String(w.op()).Int(static_cast<int64_t>(w.tensors().size()));
  for (const TensorArg& t : w.tensors()) {
    h.String(t.name)
        .Int(static_cast<int64_t>(t.desc.dtype()))
        .Int(t.desc.rank())
        .Int(t.desc.is_contiguous() ? 1 : 0);
  }
  // Attributes through the text form: the family needs equality, not speed.
  for (const Attr& a : w.attrs()) h.String(a.name).String(AttrValueToString(a.value));
  return h.value();
}

double Database::Distance(const Workload& a, const Workload& b) {
  double sum = 0;
  const size_t n = std::min(a.tensors().size(), b.tensors().size());
  for (size_t i = 0; i < n; ++i) {
    const TensorDesc& x = a.tensors()[i].desc;
    const TensorDesc& y = b.tensors()[i].desc;
    const int rank = std::min(x.rank(), y.rank());
    for (int d = 0; d < rank; ++d) {
      double diff = std::log2(1.0 + static_cast<double>(x.dim(d))) -
                    std::log2(1.0 + static_cast<double>(y.dim(d)));
      sum += diff * diff;
    }
  }
  return std::sqrt(sum);
}

StatusOr<uint32_t> Database::InternWorkload(std::string_view bytes) {
  // Each distinct encoding is parsed and validated once; a second record with the same
  // encoding is the same validated workload, whatever the order of the log.
  auto known = workload_encodings_.find(absl::string_view(bytes.data(), bytes.size()));
  if (known != workload_encodings_.end()) return known->second;
  WorkloadProto proto;
  if (!proto.ParseFromArray(bytes.data(), static_cast<int>(bytes.size()))) {
    return absl::DataLossError("workload does not parse");
  }
  Workload w;
  OPSCHED_RETURN_IF_ERROR(ValidateWorkload(proto, &w));
  uint32_t id;
  if (auto it = workload_ids_.find(proto.hash()); it != workload_ids_.end()) {
    id = it->second;  // another encoding of a known workload, unless the 64-bit hash collides
    if (workloads_[id]->workload != w) {
      return absl::InvalidArgumentError(fmt::format("workload '{}' has the hash {:016x} of '{}'",
                                                    proto.key(), proto.hash(),
                                                    workloads_[id]->workload.ToString()));
    }
  } else {
    auto info = std::make_unique<WorkloadInfo>();
    info->family = WorkloadFamily(w);
    info->hash = proto.hash();
    info->workload = std::move(w);
    id = static_cast<uint32_t>(workloads_.size());
    families_[info->family].push_back(id);
    workloads_.push_back(std::move(info));
    workload_ids_.emplace(proto.hash(), id);
  }
  workload_encodings_.emplace(std::string(bytes), id);
  return id;
}

StatusOr<uint32_t> Database::InternTarget(std::string_view bytes) {
  auto known = target_encodings_.find(absl::string_view(bytes.data(), bytes.size()));
  if (known != target_encodings_.end()) return known->second;
  TargetProto proto;
  if (!proto.ParseFromArray(bytes.data(), static_cast<int>(bytes.size()))) {
    return absl::DataLossError("target does not parse");
  }
  OPSCHED_RETURN_IF_ERROR(ValidateTarget(proto, nullptr));
  uint32_t id;
  if (auto it = target_ids_.find(proto.fingerprint()); it != target_ids_.end()) {
    id = it->second;
  } else {
    id = static_cast<uint32_t>(targets_.size());
    targets_.push_back(TargetInfo{proto, TargetKey::Of(proto)});
    target_ids_.emplace(proto.fingerprint(), id);
  }
  target_encodings_.emplace(std::string(bytes), id);
  return id;
}

uint32_t Database::InternImplementation(std::string_view name) {
  auto it = implementation_ids_.find(absl::string_view(name.data(), name.size()));
  if (it != implementation_ids_.end()) return it->second;
  const uint32_t id = static_cast<uint32_t>(implementations_.size());
  implementations_.emplace_back(name);
  if (library_use_) uses_.push_back(library_use_(name));
  implementation_ids_.emplace(implementations_.back(), id);
  return id;
}

StatusOr<uint32_t> Database::InternConfig(std::string_view bytes) {
  // Configs repeat across records: look them up by their encoding first, and parse an
  // encoding only the first time it is seen.
  auto known = config_encodings_.find(absl::string_view(bytes.data(), bytes.size()));
  if (known != config_encodings_.end()) return known->second;
  ConfigProto proto;
  if (!proto.ParseFromArray(bytes.data(), static_cast<int>(bytes.size()))) {
    return absl::DataLossError("config does not parse");
  }
  Config c;
  OPSCHED_RETURN_IF_ERROR(ValidateConfig(proto, &c));
  auto [semantic, inserted] = config_ids_.try_emplace(c.hash(), static_cast<uint32_t>(configs_.size()));
  if (inserted) configs_.push_back(std::move(c));
  config_encodings_.emplace(std::string(bytes), semantic->second);
  return semantic->second;
}

void Database::UpdateBest(absl::flat_hash_map<PairKey, uint32_t>& best, PairKey key,
                          uint32_t index) {
  auto [it, inserted] = best.try_emplace(key, index);
  if (!inserted && entries_[index].call_us < entries_[it->second].call_us) {
    it->second = index;
  }
}

Status Database::Index(std::string_view payload, uint32_t source, uint64_t offset) {
  // Accepts exactly what ParseValidRecord accepts, without parsing every record in full:
  // the same skim checks the wire structure and the outcome; workloads, targets and
  // configs are parsed and validated once per distinct encoding.
  RecordSummary r;
  OPSCHED_RETURN_IF_ERROR(skimmer_.Skim(payload, &r));
  OPSCHED_ASSIGN_OR_RETURN(uint32_t workload, InternWorkload(r.workload));
  OPSCHED_ASSIGN_OR_RETURN(uint32_t target, InternTarget(r.target));
  OPSCHED_ASSIGN_OR_RETURN(uint32_t config, InternConfig(r.config));
  const auto status = static_cast<RecordStatus>(r.status);
  const uint32_t index = static_cast<uint32_t>(entries_.size());
  entries_.push_back(RecordEntry{workload, target, InternImplementation(r.implementation), config,
                                 static_cast<float>(skimmer_.stats().median_us()),
                                 static_cast<float>(CallUs(skimmer_.stats())), status, source, r.attempt, offset});
  const uint64_t wl = workloads_[workload]->hash;
  const TargetKey& key = targets_[target].key;
  by_pair_[PairKey{wl, key.fingerprint}].push_back(index);
  if (status == OK) {
    UpdateBest(best_exact_, PairKey{wl, key.fingerprint}, index);
    UpdateBest(best_arch_, PairKey{wl, key.arch}, index);
    if (key.platform != 0) ok_by_platform_[PairKey{wl, key.platform}].push_back(index);
  }
  return absl::OkStatus();
}

void Database::SetLibraryUse(LibraryUseOf use) {
  library_use_ = std::move(use);
  uses_.clear();
  if (!library_use_) return;
  for (const std::string& name : implementations_) uses_.push_back(library_use_(name));
}

bool Database::HoldsOn(const RecordEntry& e, const TargetKey& target) const {
  const TargetKey& from = targets_[e.target].key;
  if (from.fingerprint == target.fingerprint) return true;
  if (!library_use_ || from.platform == 0 || from.platform != target.platform) return false;
  return !CallsAny(uses_[e.implementation], DifferingLibraries(from.cublas_version, from.cudnn_version,
                                                               target.cublas_version, target.cudnn_version));
}

std::vector<const RecordEntry*> Database::OtherVersionsHolding(uint64_t workload_hash, const TargetKey& target) const {
  std::vector<const RecordEntry*> out;
  if (!library_use_) return out;
  auto it = ok_by_platform_.find(PairKey{workload_hash, target.platform});
  if (it == ok_by_platform_.end()) return out;
  // A record that does not hold here (a cuDNN algorithm timed with another cuDNN) says the
  // own kernels slower than it may not be the best here: only those faster are taken.
  float stale = INFINITY;
  for (uint32_t i : it->second) {
    const RecordEntry& e = entries_[i];
    if (targets_[e.target].key.fingerprint == target.fingerprint) continue;  // RecordsFor's
    if (HoldsOn(e, target)) {
      out.push_back(&e);
    } else {
      stale = std::min(stale, e.call_us);
    }
  }
  out.erase(std::remove_if(out.begin(), out.end(), [stale](const RecordEntry* e) { return !(e->call_us < stale); }),
            out.end());
  return out;
}

std::vector<const RecordEntry*> Database::ExactRecordsFor(uint64_t workload_hash, const TargetKey& target) const {
  std::vector<const RecordEntry*> out = RecordsFor(workload_hash, target.fingerprint);
  for (const RecordEntry* e : OtherVersionsHolding(workload_hash, target)) out.push_back(e);
  return out;
}

Status Database::Load(const std::string& path, LogScan* scan) {
  OPSCHED_ASSIGN_OR_RETURN(LogReader reader, LogReader::Open(path));
  return Load(std::move(reader), scan);
}

Status Database::Load(LogReader reader, LogScan* scan) {
  auto owned = std::make_unique<LogReader>(std::move(reader));
  const uint32_t source = static_cast<uint32_t>(sources_.size());
  LogScan local;
  LogScan& s = scan ? *scan : local;
  owned->ForEachFrame(
      [&](uint64_t offset, std::string_view payload) {
        Status st = Index(payload, source, offset);
        if (!st.ok()) {
          ++(absl::IsDataLoss(st) ? s.unparsable : s.rejected);
          Log().warn("{}: record at byte offset {} skipped: {}", owned->path(), offset,
                     st.message());
        }
      },
      &s);
  owned->ReleasePages();
  sources_.push_back(std::move(owned));
  return absl::OkStatus();
}

Status Database::Add(const Record& record) {
  live_.push_back(record);
  Status st = Index(record.SerializeAsString(), kLive, live_.size() - 1);
  if (!st.ok()) live_.pop_back();
  return st;
}

std::optional<Match> Database::Best(uint64_t workload_hash, const TargetKey& target,
                                    bool allow_transfer) const {
  const RecordEntry* best = nullptr;
  if (auto exact = best_exact_.find(PairKey{workload_hash, target.fingerprint}); exact != best_exact_.end()) {
    best = &entries_[exact->second];
  }
  for (const RecordEntry* e : OtherVersionsHolding(workload_hash, target)) {
    if (best == nullptr || e->call_us < best->call_us) best = e;
  }
  if (best != nullptr) return Match{best, false};
  if (!allow_transfer) return std::nullopt;
  auto arch = best_arch_.find(PairKey{workload_hash, target.arch});
  if (arch != best_arch_.end()) return Match{&entries_[arch->second], true};
  return std::nullopt;
}

std::vector<Neighbour> Database::Nearest(const Workload& workload, const Target& target, int k,
                                         bool allow_transfer) const {
  std::vector<Neighbour> out;
  auto family = families_.find(WorkloadFamily(workload));
  if (family == families_.end() || k <= 0) return out;
  const TargetKey key = TargetKey::Of(target);
  const uint64_t self = workload.hash();
  for (uint32_t id : family->second) {
    const WorkloadInfo& info = *workloads_[id];
    if (info.hash == self) continue;
    std::optional<Match> best = Best(info.hash, key, allow_transfer);
    if (!best) continue;
    out.push_back(Neighbour{&info.workload, Distance(workload, info.workload), *best});
  }
  std::sort(out.begin(), out.end(), [](const Neighbour& a, const Neighbour& b) {
    if (a.distance != b.distance) return a.distance < b.distance;
    return a.best.entry->call_us < b.best.entry->call_us;
  });
  if (out.size() > static_cast<size_t>(k)) out.resize(k);
  return out;
}

bool Database::Contains(uint64_t workload_hash, uint64_t fingerprint,
                        std::string_view implementation, const Config& config) const {
  auto it = by_pair_.find(PairKey{workload_hash, fingerprint});
  if (it == by_pair_.end()) return false;
  for (uint32_t i : it->second) {
    const RecordEntry& e = entries_[i];
    if (implementations_[e.implementation] == implementation && configs_[e.config] == config) {
      return true;
    }
  }
  return false;
}

std::vector<uint64_t> Database::FingerprintsWithArch(uint64_t arch) const {
  std::vector<uint64_t> out;
  for (const TargetInfo& t : targets_) {
    if (t.key.arch == arch) out.push_back(t.key.fingerprint);
  }
  return out;
}

size_t Database::CountFor(const TargetKey& target, bool allow_transfer) const {
  std::vector<bool> usable(targets_.size()), platform(targets_.size());
  bool any = false;
  for (size_t i = 0; i < targets_.size(); ++i) {
    const TargetKey& key = targets_[i].key;
    usable[i] = key.fingerprint == target.fingerprint || (allow_transfer && key.arch == target.arch);
    platform[i] = library_use_ && key.platform != 0 && key.platform == target.platform;
    any |= usable[i] || platform[i];
  }
  if (!any) return 0;
  size_t count = 0;
  for (const RecordEntry& e : entries_) {
    count += usable[e.target] || (platform[e.target] && HoldsOn(e, target)) ? 1 : 0;
  }
  return count;
}

namespace {

// ", cuBLAS 130100, cuDNN 91400" for a GPU target, "" for a CPU: the vendor libraries
// are part of a target (a process that loads another cuDNN, as PyTorch does, is another).
std::string LibraryVersions(bool cpu, int cublas, int cudnn) {
  return cpu ? "" : fmt::format(", cuBLAS {}, cuDNN {}", cublas, cudnn);
}

}  // namespace

std::string NoRecordsForTargetNote(const Database& db, const Target& target, bool allow_transfer) {
  if (db.size() == 0 || db.CountFor(TargetKey::Of(target), allow_transfer) > 0) return "";
  std::map<uint32_t, size_t> per_target;
  for (const RecordEntry& e : db.entries()) ++per_target[e.target];
  std::string theirs;
  constexpr size_t kNamed = 3;
  size_t named = 0;
  for (const auto& [index, count] : per_target) {
    if (named++ == kNamed) {
      theirs += fmt::format(" and {} more", per_target.size() - kNamed);
      break;
    }
    const TargetProto& t = db.target(index);
    const std::string libraries = LibraryVersions(t.kind() == "cpu", t.cublas_version(), t.cudnn_version());
    theirs += fmt::format("{}{} {} {} ({}fingerprint {:016x}): {}", named > 1 ? "; " : "", t.kind(), t.device_name(),
                          t.arch(), libraries.empty() ? "" : libraries.substr(2) + ", ", t.fingerprint(), count);
  }
  return fmt::format("{} records loaded, none for this target (fingerprint {:016x}, {} {} {}{}{}); they are for: {}",
                     db.size(), target.fingerprint(), DeviceKindName(target.kind), target.device_name, target.arch,
                     LibraryVersions(target.kind == DeviceKind::kCpu, target.cublas_version, target.cudnn_version),
                     allow_transfer ? ", nor for its arch" : "", theirs);
}

std::vector<const RecordEntry*> Database::RecordsFor(uint64_t workload_hash,
                                                     uint64_t fingerprint) const {
  std::vector<const RecordEntry*> out;
  auto it = by_pair_.find(PairKey{workload_hash, fingerprint});
  if (it == by_pair_.end()) return out;
  for (uint32_t i : it->second) out.push_back(&entries_[i]);
  return out;
}

StatusOr<std::string> Database::Payload(const RecordEntry& entry) const {
  if (entry.source == kLive) return live_[entry.offset].SerializeAsString();
  OPSCHED_ASSIGN_OR_RETURN(std::string_view payload, sources_[entry.source]->FrameAt(entry.offset));
  return std::string(payload);
}

StatusOr<Record> Database::Fetch(const RecordEntry& entry) const {
  if (entry.source == kLive) return live_[entry.offset];
  OPSCHED_ASSIGN_OR_RETURN(std::string payload, Payload(entry));
  Record record;
  if (!record.ParseFromArray(payload.data(), static_cast<int>(payload.size()))) {
    return absl::DataLossError(fmt::format("{}: record at byte offset {} no longer parses",
                                           sources_[entry.source]->path(), entry.offset));
  }
  return record;
}

}  // namespace opsched::records
