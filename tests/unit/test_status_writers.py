"""One writer per status: exactly one function writes a Phase's status, one an
Execution's and one a CronExecution's, through the one helper that patches the status subresource.

Cases: every use of the status subresource's path, and every patch that carries a
``status``, found in the operator's source by its syntax tree and named by the function
it stands in; a write added anywhere else fails this test.
"""

from __future__ import annotations

import ast
import pathlib

OPERATOR = pathlib.Path(__file__).parents[2] / "operator" / "agentjobs"
PATCHES = ("merge_patch", "patch", "replace", "create")


class _Writes(ast.NodeVisitor):
    """Where a module names the status subresource, by enclosing function."""

    def __init__(self, module: str) -> None:
        self.module = module
        self.scope: list[str] = []
        self.status_paths: list[str] = []
        self.status_bodies: list[str] = []

    def _enter(self, node: ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef) -> None:
        self.scope.append(node.name)
        self.generic_visit(node)
        self.scope.pop()

    visit_FunctionDef = visit_AsyncFunctionDef = visit_ClassDef = _enter

    def visit_Call(self, node: ast.Call) -> None:
        where = f"{self.module}::{'.'.join(self.scope)}"
        func = node.func
        if not isinstance(func, ast.Attribute):
            self.generic_visit(node)
            return
        named = isinstance(func.value, ast.Name) and func.value.id == "paths"
        if named and func.attr == "status":
            self.status_paths.append(where)
        if func.attr in PATCHES:
            for arg in [*node.args, *(k.value for k in node.keywords)]:
                if isinstance(arg, ast.Dict) and any(
                    isinstance(key, ast.Constant) and key.value == "status" for key in arg.keys
                ):
                    self.status_bodies.append(where)
        self.generic_visit(node)


def _writes() -> tuple[list[str], list[str]]:
    paths: list[str] = []
    bodies: list[str] = []
    for source in sorted(OPERATOR.rglob("*.py")):
        visitor = _Writes(str(source.relative_to(OPERATOR)))
        visitor.visit(ast.parse(source.read_text()))
        paths += visitor.status_paths
        bodies += visitor.status_bodies
    return paths, bodies


def test_one_function_writes_each_resources_status() -> None:
    paths, _ = _writes()
    assert sorted(paths) == [
        "controllers/execution/executions.py::ExecutionReconciler._write_status",
        "controllers/phase/phase_context.py::PhaseContext.write_status",
        "controllers/scheduling/cron_executions.py::CronReconciler._write_status",
    ]


def test_only_the_status_helper_sends_a_status_patch() -> None:
    _, bodies = _writes()
    assert sorted(set(bodies)) == [
        "runtime/errors.py::_write_smallest",
        "runtime/errors.py::write_status",
    ]


def test_a_status_write_added_elsewhere_is_found() -> None:
    visitor = _Writes("controllers/rogue.py")
    rogue = "async def finish(kube):\n    await kube.merge_patch(paths.status(p), {'status': {}})\n"
    visitor.visit(ast.parse(rogue))
    assert visitor.status_paths == visitor.status_bodies == ["controllers/rogue.py::finish"]
