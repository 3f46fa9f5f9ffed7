# torch.compile's kernels for the long pointwise chains: runs each a few times (for ncu).
import torch
x = torch.randn(64, 1024, 1024, device="cuda")
x2 = torch.randn(4096, 4096, device="cuda"); b2 = torch.randn(4096, device="cuda"); g2 = torch.randn(4096, device="cuda")
x3 = torch.randn(1024, 4096, device="cuda"); b3 = torch.randn(4096, device="cuda")
def c8(x): return torch.tanh(torch.sigmoid(x) * 2 - 1) * torch.exp(-torch.abs(x)) + torch.relu(x) * 0.5
def c9(x, b, g): return torch.clamp_min(torch.clamp_max((x - b) * torch.rsqrt(g * g + 1e-5) * 0.5 + b, 6), 0)
def c12(x, b):
    gl = torch.nn.functional.gelu
    return torch.sqrt(torch.abs(gl(x + b) * torch.sigmoid(x) - torch.nn.functional.silu(b) / (1 + torch.exp(-x)))) + torch.log(1 + torch.abs(torch.tanh(x))) * 0.1
fs = [(torch.compile(c8), (x,)), (torch.compile(c9), (x2, b2, g2)), (torch.compile(c12), (x3, b3))]
for f, a in fs:
    for _ in range(3): f(*a)
torch.cuda.synchronize()
