"""Randomized guard for repeated-index writes, memory orders, views against copies and arrays
built from duals on the Python path (programs by tests/fuzzing_layouts.py, which describes
them): every Jacobian (forward, reverse, auto, sparse forward and reverse) equals forward mode
and central differences, the detected sparsity pattern holds every nonzero, the Hessians of
a weighted sum (forward, forward-over-reverse, sparse) agree and equal central differences
of its gradient, and no call changes the caller's x. DUALAD_FUZZ=<count> runs count // 2
programs (20 by default); a failure prints the program's source and x (exact repr)."""

import ast
import re
import traceback

import numpy as np
import pytest

import dualad
from fuzzing import fail_on
from fuzzing_arrays import close, fd_close
from fuzzing_layouts import DEFAULT_SEEDS, ORDERS, PROGRAM_SEEDS, Program

PATTERN_RTOL = 1e-12     # a Jacobian entry beyond this (relative) must be in the pattern


def call(messages, program, what, transform, x):
    """transform(x) on a copy of x, or None with the exception recorded; the caller's array
    must be as it was."""
    arg = x.copy()
    try:
        result = transform(arg)
    except Exception:  # noqa: BLE001 - every exception on a smooth NumPy program is a failure
        messages.append(f"{what} raised:\n{traceback.format_exc(limit=-3)}\n{program.describe()}")
        return None
    if not np.array_equal(arg, x):
        messages.append(f"{what} changed the caller's x to {arg!r}\n{program.describe()}")
    return result


@pytest.mark.parametrize("seed", PROGRAM_SEEDS)
def test_random_layout_program_jacobians(seed):
    """Every Jacobian equals forward mode (relative 1e-10 per row), forward mode equals
    central differences, and the detected pattern holds every nonzero of the Jacobian."""
    p = Program(seed)
    f, x, messages = p.f, p.x, []
    forward = call(messages, p, "jacobian(mode='forward')", dualad.jacobian(f, mode="forward"), x)
    if forward is None:
        fail_on(messages)
    fd_close(messages, p, "jacobian(mode='forward') vs central differences", forward, f, x)
    others = {
        "jacobian(mode='reverse')": dualad.jacobian(f, mode="reverse"),
        "jacobian(mode='auto')": dualad.jacobian(f, mode="auto"),
        **{f"jacobian(sparsity=True, mode={mode!r})": lambda y, mode=mode: dualad.jacobian(
            f, sparsity=True, mode=mode)(y).toarray() for mode in ("forward", "reverse")},
    }
    for what, transform in others.items():
        got = call(messages, p, what, transform, x)
        if got is not None:
            close(messages, p, f"{what} vs forward", got, forward, per_row=True)
    pattern = call(messages, p, "jacobian_sparsity(f)", lambda y: dualad.jacobian_sparsity(f)(y).toarray(), x)
    if pattern is not None:
        nonzero = np.abs(forward) > PATTERN_RTOL * max(1.0, float(np.max(np.abs(forward), initial=0.0)))
        missed = nonzero & ~pattern.astype(bool)
        if np.any(missed):
            rows = sorted({int(i) for i in np.argwhere(missed)[:, 0]})
            messages.append(f"jacobian_sparsity misses nonzeros at {np.argwhere(missed).tolist()[:20]}\n"
                            f"{p.describe(rows)}")
    fail_on(messages)


@pytest.mark.parametrize("seed", PROGRAM_SEEDS)
def test_random_layout_program_hessians(seed):
    """The Hessians of s (a weighted sum of f's outputs): forward = forward-over-reverse =
    sparse (relative 1e-10), and forward = central differences of the forward gradient."""
    p = Program(seed)
    s, x, messages = p.s, p.x, []
    forward = call(messages, p, "hessian(mode='forward')", dualad.hessian(s, mode="forward"), x)
    if forward is None:
        fail_on(messages)
    fd_close(messages, p, "hessian(mode='forward') vs central differences of the gradient", forward,
             dualad.grad(s, mode="forward"), x)
    others = {
        "hessian(mode='forward-over-reverse')": dualad.hessian(s, mode="forward-over-reverse"),
        "hessian(sparsity=True)": lambda y: dualad.hessian(s, sparsity=True)(y).toarray(),
    }
    for what, transform in others.items():
        got = call(messages, p, what, transform, x)
        if got is not None:
            close(messages, p, f"{what} vs forward", got, forward)
    fail_on(messages)


