#include "tools/records_tool.h"

#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <map>
#include <set>
#include <tuple>

#include "core/format.h"

#include "absl/container/flat_hash_set.h"
#include "records/convert.h"
#include "records/database.h"
#include "records/json.h"
#include "records/log_reader.h"
#include "records/log_writer.h"
#include "tools/table.h"

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

// Writes `payloads` to a temporary file beside `output`, then renames it into place.
Status WriteAtomically(const std::string& output, const std::vector<std::string>& payloads) {
  const std::string tmp = fmt::format("{}.tmp.{}", output, getpid());
  std::remove(tmp.c_str());
  {
    OPSCHED_ASSIGN_OR_RETURN(auto writer, records::LogWriter::Open(tmp));
    OPSCHED_RETURN_IF_ERROR(writer->AppendPayloads(payloads));
    OPSCHED_RETURN_IF_ERROR(writer->Sync());
  }
  if (std::rename(tmp.c_str(), output.c_str()) != 0) {
    std::remove(tmp.c_str());
    return absl::InternalError(fmt::format("renaming {} to {}", tmp, output));
  }
  return absl::OkStatus();
}

bool Matches(const RecordFilter& filter, const Workload& w) {
  return filter.match.empty() || w.ToString().find(filter.match) != std::string::npos;
}

}  // namespace

int RecordsVerify(const std::string& log, std::FILE* out) {
  StatusOr<LogReader> reader = LogReader::Open(log);
  if (!reader.ok()) return Fail(reader.status());
  LogScan scan;
  int64_t parsed = 0;
  Record record;
  reader->ForEachFrame(
      [&](uint64_t, std::string_view payload) {
        if (record.ParseFromArray(payload.data(), static_cast<int>(payload.size()))) {
          ++parsed;
        } else {
          ++scan.unparsable;
        }
      },
      &scan);
  uint64_t skipped_bytes = 0;
  for (const records::LogIssue& issue : scan.issues) skipped_bytes += issue.length;
  fmt::print(out, "{}: format version {}, {} bytes\n", log, scan.format_version, reader->size());
  fmt::print(out, "intact: {}\nskipped: {} ({} bytes)\nunparsable: {}\n", parsed, scan.skipped,
             skipped_bytes, scan.unparsable);
  for (const records::LogIssue& issue : scan.issues) {
    fmt::print(out, "  byte offset {}: {} bytes skipped: {}\n", issue.offset, issue.length,
               issue.what);
  }
  return 0;
}

int RecordsShow(const std::string& log, const RecordFilter& filter, std::FILE* out) {
  Database db;
  Status s = db.Load(log);
  if (!s.ok()) return Fail(s);
  Table table({"workload", "target", "implementation", "config", "median_us", "status"});
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
  table.Print(out);
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
  Table table({"workload", "target", "implementation", "config", "median_us", "records"});
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
  table.Print(out);
  if (matching > shown) fmt::print(out, "... {} more (--limit 0 shows all)\n", matching - shown);
  return 0;
}

int RecordsMerge(const std::vector<std::string>& inputs, const std::string& output,
                 std::FILE* out) {
  std::vector<LogReader> readers;
  for (const std::string& input : inputs) {
    StatusOr<LogReader> reader = LogReader::Open(input);
    if (!reader.ok()) return Fail(reader.status());
    readers.push_back(*std::move(reader));
  }
  absl::flat_hash_set<std::string_view> seen;
  std::vector<std::string> payloads;
  int64_t total = 0;
  for (const LogReader& reader : readers) {
    reader.ForEachFrame(
        [&](uint64_t, std::string_view payload) {
          ++total;
          if (seen.insert(payload).second) payloads.emplace_back(payload);
        },
        nullptr);
  }
  Status s = WriteAtomically(output, payloads);
  if (!s.ok()) return Fail(s);
  fmt::print(out, "merged {} records from {} logs into {}: {} written, {} duplicates dropped\n",
             total, inputs.size(), output, payloads.size(), total - int64_t(payloads.size()));
  return 0;
}

int RecordsCompact(const std::string& input, const std::string& output, int keep,
                   std::FILE* out) {
  if (keep < 1) return Fail(absl::InvalidArgumentError("--keep must be at least 1"));
  Database db;
  Status s = db.Load(input);
  if (!s.ok()) return Fail(s);
  // Group entries by (workload, target); keep the fastest distinct ok configs and one
  // record of each distinct failure.
  std::map<std::pair<uint32_t, uint32_t>, std::vector<uint32_t>> groups;
  for (uint32_t i = 0; i < db.entries().size(); ++i) {
    const RecordEntry& e = db.entries()[i];
    groups[{e.workload, e.target}].push_back(i);
  }
  std::vector<uint32_t> kept;
  for (auto& [key, members] : groups) {
    std::vector<uint32_t> ok;
    std::set<std::tuple<uint32_t, uint32_t, int>> failures;
    for (uint32_t i : members) {
      const RecordEntry& e = db.entries()[i];
      if (e.status == records::OK) {
        ok.push_back(i);
      } else if (failures.insert({e.implementation, e.config, e.status}).second) {
        kept.push_back(i);
      }
    }
    std::stable_sort(ok.begin(), ok.end(), [&](uint32_t a, uint32_t b) {
      return db.entries()[a].median_us < db.entries()[b].median_us;
    });
    std::set<std::pair<uint32_t, uint32_t>> configs;
    int taken = 0;
    for (uint32_t i : ok) {
      const RecordEntry& e = db.entries()[i];
      if (taken < keep && configs.insert({e.implementation, e.config}).second) {
        kept.push_back(i);
        ++taken;
      }
    }
  }
  std::sort(kept.begin(), kept.end());  // original order
  std::vector<std::string> payloads;
  for (uint32_t i : kept) {
    StatusOr<std::string> payload = db.Payload(db.entries()[i]);
    if (!payload.ok()) return Fail(payload.status());
    payloads.push_back(*std::move(payload));
  }
  s = WriteAtomically(output, payloads);
  if (!s.ok()) return Fail(s);
  fmt::print(out, "compacted {} records of {} (workload, target) pairs into {}: {} kept\n",
             db.size(), groups.size(), output, kept.size());
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
  std::ifstream in(json);
  if (!in) return Fail(absl::NotFoundError(fmt::format("cannot read {}", json)));
  std::vector<std::string> payloads;
  std::string line;
  int number = 0, bad = 0;
  Database check;  // validates hashes and fingerprints as loading would
  while (std::getline(in, line)) {
    ++number;
    if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
    StatusOr<Record> record = records::RecordFromJson(line);
    Status s = record.ok() ? check.Add(*record) : record.status();
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
  StatusOr<std::unique_ptr<records::LogWriter>> writer = records::LogWriter::Open(output);
  if (!writer.ok()) return Fail(writer.status());
  Status s = (*writer)->AppendPayloads(payloads);
  if (!s.ok()) return Fail(s);
  fmt::print(out, "imported {} records into {}\n", payloads.size(), output);
  return 0;
}

}  // namespace opsched::tools
