"""The on-disk kernel cache (dualad/jit/cache.py): keyed by the user's function, filed where
the user's function is cached, and never loaded for another function or a stale body."""

import json
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

pytestmark = pytest.mark.compiled

SCRIPT = """
import json, numba, numpy as np, dualad

@numba.njit(cache=True)
def f(x):
    return {body}

x = np.array([1.0, 2.0])
print(json.dumps([dualad.grad(f)(x).tolist(), dualad.hessian(f)(x).tolist()]))
"""


def _run(folder, body):
    path = os.path.join(folder, "script.py")
    with open(path, "w") as script:
        script.write(textwrap.dedent(SCRIPT.format(body=body)))
    env = dict(os.environ)
    env.pop("NUMBA_CACHE_DIR", None)
    done = subprocess.run([sys.executable, path], capture_output=True, text=True, cwd=folder,
                          env=env, timeout=300)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def test_another_function_in_the_same_place_never_gets_the_cached_derivative(tmp_path):
    # The same file name and function name, another body, run one after the other (issue 8.1):
    # each run must give its own function's derivatives.
    first = _run(tmp_path, "np.sin(x[0]) * x[1]")
    assert first[0] == pytest.approx([2.0 * 0.5403023058681398, 0.8414709848078965])
    second = _run(tmp_path, "x[0] * x[1] ** 2")
    assert second[0] == [4.0, 4.0]
    assert second[1] == [[0.0, 4.0], [4.0, 2.0]]
    cached = os.listdir(tmp_path / "__pycache__")
    # the kernels live beside the user's function's own cache, not inside dualad
    assert any(".dualad." in name for name in cached)
    again = _run(tmp_path, "x[0] * x[1] ** 2")  # from the cache now
    assert again == second


def test_a_broken_cache_falls_back_to_compiling(tmp_path):
    first = _run(tmp_path, "x[0] ** 3 * x[1]")
    for name in os.listdir(tmp_path / "__pycache__"):
        if ".dualad." not in name:
            continue  # numba's own cache of f is numba's business
        with open(tmp_path / "__pycache__" / name, "wb") as garbage:
            garbage.write(b"not a cache file")
    assert _run(tmp_path, "x[0] ** 3 * x[1]") == first


def test_cache_keys_tell_kernels_of_different_functions_and_options_apart():
    import numba
    import numpy as np

    import dualad
    from dualad.jit.cache import identity

    @numba.njit
    def f(x):
        return np.sum(x ** 2)

    @numba.njit
    def g(x):
        return np.sum(x ** 3)

    keys = {identity(k) for k in (dualad.grad(f, chunk=2), dualad.grad(f, chunk=4),
                                  dualad.grad(g, chunk=2), dualad.value_and_grad(f, chunk=2),
                                  dualad.grad(f, mode="reverse"), dualad.grad(f),
                                  dualad.value_and_grad(f), dualad.grad(g))}
    assert len(keys) == 8
    assert identity(dualad.grad(f, chunk=2)) == identity(dualad.grad(f, chunk=2))


def test_a_script_runs_after_the_same_file_was_imported_under_another_name(tmp_path):
    # The suite loads examples/ with importlib under names that are not importable; numba
    # caches f's dual specialisations beside f with that name in them. Running the file as a
    # script afterwards must recompile those entries, not fail (issue 12 item 1).
    import importlib.util

    path = tmp_path / "script.py"
    path.write_text(textwrap.dedent(SCRIPT.format(body="np.sin(x[0]) * x[1] ** 2")))
    spec = importlib.util.spec_from_file_location("not_importable_name", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)  # differentiates f in this process: caches under that name
    env = dict(os.environ)
    env.pop("NUMBA_CACHE_DIR", None)
    done = subprocess.run([sys.executable, str(path)], capture_output=True, text=True,
                          cwd=tmp_path, env=env, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]


