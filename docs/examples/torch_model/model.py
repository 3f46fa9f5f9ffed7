"""A small PyTorch model that trains with opsched ops (docs/examples/torch_model/README.md).

Two parts, each in a pure-PyTorch and an opsched version with the same weights:
- a CNN block (CIFAR-sized input): two conv+bias+relu layers, opsched.torch.Conv2d, whose
  backward computes the bias gradient with opsched's bias-gradient reduction;
- a GNN layer (graph-convolution message passing): a linear transform, messages gathered
  from source nodes, summed into destination nodes with opsched.torch.scatter_add.

It checks the opsched version's outputs and gradients against the pure-PyTorch one on fresh
random inputs, then times training iterations (forward, loss, backward, SGD step) of both
with CUDA events, warm-up first, medians reported, and writes them as JSON.
The environment says how opsched decides: OPSCHED_RECORD_UNTUNED collects the workloads
it served without records, OPSCHED_RECORDS gives the records that `opsched tune` wrote.
"""

import argparse
import copy
import json
import os
import statistics
import sys

import torch
import torch.nn as nn
import torch.nn.functional as F

import opsched
import opsched.torch as ot


class ConvBlock(nn.Module):
    def __init__(self, use_opsched):
        super().__init__()
        if use_opsched:
            self.conv1 = ot.Conv2d(3, 32, 3, padding=1, activation="relu")
            self.conv2 = ot.Conv2d(32, 64, 3, stride=2, padding=1, activation="relu")
        else:
            self.conv1 = nn.Conv2d(3, 32, 3, padding=1)
            self.conv2 = nn.Conv2d(32, 64, 3, stride=2, padding=1)
        self.use_opsched = use_opsched
        self.head = nn.Linear(64, 10)

    def forward(self, x):
        if self.use_opsched:
            x = self.conv2(self.conv1(x))
        else:
            x = F.relu(self.conv2(F.relu(self.conv1(x))))
        return self.head(x.mean((2, 3)))


class GraphConv(nn.Module):
    def __init__(self, features, use_opsched):
        super().__init__()
        self.linear = nn.Linear(features, features)
        self.out = nn.Linear(features, 1)
        self.use_opsched = use_opsched

    def forward(self, x, src, index):
        messages = self.linear(x)[src]                  # [edges, features]
        zeros = x.new_zeros(x.shape[0], messages.shape[1])
        if self.use_opsched:
            aggregated = ot.scatter_add(zeros, 0, index, messages)
        else:
            aggregated = zeros.scatter_add(0, index, messages)
        return self.out(F.relu(aggregated))


def make_parts(device, seed):
    torch.manual_seed(seed)
    parts = {}
    for name, make in (("cnn", lambda o: ConvBlock(o)), ("gnn", lambda o: GraphConv(64, o))):
        eager = make(False).to(device)
        ours = make(True).to(device)
        ours.load_state_dict(copy.deepcopy(eager.state_dict()))
        parts[name] = (eager, ours)
    return parts


def make_inputs(device, args):
    g = torch.Generator(device="cpu").manual_seed(args.seed + 1)
    images = torch.randn(args.batch, 3, 32, 32, generator=g).to(device)
    labels = torch.randint(0, 10, (args.batch,), generator=g).to(device)
    nodes = torch.randn(args.nodes, 64, generator=g).to(device)
    src = torch.randint(0, args.nodes, (args.edges,), generator=g).to(device)
    dst = torch.randint(0, args.nodes, (args.edges,), generator=g).to(device)
    index = dst.view(-1, 1).expand(args.edges, 64).contiguous()
    target = torch.randn(args.nodes, 1, generator=g).to(device)
    return {
        "cnn": (lambda m: F.cross_entropy(m(images), labels)),
        "gnn": (lambda m: F.mse_loss(m(nodes, src, index), target)),
    }


