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


def _module_name(path: Path) -> str:
    """"custom_op", "torch" (a package's __init__), "torch._records": relative to opreg."""
    parts = list(path.relative_to(PACKAGE).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _package_of(path: Path) -> List[str]:
    """The package a module's relative imports start from, as parts relative to opreg."""
    return list(path.parent.relative_to(PACKAGE).parts)


def _imports(path: Path, modules: Set[str]) -> Set[str]:
    """The package's modules that `path` imports, anywhere in it (a module imported from a
    subpackage counts as importing the subpackage too: its __init__ runs first)."""
    found: Set[str] = set()

    def add(parts: List[str]) -> None:
        for n in range(1, len(parts) + 1):
            found.add(".".join(parts[:n]))

    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom) and node.level >= 1:
            base = _package_of(path)[:len(_package_of(path)) - (node.level - 1)]
            if node.module:
                add(base + node.module.split("."))
                for a in node.names:  # `from .pkg import module`
                    add(base + node.module.split(".") + [a.name])
            else:
                for a in node.names:
                    add(base + [a.name])
        elif isinstance(node, ast.ImportFrom) and (node.module or "").startswith("opreg."):
            add(node.module.split(".")[1:])
        elif isinstance(node, ast.Import):
            for a in node.names:
                if a.name.startswith("opreg."):
                    add(a.name.split(".")[1:])
    found.discard("")
    return found & modules


def _python_files() -> Dict[str, Path]:
    return {_module_name(p): p for p in PACKAGE.rglob("*.py")}


def test_no_import_cycle_among_opreg_modules():
    files = _python_files()
    modules = set(files)
    assert {"torch", "torch._records", "custom_op"} <= modules
    graph: Dict[str, Set[str]] = {m: _imports(p, modules) - {m} for m, p in files.items()}
    # A package's __init__ importing its own submodules is how a package is built, not a cycle.
    for m in graph:
        graph[m] = {d for d in graph[m] if not d.startswith(m + ".")}
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
    for path in sorted(PACKAGE.rglob("*.py")):
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