# ---- coverage: what the default programs draw, read off their source ---------------------------
def constant_index(node):
    """The value of a subscript's index part when it is a constant (a list, np.array(...), a
    mask expression), else None."""
    try:
        return np.asarray(eval(compile(ast.Expression(node), "<index>", "eval"), {"np": np}))
    except Exception:  # noqa: BLE001 - an index that names the program's values
        return None


def index_writes(source):
    """(operator, index kind) of every write through a subscript: 'repeated' for integer
    positions of which two are equal, 'repeated pairs' for (row, column) positions of which
    two are equal, 'mask' for a boolean array."""
    found = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Assign):
            targets, op = node.targets, "="
        elif isinstance(node, ast.AugAssign):
            targets, op = [node.target], {ast.Add: "+=", ast.Sub: "-=", ast.Mult: "*="}.get(type(node.op), "?")
        else:
            continue
        for target in targets:
            if not isinstance(target, ast.Subscript):
                continue
            parts = target.slice.elts if isinstance(target.slice, ast.Tuple) else [target.slice]
            positions = []
            for part in parts:
                index = constant_index(part)
                if index is None or index.ndim == 0:
                    continue
                if index.dtype == bool:
                    found.add((op, "mask"))
                elif index.dtype.kind == "i":
                    positions.append(index.tolist())
                    if len(set(index.tolist())) < index.size:
                        found.add((op, "repeated"))
            pairs = list(zip(*positions))
            if len(positions) == 2 and len(set(pairs)) < len(pairs):
                found.add((op, "repeated pairs"))
    return found


def ordered_calls(source):
    """(function, order) of every ravel, reshape, flatten and copy call (np.f(a, order=...),
    a.f(..., order=...) or a.f('K')) that names its order."""
    found = set()
    for node in ast.walk(ast.parse(source)):
        if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
                and node.func.attr in ("ravel", "reshape", "flatten", "copy")):
            continue
        orders = [k.value for k in node.keywords if k.arg == "order"]
        if node.func.attr != "reshape" and len(node.args) == 1:
            orders.append(node.args[0])
        for order in orders:
            if isinstance(order, ast.Constant) and isinstance(order.value, str):
                found.add((node.func.attr, order.value))
    return found


OTHER_FORMS = {
    "np.asfortranarray": re.compile(r"np\.asfortranarray\("),
    "elementwise maths of a transpose": re.compile(r"np\.(sin|tanh)\(\w+\.T\)"),
    "an array built from x's entries": re.compile(r"np\.array\(\[\[?x\[\d+\], x\["),
    "a write into a raveled name": re.compile(r"(\w+) = [^\n]*ravel\([^\n]*\n\s*\1\["),
    "x = np.asarray(x) at the top": re.compile(r"def f\(x\):\n    x = np\.asarray\(x\)\n"),
}


def test_the_default_programs_draw_every_form():
    """Over the programs of a default run: writes through repeated positions with =, +=, -=
    and *=, through repeated (row, column) pairs, through boolean masks with = and +=, each
    order in each of ravel, reshape, flatten and copy, np.asfortranarray, maths of a
    transpose, arrays built from x's entries, writes into a raveled name and np.asarray(x) at
    the top: the guard cannot silently stop covering one."""
    sources = [Program(seed).source for seed in DEFAULT_SEEDS]
    writes = set().union(*(index_writes(src) for src in sources))
    wanted = {(op, "repeated") for op in ("=", "+=", "-=", "*=")} | {("=", "mask"), ("+=", "mask")}
    assert wanted <= writes, f"never drawn: {sorted(wanted - writes)}"
    assert any(kind == "repeated pairs" for _, kind in writes), "never drawn: repeated (row, column) pairs"
    orders = set().union(*(ordered_calls(src) for src in sources))
    wanted = {(f, order) for f in ("ravel", "reshape", "flatten", "copy") for order in ORDERS
              if (f, order) != ("reshape", "K")}     # NumPy: K is no order to reshape in
    assert wanted <= orders, f"never drawn: {sorted(wanted - orders)}"
    missing = [name for name, pattern in OTHER_FORMS.items() if not any(pattern.search(src) for src in sources)]
    assert not missing, f"never drawn: {missing}"
