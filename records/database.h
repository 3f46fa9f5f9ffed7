// Database: records loaded from one or more logs (and added live), indexed by
// (workload, target) for the dispatcher and the tuner.
//
// Target matching: an exact fingerprint match first; a record from another target with
// the same arch key (same kind and arch, other device name or library versions) only
// when transfer is allowed, and then marked transferred; a record from another arch or
// kind is never returned. Once SetLibraryUse says which vendor libraries each
// implementation calls, a record measured on the same platform (Target::
// platform_fingerprint: device, arch, driver, runtime) with other cuBLAS or cuDNN versions
// counts as exact when its implementation calls neither of the libraries that differ and
// no record of those versions that does not hold here is faster: the own kernels' records
// hold in a process that loads another cuDNN (PyTorch's).
//
// Memory: each record costs a 40-byte entry; workloads, targets, implementation names
// and configs are stored once each. Full records are read back from their log on demand.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "core/config.h"
#include "core/status.h"
#include "core/target.h"
#include "core/workload.h"
#include "records/log_reader.h"
#include "records/records.pb.h"
#include "records/validate.h"

namespace opsched::records {

// What identifies a target for lookups; compute once per target (hashing is not free).
struct TargetKey {
  uint64_t fingerprint = 0;
  uint64_t arch = 0;      // stable hash of Target::arch_key()
  uint64_t platform = 0;  // Target::platform_fingerprint()
  int cublas_version = 0;
  int cudnn_version = 0;
  static TargetKey Of(const Target& target);
  static TargetKey Of(const TargetProto& target);
};

// An implementation's LibraryUse (core/target.h) by name; an unknown name should get both.
using LibraryUseOf = std::function<LibraryUse(std::string_view implementation)>;

struct RecordEntry {
  uint32_t workload;        // index into workloads
  uint32_t target;          // index into targets
  uint32_t implementation;  // index into implementation names
  uint32_t config;          // index into configs
  float median_us;          // device time (StatsProto.median_us)
  float call_us;            // what it is ranked by: CallUs of its stats (records/call_time.h)
  RecordStatus status;
  uint32_t source;          // index into sources (kLive for records added in memory)
  int32_t attempt;          // Record.attempt (0: written before attempts were counted)
  uint64_t offset;          // frame offset in the source log (or index into live records)
};

struct Match {
  const RecordEntry* entry = nullptr;
  bool transferred = false;
};

struct Neighbour {
  const Workload* workload = nullptr;
  double distance = 0;  // see Database::Distance
  Match best;
};

class Database {
 public:
  static constexpr uint32_t kLive = 0xffffffffu;

  Database() = default;
  Database(const Database&) = delete;
  Database& operator=(const Database&) = delete;

  // Loads every intact record of the log at `path`. Records that break the rules of
  // records/validate.h (a stored workload hash or target fingerprint that disagrees with
  // the contents, an ok record without a measurement, ...) are skipped with a warning
  // and counted in scan->rejected (scan->unparsable when not a Record at all).
  Status Load(const std::string& path, LogScan* scan = nullptr);
  // The same for a reader already open (a log held in memory, the fuzzer).
  Status Load(LogReader reader, LogScan* scan = nullptr);
  // Adds one record held in memory (the tuner, as it measures); an error when it breaks
  // the rules of records/validate.h.
  Status Add(const Record& record);

  // Lets records from other cuBLAS/cuDNN versions of the same platform serve the
  // implementations that do not call the libraries that differ (see the matching rules).
  // Without it, a record matches by fingerprint only.
  void SetLibraryUse(LibraryUseOf use);

  size_t size() const { return entries_.size(); }
  const std::vector<RecordEntry>& entries() const { return entries_; }

  // The fastest ok record of this workload on this target (see the matching rules).
  std::optional<Match> Best(uint64_t workload_hash, const TargetKey& target,
                            bool allow_transfer = false) const;
  std::optional<Match> Best(const Workload& workload, const Target& target,
                            bool allow_transfer = false) const {
    return Best(workload.hash(), TargetKey::Of(target), allow_transfer);
  }
  // Up to k tuned workloads nearest to `workload` (same op, tensor names, dtypes, ranks,
  // layouts and attributes; shapes differ), nearest first, each with its best record on
  // this target. `workload` itself is excluded.
  std::vector<Neighbour> Nearest(const Workload& workload, const Target& target, int k,
                                 bool allow_transfer = false) const;
  // The shape distance Nearest uses: Euclidean distance between the log2(1 + d) of
  // every dimension of every tensor.
  static double Distance(const Workload& a, const Workload& b);
  // True when some record of this workload, target, implementation and config exists,
  // whatever its status (the tuner's resume check).
  bool Contains(uint64_t workload_hash, uint64_t fingerprint, std::string_view implementation,
                const Config& config) const;
  // Fingerprints of the loaded targets with this arch key hash (TargetKey::arch).
  std::vector<uint64_t> FingerprintsWithArch(uint64_t arch) const;
  // Every record of one workload on one target (any status), in load order.
  std::vector<const RecordEntry*> RecordsFor(uint64_t workload_hash, uint64_t fingerprint) const;
  // The records of one workload that count as exact on `target`: RecordsFor its
  // fingerprint, then the ok records of other library versions of its platform whose
  // implementation calls none of the libraries that differ, and that are faster than every
  // record of those versions that does not hold here (after SetLibraryUse): an own kernel
  // slower than a cuDNN algorithm timed with another cuDNN is not known to be the best.
  std::vector<const RecordEntry*> ExactRecordsFor(uint64_t workload_hash, const TargetKey& target) const;
  // True when `entry`, measured on another target, counts as exact on `target`.
  bool HoldsOn(const RecordEntry& entry, const TargetKey& target) const;
  // Records (any workload, any status) on `target` (its fingerprint) or, with
  // allow_transfer, on any target of its arch key: those a dispatcher there can use.
  size_t CountFor(const TargetKey& target, bool allow_transfer = false) const;

