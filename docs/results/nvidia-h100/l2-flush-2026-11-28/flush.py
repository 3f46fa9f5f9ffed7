# How much of a memory-bound op's time is the L2 flush's own dirty writeback?
# Times PyTorch ops (CUDA events, median of 50) after three flushes of a 2x L2 buffer:
# fill (the current harness: leaves L2 full of dirty lines), read (a sum over it: clean
# lines), fill then read (the dirty lines written back before the timed region).
import statistics, torch
torch.backends.cudnn.benchmark = True
l2 = torch.cuda.get_device_properties(0).L2_cache_size
buf = torch.empty(2 * l2, dtype=torch.uint8, device="cuda")
f32buf = buf.view(torch.float32)
def fill(i): buf.fill_(i & 0xFF)
def read(i): f32buf.sum()
def fill_read(i): buf.fill_(i & 0xFF); f32buf.sum()
def meds(fn, flushes, reps=60):
    """The three flushes interleaved repetition by repetition (no ordering effects)."""
    for _ in range(3): fn()
    torch.cuda.synchronize()
    ev = [[(torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)) for _ in range(reps)] for _ in flushes]
    for i in range(reps):
        for k, fl in enumerate(flushes):
            fl(i); ev[k][i][0].record(); fn(); ev[k][i][1].record()
    torch.cuda.synchronize()
    return [statistics.median(a.elapsed_time(b) * 1000 for a, b in ev[k]) for k in range(len(flushes))]
g = torch.Generator(device="cuda").manual_seed(0)
x16 = torch.randn(1 << 26, device="cuda", dtype=torch.float16)
i64 = torch.randint(-1000, 1000, (1 << 24,), device="cuda", dtype=torch.int64)
rows = torch.randn(8192, 4096, device="cuda", dtype=torch.bfloat16)
xc = torch.randn(32, 144, 56, 56, device="cuda", dtype=torch.bfloat16).to(memory_format=torch.channels_last)
wc = torch.randn(144, 1, 3, 3, device="cuda", dtype=torch.bfloat16).to(memory_format=torch.channels_last)
src128 = torch.empty(128 << 20, dtype=torch.uint8, device="cuda").fill_(1); dst128 = torch.empty_like(src128)
src512 = torch.empty(512 << 20, dtype=torch.uint8, device="cuda").fill_(1); dst512 = torch.empty_like(src512)
ops = {
  "f16 2^26 sum (dtypes 28)": lambda: x16.sum(dtype=torch.float32),
  "i64 2^24 sum (dtypes 30)": lambda: i64.sum(),
  "bf16 8192x4096 row sum (dtypes 22)": lambda: rows.sum(dim=1),
  "bf16 NHWC depthwise 32x56x56x144 (dtypes 37)": lambda: torch.nn.functional.conv2d(xc, wc, padding=1, groups=144),
  "copy 128 MiB": lambda: dst128.copy_(src128),
  "copy 512 MiB": lambda: dst512.copy_(src512),
}
print(f"{'op':48s} {'fill':>9s} {'read':>9s} {'fill+read':>9s}   (us, median of 50)")
for rnd in range(2):
    for name, fn in ops.items():
        print(f"{name:48s} " + " ".join(f"{t:9.2f}" for t in meds(fn, (fill, read, fill_read))))
print("empty region (event pair only):", " ".join(f"{t:.2f}" for t in meds(lambda: None, (fill, read, fill_read))))
