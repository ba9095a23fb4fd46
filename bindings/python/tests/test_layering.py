"""The package's modules import each other in one direction, so none needs another half-initialised:

    documents  ←  errors  ←  states  ←  client  ←  cli

``errors`` is the bottom (it names only the typing shapes of ``documents``), ``states`` talks to the client through
the `nativeauth.states.FlowClient` protocol and never imports it, and neither imports inside functions."""
from __future__ import annotations

import ast
import pathlib
from typing import Dict, List, Set, Tuple

import nativeauth
from nativeauth import aio, states

PACKAGE = pathlib.Path(nativeauth.__file__).parent


def imports(module: str) -> List[Tuple[str, bool]]:
    """(the package module imported, whether at module level) for each import of the package in ``module``."""
    tree = ast.parse((PACKAGE / f"{module}.py").read_text(encoding="utf-8"))
    top = {id(node) for node in tree.body}
    top |= {id(n) for node in tree.body if isinstance(node, ast.If) for n in node.body}  # if TYPE_CHECKING:
    found: List[Tuple[str, bool]] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.level == 1:
            names = [node.module] if node.module else [alias.name for alias in node.names]
            found += [(name, id(node) in top) for name in names]
    return found


def modules() -> List[str]:
    return sorted(p.stem for p in PACKAGE.glob("*.py") if p.stem not in ("__init__", "__main__"))


def test_errors_is_the_bottom_of_the_package() -> None:
    assert {name for name, _ in imports("documents")} == set()
    assert {name for name, _ in imports("errors")} == {"documents"}
    assert {name for name, _ in imports("states")} == {"errors"}


def test_states_and_errors_import_nothing_inside_functions() -> None:
    for module in ("errors", "states", "client", "documents"):
        inner = [name for name, at_top in imports(module) if not at_top]
        assert inner == [], f"{module} imports {inner} inside a function"


def test_no_module_imports_back_into_a_module_that_imports_it() -> None:
    graph: Dict[str, Set[str]] = {m: {n for n, _ in imports(m) if n in modules()} for m in modules()}

    def reaches(start: str, goal: str, seen: Set[str]) -> bool:
        return any(n == goal or (n not in seen and reaches(n, goal, seen | {n})) for n in graph[start])

    cycles = [m for m in graph if reaches(m, m, {m})]
    assert cycles == [], f"modules on an import cycle: {cycles}"


def test_flow_states_reach_their_client_only_through_the_flow_client_protocol() -> None:
    """A flow state holds what `nativeauth.states.FlowClient` (or `nativeauth.aio.AsyncFlowClient`) describes and
    calls only that: no method of a state class touches a private member (``x._name``) of anything but itself."""
    offenders: List[str] = []
    for name, module in (("states", states), ("aio", aio)):
        tree = ast.parse((PACKAGE / f"{name}.py").read_text(encoding="utf-8"))
        for cls in (node for node in tree.body if isinstance(node, ast.ClassDef)):
            kind = getattr(module, cls.name, None)
            if not (isinstance(kind, type) and issubclass(kind, states._Flow)):
                continue
            for node in ast.walk(cls):
                if (isinstance(node, ast.Attribute) and node.attr.startswith("_") and not node.attr.startswith("__")
                        and not (isinstance(node.value, ast.Name) and node.value.id in ("self", "cls"))):
                    offenders.append(f"{name}.{cls.name}: {ast.unparse(node)}")
    assert offenders == []
    for protocol, method in ((states.FlowClient, "submit_flow"), (aio.AsyncFlowClient, "submit_flow")):
        assert callable(getattr(protocol, method, None)) and getattr(protocol, method).__doc__
