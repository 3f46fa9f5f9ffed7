# torch.compile's 8-op chain timed with CUDA events as bench/compare_torch.py times it (a read flush of 120 MiB
# before each call, median of 100), and the same kernel without the flush, beside the ncu figures of h96.
import torch, statistics
x = torch.empty(64, 1024, 1024, device="cuda").uniform_(0.1, 2.0)
chain8 = torch.compile(lambda x: torch.tanh(torch.sigmoid(x) * 2 - 1) * torch.exp(-x.abs()) + torch.relu(x) * 0.5)
flush = torch.empty(120 * 2**20 // 4, device="cuda")
for _ in range(5):
    chain8(x)
torch.cuda.synchronize()
def timed(with_flush):
    t = []
    for _ in range(100):
        if with_flush:
            flush.sum()
        a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        a.record(); chain8(x); b.record(); b.synchronize()
        t.append(a.elapsed_time(b) * 1000)
    return statistics.median(t)
print(f"torch.compile 8-op chain: {timed(True):.1f} us with a read flush, {timed(False):.1f} us without")
# The output buffer: allocated per call by the caching allocator. Preallocated and written with out= via the eager ops:
y = torch.empty_like(x)
