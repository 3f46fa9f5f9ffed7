"""opsched on torch tensors: CUDA tensors on torch's current stream (no host sync), CPU
tensors through the same path. The CUDA cases skip, saying why, without torch, a GPU or
a libopsched.so built with CUDA; the CPU cases skip without torch."""

import os
import sys
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

import opsched  # noqa: E402

try:
    import torch
    import torch.nn.functional as F
    TORCH = None
except ImportError as e:  # pragma: no cover - depends on the machine
    torch = None
    TORCH = f"no torch ({e}), test skipped"


def _cuda_reason():
    if torch is None:
        return TORCH
    if not torch.cuda.is_available():
        return "no GPU visible to torch, test skipped"
    try:
        opsched.default_runtime("cuda:0")
    except opsched.Error as e:
        return f"libopsched.so has no CUDA device ({e}), test skipped"
    return None


CUDA = _cuda_reason() if torch is not None else TORCH


def f64(t):
    return t.detach().to("cpu", torch.float64)


class TorchCases:
    """The cases of both devices (a mixin: run by the TestCase classes below)."""

    device = "cpu"

    def setUp(self):
        self.gen = torch.Generator().manual_seed(int.from_bytes(os.urandom(4), "little"))

    def rand(self, *shape, dtype=None):
        dtype = dtype or torch.float32
        return (torch.rand(*shape, generator=self.gen, dtype=torch.float64) * 2 - 1).to(self.device, dtype)

    def assertClose(self, got, want, atol, rtol=0.0, what=""):
        got, want = f64(got), f64(want)
        self.assertEqual(tuple(got.shape), tuple(want.shape), what)
        bad = (got - want).abs() > atol + rtol * want.abs()
        if bad.any():
            i = tuple(bad.nonzero()[0].tolist())
            self.fail(f"{what}: at {i} got {got[i].item()}, want {want[i].item()}")

    def sync(self):
        if self.device != "cpu":
            torch.cuda.synchronize()

    def test_scatter_reduce_like_torch(self):
        for dtype in (torch.float32, torch.float16, torch.bfloat16):
            for reduce in ("sum", "prod", "mean", "amax", "amin"):
                x = self.rand(17, 8, dtype=dtype)
                index = torch.randint(0, 17, (50, 8), generator=self.gen).to(self.device)
                src = self.rand(50, 8, dtype=dtype)
                got = opsched.scatter(x, 0, index, src, reduce)
                self.assertEqual(got.device, x.device)
                self.assertEqual(got.dtype, dtype)
                want = f64(x).scatter_reduce(0, f64(index).long(), f64(src), reduce)
                tol = {torch.float32: 1e-4, torch.float16: 3e-2, torch.bfloat16: 2e-1}[dtype]
                self.assertClose(got, want, tol, tol, f"{dtype} {reduce}")

    def test_in_place_scatter_and_out_of_range(self):
        x = self.rand(8, 5)
        index = torch.randint(0, 8, (3, 5), generator=self.gen).to(self.device)
        src = self.rand(3, 5)
        want = f64(x).scatter_add(0, f64(index).long(), f64(src))
        self.assertIs(opsched.scatter_(x, 0, index, src, "sum"), x)
        self.assertClose(x, want, 1e-5)
        index[1, 2] = 8
        before = x.clone()
        with self.assertRaisesRegex(opsched.IndexOutOfRangeError, r"index 8 at position \[1,2\]"):
            opsched.scatter_(x, 0, index, src, "sum")
            opsched.synchronize(self.device)  # a GPU reports it here
        self.assertTrue(torch.equal(x, before))

    def test_reductions_like_torch(self):
        x = self.rand(6, 33, 10)
        for fn, ref in ((opsched.sum, torch.sum), (opsched.mean, torch.mean), (opsched.amax, torch.amax),
                        (opsched.amin, torch.amin)):
            for dim in ((0, 2), -1, 1):
                for keepdim in (False, True):
                    self.assertClose(fn(x, dim, keepdim), ref(f64(x), dim, keepdim), 1e-4, 1e-5,
                                     f"{fn.__name__} {dim}")
        half = self.rand(7, 300, dtype=torch.float16)
        got = opsched.sum(half, 1, dtype=torch.float32)
        self.assertEqual(got.dtype, torch.float32)
        self.assertClose(got, f64(half).sum(1), 1e-3, 1e-4)
        self.assertClose(opsched.sum(x.transpose(0, 2), 0), f64(x).sum(2).T, 1e-4, 1e-5, "strided")

    def test_conv2d_and_backward_like_torch(self):
        x, w, b = self.rand(2, 6, 13, 11), self.rand(8, 3, 3, 3), self.rand(8)
        y = opsched.conv2d(x, w, b, stride=(2, 1), padding=1, groups=2, activation="relu")
        want = F.relu(F.conv2d(f64(x), f64(w), f64(b), stride=(2, 1), padding=1, groups=2))
        self.assertClose(y, want, 1e-4, 1e-4, "conv2d")
        dy = self.rand(*y.shape)
        dx, dw, db = opsched.conv2d_backward(dy, x, w, stride=(2, 1), padding=1, groups=2, bias=True)
        xx, ww = f64(x).requires_grad_(), f64(w).requires_grad_()
        F.conv2d(xx, ww, stride=(2, 1), padding=1, groups=2).backward(f64(dy))
        self.assertClose(dx, xx.grad, 1e-4, 1e-4, "dx")
        self.assertClose(dw, ww.grad, 1e-3, 1e-4, "dw")
        self.assertClose(db, f64(dy).sum((0, 2, 3)), 1e-3, 1e-4, "db")
        cl = x.contiguous(memory_format=torch.channels_last)
        self.assertClose(opsched.conv2d(cl, w, groups=2), F.conv2d(f64(x), f64(w), groups=2), 1e-4, 1e-4,
                         "channels_last input")

    def test_autograd_conv2d_like_torch(self):
        import opsched.torch as ot
        for activation, ref in ((None, lambda z: z), ("relu", F.relu), ("sigmoid", torch.sigmoid),
                                ("tanh", torch.tanh)):
            for with_bias in (True, False):
                x, w, b = self.rand(3, 4, 9, 10), self.rand(6, 4, 3, 3), self.rand(6)
                leaves = [t.requires_grad_() for t in (x, w, b)]
                y = ot.conv2d(x, w, b if with_bias else None, stride=(1, 2), padding=1, activation=activation)
                dy = self.rand(*y.shape)
                y.backward(dy)
                refs = [f64(t).requires_grad_() for t in (x, w, b)]
                want = ref(F.conv2d(refs[0], refs[1], refs[2] if with_bias else None, stride=(1, 2), padding=1))
                want.backward(f64(dy))
                what = f"{activation} bias={with_bias}"
                self.assertClose(y, want, 1e-4, 1e-4, what)
                for name, got, r in zip(("dx", "dw", "db"), leaves, refs):
                    if name == "db" and not with_bias:
                        self.assertIsNone(got.grad, what)
                        continue
                    self.assertClose(got.grad, r.grad, 1e-3, 1e-4, f"{what} {name}")
        # The module, and an expanded incoming gradient (sum's backward hands one).
        conv = ot.Conv2d(4, 5, 3, padding=1, activation="relu").to(self.device)
        x = self.rand(2, 4, 7, 7).requires_grad_()
        conv(x).sum().backward()
        xx = f64(x).requires_grad_()
        F.relu(F.conv2d(xx, f64(conv.weight), f64(conv.bias), padding=1)).sum().backward()
        self.assertClose(x.grad, xx.grad, 1e-3, 1e-4, "module dx")

    def test_autograd_scatter_add_like_torch(self):
        import opsched.torch as ot
        for src_rows in (40, 55):  # src as index, and larger (its tail gets no gradient)
            x = self.rand(11, 6).requires_grad_()
            index = torch.randint(0, 11, (40, 6), generator=self.gen).to(self.device)
            src = self.rand(src_rows, 6).requires_grad_()
            out = ot.scatter_add(x, 0, index, src)
            g = self.rand(11, 6)
            out.backward(g)
            # torch's own backward refuses a src larger than index (its gradient has
            # index's shape), so the reference gradient of src is written out: the
            # gathered gradient where index covers src, zero elsewhere.
            xx = f64(x).requires_grad_()
            want = xx.scatter_add(0, index.cpu(), f64(src)[:40])
            want.backward(f64(g))
            want_src = torch.zeros(src_rows, 6, dtype=torch.float64)
            want_src[:40] = f64(g).gather(0, index.cpu())
            self.assertClose(out, want, 1e-5, 1e-5, f"scatter_add {src_rows}")
            self.assertClose(x.grad, xx.grad, 0, 0, "grad input")
            self.assertClose(src.grad, want_src, 0, 0, "grad src")

    def test_bad_input(self):
        x = self.rand(4, 4)
        index = torch.zeros(2, 4, dtype=torch.int64, device=self.device)
        with self.assertRaisesRegex(opsched.InvalidArgumentError, "dtype torch.float64"):
            opsched.sum(x.double(), 0)
        with self.assertRaisesRegex(opsched.InvalidArgumentError, "is not contiguous"):
            opsched.scatter(x.t(), 0, index, self.rand(2, 4))
        with self.assertRaisesRegex(opsched.Error, "must have the same shape"):
            opsched.scatter(x, 0, index, self.rand(2, 3))


