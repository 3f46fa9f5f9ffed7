"""opsched on NumPy arrays (the CPU): every op against a float64 reference on fresh random
inputs with poisoned outputs, edge shapes and strides, and errors as Python exceptions
that carry the library's message, with the data untouched."""

import os
import subprocess
import sys
import tempfile
import unittest

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

import opsched  # noqa: E402
import reference  # noqa: E402

SEED = int(os.environ.get("OPSCHED_TEST_SEED", np.random.SeedSequence().entropy % (1 << 32)))
# float32 and float16: unit roundoff.
EPS = {np.float32: 2.0 ** -24, np.float16: 2.0 ** -11}


def poisoned(shape, dtype):
    out = np.empty(shape, dtype)
    out.view(np.uint8)[...] = 0xAB
    return out


class Case(unittest.TestCase):
    def setUp(self):
        self.rng = np.random.default_rng(SEED)

    def values(self, shape, dtype=np.float32):
        return self.rng.uniform(-1, 1, size=shape).astype(dtype)

    def assertClose(self, got, want, tol, what=""):
        got = np.asarray(got, np.float64)
        self.assertEqual(got.shape, want.shape, what)
        bad = np.abs(got - want) > tol
        if bad.any():
            i = tuple(np.argwhere(bad)[0])
            self.fail(f"{what} (seed {SEED}): at {i} got {got[i]}, want {want[i]} within "
                      f"{np.broadcast_to(tol, want.shape)[i]}")


