"""The architecture document names real paths, and dualad's import graph (every import,
lazy ones inside functions included) has no cycle (docs/architecture.md)."""

import ast
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "dualad"


def _modules():
    modules = {}
    for path in PACKAGE.rglob("*.py"):
        parts = path.relative_to(ROOT).with_suffix("").parts
        name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
        modules[name] = path
    return modules


def import_graph():
    """module -> the dualad modules it imports anywhere in its source."""
    modules = _modules()
    graph = {}
    for name, path in modules.items():
        package = name if path.name == "__init__.py" else name.rsplit(".", 1)[0]
        targets = set()
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom):
                base = package.split(".")
                if node.level:
                    base = base[:len(base) - node.level + 1]
                    target = ".".join(base + ([node.module] if node.module else []))
                else:
                    target = node.module
                for alias in node.names:
                    full = f"{target}.{alias.name}"
                    targets.add(full if full in modules else target)
            elif isinstance(node, ast.Import):
                targets.update(alias.name for alias in node.names)
        graph[name] = {t for t in targets if t in modules and t != name}
    return graph


def _cycle(graph):
    """One cycle of the graph as a list of modules, or None."""
    state, stack = {}, []

    def visit(node):
        state[node] = "open"
        stack.append(node)
        for nxt in sorted(graph[node]):
            if state.get(nxt) == "open":
                return stack[stack.index(nxt):] + [nxt]
            if nxt not in state:
                found = visit(nxt)
                if found:
                    return found
        state[node] = "done"
        stack.pop()
        return None

    for node in sorted(graph):
        if node not in state:
            found = visit(node)
            if found:
                return found
    return None


def test_the_import_graph_has_no_cycle():
    graph = import_graph()
    assert "dualad.transforms" in graph and graph["dualad.jit.kernels"]
    assert _cycle(graph) is None, " -> ".join(_cycle(graph))


def test_the_compiled_path_never_imports_the_python_transforms():
    graph = import_graph()
    upper = {"dualad.transforms", "dualad.dispatch", "dualad.modes", "dualad.forward",
             "dualad.recording", "dualad"}
    for name, targets in graph.items():
        if name.startswith("dualad.jit"):
            assert not targets & upper, f"{name} imports {targets & upper}"


def test_every_path_the_architecture_document_names_exists():
    text = (ROOT / "docs" / "architecture.md").read_text()
    named = set(re.findall(r"`((?:dualad/|tests/|docs/|benchmarks/)?[\w/]+\.(?:py|md))`", text))
    assert len(named) > 20
    missing = []
    for path in named:
        candidates = [ROOT / path, PACKAGE / path, ROOT / "tests" / path,
                      ROOT / "tests" / "compiled" / path]
        if not any(c.exists() for c in candidates):
            missing.append(path)
    assert not missing, missing


def test_import_dualad_loads_neither_numba_nor_scipy_nor_numpys_lazy_submodules():
    """import dualad stays fast (issue 15: about 0.1 s beside NumPy's own): numba is imported
    by the first compiled transform, scipy by the first sparse result, and nothing walks
    NumPy's namespace with getattr (which imports testing, ma, random, f2py: 80 ms)."""
    import json
    import subprocess
    import sys

    code = ("import sys, json, dualad; print(json.dumps(sorted(m for m in sys.modules if m.split('.')[0] "
            "in ('numba', 'scipy', 'llvmlite') or m in ('numpy.testing', 'numpy.ma', 'numpy.random', "
            "'numpy.f2py', 'numpy.polynomial'))))")
    loaded = json.loads(subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                                       check=True).stdout)
    assert loaded == []


def test_every_relative_link_in_the_docs_exists():
    """README.md and docs/: each [text](path) and ![image](path) that is not a URL names an
    existing file (the user guides link to each other, to the generated tables and to the
    benchmark results)."""
    pages = [ROOT / "README.md"] + sorted((ROOT / "docs").rglob("*.md"))
    missing = []
    for page in pages:
        for target in re.findall(r"\]\(([^)\s]+)\)", page.read_text()):
            if "://" in target or target.startswith("#"):
                continue
            if not (page.parent / target.split("#")[0]).exists():
                missing.append(f"{page.relative_to(ROOT)}: {target}")
    assert len(pages) > 8
    assert not missing, missing


def test_the_architecture_document_is_short_and_undated():
    """docs/architecture.md says how the code works today, in at most 400 lines; dates,
    measurements' history and the options weighed live in docs/decisions/."""
    lines = (ROOT / "docs" / "architecture.md").read_text().splitlines()
    assert len(lines) <= 400, len(lines)
    dated = [line for line in lines if re.search(r"\b20\d\d-\d\d-\d\d\b", line)]
    assert not dated, dated


def test_code_comments_carry_no_history():
    """Comments say why in the present tense: dates and wrong-derivative hunts belong in the
    commit messages and docs/decisions/, not in dualad's code."""
    found = []
    for path in sorted(PACKAGE.rglob("*.py")):
        for number, line in enumerate(path.read_text().splitlines(), 1):
            if re.search(r"\b20\d\d-\d\d-\d\d\b|\bhunts?\b", line):
                found.append(f"{path.relative_to(ROOT)}:{number}: {line.strip()}")
    assert not found, found
