"""Allocations that receive duals hold duals: the typing of f's dual specialisations.

    out = np.zeros(m)       # np.empty, np.ones, np.full, np.*_like(data), np.copy, np.array(...)
    out[i] = <dual>         # in f's dual specialisation, out is an array of that dual kind
    x = x0.copy(); x = x + h * f(x, p)   # a loop-carried allocation that meets duals: the same

numba types a variable from its definition alone, so `np.zeros(m)` is a float array before
any dual reaches it, and the store fails. Kernels call `promoting(f)`: a copy of the user's
dispatcher (the user's own f is untouched) whose type inference, when typing fails, types
f once more without raising, finds each store of a dual into a 1-D, 2-D or 3-D float64 array
that f itself allocated (through assignments and phis), rewrites that allocation

    a = np.zeros(m)   ->   a = promoted(np.zeros(m), Element)

(the fresh float array becomes the values of an array of duals of the stored kind, partials
zero) and types f again. Calls to other numba functions that fail to type are redirected
to their promoting copies the same way. Typing that succeeds at once (every float
specialisation, dual code that needs nothing) is numba's own and costs nothing more.
A 2-D allocation becomes a DualMatrix (matrix.py), a 3-D one a DualTensor (tensor.py). A
store that cannot be promoted (a 4-D or integer allocation) is a TypingError naming the
allocation and the rewrite; one into an array f did not allocate keeps protocol.py's.
"""

import weakref

import numpy as np
from numba.core import ir, types
from numba.core.compiler import Compiler, DefaultPassBuilder
from numba.core.compiler_machinery import register_pass
from numba.core.errors import TypingError
from numba.core.ir_utils import build_definitions, mk_unique_var
from numba.core.registry import CPUDispatcher
from numba.core.typed_passes import NopythonTypeInference, type_inference_stage

from .cache import COMPILED_CALLERS_ONLY, overload
from .overloads import DUALS
from .types import (DualArrayType, DualMatrixType, DualTensorType, compiled_only, element_of, make_dual_array,
                    make_dual_matrix, make_dual_tensor)

__all__ = ["promoting", "promoted", "ALLOCATORS"]

# Functions whose result is a new array that nothing else refers to: promoting it (its values
# kept, partials zero) is exactly what storing a dual into it means. np.asarray is not one (it
# returns its argument), nor are views; "array.copy" is the method x.copy().
ALLOCATORS = (np.zeros, np.empty, np.ones, np.full, np.zeros_like, np.empty_like, np.ones_like,
              np.full_like, np.copy, np.array, "array.copy")

_WHOLE_ARRAYS = (DualMatrixType, DualTensorType)  # stored into a float array, they promote it too

promoted = compiled_only("promote", "promoted")  # (values, Element): values as duals of Element


@overload(promoted)
def _promoted(values, element):
    width = DualArrayType(element_of(element)).width
    if values.ndim == 3:
        return lambda values, element: make_dual_tensor(values, np.zeros(values.shape + (width,)), element)
    if values.ndim == 2:
        return lambda values, element: make_dual_matrix(values, np.zeros(values.shape + (width,)), element)
    return lambda values, element: make_dual_array(values, np.zeros((len(values), width)), element)


@register_pass(mutates_CFG=True, analysis_only=False)
class PromotingTypeInference(NopythonTypeInference):
    """numba's type inference, retried after promoting the allocations that receive duals."""

    _name = "dualad_promoting_type_inference"

    def run_pass(self, state):
        while True:
            try:
                return super().run_pass(state)
            except TypingError:
                if not _rewrite(state):  # nothing left to promote: numba's error stands
                    raise