def test_the_users_dual_specialisations_are_keyed_by_dualads_source(tmp_path):
    # numba caches f's own specialisations for dual arguments beside f: they contain dualad's
    # rules, so another version of dualad must not load them (float ones are numba's alone).
    import numba
    import numpy as np

    import dualad
    from dualad.jit import cache
    from dualad.jit.types import DualType

    path = tmp_path / "user_module.py"
    path.write_text("import numba\n\n@numba.njit(cache=True)\ndef f(x):\n    return x * x\n")
    spec = __import__("importlib.util").util.spec_from_file_location("user_module", path)
    module = __import__("importlib.util").util.module_from_spec(spec)
    spec.loader.exec_module(module)
    dualad.derivative(module.f)(3.0)  # dualad guards f's cache
    codegen = numba.core.registry.cpu_target.target_context.codegen()
    guarded = module.f._cache
    dual_key = guarded._index_key((DualType(1),), codegen)
    float_key = guarded._index_key((numba.float64,), codegen)
    assert dual_key[-1] == cache._dualad_fingerprint()
    assert cache._dualad_fingerprint() not in float_key
    assert np.isclose(dualad.derivative(module.f)(3.0), 6.0)


CALLEES = {
    "helpers.py": "import numba\n\n@numba.njit(cache=True)\ndef h(x):\n    return x ** 2\n",
    "prims.py": ("import numpy as np, dualad\n\ndef d1(x):\n    return np.cos(x)\n\n"
                 "p = dualad.primitive(lambda x: np.sin(x), d1, lambda x: -np.sin(x))\n"),
    "script.py": (
        "import json, numba, numpy as np, dualad\nimport helpers\nfrom prims import p\n\n"
        "@numba.njit(cache=True)\ndef f(x):\n    return helpers.h(x[0]) + p(x[1])\n\n"
        "x = np.array([1.5, 2.0])\n"
        "value, gradient = dualad.value_and_grad(f)(x)\n"
        "print(json.dumps([value, gradient.tolist(), dualad.grad(f, mode='reverse')(x).tolist(),\n"
        "                  dualad.hessian(f)(x).tolist()]))\n"),
}


def test_a_kernel_follows_an_edit_of_a_callee_in_another_module(tmp_path):
    """f calls an @njit helper and a dualad.primitive of two other modules; both are edited
    between two processes (f's own file is not): the second process's cached kernels must
    differentiate the new code (the key holds every callee, transitively)."""
    def run():
        env = dict(os.environ)
        env.pop("NUMBA_CACHE_DIR", None)
        done = subprocess.run([sys.executable, "script.py"], capture_output=True, text=True,
                              cwd=tmp_path, env=env, timeout=300)
        assert done.returncode == 0, done.stderr[-3000:]
        return json.loads(done.stdout)

    for name, text in CALLEES.items():
        (tmp_path / name).write_text(text)
    value, gradient, reverse, hessian = run()
    assert gradient == reverse == pytest.approx([3.0, np.cos(2.0)])
    np.testing.assert_allclose(hessian, [[2.0, 0.0], [0.0, -np.sin(2.0)]])
    (tmp_path / "helpers.py").write_text(CALLEES["helpers.py"].replace("x ** 2", "x ** 3"))
    (tmp_path / "prims.py").write_text(CALLEES["prims.py"].replace("return np.cos(x)",
                                                                 "return 2.0 * np.cos(x)"))
    for name in ("helpers.py", "prims.py"):  # a later mtime, as an editor's save gives
        os.utime(tmp_path / name, (os.path.getmtime(tmp_path / name) + 5,) * 2)
    value, gradient, reverse, hessian = run()
    assert value == pytest.approx(1.5 ** 3 + np.sin(2.0))
    assert gradient == reverse == pytest.approx([3 * 1.5 ** 2, 2.0 * np.cos(2.0)])
    np.testing.assert_allclose(hessian, [[6 * 1.5, 0.0], [0.0, -np.sin(2.0)]])
    assert run()[1] == gradient  # and from the cache


ROSEN = """
@numba.njit(cache=True)
def rosen(x):
    s = 0.0
    for i in range(len(x) - 1):
        s += 100.0 * (x[i + 1] - x[i] ** 2) ** 2 + (1.0 - x[i]) ** 2
    return s
"""

