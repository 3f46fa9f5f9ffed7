// DecisionCache: decisions per workload, read without a lock. The table is an open-
// addressing array of atomic pointers to immutable entries: a writer (under a mutex)
// fills an empty slot, or publishes a table twice as large and keeps the old one alive
// until the cache dies (all tables together stay under twice the final size), so a
// reader never sees freed memory. Lookups allocate nothing.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <vector>

#include "core/tensor_desc.h"
#include "core/workload.h"
#include "strategies/decision.h"

namespace opsched {

struct CachedDecision {
  uint64_t hash = 0;  // Workload::FastHash() of `workload`
  Workload workload;    // as callers pass it (the cache key)
  Workload canonical;   // what the implementation runs
  Decision decision;
  std::vector<TensorDesc> expected;  // inputs then outputs, for validating calls
  // The decision made ready to run (Dispatcher::set_prepare); null when not prepared.
  std::unique_ptr<const Prepared> prepared;
};

class DecisionCache {
 public:
  DecisionCache();
  ~DecisionCache();

  // The entry for `workload` (whose hash is `hash`), or nullptr.
  const CachedDecision* Find(uint64_t hash, const Workload& workload) const;
  // Inserts unless an equal workload is present; returns the entry that is cached.
  const CachedDecision* Insert(std::unique_ptr<CachedDecision> entry);
  size_t size() const;

 private:
  struct Table {
    explicit Table(size_t capacity);
    size_t mask;
    std::unique_ptr<std::atomic<const CachedDecision*>[]> slots;
  };
  void Place(Table& table, const CachedDecision* entry);

  std::atomic<const Table*> table_;
  mutable std::mutex mu_;
  std::vector<std::unique_ptr<CachedDecision>> entries_;
  std::vector<std::unique_ptr<Table>> tables_;  // the current one last
};

}  // namespace opsched
