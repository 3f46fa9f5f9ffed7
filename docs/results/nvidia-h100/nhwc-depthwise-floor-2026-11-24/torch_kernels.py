# Which kernels PyTorch runs for channels-last depthwise convolutions (diagnosis only).
import sys
import torch
from torch.profiler import profile, ProfilerActivity
torch.backends.cudnn.benchmark = False
cases = [((32, 128, 56, 56), 7, 1, 3, torch.bfloat16), ((32, 96, 112, 112), 3, 2, 1, torch.bfloat16),
         ((8, 960, 7, 7), 3, 1, 1, torch.float16), ((64, 192, 28, 28), 3, 1, 1, torch.float16)]
only = int(sys.argv[1]) if len(sys.argv) > 1 else -1
for i, (shape, k, s, pad, dt) in enumerate(cases):
    if only >= 0 and i != only:
        continue
    x = torch.randn(*shape, device="cuda", dtype=dt).to(memory_format=torch.channels_last)
    w = torch.randn(shape[1], 1, k, k, device="cuda", dtype=dt).to(memory_format=torch.channels_last)
    f = lambda: torch.nn.functional.conv2d(x, w, stride=s, padding=pad, groups=shape[1])
    for _ in range(3):
        f()
    torch.cuda.synchronize()
    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        for _ in range(5):
            f()
        torch.cuda.synchronize()
    print(shape, k, s, dt)
    print(prof.key_averages().table(sort_by="cuda_time_total", row_limit=5, max_name_column_width=140))
