import sys, torch
n = 1 << 20
g = torch.Generator(device="cuda"); g.manual_seed(1)
if sys.argv[1] == "7":
    d = torch.randint(-50, 51, (n,), device="cuda", dtype=torch.int64, generator=g)
    u = torch.randint(-50, 51, (n,), device="cuda", dtype=torch.int64, generator=g)
    i = torch.randint(0, n, (n,), device="cuda", generator=g)
    f = lambda: torch.scatter(d, 0, i, u)
else:
    d = torch.randint(-50, 51, (1000, 256), device="cuda", dtype=torch.int32, generator=g)
    u = torch.randint(-50, 51, (8192, 256), device="cuda", dtype=torch.int32, generator=g)
    i = torch.randint(0, 1000, (8192, 256), device="cuda", generator=g)
    f = lambda: torch.scatter_add(d, 0, i, u)
for _ in range(5):
    f()
torch.cuda.synchronize()