class PromotingPipeline(Compiler):
    """numba's nopython pipeline with PromotingTypeInference as its type inference; f's dual
    specialisations compiled for compiled callers only (kernels call them; cache's
    COMPILED_CALLERS_ONLY)."""

    def define_pipelines(self):
        if any(_holds_duals(arg) for arg in self.state.args):
            for flag, value in COMPILED_CALLERS_ONLY.items():
                setattr(self.state.flags, flag, value)
        pm = DefaultPassBuilder.define_nopython_pipeline(self.state)
        pm.passes = [(PromotingTypeInference if cls is NopythonTypeInference else cls, text)
                     for cls, text in pm.passes]
        pm.finalize()
        return [pm]


def _holds_duals(numba_type):
    """Whether a numba type is one of dualad's (a dual, an array of duals, a seed, an active,
    a tracer) or a tuple holding one."""
    if isinstance(numba_type, types.BaseTuple):
        return any(_holds_duals(item) for item in numba_type.types)
    return type(numba_type).__module__.startswith("dualad.")


_COPIES = weakref.WeakKeyDictionary()


def promoting(f):
    """The copy of the dispatcher f that compiles with PromotingPipeline (one per f), sharing
    f's disk cache (the same files, and cache.py's guard of f's cache guards both); f itself
    where it cannot compile new specialisations (explicit signatures: numba's error says so)."""
    compiler = getattr(f, "_compiler", None)
    if compiler is None or compiler.pipeline_class is PromotingPipeline or not f._can_compile:
        return f
    copy = _COPIES.get(f)
    if copy is None:
        copy = type(f)(f.py_func, locals=dict(f.locals), targetoptions=dict(f.targetoptions),
                       pipeline_class=PromotingPipeline)
        copy._cache = f._cache  # the same py_func, so the same index and keys
        _COPIES[f] = copy
    return copy


# ---- the rewrite ------------------------------------------------------------------------------------
def _rewrite(state):
    """Promote what a typing of f without raising shows must hold duals; whether anything
    changed (else numba's error is final)."""
    func_ir = state.func_ir
    typemap = type_inference_stage(state.typingctx, state.targetctx, func_ir, state.args,
                                   state.return_type, state.locals, raise_errors=False).typemap
    definitions = build_definitions(func_ir.blocks)
    assignments = {id(stmt.value): stmt for block in func_ir.blocks.values() for stmt in block.body
                   if isinstance(stmt, ir.Assign)}
    changed = False
    elements = {}  # id(allocating assignment) -> (it, the element type it must hold)
    for block in func_ir.blocks.values():
        for stmt in block.body:
            if isinstance(stmt, ir.Assign) and isinstance(stmt.value, ir.Expr) and stmt.value.op == "call":
                changed |= _redirect_failed_callee(stmt, typemap, definitions)
            if isinstance(stmt, ir.Assign) and isinstance(stmt.value, ir.Expr) and stmt.value.op == "phi":
                # `x = x0.copy(); for ...: x = x + h * f(x, p)`: a float array f allocated
                # meets an array of duals where the loop carries x: it holds duals
                duals = [typemap.get(v.name) for v in stmt.value.incoming_values if isinstance(v, ir.Var)]
                duals = [t for t in duals if isinstance(t, (DualArrayType,) + _WHOLE_ARRAYS)]
                for source in stmt.value.incoming_values if duals else ():
                    if isinstance(source, ir.Var) and isinstance(typemap.get(source.name), types.Array):
                        for call in _allocations(source, definitions, typemap, set()) or ():
                            allocation = assignments[id(call)]
                            _check_promotable(allocation, typemap, duals[0], stmt.loc)
                            elements.setdefault(id(allocation), (allocation, element_of(duals[0])))
                continue
            if not isinstance(stmt, (ir.SetItem, ir.StaticSetItem)):
                continue
            target, value = typemap.get(stmt.target.name), typemap.get(stmt.value.name)
            if not (isinstance(target, types.Array) and isinstance(value, DUALS + _WHOLE_ARRAYS)):
                continue
            for call in _allocations(stmt.target, definitions, typemap, set()) or ():
                allocation = assignments[id(call)]
                _check_promotable(allocation, typemap, value, stmt.loc)
                elements.setdefault(id(allocation), (allocation, element_of(value)))
    for allocation, element in elements.values():
        _promote(func_ir, allocation, element)
    if elements:
        func_ir._definitions = build_definitions(func_ir.blocks)
    return changed or bool(elements)


