"""opsched's exceptions: every failure of the library surfaces as an opsched.Error."""

from opsched import _lib


class Error(RuntimeError):
    """An opsched call failed; `code` is the C API's status code (opsched/c_api.h)."""

    def __init__(self, message, code=_lib.INVALID_ARGUMENT):
        super().__init__(message)
        self.code = code


class InvalidArgumentError(Error, ValueError):
    """Shapes, dtypes, devices, strides or attributes the op does not take."""


class IndexOutOfRangeError(Error, IndexError):
    """A data error: an index out of range of its axis. The op wrote nothing."""


def from_status(code, message):
    if code == _lib.INVALID_ARGUMENT:
        return InvalidArgumentError(message, code)
    if code == _lib.OUT_OF_RANGE:
        return IndexOutOfRangeError(message, code)
    return Error(message, code)


def check(code):
    """Raises the error of a C API call that returned `code` (nothing when OK)."""
    if code != _lib.OK:
        message = _lib.library().opsched_last_error().decode("utf-8", "replace")
        raise from_status(code, message)