class ScatterTest(Case):
    def check(self, input, dim, index, src, reduce, what):
        before = input.copy()
        want, hits = reference.scatter(input, dim, index, src, reduce)
        got = opsched.scatter(input, dim, index, src, reduce)
        self.assertIsInstance(got, np.ndarray)
        self.assertEqual(got.dtype, input.dtype)
        np.testing.assert_array_equal(input, before, err_msg=f"{what}: input changed")
        eps = EPS[input.dtype.type]
        tol = 4 * eps * (hits + 1) * (np.abs(want) + hits + 1)
        self.assertClose(got, want, tol, what)

    def test_reductions_dtypes_and_index_types(self):
        for dtype in (np.float32, np.float16):
            for index_dtype in (np.int32, np.int64):
                for reduce in ("sum", "prod", "mean", "amax", "amin"):
                    x = self.values((13, 6), dtype)
                    index = self.rng.integers(-13, 13, size=(40, 6)).astype(index_dtype)  # duplicates, negatives
                    src = self.values((40, 6), dtype)
                    self.check(x, 0, index, src, reduce, f"{dtype.__name__} {index_dtype.__name__} {reduce}")

    def test_integers_are_exact_and_wrap_around(self):
        # NumPy's ufunc.at is the oracle: exact, and wrapping around like PyTorch.
        oracle = {"sum": np.add, "prod": np.multiply, "amin": np.minimum, "amax": np.maximum}
        for dtype in (np.int32, np.int64):
            info = np.iinfo(dtype)
            for reduce, ufunc in oracle.items():
                x = self.rng.integers(info.min, info.max, size=(9, 5), dtype=dtype, endpoint=True)
                index = self.rng.integers(-9, 9, size=(40, 5))
                src = self.rng.integers(info.min, info.max, size=(40, 5), dtype=dtype, endpoint=True)
                want = x.copy()
                columns = np.broadcast_to(np.arange(5), index.shape)
                with np.errstate(over="ignore"):
                    ufunc.at(want, (index % 9, columns), src)
                got = opsched.scatter(x, 0, index, src, reduce)
                self.assertEqual(got.dtype, dtype)
                np.testing.assert_array_equal(got, want, err_msg=f"{np.dtype(dtype).name} {reduce} (seed {SEED})")

    def test_plain_scatter_with_unique_indices(self):
        x = self.values((9, 5, 4))
        index = np.stack([self.rng.permutation(5)[:3] for _ in range(9 * 4)]).reshape(9, 4, 3).transpose(0, 2, 1)
        src = self.values((9, 3, 4))
        self.check(x, 1, np.ascontiguousarray(index), src, None, "axis 1, no reduction")
        self.check(x, -2, np.ascontiguousarray(index), src, None, "axis -2")

    def test_edge_shapes(self):
        self.check(self.values((1,)), 0, np.zeros((1,), np.int64), self.values((1,)), "sum", "one element")
        self.check(self.values((5, 3)), 0, np.zeros((0, 3), np.int64), self.values((0, 3)), "sum", "no updates")
        self.check(self.values((0, 4)), 1, np.zeros((0, 4), np.int64), self.values((0, 4)), None, "empty data")
        self.check(self.values((3, 257)), 1, self.rng.integers(0, 257, size=(3, 1001)), self.values((3, 1001)),
                   "sum", "odd sizes")
        self.check(self.values((4,)), 0, np.full((50,), 2), self.values((50,)), "sum", "every update hits one")

    def test_strided_inputs_and_a_larger_src(self):
        x = self.values((6, 3))
        src = self.values((3, 20)).T                           # [20,3], transposed
        index = self.rng.integers(0, 6, size=(40, 3))[::2]     # [20,3], strided
        self.check(x, 0, index, src, "sum", "strided index and src")
        # torch.scatter reads only the part of src that index covers.
        index = self.rng.integers(0, 6, size=(4, 2))
        self.check(x, 0, index, self.values((9, 3)), "amax", "src larger than index")
        # A strided input is written in place; a new output would need its strides.
        big = self.values((12, 10))
        view = big[::2, 1::3]                                  # [6,3]:[20,3]
        index = self.rng.integers(0, 6, size=(20, 3))
        want, _ = reference.scatter(view, 0, index, src, "sum")
        untouched = big.copy()
        untouched[::2, 1::3] = 0
        self.assertIs(opsched.scatter_(view, 0, index, src, "sum"), view)
        self.assertClose(view, want, 1e-5, "strided input in place")
        big[::2, 1::3] = 0
        np.testing.assert_array_equal(big, untouched)
        with self.assertRaisesRegex(opsched.InvalidArgumentError, "is not contiguous"):
            opsched.scatter(big[::2, 1::3], 0, index, src, "sum")

    def test_in_place_and_out(self):
        x = self.values((8, 4))
        index = self.rng.integers(0, 8, size=(10, 4))
        src = self.values((10, 4))
        want, _ = reference.scatter(x, 0, index, src, "sum")
        out = poisoned((8, 4), np.float32)
        self.assertIs(opsched.scatter(x, 0, index, src, "sum", out=out), out)
        self.assertClose(out, want, 1e-5)
        self.assertIs(opsched.scatter_(x, 0, index, src, reduce="add"), x)
        self.assertClose(x, want, 1e-5, "in place")

    def test_out_of_range_index_raises_and_writes_nothing(self):
        x = self.values((8, 5))
        index = self.rng.integers(0, 8, size=(3, 5))
        index[1, 2] = 8
        src = self.values((3, 5))
        out = poisoned((8, 5), np.float32)
        before, out_before = x.copy(), out.copy()
        with self.assertRaises(opsched.IndexOutOfRangeError) as caught:
            opsched.scatter(x, 0, index, src, "sum", out=out)
        self.assertIn("index 8 at position [1,2] is out of range [-8,8) of axis 0", str(caught.exception))
        self.assertIsInstance(caught.exception, IndexError)
        with self.assertRaises(opsched.IndexOutOfRangeError):
            opsched.scatter_(x, 0, index, src, "sum")
        np.testing.assert_array_equal(x, before)
        np.testing.assert_array_equal(out.view(np.uint8), out_before.view(np.uint8))

    def test_mean_in_place_and_out_of_range(self):
        x = self.values((7, 3))
        index = self.rng.integers(0, 7, size=(30, 3))
        src = self.values((30, 3))
        want, _ = reference.scatter(x, 0, index, src, "mean")
        self.assertIs(opsched.scatter_(x, 0, index, src, "mean"), x)
        self.assertClose(x, want, 1e-5, "mean in place")
        index[4, 1] = -8
        before = x.copy()
        with self.assertRaises(opsched.IndexOutOfRangeError):
            opsched.scatter_(x, 0, index, src, "mean")
        np.testing.assert_array_equal(x, before)

    def test_bad_arguments(self):
        x = self.values((4, 4))
        index = np.zeros((2, 4), np.int64)
        src = self.values((2, 4))
        cases = [
            (lambda: opsched.scatter(x.astype(np.int32), 0, index, src), "updates are f32 but data is i32"),
            (lambda: opsched.scatter(x.astype(np.int64), 0, index, src.astype(np.int64), "mean"),
             "reduce 'mean' takes float32, float16 or bfloat16 data, not int64"),
            (lambda: opsched.scatter(x.astype(np.float64), 0, index, src), "dtype float64"),
            (lambda: opsched.scatter(x, 0, index.astype(np.float32), src), "indices are f32, expected i32 or i64"),
            (lambda: opsched.scatter(x, 0, index, src.astype(np.float16)), "updates are f16 but data is f32"),
            (lambda: opsched.scatter(x, 0, index, src[:, :3]), "must have the same shape"),
            (lambda: opsched.scatter(x, 2, index, src), "axis 2 is out of range for rank 2"),
            (lambda: opsched.scatter(x[::-1], 0, index, src), "negative stride"),
            (lambda: opsched.scatter(x, 0, index, src, "median"), "reduce 'median' is not supported"),
            (lambda: opsched.scatter(x, 0, index, src, "avg"), "scatter: reduce 'avg' is not supported"),
            (lambda: opsched.scatter(x, 0, index, src, out=np.empty((4, 3), np.float32)), "out is float32[4, 3]"),
            (lambda: opsched.scatter([[1.0]], 0, index, src), "not an array"),
        ]
        readonly = np.zeros((4, 4), np.float32)
        readonly.flags.writeable = False
        cases.append((lambda: opsched.scatter(x, 0, index, src, out=readonly), "read-only"))
        before = x.copy()
        for call, message in cases:
            with self.subTest(message=message):
                with self.assertRaises(opsched.Error) as caught:
                    call()
                self.assertIn(message, str(caught.exception))
        np.testing.assert_array_equal(x, before)