def _redirect_failed_callee(stmt, typemap, definitions):
    """A call to another numba function that did not type (its result has no type) calls
    that function's promoting copy instead."""
    if typemap.get(stmt.target.name, types.unknown) != types.unknown:  # the call typed
        return False
    for callee in definitions.get(stmt.value.func.name, ()):
        if (isinstance(callee, (ir.Global, ir.FreeVar)) and isinstance(callee.value, CPUDispatcher)
                and promoting(callee.value) is not callee.value):
            callee.value = promoting(callee.value)
            return True
    return False


def _allocations(var, definitions, typemap, seen):
    """The allocation calls var is (through assignments and phis), or None when some
    definition of var is anything else (an argument, a view, another function's result)."""
    if var.name in seen:
        return []
    seen.add(var.name)
    values = definitions.get(var.name, ())
    calls = []
    for value in values:
        if isinstance(value, ir.Expr) and value.op == "phi":
            sources = [v for v in value.incoming_values if isinstance(v, ir.Var)]
        elif isinstance(value, ir.Var):
            sources = [value]
        elif isinstance(value, ir.Expr) and value.op == "call" and _allocates(typemap.get(value.func.name)):
            calls.append(value)
            continue
        else:
            return None
        for source in sources:
            found = _allocations(source, definitions, typemap, seen)
            if found is None:
                return None
            calls += found
    return calls if values else None


def _allocates(fnty):
    """Whether a callee's numba type is one of ALLOCATORS."""
    if not isinstance(fnty, (types.Function, types.BoundFunction)):
        return False
    key = fnty.typing_key
    return any(key == a if isinstance(a, str) else key is a for a in ALLOCATORS)


def _check_promotable(allocation, typemap, value, loc):
    """A TypingError naming the allocation and the rewrite where its array cannot hold duals."""
    result = typemap.get(allocation.target.name)
    if not isinstance(result, types.Array):
        return
    key = typemap[allocation.value.func.name].typing_key
    spelling = f"x.{key.split('.')[-1]}()" if isinstance(key, str) else f"np.{key.__name__}(...)"
    where = f"{spelling} (line {allocation.loc.line})"
    if result.ndim > 3:
        raise TypingError(
            f"{where} makes a {result.ndim}-D array that receives duals ({value}), and arrays of "
            f"duals have 1 to 3 dimensions in compiled code: allocate it flat, np.zeros(m * k * p * r), "
            f"store element [i, j, q, s] at [((i * k + j) * p + q) * r + s] and reshape the result "
            "outside f; or pass jit=False", loc=loc)
    if result.dtype != types.float64:
        raise TypingError(
            f"{where} makes an array of {result.dtype} that receives duals ({value}): allocate it "
            "with dtype float64 (the default) so that it can hold duals", loc=loc)


def _promote(func_ir, allocation, element):
    """`a = call(...)` becomes `raw = call(...); a = promoted(raw, element)`."""
    for block in func_ir.blocks.values():
        positions = [k for k, stmt in enumerate(block.body) if stmt is allocation]
        if positions:
            scope, loc, k = block.scope, allocation.loc, positions[0]
            raw, fn, kind = (ir.Var(scope, mk_unique_var(name), loc)
                             for name in ("$dualad_raw", "$dualad_promoted", "$dualad_element"))
            block.body[k:k + 1] = [
                ir.Assign(allocation.value, raw, loc),
                ir.Assign(ir.Global("promoted", promoted, loc), fn, loc),
                ir.Assign(ir.Global("element", element, loc), kind, loc),
                ir.Assign(ir.Expr.call(fn, (raw, kind), (), loc), allocation.target, loc)]
            return
