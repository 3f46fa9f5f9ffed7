#include "extern/cudnn/replayed_prepared.h"

#include <cuda_runtime.h>

#include <array>
#include <mutex>

#include "core/gpu/gpu_status.h"
#include "core/stream.h"

namespace opsched::cudnn {
namespace {

// What a captured graph is bound to: the stream and every address it reads or writes.
struct CallKey {
  static constexpr int kMaxTensors = 8;
  cudaStream_t stream = nullptr;
  void* workspace = nullptr;
  size_t workspace_bytes = 0;
  int tensors = -1;  // -1: no call yet
  std::array<const void*, kMaxTensors> data = {};

  bool operator==(const CallKey& o) const {
    return stream == o.stream && workspace == o.workspace && workspace_bytes == o.workspace_bytes &&
           tensors == o.tensors && data == o.data;
  }
};

class ReplayedPrepared final : public Prepared {
 public:
  explicit ReplayedPrepared(std::unique_ptr<Prepared> inner)
      : Prepared(inner->workspace_bytes()), inner_(std::move(inner)) {}
  ~ReplayedPrepared() override {
    if (exec_ != nullptr) cudaGraphExecDestroy(exec_);
  }

  Status Run(const PreparedArgs& a) const override {
    const cudaStream_t stream = static_cast<cudaStream_t>(a.stream.native());
    if (a.tensors.size() > CallKey::kMaxTensors) return inner_->Run(a);
    std::unique_lock<std::mutex> lock(mu_, std::try_to_lock);
    if (!lock.owns_lock() || off_) return inner_->Run(a);
    cudaStreamCaptureStatus capturing = cudaStreamCaptureStatusNone;
    if (cudaStreamIsCapturing(stream, &capturing) != cudaSuccess || capturing != cudaStreamCaptureStatusNone) {
      return inner_->Run(a);  // the caller's own capture records the inner work
    }
    const CallKey key = KeyOf(a, stream);
    if (!(key == last_)) {
      Forget();
      last_ = key;
      return inner_->Run(a);
    }
    if (exec_ == nullptr && !Capture(a)) return inner_->Run(a);
    return gpu::ToStatus(cudaGraphLaunch(exec_, stream), "cudaGraphLaunch");
  }

 private:
  static CallKey KeyOf(const PreparedArgs& a, cudaStream_t stream) {
    CallKey k;
    k.stream = stream;
    k.workspace = a.workspace;
    k.workspace_bytes = a.workspace_bytes;
    k.tensors = static_cast<int>(a.tensors.size());
    for (size_t i = 0; i < a.tensors.size(); ++i) k.data[i] = a.tensors[i].data;
    return k;
  }

  void Forget() const {
    if (exec_ != nullptr) cudaGraphExecDestroy(exec_);
    exec_ = nullptr;
  }

  // Captures the inner Run (nothing runs) and instantiates it. The capture runs on a
  // stream of this object's own, never on the caller's: work another thread queues on
  // the caller's stream meanwhile must run, not join the graph. False, with replay
  // turned off, when the stream, the capture or the instantiation fails.
  bool Capture(const PreparedArgs& a) const {
    if (capture_.native() == nullptr) {
      StatusOr<Stream> made = Stream::Create(a.stream.device());
      if (!made.ok()) {
        off_ = true;
        return false;
      }
      capture_ = *std::move(made);
    }
    const cudaStream_t stream = static_cast<cudaStream_t>(capture_.native());
    if (cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal) != cudaSuccess) {
      cudaGetLastError();
      off_ = true;
      return false;
    }
    const Status ran = inner_->Run(PreparedArgs{a.tensors, a.workspace, a.workspace_bytes, capture_, a.error_slot});
    cudaGraph_t graph = nullptr;
    const cudaError_t ended = cudaStreamEndCapture(stream, &graph);
    cudaGraphExec_t exec = nullptr;
    const bool made = ran.ok() && ended == cudaSuccess && graph != nullptr &&
                      cudaGraphInstantiate(&exec, graph, 0) == cudaSuccess;
    if (graph != nullptr) cudaGraphDestroy(graph);
    if (!made) {
      cudaGetLastError();  // capture errors are not sticky: clear the last one
      off_ = true;
      return false;
    }
    exec_ = exec;
    return true;
  }

  const std::unique_ptr<Prepared> inner_;
  // The replay state; Run holds mu_ (try_lock) while it reads or changes it.
  mutable std::mutex mu_;
  mutable CallKey last_;
  mutable cudaGraphExec_t exec_ = nullptr;
  mutable bool off_ = false;
  mutable Stream capture_;  // made on the first capture
};

}  // namespace

std::unique_ptr<Prepared> Replayed(std::unique_ptr<Prepared> inner) {
  return std::make_unique<ReplayedPrepared>(std::move(inner));
}

}  // namespace opsched::cudnn
