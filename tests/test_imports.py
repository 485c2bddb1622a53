"""Imports run one way, as the README's 'Imports run one way' paragraph says: an ast walk over qa_service/."""

import ast
import re

from tests.conftest import ROOT

PACKAGE = ROOT / "qa_service"


def readme_layers() -> list[set[str]]:
    """The README's chain, top first: groups separated by '->', modules in backticks."""
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    paragraph = text.split("Imports run one way:", 1)[1].split("\nA module imports only", 1)[0]
    return [set(re.findall(r"`(\w+)`", group)) for group in paragraph.split("->")]


def package_imports(path) -> list[tuple[str, bool]]:
    """(module of the package imported, whether inside a function) for every import in a file."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    found = []

    def visit(node: ast.AST, nested: bool) -> None:
        for child in ast.iter_child_nodes(node):
            inner = nested or isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda))
            if isinstance(child, ast.ImportFrom):
                if child.level == 1 and child.module:
                    found.append((child.module.split(".")[0], inner))
                elif child.level == 1:
                    found.extend((alias.name, inner) for alias in child.names)
                elif (child.module or "").startswith("qa_service"):
                    found.append(((child.module.split(".") + [""])[1] or child.names[0].name, inner))
            elif isinstance(child, ast.Import):
                found.extend((a.name.split(".")[1], inner) for a in child.names if a.name.startswith("qa_service."))
            visit(child, inner)

    visit(tree, False)
    return found


def test_readme_lists_every_module_once():
    layers = readme_layers()
    listed = [m for layer in layers for m in layer]
    modules = {p.stem for p in PACKAGE.glob("*.py") if p.stem != "__init__"}
    assert sorted(listed) == sorted(modules), "the README's import chain must list every module exactly once"


def test_imports_point_only_downwards_and_never_hide_in_functions():
    rank = {m: i for i, layer in enumerate(readme_layers()) for m in layer}
    wrong = []
    for path in sorted(PACKAGE.glob("*.py")):
        if path.stem == "__init__":
            continue
        for target, nested in package_imports(path):
            if nested:
                wrong.append(f"{path.stem} imports {target} inside a function")
            elif rank[target] <= rank[path.stem]:
                wrong.append(f"{path.stem} imports {target}, which is not below it")
    assert not wrong, "\n".join(wrong)


def test_the_checker_sees_a_cycle(tmp_path):
    """The walk itself works: an upward import and a nested one are both found."""
    module = tmp_path / "m.py"
    module.write_text("from .web import create_app\n\ndef f():\n    from .cli import main\n")
    assert package_imports(module) == [("web", False), ("cli", True)]
