# torch.compile's bias+GELU and 8-op chain (64M f32), timed as compare_torch.py times them: every
# call queued behind a 120 MiB read flush, events around each call, median of 50.
import torch, statistics
def timed(fn, flush, reps=50):
    for _ in range(5): fn()
    s = [torch.cuda.Event(enable_timing=True) for _ in range(reps)]; e = [torch.cuda.Event(enable_timing=True) for _ in range(reps)]
    for i in range(reps):
        flush.sum(); s[i].record(); fn(); e[i].record()
    torch.cuda.synchronize()
    return statistics.median(a.elapsed_time(b) * 1000 for a, b in zip(s, e))
flush = torch.empty(120 * 2**20 // 4, device="cuda")
x = torch.empty(64 * 2**20, device="cuda").uniform_(0.1, 2.0)
a = x.view(16384, 4096); b = torch.empty(4096, device="cuda").uniform_(0.1, 2.0)
y = torch.empty_like(x)
print(f"torch copy_ 256MiB: {timed(lambda: y.copy_(x), flush):.2f} us")
gelu = torch.compile(lambda a, b: torch.nn.functional.gelu(a + b))
chain8 = torch.compile(lambda x: torch.tanh(torch.sigmoid(x) * 2 - 1) * torch.exp(-x.abs()) + torch.relu(x) * 0.5)
for r in range(2):
    print(f"torch.compile bias+GELU: {timed(lambda: gelu(a, b), flush):.2f} us")
    print(f"torch.compile 8-op chain: {timed(lambda: chain8(x), flush):.2f} us")