def check(parts, losses):
    """Largest differences of loss and gradients, opsched against pure PyTorch."""
    report = {}
    for name, (eager, ours) in parts.items():
        for m in (eager, ours):
            m.zero_grad(set_to_none=True)
        le, lo = losses[name](eager), losses[name](ours)
        le.backward()
        lo.backward()
        opsched.synchronize()  # raises a deferred data error, if any
        worst = abs(le.item() - lo.item()) / max(abs(le.item()), 1e-12)
        for (pname, pe), (_, po) in zip(eager.named_parameters(), ours.named_parameters()):
            scale = pe.grad.abs().max().item() or 1.0
            err = (pe.grad - po.grad).abs().max().item() / scale
            report[f"{name}.{pname}.grad"] = err
            worst = max(worst, err)
        report[f"{name}.loss"] = abs(le.item() - lo.item())
        report[f"{name}.worst_relative"] = worst
    return report


def time_iterations(model, loss_fn, iterations, warmup):
    """Median milliseconds of one training iteration, from CUDA events recorded around the
    whole iteration (waiting for each), so host gaps between kernels count."""
    optimizer = torch.optim.SGD(model.parameters(), lr=1e-3)
    times = []
    for i in range(warmup + iterations):
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        optimizer.zero_grad(set_to_none=True)
        loss_fn(model).backward()
        optimizer.step()
        end.record()
        end.synchronize()
        if i >= warmup:
            times.append(start.elapsed_time(end))
    return statistics.median(times)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--label", default="run", help="what this run is (untuned, tuned)")
    parser.add_argument("--json", help="write the results here")
    parser.add_argument("--iterations", type=int, default=50, help="timed iterations per round")
    parser.add_argument("--rounds", type=int, default=3, help="alternating rounds of eager and opsched")
    parser.add_argument("--warmup", type=int, default=10)
    parser.add_argument("--batch", type=int, default=64)
    parser.add_argument("--nodes", type=int, default=20000)
    parser.add_argument("--edges", type=int, default=200000)
    parser.add_argument("--seed", type=int, default=int.from_bytes(os.urandom(4), "little"))
    parser.add_argument("--tolerance", type=float, default=2e-3, help="largest relative gradient difference")
    args = parser.parse_args()
    if not torch.cuda.is_available():
        print("model.py: needs a CUDA GPU (torch.cuda.is_available() is False)", file=sys.stderr)
        return 2
    torch.backends.cudnn.allow_tf32 = False   # opsched's math="fp32": compare like with like
    torch.backends.cuda.matmul.allow_tf32 = False
    device = torch.device("cuda")
    parts = make_parts(device, args.seed)
    losses = make_inputs(device, args)
    errors = check(parts, losses)
    ok = all(errors[f"{n}.worst_relative"] <= args.tolerance for n in parts)
    results = {"label": args.label, "device": torch.cuda.get_device_name(), "seed": args.seed,
               "torch": torch.__version__, "records": os.environ.get("OPSCHED_RECORDS", ""),
               "check_ok": ok, "errors": errors, "ms_per_iteration": {}}
    for name, (eager, ours) in parts.items():
        # Alternating rounds, so that clock and thermal drift hit both alike.
        rounds = [(time_iterations(eager, losses[name], args.iterations, args.warmup),
                   time_iterations(ours, losses[name], args.iterations, args.warmup)) for _ in range(args.rounds)]
        e = statistics.median(r[0] for r in rounds)
        o = statistics.median(r[1] for r in rounds)
        results["ms_per_iteration"][name] = {"eager": e, "opsched": o, "speedup": e / o}
        print(f"{args.label:8} {name}: PyTorch eager {e:.3f} ms, opsched {o:.3f} ms per iteration "
              f"({e / o:.2f}x); gradients within {errors[f'{name}.worst_relative']:.1e}")
    if args.json:
        with open(args.json, "w") as f:
            json.dump(results, f, indent=1)
    if not ok:
        print(f"model.py: opsched's gradients differ from PyTorch's beyond {args.tolerance}: {errors}",
              file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