EVERY_KERNEL = """
import json, numba, numpy as np, dualad
from numba.core import event

compiled = []


class Listener(event.Listener):
    def on_start(self, ev):
        compiled.append(str(ev.data.get("dispatcher", "?")))

    def on_end(self, ev):
        pass


""" + ROSEN + """

x = np.linspace(0.1, 1.0, 20)
rosen(x)
with event.install_listener("numba:compile", Listener()):
    results = [dualad.grad(rosen)(x), dualad.grad(rosen, mode="reverse")(x),
               dualad.grad(rosen, mode="forward")(x), dualad.value_and_grad(rosen)(x)[1],
               dualad.hessian(rosen)(x).ravel(), dualad.hvp(rosen)(x, x), dualad.jacobian(rosen)(x)]
print(json.dumps({"compiled": len(compiled), "results": [r.tolist() for r in results]}))
"""


def _two_processes(tmp_path, script):
    """The script run as a file in tmp_path by two processes one after the other, over the
    cache beside it: what each printed (JSON)."""
    path = tmp_path / "script.py"
    path.write_text(script)
    env = dict(os.environ)
    env.pop("NUMBA_CACHE_DIR", None)
    runs = []
    for _ in range(2):
        done = subprocess.run([sys.executable, str(path)], capture_output=True, text=True,
                              cwd=tmp_path, env=env, timeout=600)
        assert done.returncode == 0, done.stderr[-3000:]
        runs.append(json.loads(done.stdout))
    return runs


def test_a_new_process_loads_every_kernel_without_compiling(tmp_path):
    # issue 15.2: grad (every mode), value_and_grad, hessian, hvp and jacobian of a function
    # declared cache=True come from the disk cache in a new process, with the same numbers
    runs = _two_processes(tmp_path, EVERY_KERNEL)
    assert runs[0]["compiled"] > 0
    assert runs[1]["compiled"] == 0
    assert runs[1]["results"] == runs[0]["results"]


OWN_FUNCTIONS = """
import json, sys, warnings
warnings.simplefilter("error")  # a warning fails the run
import numba, numpy as np, dualad
from numba.core import event
from dualad.jit.cache import _OwnCache

own = {}


class Listener(event.Listener):
    def on_start(self, ev):
        dispatcher = ev.data.get("dispatcher")
        if isinstance(getattr(dispatcher, "_cache", None), _OwnCache):
            own[id(dispatcher)] = dispatcher

    def on_end(self, ev):
        pass


@numba.njit
def f(x):
    return np.sin(x[0]) * x[1] ** 2 + x[0] / x[1]


@numba.njit
def g(x):
    return np.tanh(x[0] * x[1]) + np.exp(-x[1]) * x[0] ** 3


x = np.array([0.5, 2.0])
order = (f, g) if sys.argv[1] == "fg" else (g, f)  # the writers compile in other orders
with event.install_listener("numba:compile", Listener()):
    results = {fn.__name__: [dualad.grad(fn)(x).tolist(), dualad.hessian(fn)(x).tolist(),
                             dualad.hessian(fn, mode="forward-over-reverse")(x).tolist()]
               for fn in order}
print(json.dumps({"own": len(own), "results": results,
                  "own compiled": sum(sum(d._cache_misses.values()) for d in own.values())}))
"""


def _own_runs(folder, cache_dir, orders=("fg",)):
    """The script run in one process per order at once, over one cache directory."""
    path = os.path.join(folder, "own.py")
    with open(path, "w") as script:
        script.write(OWN_FUNCTIONS)
    env = dict(os.environ, NUMBA_CACHE_DIR=str(cache_dir))
    running = [subprocess.Popen([sys.executable, path, order], stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, text=True, cwd=folder, env=env)
               for order in orders]
    outputs = []
    for process in running:
        out, err = process.communicate(timeout=300)
        assert process.returncode == 0, err[-3000:]
        assert err == ""  # no warnings (the script turns them into errors, too)
        outputs.append(json.loads(out))
    return outputs


