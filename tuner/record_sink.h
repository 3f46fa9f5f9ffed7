// RecordSink: where a tuning run's records go as they are made — the session's log
// (LogSink: one writer shared by the tuning threads of every device), or, on an MPI
// rank other than 0, a message to rank 0, the only writer (tuner/fleet).
#pragma once

#include <memory>
#include <mutex>
#include <string>

#include "core/status.h"
#include "records/log_writer.h"
#include "records/records.pb.h"

namespace opsched {

class RecordSink {
 public:
  virtual ~RecordSink() = default;
  // Stores one record; an error ends the session (nothing may be silently lost).
  virtual Status Append(const records::Record& record) = 0;
};

// Appends to a records log; safe to call from several threads.
class LogSink : public RecordSink {
 public:
  static StatusOr<std::unique_ptr<LogSink>> Open(const std::string& path);
  Status Append(const records::Record& record) override;
  int appended() const;

 private:
  explicit LogSink(std::unique_ptr<records::LogWriter> writer) : writer_(std::move(writer)) {}
  mutable std::mutex mu_;
  std::unique_ptr<records::LogWriter> writer_;
  int appended_ = 0;
};

}  // namespace opsched