class ReduceTest(Case):
    def check(self, fn, ref, x, dim, keepdim, what, **kw):
        got = fn(x, dim, keepdim, **kw)
        axis = None if dim is None else dim
        want = ref(np.asarray(x, np.float64), axis=axis, keepdims=keepdim)
        terms = max(x.size // max(np.asarray(want).size, 1), 1)
        self.assertClose(got, np.asarray(want), 8 * EPS[np.float32] * terms * (1 + np.abs(want))
                         + (2e-3 * (1 + np.abs(want)) if got.dtype == np.float16 else 0), what)
        return got

    def test_sum_mean_amax_amin(self):
        ops = [(opsched.sum, np.sum), (opsched.mean, np.mean), (opsched.amax, np.amax), (opsched.amin, np.amin)]
        for fn, ref in ops:
            for dtype in (np.float32, np.float16):
                x = self.values((6, 5, 33), dtype)
                for dim in (None, 0, -1, (0, 2), (2, 0), 1):
                    for keepdim in (False, True):
                        got = self.check(fn, ref, x, dim, keepdim, f"{fn.__name__} {dtype.__name__} {dim} {keepdim}")
                        self.assertEqual(got.dtype, dtype)

    def test_strides_edges_and_dtype(self):
        x = self.values((9, 20))[:, ::3]
        self.check(opsched.sum, np.sum, x, 0, False, "strided")
        self.check(opsched.amax, np.amax, self.values((1,)), 0, False, "one element")
        got = self.check(opsched.sum, np.sum, np.zeros((4, 0, 3), np.float32), 1, False, "empty terms")
        np.testing.assert_array_equal(got, np.zeros((4, 3)))
        got = opsched.sum(self.values((7, 11), np.float16), 1, dtype="float32")
        self.assertEqual(got.dtype, np.float32)
        out = poisoned((7,), np.float32)
        x = self.values((7, 3))
        self.assertIs(opsched.mean(x, 1, out=out), out)
        self.assertClose(out, x.astype(np.float64).mean(1), 1e-6)

    def test_integers_are_exact(self):
        # NumPy sums in int64 (wrapping around) like opsched; int32 sums to int64 as torch.sum does.
        for dtype in (np.int32, np.int64):
            info = np.iinfo(dtype)
            x = self.rng.integers(info.min, info.max, size=(7, 5, 9), dtype=dtype, endpoint=True)
            for dim in (None, 0, (0, 2), -1):
                got = opsched.sum(x, dim)
                self.assertEqual(got.dtype, np.int64)
                with np.errstate(over="ignore"):
                    np.testing.assert_array_equal(got, np.sum(x, axis=dim, dtype=np.int64))
                np.testing.assert_array_equal(opsched.amax(x, dim), np.amax(x, axis=dim))
                np.testing.assert_array_equal(opsched.amin(x, dim), np.amin(x, axis=dim))
        x = np.array([[np.iinfo(np.int32).max, 1]], np.int32)
        np.testing.assert_array_equal(opsched.sum(x, 1, dtype="int32"), np.array([np.iinfo(np.int32).min], np.int32))

    def test_bias_grad(self):
        dy = self.values((3, 5, 4, 7))
        self.assertClose(opsched.bias_grad(dy), dy.astype(np.float64).sum((0, 2, 3)), 1e-5)
        self.assertClose(opsched.bias_grad(dy, "nhwc"), dy.astype(np.float64).sum((0, 1, 2)), 1e-5)

    def test_errors(self):
        with self.assertRaisesRegex(opsched.Error, "max over an empty set of terms"):
            opsched.amax(np.zeros((3, 0), np.float32), 1)
        with self.assertRaisesRegex(opsched.InvalidArgumentError, "dim 2 is out of range for rank 2"):
            opsched.sum(self.values((3, 3)), 2)
        with self.assertRaisesRegex(opsched.Error, "axis 0 is given twice"):
            opsched.sum(self.values((3, 3)), (0, -2))
        with self.assertRaisesRegex(opsched.Error, "dtype float64"):
            opsched.sum(np.zeros((3,)), 0)
        with self.assertRaisesRegex(opsched.Error, "op mean takes f32, f16 or bf16 \\(x is i32"):
            opsched.mean(np.zeros((3,), np.int32), 0)
        with self.assertRaisesRegex(opsched.Error, "out is float32\\[2\\] on cpu but must be float32\\[3\\]"):
            opsched.sum(self.values((3, 3)), 1, out=np.zeros((2,), np.float32))


class Conv2dTest(Case):
    SHAPES = [
        # n, c, h, w, k, r, s, stride, pad, dilation, groups
        (2, 3, 9, 7, 4, 3, 3, (1, 1), (1, 1), (1, 1), 1),
        (3, 4, 11, 8, 6, 3, 3, (2, 1), (1, 1), (1, 1), 2),
        (1, 6, 10, 10, 6, 3, 3, (1, 1), (2, 2), (2, 2), 6),   # depthwise, dilated
        (2, 5, 5, 6, 3, 1, 1, (1, 1), (0, 0), (1, 1), 1),     # 1x1
        (1, 1, 1, 1, 1, 1, 1, (1, 1), (0, 0), (1, 1), 1),     # one element
    ]

    def test_forward_with_bias_and_activation(self):
        for n, c, h, w, k, r, s, stride, pad, dil, groups in self.SHAPES:
            x = self.values((n, c, h, w))
            wt = self.values((k, c // groups, r, s))
            b = self.values((k,))
            want = reference.conv2d(x, wt, stride, pad, dil, groups)
            tol = 1e-5 * (1 + c * r * s)
            got = opsched.conv2d(x, wt, stride=stride, padding=pad, dilation=dil, groups=groups)
            self.assertClose(got, want, tol, f"conv2d {x.shape} {wt.shape}")
            for act in (None, "relu", "sigmoid", "tanh"):
                out = poisoned(want.shape, np.float32)
                opsched.conv2d(x, wt, b, stride, pad, dil, groups, activation=act, out=out)
                self.assertClose(out, reference.ACTIVATIONS[act](want + b[None, :, None, None]), tol, f"{act}")
        # An activation without a bias.
        x, wt = self.values((2, 3, 6, 6)), self.values((4, 3, 3, 3))
        self.assertClose(opsched.conv2d(x, wt, activation="relu", padding="same"),
                         np.maximum(reference.conv2d(x, wt, pad=(1, 1)), 0), 1e-4, "relu, no bias")

    def test_float16_and_strided_input(self):
        x = self.values((2, 4, 12, 9), np.float16)
        wt = self.values((3, 4, 3, 3), np.float16)
        got = opsched.conv2d(x, wt, padding=1)
        self.assertEqual(got.dtype, np.float16)
        self.assertClose(got, reference.conv2d(x, wt, pad=(1, 1)), 2e-2, "f16")
        xs = self.values((2, 8, 12, 9))[:, ::2]
        ws = self.values((3, 4, 3, 3))
        self.assertClose(opsched.conv2d(xs, ws), reference.conv2d(xs, ws), 1e-4, "strided x")

    def test_backward(self):
        for n, c, h, w, k, r, s, stride, pad, dil, groups in self.SHAPES:
            x = self.values((n, c, h, w))
            wt = self.values((k, c // groups, r, s))
            y = reference.conv2d(x, wt, stride, pad, dil, groups)
            dy = self.values(y.shape)
            dx, dw, db = opsched.conv2d_backward(dy, x, wt, stride, pad, dil, groups, bias=True)
            want = reference.conv2d_backward(dy, x, wt, stride, pad, dil, groups)
            terms = k * r * s + n * y.shape[2] * y.shape[3]
            for name, got, ref in zip(("dx", "dw", "db"), (dx, dw, db), want):
                self.assertClose(got, ref, 1e-5 * (1 + terms), f"{name} of {x.shape} {wt.shape}")
            dx, dw, none = opsched.conv2d_backward(dy, x, wt, stride, pad, dil, groups)
            self.assertIsNone(none)

    def test_errors(self):
        x, wt = self.values((2, 3, 6, 6)), self.values((4, 3, 3, 3))
        with self.assertRaisesRegex(opsched.InvalidArgumentError, "must have rank 4"):
            opsched.conv2d(x[0], wt)
        with self.assertRaisesRegex(opsched.Error, "conv2d"):
            opsched.conv2d(x, self.values((4, 2, 3, 3)))
        with self.assertRaisesRegex(opsched.InvalidArgumentError, "the 3x3 filter \\(dilation 1,1\\) does not fit the 2x2 input"):
            opsched.conv2d(self.values((1, 3, 2, 2)), wt)
        with self.assertRaisesRegex(opsched.InvalidArgumentError, "activation 'gelu' is not supported"):
            opsched.conv2d(x, wt, activation="gelu")
        with self.assertRaisesRegex(opsched.InvalidArgumentError, "needs stride 1"):
            opsched.conv2d(x, wt, stride=2, padding="same")


class RuntimeTest(Case):
    def test_explain(self):
        text = opsched.explain("scatter data=f32[1000,64] indices=i64[4096,64] updates=f32[4096,64] axis=0 "
                               "reduction=add", device="cpu")
        self.assertIn("implementation: scatter_cpu", text)
        self.assertIn("provenance:", text)
        with self.assertRaisesRegex(opsched.InvalidArgumentError, "updates are i32 but data is i64"):
            opsched.explain("scatter data=i64[4] indices=i64[2] updates=i32[2]", device="cpu")
        with self.assertRaisesRegex(opsched.InvalidArgumentError, "unknown device 'gpu'"):
            opsched.explain("reduce x=f32[4]", device="gpu")

    def test_runtime_by_hand_and_device_checks(self):
        rt = opsched.Runtime("cpu", synchronous_errors=True)
        self.assertTrue(rt.target.startswith("cpu"), rt.target)
        x = self.values((5, 6))
        self.assertClose(opsched.sum(x, 1, runtime=rt), x.astype(np.float64).sum(1), 1e-5)
        rt.close()
        with self.assertRaisesRegex(opsched.Error, "the runtime is closed"):
            opsched.sum(x, 1, runtime=rt)

    def test_environment(self):
        saved = {k: os.environ.get(k)
                 for k in ("OPSCHED_RECORDS", "OPSCHED_MODEL", "OPSCHED_LOG_LEVEL", "OPSCHED_RECORD_UNTUNED")}
        try:
            with tempfile.TemporaryDirectory() as folder:
                untuned = os.path.join(folder, "untuned.txt")
                os.environ["OPSCHED_RECORD_UNTUNED"] = untuned
                opsched.reset_default_runtimes()
                for _ in range(2):
                    opsched.sum(self.values((5, 3)), 1)
                    opsched.scatter(self.values((4, 2)), 0, np.zeros((3, 2), np.int64), self.values((3, 2)), "sum")
                opsched.reset_default_runtimes()
                opsched.sum(self.values((5, 3)), 1)  # a new runtime: still written once
                with open(untuned) as f:
                    lines = [line.strip() for line in f if line.strip() and not line.startswith("#")]
                self.assertEqual(len(lines), 2, lines)
                self.assertTrue(lines[0].startswith("reduce x=f32[5,3] axes=1 "), lines)
                self.assertTrue(lines[1].startswith("scatter data=f32[4,2] indices=i64[3,2] updates=f32[3,2] axis=0 "),
                                lines)
                os.environ["OPSCHED_RECORD_UNTUNED"] = folder  # a folder: a clear error
                opsched.reset_default_runtimes()
                with self.assertRaisesRegex(opsched.InvalidArgumentError, "record-untuned file"):
                    opsched.sum(self.values((3,)), 0)
                del os.environ["OPSCHED_RECORD_UNTUNED"]
            os.environ["OPSCHED_RECORDS"] = os.pathsep.join(["/nonexistent/a.log", "/nonexistent/b.log"])
            opsched.reset_default_runtimes()
            with self.assertRaisesRegex(opsched.Error, "/nonexistent/a.log"):
                opsched.sum(self.values((3,)), 0)
            del os.environ["OPSCHED_RECORDS"]
            os.environ["OPSCHED_LOG_LEVEL"] = "loud"
            opsched.reset_default_runtimes()
            with self.assertRaisesRegex(opsched.InvalidArgumentError, "unknown level 'loud'"):
                opsched.sum(self.values((3,)), 0)
            os.environ["OPSCHED_LOG_LEVEL"] = "error"
            os.environ["OPSCHED_MODEL"] = "/nonexistent/model.json"
            opsched.reset_default_runtimes()
            with self.assertWarnsRegex(UserWarning, "model.json"):
                opsched.sum(self.values((3,)), 0)
        finally:
            for k, v in saved.items():
                if v is None:
                    os.environ.pop(k, None)
                else:
                    os.environ[k] = v
            opsched.reset_default_runtimes()

    def test_dlpack_and_cuda_array_interface_producers(self):
        class DLPackOnly:
            def __init__(self, array):
                self.array = array

            def __dlpack__(self, stream=None):
                return self.array.__dlpack__()

            def __dlpack_device__(self):
                return self.array.__dlpack_device__()

        x = self.values((9, 4, 6))[:, ::2]      # strided, read through DLPack
        got = opsched.sum(DLPackOnly(x), (0, 2))
        self.assertClose(got, x.astype(np.float64).sum((0, 2)), 1e-5, "dlpack")

        class CudaOnly:  # host memory that claims to be on CUDA
            __cuda_array_interface__ = {"shape": (4,), "typestr": "<f4", "data": (x.ctypes.data, False),
                                        "version": 3, "strides": None}

        with self.assertRaisesRegex(opsched.Error, "cuda"):
            opsched.sum(CudaOnly(), 0)
        with self.assertRaisesRegex(opsched.InvalidArgumentError, "is on cuda:0 but scatter: input is on cpu"):
            opsched.scatter(self.values((4,)), 0, np.zeros(1, np.int64), CudaOnly())

    def test_library_is_looked_for_in_order(self):
        script = ("import opsched._lib as l; print(l.candidate_paths()[0]); "
                  "import opsched; opsched.sum(__import__('numpy').zeros(3, 'float32'), 0)")
        env = dict(os.environ, OPSCHED_LIBRARY=os.devnull)
        here = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
        run = subprocess.run([sys.executable, "-c", script], env=env, cwd=here, capture_output=True, text=True)
        self.assertEqual(run.stdout.splitlines()[0], os.devnull)
        # /dev/null is not a file: the package goes on to its own copy or a build, or says
        # where it looked.
        if run.returncode != 0:
            self.assertIn("Tried: /dev/null (absent)", run.stderr)


if __name__ == "__main__":
    print(f"opsched numpy tests, seed {SEED} (OPSCHED_TEST_SEED={SEED} repeats them)")
    unittest.main()
