# PyTorch's channels-last bf16 depthwise 3x3 (dtypes.txt line 37), a few runs for ncu.
import torch
x = torch.randn(32, 144, 56, 56, device="cuda", dtype=torch.bfloat16).to(memory_format=torch.channels_last)
w = torch.randn(144, 1, 3, 3, device="cuda", dtype=torch.bfloat16).to(memory_format=torch.channels_last)
for _ in range(6):
    y = torch.nn.functional.conv2d(x, w, padding=1, groups=144)
torch.cuda.synchronize()
