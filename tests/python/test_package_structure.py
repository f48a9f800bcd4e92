"""Facts about the source tree that reviews rely on, kept true by a test: no import cycle among
opreg's Python modules (imports inside functions included), no module reaching into another's
private names through sys.modules, no source file over 600 lines, and the define events that
let opreg's modules notify opreg.torch without importing it."""
from __future__ import annotations

import ast
import subprocess
from pathlib import Path
from typing import Dict, List, Set, Tuple

import pytest

import opreg
from opreg import _op_events

REPO = Path(__file__).resolve().parents[2]
PACKAGE = REPO / "python_bindings" / "opreg"
SOURCE_SUFFIXES = (".cc", ".h", ".cu", ".py", ".pyi", ".cmake", ".sh")


def _imports(path: Path, modules: Set[str]) -> Set[str]:
    """The package's modules that `path` imports, anywhere in it."""
    found: Set[str] = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom) and node.level == 1:
            names = [node.module.split(".")[0]] if node.module else [a.name for a in node.names]
            found.update(names)
        elif isinstance(node, ast.ImportFrom) and (node.module or "").startswith("opreg."):
            found.add(node.module.split(".")[1])
        elif isinstance(node, ast.Import):
            found.update(a.name.split(".")[1] for a in node.names if a.name.startswith("opreg."))
    return found & modules


def test_no_import_cycle_among_opreg_modules():
    modules = {p.stem for p in PACKAGE.glob("*.py")}
    graph: Dict[str, Set[str]] = {m: _imports(PACKAGE / f"{m}.py", modules) for m in modules}
    cycles: List[List[str]] = []

    def walk(start: str, node: str, path: List[str]) -> None:
        for dep in sorted(graph[node]):
            if dep == start:
                cycles.append(path + [dep])
            elif dep not in path:
                walk(start, dep, path + [dep])

    for m in sorted(modules):
        walk(m, m, [m])
    assert cycles == []


def _is_sys_modules(node: ast.AST) -> bool:
    return isinstance(node, ast.Attribute) and node.attr == "modules" and \
        isinstance(node.value, ast.Name) and node.value.id == "sys"


def test_no_module_of_the_package_looked_up_through_sys_modules():
    found = []
    for path in sorted(PACKAGE.glob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            key = None
            if isinstance(node, ast.Subscript) and _is_sys_modules(node.value):
                key = node.slice
            elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and \
                    node.func.attr == "get" and _is_sys_modules(node.func.value) and node.args:
                key = node.args[0]
            if isinstance(key, ast.Constant) and str(key.value).startswith("opreg."):
                found.append(f"{path.name}:{node.lineno} {key.value}")
    assert found == []


def test_no_source_file_over_600_lines():
    try:
        files = subprocess.run(["git", "ls-files"], cwd=REPO, capture_output=True, text=True,
                               check=True).stdout.split()
    except (OSError, subprocess.CalledProcessError):
        pytest.skip("not a git checkout: the tracked files are unknown")
    long = {f: n for f in files if f.endswith(SOURCE_SUFFIXES)
            for n in [len((REPO / f).read_text(errors="replace").splitlines())] if n > 600}
    assert long == {}


def test_python_defines_reach_followers_once(ns):
    seen: List[Tuple[str, str]] = []

    def follow(kind: str, name: str) -> None:
        if name.startswith(f"{ns}::"):
            seen.append((kind, name))

    subscription = _op_events.subscribe(follow, replay=False)
    try:
        lib = opreg.Library(ns, "DEF")
        lib.define("twice(Tensor x) -> Tensor")
        assert seen == [("defined", f"{ns}::twice")]  # once, before define returned
        lib._destroy()
        assert seen == [("defined", f"{ns}::twice"), ("undefined", f"{ns}::twice")]
    finally:
        subscription.close()
