# torch.compile's kernels for the 8-op chain and bias+GELU over 64M f32, for Nsight Compute.
import torch
# Inputs drawn as bench/compare_torch.py draws pointwise inputs (and opsched's generator): uniform in [0.1, 2).
x = torch.empty(64, 1024, 1024, device="cuda").uniform_(0.1, 2.0)
a = torch.empty(16384, 4096, device="cuda").uniform_(0.1, 2.0)
b = torch.empty(4096, device="cuda").uniform_(0.1, 2.0)
chain8 = torch.compile(lambda x: torch.tanh(torch.sigmoid(x) * 2 - 1) * torch.exp(-x.abs()) + torch.relu(x) * 0.5)
bias_gelu = torch.compile(lambda a, b: torch.nn.functional.gelu(a + b))
for _ in range(6):
    chain8(x)
    bias_gelu(a, b)
torch.cuda.synchronize()
