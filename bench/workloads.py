"""Workload lines (docs/workloads.md) in Python, for the PyTorch comparison.

    scatter data=f32[1000,256,7,7] indices=i64[1000,256,7,7] updates=f32[...] axis=0

parse() returns (op, tensors, attrs): tensors maps a name to (dtype, shape, strides or
None); attrs maps a name to an int, float, bool, list of ints, word or quoted string (without
its quotes, e.g. a pointwise program).
"""
import re

_TENSOR = re.compile(r"^(f32|f16|bf16|i32|i64)\[([0-9,]*)\](?::\[([0-9,]*)\])?$")


# An item: name="a quoted string with blanks" or a run of non-blanks.
_ITEM = re.compile(r'[^\s=]+="[^"]*"|\S+')


def _strip_comment(line):
    """The line without its comment: '#' inside a quoted string is no comment."""
    quoted = False
    for i, ch in enumerate(line):
        if ch == '"':
            quoted = not quoted
        elif ch == "#" and not quoted:
            return line[:i].strip()
    return line.strip()


def _ints(text):
    return [int(v) for v in text.split(",")] if text else []


def parse(line):
    line = _strip_comment(line)
    if not line:
        return None
    op, *items = _ITEM.findall(line)
    tensors, attrs = {}, {}
    for item in items:
        name, _, value = item.partition("=")
        m = _TENSOR.match(value)
        if m:
            tensors[name] = (m.group(1), _ints(m.group(2)), _ints(m.group(3)) if m.group(3) is not None else None)
        elif value in ("true", "false"):
            attrs[name] = value == "true"
        elif re.fullmatch(r"-?\d+", value):
            attrs[name] = int(value)
        elif re.fullmatch(r"-?\d+(,-?\d+)+", value):
            attrs[name] = _ints(value)
        elif value.startswith('"') and value.endswith('"') and len(value) >= 2:
            attrs[name] = value[1:-1]
        else:
            try:
                attrs[name] = float(value)
            except ValueError:
                attrs[name] = value
    return op, tensors, attrs


def read_suite(path):
    """[(line number, text, parsed)] of a suite file's workload lines."""
    out = []
    with open(path) as f:
        for number, text in enumerate(f, 1):
            parsed = parse(text)
            if parsed:
                out.append((number, _strip_comment(text), parsed))
    return out