  const Workload& workload(uint32_t i) const { return workloads_[i]->workload; }
  const TargetProto& target(uint32_t i) const { return targets_[i].proto; }
  const std::string& implementation(uint32_t i) const { return implementations_[i]; }
  const Config& config(uint32_t i) const { return configs_[i]; }
  size_t workload_count() const { return workloads_.size(); }
  // The full record behind an entry, read back from its log.
  StatusOr<Record> Fetch(const RecordEntry& entry) const;
  // The serialized record behind an entry, exactly as stored.
  StatusOr<std::string> Payload(const RecordEntry& entry) const;

 private:
  struct WorkloadInfo {
    Workload workload;
    uint64_t hash;
    uint64_t family;
  };
  struct TargetInfo {
    TargetProto proto;
    TargetKey key;
  };
  struct PairKey {
    uint64_t a, b;
    bool operator==(const PairKey& o) const { return a == o.a && b == o.b; }
    template <typename H>
    friend H AbslHashValue(H h, const PairKey& k) {
      return H::combine(std::move(h), k.a, k.b);
    }
  };

  // The ok records of this workload from other library versions of target's platform that
  // hold here, each faster than every one of them that does not (after SetLibraryUse).
  std::vector<const RecordEntry*> OtherVersionsHolding(uint64_t workload_hash, const TargetKey& target) const;
  // Indexes one serialized record.
  Status Index(std::string_view payload, uint32_t source, uint64_t offset);
  StatusOr<uint32_t> InternWorkload(std::string_view bytes);
  StatusOr<uint32_t> InternTarget(std::string_view bytes);
  uint32_t InternImplementation(std::string_view name);
  StatusOr<uint32_t> InternConfig(std::string_view bytes);
  void UpdateBest(absl::flat_hash_map<PairKey, uint32_t>& best, PairKey key, uint32_t index);

  std::vector<RecordEntry> entries_;
  std::vector<std::unique_ptr<WorkloadInfo>> workloads_;
  absl::flat_hash_map<uint64_t, uint32_t> workload_ids_;  // workload hash -> index
  // Validated encodings (serialized sub-messages) -> index.
  absl::flat_hash_map<std::string, uint32_t> workload_encodings_;
  absl::flat_hash_map<std::string, uint32_t> target_encodings_;
  absl::flat_hash_map<std::string, uint32_t> config_encodings_;
  absl::flat_hash_map<uint64_t, std::vector<uint32_t>> families_;
  std::vector<TargetInfo> targets_;
  absl::flat_hash_map<uint64_t, uint32_t> target_ids_;  // fingerprint -> index
  std::vector<std::string> implementations_;
  absl::flat_hash_map<std::string, uint32_t> implementation_ids_;
  std::vector<Config> configs_;
  absl::flat_hash_map<uint64_t, uint32_t> config_ids_;  // Config::hash() -> index
  // (workload hash, fingerprint) -> fastest ok entry; (workload hash, arch) likewise.
  absl::flat_hash_map<PairKey, uint32_t> best_exact_;
  absl::flat_hash_map<PairKey, uint32_t> best_arch_;
  // (workload hash, fingerprint) -> entries, for RecordsFor / Contains.
  absl::flat_hash_map<PairKey, std::vector<uint32_t>> by_pair_;
  // (workload hash, platform) -> ok entries, for records of other library versions.
  absl::flat_hash_map<PairKey, std::vector<uint32_t>> ok_by_platform_;
  LibraryUseOf library_use_;          // empty: match by fingerprint only
  std::vector<LibraryUse> uses_;      // per implementation index, once library_use_ is set
  std::vector<std::unique_ptr<LogReader>> sources_;
  std::vector<Record> live_;
  RecordSkimmer skimmer_;  // reused by Index
};

// When `db` holds records but none a dispatcher on `target` can use (CountFor): "N
// records loaded, none for this target (fingerprint F, DEVICE ARCH); they are for: ..."
// naming the targets they were measured on. Empty otherwise (no records, or some usable).
std::string NoRecordsForTargetNote(const Database& db, const Target& target, bool allow_transfer = false);

// The family of a workload: op, tensor names, dtypes, ranks and layouts, attributes —
// everything but the sizes. Nearest() searches within a family.
uint64_t WorkloadFamily(const Workload& workload);

}  // namespace opsched::records
