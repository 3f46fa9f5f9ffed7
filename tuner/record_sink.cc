#include "tuner/record_sink.h"

namespace opsched {

StatusOr<std::unique_ptr<LogSink>> LogSink::Open(const std::string& path) {
  OPSCHED_ASSIGN_OR_RETURN(std::unique_ptr<records::LogWriter> writer, records::LogWriter::Open(path));
  return std::unique_ptr<LogSink>(new LogSink(std::move(writer)));
}

Status LogSink::Append(const records::Record& record) {
  std::lock_guard<std::mutex> lock(mu_);
  OPSCHED_RETURN_IF_ERROR(writer_->Append(record));
  ++appended_;
  return absl::OkStatus();
}

int LogSink::appended() const {
  std::lock_guard<std::mutex> lock(mu_);
  return appended_;
}

}  // namespace opsched
