import sys, torch
which = sys.argv[1]
g = torch.Generator(device='cuda'); g.manual_seed(0)
if which == 'f32':
    data = torch.randn(3327, 64, device='cuda'); upd = torch.randn(9104, 64, device='cuda')
    idx = torch.randint(0, 3327, (9104, 64), device='cuda', generator=g)
else:
    data = torch.randint(-50, 51, (65536, 64), device='cuda', dtype=torch.int32)
    upd = torch.randint(-50, 51, (262144, 64), device='cuda', dtype=torch.int32)
    idx = torch.randint(0, 65536, (262144, 64), device='cuda', generator=g)
for _ in range(6):
    torch.scatter_add(data, 0, idx, upd)
torch.cuda.synchronize()