def test_processes_compiling_at_once_get_exact_derivatives_and_caches_never_warn(tmp_path):
    # Two processes compiling at once over an empty cache of dualad's own functions once got
    # a wrong second partial (power's; tanh's under pytest-xdist): generated closures shared
    # compiled names, and a library loaded from disk bound the other process's closure
    # (jit/cache.named). Writers in two orders at once, then a reader of what both wrote.
    import dualad

    def f(x):
        return np.sin(x[0]) * x[1] ** 2 + x[0] / x[1]

    def g(x):
        return np.tanh(x[0] * x[1]) + np.exp(-x[1]) * x[0] ** 3

    x = np.array([0.5, 2.0])
    expected = {fn.__name__: [dualad.grad(fn)(x).tolist(), dualad.hessian(fn)(x).tolist()]
                for fn in (f, g)}

    def exact(run):
        for name, (grad, hess) in expected.items():
            np.testing.assert_allclose(run["results"][name][0], grad, rtol=1e-14)
            for computed in run["results"][name][1:]:
                np.testing.assert_allclose(computed, hess, rtol=1e-13)

    for run in _own_runs(tmp_path, tmp_path / "cache", orders=("fg", "gf")):
        assert run["own"] > 0  # dualad's own functions are filed on disk
        exact(run)
    reader, = _own_runs(tmp_path, tmp_path / "cache", orders=("gf",))
    exact(reader)
    assert reader["own compiled"] == 0  # everything of dualad's own loaded from disk
    # a cache directory that cannot be made (it lies under a regular file; chmod does not stop
    # root): numba's next location is used or nothing is cached, without error or warning
    (tmp_path / "a_file").write_text("")
    run, = _own_runs(tmp_path, tmp_path / "a_file" / "cache")
    exact(run)


def test_a_forked_process_names_its_functions_apart_from_its_parent():
    """A forked child continues its parent's numba counter: it draws a token of its own, or
    two children would give different closures one name (jit/cache.named)."""
    import multiprocessing

    from dualad.jit import cache

    with multiprocessing.get_context("fork").Pool(2) as pool:
        tokens = dict(pool.map(_pid_and_process_token, range(8)))
    assert len(set(tokens.values())) == len(tokens) >= 1
    assert cache._PROCESS not in tokens.values()


def _pid_and_process_token(_):
    import os

    from dualad.jit import cache
    return os.getpid(), cache._PROCESS


def test_dualads_compiled_names_never_meet_another_processs():
    """Every function of dualad's inside a compiled kernel has a name that holds across
    processes: its cache key's hash (equal names, equal code) or this process's token. numba
    names a function by qualname and a counter of the process, and links callees as weak
    symbols, so a shared qualname bound a library loaded from disk to another closure."""
    import gc
    import re

    import numba

    import dualad
    from dualad.jit import cache

    @numba.njit
    def f(x):
        return np.tanh(x[0]) * x[1] ** 3 + np.exp(x[0] / x[1])

    @numba.njit
    def h(x):
        return np.sin(x) * x[0] + np.cos(x[1])

    @numba.njit
    def loop(x):  # iteration and attributes of dual arrays
        total = 0.0
        for v in x:
            total += v * v / x.size
        return total * x.shape[0] * x.ndim

    x = np.array([0.3, 1.5])
    for transform in (dualad.grad(f, mode="forward"), dualad.grad(f, mode="reverse"),
                      dualad.hessian(f, mode="forward"), dualad.hessian(f), dualad.grad(f),
                      dualad.hessian(f, mode="forward-over-reverse"), dualad.jacobian(h),
                      dualad.jacobian(h, mode="reverse"), dualad.jacobian(h, sparsity=True),
                      dualad.hessian(f, sparsity=True), dualad.grad(loop), dualad.hessian(loop)):
        transform(x)
    dualad.hvp(f, mode="forward-over-reverse")(x, x)
    dualad.vmap(dualad.grad(f))(np.stack([x, 2 * x]))
    named = re.compile(rf"k[0-9a-f]{{16}}|p{cache._PROCESS}")
    checked = 0
    # every dispatcher compiled in this process so far (these kernels and their callees, and
    # whatever other tests compiled here)
    dispatchers = [d for d in gc.get_objects()
                   if type(d).__module__ != "weakref" and isinstance(d, numba.core.registry.CPUDispatcher)]
    for dispatcher in dispatchers:
        for compiled in list(dispatcher.overloads.values()):
            # the functions a library defines, whether compiled here or loaded from disk
            module = compiled.library._final_module
            for symbol in (fn.name for fn in module.functions if not fn.is_declaration):
                if symbol.startswith("_ZN6dualad"):  # dualad.* functions
                    assert named.search(symbol), (dispatcher.py_func.__qualname__, symbol)
                    checked += 1
                # dualad's own cache has no stamp of the user's file: it never holds their code
                assert not (isinstance(dispatcher._cache, cache._OwnCache)
                            and "test_cache" in symbol), (dispatcher.py_func.__qualname__, symbol)
    assert checked > 10


