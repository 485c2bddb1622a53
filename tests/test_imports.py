"""Imports run one way, as the README's 'Imports run one way' paragraph says: an ast walk over qa_service/."""

import ast
import re
from pathlib import Path

from tests.conftest import ROOT

PACKAGE = ROOT / "qa_service"


def paragraph(start: str) -> str:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    return text.split(start, 1)[1].split("\nA module imports only", 1)[0].split("\n\n", 1)[0]


def readme_parts() -> list[set[str]]:
    """The README's parts, top first: a folder (`store`) or a top-level module (`cli`)."""
    return [set(re.findall(r"`([\w.]+)`", group)) for group in paragraph("Parts import downward only:").split("->")]


def readme_layers() -> list[set[str]]:
    """The README's module chain, top first: groups separated by '->', modules (`store.index`) in backticks."""
    return [set(re.findall(r"`([\w.]+)`", group)) for group in paragraph("Imports run one way:").split("->")]


def module_name(path: Path) -> str:
    return ".".join(path.relative_to(PACKAGE).with_suffix("").parts)


def modules() -> dict[str, Path]:
    return {module_name(p): p for p in PACKAGE.rglob("*.py") if p.stem != "__init__"}


def part_of(module: str) -> str:
    return module.split(".")[0]


def resolve(importer: str, level: int, module: str | None, names: list[str], known: set[str]) -> list[str]:
    """The package modules one import statement names, from a module's dotted name."""
    if level == 0:
        if not (module or "").startswith("qa_service"):
            return []
        base = module.split(".")[1:]
    else:
        package = importer.split(".")[:-1]
        base = package[: len(package) - (level - 1)] + (module.split(".") if module else [])
    found = []
    for name in names:
        candidate = ".".join(base + [name])
        if candidate in known:
            found.append(candidate)
        elif ".".join(base) in known:
            found.append(".".join(base))
    return sorted(set(found))


def package_imports(path: Path, importer: str, known: set[str]) -> list[tuple[str, bool]]:
    """(module of the package imported, whether inside a function) for every import in a file."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    found: list[tuple[str, bool]] = []

    def visit(node: ast.AST, nested: bool) -> None:
        for child in ast.iter_child_nodes(node):
            inner = nested or isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda))
            if isinstance(child, ast.ImportFrom):
                names = [a.name for a in child.names]
                found.extend((m, inner) for m in resolve(importer, child.level, child.module, names, known))
            elif isinstance(child, ast.Import):
                for alias in child.names:
                    if alias.name.startswith("qa_service."):
                        found.extend((m, inner) for m in resolve(importer, 0, alias.name, [], known) or
                                     [".".join(alias.name.split(".")[1:])])
            visit(child, inner)

    visit(tree, False)
    return found


def test_readme_lists_every_module_once():
    listed = [m for layer in readme_layers() for m in layer]
    assert sorted(listed) == sorted(modules()), "the README's import chain must list every module exactly once"


def test_imports_point_only_downwards_and_never_hide_in_functions():
    rank = {m: i for i, layer in enumerate(readme_layers()) for m in layer}
    known = set(modules())
    wrong = []
    for name, path in sorted(modules().items()):
        for target, nested in package_imports(path, name, known):
            if nested:
                wrong.append(f"{name} imports {target} inside a function")
            elif rank[target] <= rank[name]:
                wrong.append(f"{name} imports {target}, which is not below it")
    assert not wrong, "\n".join(wrong)


def test_the_chain_runs_through_the_parts_in_their_order():
    """Every module of a part stands left of every module of the parts below it, so parts import downward only."""
    part_rank = {p: i for i, group in enumerate(readme_parts()) for p in group}
    assert set(part_rank) == {part_of(m) for m in modules()}, "every folder and top-level module is a named part"
    ranks = [part_rank[part_of(m)] for layer in readme_layers() for m in sorted(layer)]
    by_layer = [{part_rank[part_of(m)] for m in layer} for layer in readme_layers()]
    assert all(max(a) <= min(b) for a, b in zip(by_layer, by_layer[1:])), ranks


def test_chromadb_is_imported_only_inside_the_store():
    outside = [name for name, path in modules().items() if part_of(name) != "store"
               and re.search(r"^\s*(import|from) chromadb\b", path.read_text(encoding="utf-8"), re.M)]
    assert not outside


def test_the_checker_sees_a_cycle(tmp_path):
    """The walk itself works: an upward import and a nested one are both found, relative and absolute."""
    known = {"web.app", "cli", "store.index", "config"}
    module = tmp_path / "m.py"
    module.write_text("from .app import create_app\nfrom ..config import X\nimport qa_service.store.index\n\n"
                      "def f():\n    from ..cli import main\n")
    assert package_imports(module, "web.m", known) == [("web.app", False), ("config", False), ("store.index", False),
                                                       ("cli", True)]
