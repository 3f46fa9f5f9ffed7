#include "tools/records_tool.h"

#include <algorithm>
#include <cstdio>
#include <map>
#include <set>
#include <sstream>
#include <tuple>

#include "absl/container/flat_hash_set.h"
#include "core/format.h"
#include "core/read_file.h"
#include "records/attempts.h"
#include "records/convert.h"
#include "records/database.h"
#include "records/json.h"
#include "records/log_format.h"
#include "records/log_reader.h"
#include "records/log_rewrite.h"
#include "records/validate.h"
#include "core/table.h"

namespace opsched::tools {
namespace {

using records::Database;
using records::LogReader;
using records::LogScan;
using records::Record;
using records::RecordEntry;

int Fail(const Status& status) {
  fmt::print(stderr, "opsched records: {}\n", status.message());
  return 1;
}

std::string TargetLabel(const records::TargetProto& t) {
  return fmt::format("{} {} ({:016x})", t.device_name(), t.arch(), t.fingerprint());
}

std::string Micros(double us) { return fmt::format("{:.2f}", us); }

// The note printed when a log's header is damaged.
void NoteDamagedHeader(const std::string& log, std::FILE* out) {
  fmt::print(out, "{}: the file header is damaged; records were recovered by scanning for "
                  "frames (opsched records repair {} -o OUT writes a clean log)\n", log, log);
}

bool Matches(const RecordFilter& filter, const Workload& w) {
  return filter.match.empty() || w.ToString().find(filter.match) != std::string::npos;
}

}  // namespace

int RecordsVerify(const std::string& log, std::FILE* out) {
  StatusOr<LogReader> reader = LogReader::Open(log);
  if (!reader.ok()) return Fail(reader.status());
  LogScan scan;
  int64_t valid = 0;
  std::vector<std::string> rejections;
  Record record;
  reader->ForEachFrame(
      [&](uint64_t offset, std::string_view payload) {
        Status s = records::ParseValidRecord(payload, &record);
        if (s.ok()) {
          ++valid;
          return;
        }
        ++(absl::IsDataLoss(s) ? scan.unparsable : scan.rejected);
        rejections.push_back(fmt::format("  byte offset {}: record skipped: {}", offset, s.message()));
      },
      &scan);
  uint64_t skipped_bytes = 0;
  for (const records::LogIssue& issue : scan.issues) skipped_bytes += issue.length;
  fmt::print(out, "{}: format version {}, {} bytes\n", log, scan.format_version, reader->size());
  if (scan.header_damaged) NoteDamagedHeader(log, out);
  fmt::print(out, "intact: {}\nskipped: {} ({} bytes)\nunparsable: {}\nrejected: {}\n", valid,
             scan.skipped, skipped_bytes, scan.unparsable, scan.rejected);
  for (const records::LogIssue& issue : scan.issues) {
    fmt::print(out, "  byte offset {}: {} bytes skipped: {}\n", issue.offset, issue.length,
               issue.what);
  }
  for (const std::string& line : rejections) fmt::print(out, "{}\n", line);
  return 0;
}

int RecordsShow(const std::string& log, const RecordFilter& filter, std::FILE* out) {
  Database db;
  Status s = db.Load(log);
  if (!s.ok()) return Fail(s);
  Table table({{.header = "workload", .min_width = 36, .importance = 2},
               {.header = "target", .min_width = 20, .droppable = true, .importance = 1},
               {.header = "implementation"},  // a name to copy: never cut
               {.header = "config", .min_width = 16, .importance = 3},
               {.header = "median_us", .right = true},
               {.header = "status"}});
  size_t shown = 0, matching = 0;
  for (const RecordEntry& e : db.entries()) {
    if (!Matches(filter, db.workload(e.workload))) continue;
    ++matching;
    if (filter.limit > 0 && shown >= static_cast<size_t>(filter.limit)) continue;
    ++shown;
    table.AddRow({db.workload(e.workload).ToString(), TargetLabel(db.target(e.target)),
                  db.implementation(e.implementation), db.config(e.config).ToString(),
                  e.status == records::OK ? Micros(e.median_us) : "-",
                  std::string(records::StatusName(e.status))});
  }
  table.Print(out, filter.width);
  if (matching > shown) fmt::print(out, "... {} more (--limit 0 shows all)\n", matching - shown);
  return 0;
}

int RecordsBest(const std::string& log, const RecordFilter& filter, std::FILE* out) {
  Database db;
  Status s = db.Load(log);
  if (!s.ok()) return Fail(s);
  // (workload, target) pairs in first-seen order.
  std::vector<std::pair<uint32_t, uint32_t>> pairs;
  std::map<std::pair<uint32_t, uint32_t>, int> count;
  for (const RecordEntry& e : db.entries()) {
    if (count[{e.workload, e.target}]++ == 0) pairs.emplace_back(e.workload, e.target);
  }
  Table table({{.header = "workload", .min_width = 36, .importance = 2},
               {.header = "target", .min_width = 20, .droppable = true, .importance = 1},
               {.header = "implementation"},  // a name to copy: never cut
               {.header = "config", .min_width = 16, .importance = 3},
               {.header = "median_us", .right = true},
               {.header = "records", .right = true}});
  size_t shown = 0, matching = 0;
  for (auto [w, t] : pairs) {
    const Workload& workload = db.workload(w);
    if (!Matches(filter, workload)) continue;
    ++matching;
    if (filter.limit > 0 && shown >= static_cast<size_t>(filter.limit)) continue;
    ++shown;
    const records::TargetProto& target = db.target(t);
    std::optional<records::Match> best = db.Best(workload.hash(), records::TargetKey::Of(target));
    std::vector<std::string> row = {workload.ToString(), TargetLabel(target)};
    if (best) {
      row.insert(row.end(), {db.implementation(best->entry->implementation),
                             db.config(best->entry->config).ToString(),
                             Micros(best->entry->median_us)});
    } else {
      row.insert(row.end(), {"(no ok record)", "-", "-"});
    }
    row.push_back(std::to_string(count[{w, t}]));
    table.AddRow(std::move(row));
  }
  table.Print(out, filter.width);
  if (matching > shown) fmt::print(out, "... {} more (--limit 0 shows all)\n", matching - shown);
  return 0;
}

int RecordsMerge(const std::vector<std::string>& inputs, const std::string& output,
                 std::FILE* out) {
  int64_t total = 0, rejected = 0;
  size_t written = 0;
  Status s = records::RewriteLog(output, [&]() -> StatusOr<std::string> {
    std::vector<LogReader> readers;
    for (const std::string& input : inputs) {
      OPSCHED_ASSIGN_OR_RETURN(LogReader reader, LogReader::Open(input));
      readers.push_back(std::move(reader));
    }
    absl::flat_hash_set<std::string_view> seen;
    std::vector<std::string> payloads;
    Record record;
    for (const LogReader& reader : readers) {
      reader.ForEachFrame(
          [&](uint64_t offset, std::string_view payload) {
            ++total;
            if (!seen.insert(payload).second) return;
            Status valid = records::ParseValidRecord(payload, &record);
            if (!valid.ok()) {
              ++rejected;
              fmt::print(stderr, "{}: record at byte offset {} left out: {}\n", reader.path(),
                         offset, valid.message());
              return;
            }
            payloads.emplace_back(payload);
          },
          nullptr);
    }
    written = payloads.size();
    return records::EncodeLog(payloads);
  });
  if (!s.ok()) return Fail(s);
  fmt::print(out, "merged {} records from {} logs into {}: {} written, {} duplicates dropped{}\n",
             total, inputs.size(), output, written, total - int64_t(written) - rejected,
             rejected > 0 ? fmt::format(", {} invalid left out", rejected) : "");
  return 0;
}

namespace {

// The entries compact keeps of one (workload, target) group (see records_tool.h).
void KeepOfGroup(const Database& db, const std::vector<uint32_t>& members, int keep,
                 std::vector<uint32_t>* kept) {
  using Candidate = std::pair<uint32_t, uint32_t>;  // implementation, config
  std::vector<uint32_t> ok;
  std::set<Candidate> measured_ok;
  for (uint32_t i : members) {
    const RecordEntry& e = db.entries()[i];
    if (e.status == records::OK) {
      ok.push_back(i);
      measured_ok.insert({e.implementation, e.config});
    }
  }
  std::set<std::tuple<uint32_t, uint32_t, int>> failures;
  std::map<Candidate, uint32_t> last_retryable;  // the failure with the highest attempt
  for (uint32_t i : members) {
    const RecordEntry& e = db.entries()[i];
    if (e.status == records::OK) continue;
    if (!records::IsRetryable(e.status)) {
      if (failures.insert({e.implementation, e.config, e.status}).second) kept->push_back(i);
      continue;
    }
    if (measured_ok.count({e.implementation, e.config})) continue;  // a transient failure
    auto [it, inserted] = last_retryable.try_emplace({e.implementation, e.config}, i);
    if (!inserted && records::AttemptNumber(e.attempt) >=
                         records::AttemptNumber(db.entries()[it->second].attempt)) {
      it->second = i;
    }
  }
  for (const auto& [candidate, i] : last_retryable) kept->push_back(i);
  std::stable_sort(ok.begin(), ok.end(), [&](uint32_t a, uint32_t b) {
    return db.entries()[a].call_us < db.entries()[b].call_us;
  });
  std::set<Candidate> configs;
  int taken = 0;
  for (uint32_t i : ok) {
    const RecordEntry& e = db.entries()[i];
    if (taken < keep && configs.insert({e.implementation, e.config}).second) {
      kept->push_back(i);
      ++taken;
    }
  }
}

}  // namespace

int RecordsCompact(const std::string& input, const std::string& output, int keep,
                   std::FILE* out) {
  if (keep < 1) return Fail(absl::InvalidArgumentError("--keep must be at least 1"));
  size_t total = 0, pairs = 0, kept_count = 0;
  Status s = records::RewriteLog(output, [&]() -> StatusOr<std::string> {
    Database db;
    OPSCHED_RETURN_IF_ERROR(db.Load(input));
    std::map<std::pair<uint32_t, uint32_t>, std::vector<uint32_t>> groups;
    for (uint32_t i = 0; i < db.entries().size(); ++i) {
      const RecordEntry& e = db.entries()[i];
      groups[{e.workload, e.target}].push_back(i);
    }
    std::vector<uint32_t> kept;
    for (const auto& [key, members] : groups) KeepOfGroup(db, members, keep, &kept);
    std::sort(kept.begin(), kept.end());  // original order
    std::vector<std::string> payloads;
    for (uint32_t i : kept) {
      OPSCHED_ASSIGN_OR_RETURN(std::string payload, db.Payload(db.entries()[i]));
      payloads.push_back(std::move(payload));
    }
    total = db.size();
    pairs = groups.size();
    kept_count = kept.size();
    return records::EncodeLog(payloads);
  });
  if (!s.ok()) return Fail(s);
  fmt::print(out, "compacted {} records of {} (workload, target) pairs into {}: {} kept\n",
             total, pairs, output, kept_count);
  return 0;
}

int RecordsExport(const std::string& log, std::FILE* out) {
  Status visit_status;
  Status s = records::ReadRecords(log, [&](const Record& r, uint64_t offset) {
    StatusOr<std::string> json = records::RecordToJson(r);
    if (!json.ok()) {
      visit_status = Annotate(json.status(), fmt::format("byte offset {}", offset));
      return;
    }
    std::fputs(json->c_str(), out);
    std::fputc('\n', out);
  });
  if (!s.ok()) return Fail(s);
  if (!visit_status.ok()) return Fail(visit_status);
  return 0;
}

int RecordsImport(const std::string& json, const std::string& output, std::FILE* out) {
  StatusOr<std::string> text = ReadFile(json, "JSON-lines file");
  if (!text.ok()) return Fail(text.status());
  std::vector<std::string> payloads;
  std::istringstream in(*text);
  std::string line;
  int number = 0, bad = 0;
  while (std::getline(in, line)) {
    ++number;
    if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
    StatusOr<Record> record = records::RecordFromJson(line);
    Status s = record.ok() ? records::ValidateRecord(*record) : record.status();
    if (!s.ok()) {
      fmt::print(stderr, "{}:{}: {}\n", json, number, s.message());
      ++bad;
      continue;
    }
    payloads.push_back(record->SerializeAsString());
  }
  if (bad > 0) {
    fmt::print(stderr, "opsched records: {} bad lines in {}; nothing written\n", bad, json);
    return 1;
  }
  // All or nothing: the old log and the new frames are written to a new file that
  // replaces the log, under its append lock.
  Status s = records::RewriteLog(output, [&]() -> StatusOr<std::string> {
    OPSCHED_ASSIGN_OR_RETURN(std::string existing, ReadFile(output, "records log"));
    if (existing.empty()) return records::EncodeLog(payloads);
    OPSCHED_ASSIGN_OR_RETURN(LogReader reader, LogReader::Open(output));
    if (reader.header_damaged()) return records::DamagedHeaderError(output);
    OPSCHED_ASSIGN_OR_RETURN(std::string frames, records::EncodeFrames(payloads));
    return existing + frames;
  });
  if (!s.ok()) return Fail(s);
  fmt::print(out, "imported {} records into {}\n", payloads.size(), output);
  return 0;
}

int RecordsRepair(const std::string& input, const std::string& output, std::FILE* out) {
  LogScan scan;
  int64_t kept = 0;
  bool damaged = false;
  Status s = records::RewriteLog(output, [&]() -> StatusOr<std::string> {
    OPSCHED_ASSIGN_OR_RETURN(LogReader reader, LogReader::Open(input));
    damaged = reader.header_damaged();
    std::vector<std::string> payloads;
    Record record;
    reader.ForEachFrame(
        [&](uint64_t offset, std::string_view payload) {
          Status valid = records::ParseValidRecord(payload, &record);
          if (!valid.ok()) {
            ++(absl::IsDataLoss(valid) ? scan.unparsable : scan.rejected);
            fmt::print(stderr, "{}: record at byte offset {} left out: {}\n", input, offset,
                       valid.message());
            return;
          }
          payloads.emplace_back(payload);
        },
        &scan);
    kept = static_cast<int64_t>(payloads.size());
    return records::EncodeLog(payloads);
  });
  if (!s.ok()) return Fail(s);
  uint64_t skipped_bytes = 0;
  for (const records::LogIssue& issue : scan.issues) skipped_bytes += issue.length;
  fmt::print(out, "repaired {} into {}: header {}, {} records kept, {} stretch(es) skipped ({} "
                  "bytes), {} unparsable, {} rejected\n",
             input, output, damaged ? "damaged (rewritten)" : "intact", kept, scan.skipped,
             skipped_bytes, scan.unparsable, scan.rejected);
  return 0;
}

}  // namespace opsched::tools
