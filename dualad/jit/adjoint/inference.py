"""numba's type inference of the program's primal: the type of every SSA name.

The primal (the program as plain code, generate.primal_source) runs through numba's untyped
passes and its type inference, and stops there: no lowering, no machine code. Its names are
the program's own; numba's own SSA pass versions a name assigned in several places (a phi's
copies: `name.1`), and the versions unify back into the name's type.
"""

import re

from numba.core import compiler, types
from numba.core.compiler import CompilerBase, DefaultPassBuilder, Flags
from numba.core.compiler_machinery import FunctionPass, PassManager, register_pass
from numba.core.registry import cpu_target
from numba.core.typed_passes import NopythonTypeInference

__all__ = ["types_of", "is_float", "is_saveable"]


@register_pass(mutates_CFG=False, analysis_only=True)
class _StopAfterTyping(FunctionPass):
    _name = "dualad_adjoint_stop_after_typing"

    def __init__(self):
        FunctionPass.__init__(self)

    def run_pass(self, state):
        raise compiler._EarlyPipelineCompletion(dict(state.typemap))


class _TypingOnly(CompilerBase):
    """numba's untyped passes and type inference, nothing after."""

    def define_pipelines(self):
        untyped = DefaultPassBuilder.define_untyped_pipeline(self.state)
        pm = PassManager("dualad_adjoint_typing")
        for pass_class, description in untyped.passes:
            pm.add_pass(pass_class, description)
        pm.add_pass(NopythonTypeInference, "nopython frontend")
        pm.add_pass(_StopAfterTyping, "stop after typing")
        pm.finalize()
        return [pm]


_VERSION = re.compile(r"\.\d+$")


def types_of(py_func, arg_types):
    """{name: numba type} of py_func's variables for these argument types."""
    flags = Flags()
    flags.nrt = True
    flags.error_model = "numpy"
    typemap = compiler.compile_extra(cpu_target.typing_context, cpu_target.target_context, py_func,
                                     tuple(arg_types), None, flags, {}, pipeline_class=_TypingOnly)
    context = cpu_target.typing_context
    out = {}
    for name, numba_type in typemap.items():
        if name.startswith("$") or name.startswith("arg."):
            continue
        base = _VERSION.sub("", name)
        known = out.get(base)
        out[base] = numba_type if known is None else (context.unify_pairs(known, numba_type) or known)
    return out


def is_float(numba_type):
    return isinstance(numba_type, types.Float)


def is_saveable(numba_type):
    """Whether a value of this type can be saved on the stacks."""
    return isinstance(numba_type, (types.Float, types.Integer, types.Boolean))