@unittest.skipIf(torch is None, TORCH or "")
class TorchCpuTest(TorchCases, unittest.TestCase):
    device = "cpu"


@unittest.skipIf(CUDA is not None, CUDA or "")
class TorchCudaTest(TorchCases, unittest.TestCase):
    device = "cuda"

    def test_runs_on_the_current_stream_without_host_sync(self):
        x = self.rand(1 << 20)
        side = torch.cuda.Stream()
        side.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(side):
            # Warm-ups, since first calls wait for the stream: opsched's first call on a
            # stream grows that stream's workspace, which synchronises it
            # (opsched/workspace.cc; issue "prepared execution" removes that), and
            # torch's first multiplication loads its kernel (CUDA lazy loading), which
            # waited 53 ms on an H100. The steady state is what must not wait.
            opsched.sum(x * 2, 0)
            torch.cuda._sleep(100_000_000)  # keeps the side stream busy for a while
            doubled = x * 2                 # ready only once the side stream gets there
            y = opsched.sum(doubled, 0)     # must run after it, on the side stream
            self.assertFalse(side.query(), "the call waited for the stream")
        side.synchronize()
        self.assertClose(y, f64(x).sum() * 2, 1e-2, 1e-5)

    def test_wrong_device(self):
        x = self.rand(4, 4)
        with self.assertRaisesRegex(opsched.InvalidArgumentError, "is on cpu but scatter: input is on cuda:0"):
            opsched.scatter(x, 0, torch.zeros(2, 4, dtype=torch.int64), self.rand(2, 4))
        with self.assertRaisesRegex(opsched.InvalidArgumentError, "runtime runs on cpu"):
            opsched.sum(x, 0, runtime=opsched.default_runtime("cpu"))


if __name__ == "__main__":
    unittest.main()