def test_own_entries_are_keyed_by_dualads_fingerprint_and_the_closure(tmp_path, monkeypatch):
    import numba

    from dualad.jit import cache, lowered, overloads
    from dualad.rules import RULES

    monkeypatch.setattr(numba.config, "CACHE_DIR", str(tmp_path))
    monkeypatch.setattr(cache, "OWN_CACHE", True)  # the mechanism, kept for when it is safe
    partial = RULES["multiply"].first[0]

    def loaded():
        compiled = cache.njit(partial)
        assert isinstance(compiled._cache, cache._OwnCache)
        compiled(2.0, 3.0, 6.0)
        return sum(compiled._cache_hits.values()) == 1

    assert not loaded()  # compiled and saved
    assert loaded()
    monkeypatch.setattr(cache, "_dualad_fingerprint", lambda: "another version of dualad")
    assert not loaded()
    # one generated closure per rule: the key tells them apart by what they close over
    add, multiply = (lowered._binary_first(overloads.value_fn(RULES[name]),
                                           *(overloads.compiled_partial(p, 2) for p in RULES[name].first))
                     for name in ("add", "multiply"))
    assert add.__qualname__ == multiply.__qualname__
    assert cache.identity(add, _own=True) != cache.identity(multiply, _own=True)
    # a function that is not dualad's (a user's primitive) gets no own cache
    assert not isinstance(cache.njit(lambda x: x)._cache, cache._OwnCache)


def test_a_data_file_holding_another_entry_is_a_miss_and_a_broken_index_is_replaced(tmp_path):
    from dualad.jit.cache import _KeyedCacheFile

    files = _KeyedCacheFile(str(tmp_path), "f", "stamp")
    files.save("key a", "code a")
    files.save("key b", "code b")
    assert files.load("key a") == "code a"
    # two processes saving at once can leave entry b's code where the index lists a's (numba
    # numbers data files): that is a miss, never b's code for a
    index = files._load_index()
    os.replace(tmp_path / index["key b"], tmp_path / index["key a"])
    assert files.load("key a") is None
    (tmp_path / "f.nbi").write_bytes(b"not an index")
    assert files.load("key a") is None
    files.save("key a", "code a")
    assert files.load("key a") == "code a"


WARM_WITHOUT_REFRESH = """
import json, sys
import numba, numpy as np, dualad
from numba.core.base import BaseContext

refreshes = []
refresh = BaseContext.refresh
BaseContext.refresh = lambda context: (refreshes.append(1), refresh(context))[1]


""" + ROSEN + """

@numba.njit
def buffered(x):  # compiled after the cached kernel: dualad's np.zeros_like must come first
    out = np.zeros_like(x)
    out[0] = x[0] * x[1]
    return np.sum(out)


x = np.linspace(0.1, 1.0, 5)
derivatives = [dualad.grad(rosen)(x).tolist(), dualad.grad(rosen, mode="reverse")(x).tolist(),
               dualad.hessian(rosen)(x).tolist()]
loaded_without_refresh = not refreshes
# the kernels' environments name no module of numba's array functions (np.size's np.asarray:
# numba.np.arraymath imports scipy.linalg)
array_functions = "numba.np.arraymath" in sys.modules
print(json.dumps({"derivatives": derivatives, "loaded_without_refresh": loaded_without_refresh,
                  "array_functions": array_functions, "buffered": dualad.grad(buffered)(x).tolist()}))
"""


def test_a_cached_kernel_loads_without_refreshing_numbas_contexts(tmp_path):
    # issue 15: a warm first call compiles nothing, so it needs none of the typing templates
    # and lowering registries numba's refresh installs (0.2-0.4 s); the first compile after it
    # still puts dualad's templates first (np.zeros_like of duals)
    runs = _two_processes(tmp_path, WARM_WITHOUT_REFRESH)
    x = np.linspace(0.1, 1.0, 5)
    assert runs[1]["loaded_without_refresh"]
    assert not runs[1]["array_functions"]
    assert runs[1]["derivatives"] == runs[0]["derivatives"]
    np.testing.assert_allclose(runs[1]["buffered"], [x[1], x[0], 0.0, 0.0, 0.0])
