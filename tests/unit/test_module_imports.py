"""Imports between the project's modules are at module level, where import-linter sees them; an
import inside a function to dodge a cycle is a layering bug (enqueue a task by name instead)."""

import ast
from pathlib import Path

APPS = Path(__file__).resolve().parents[2] / "apps"

# (module, imported): why the import waits.
ALLOWED = {
    # AppConfig.ready(): registration modules load once the app registry is ready.
    ("apps/core/apps.py", "."),
    # The sweeper hook: tasks.py reaches the models, not loaded when apps.py is imported.
    ("apps/finance/apps.py", ".tasks"),
}


def _project_imports_inside_code(path: Path) -> list[tuple[str, int]]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    found = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            continue
        for inner in ast.walk(node):
            if isinstance(inner, ast.ImportFrom):
                name = "." * inner.level + (inner.module or "")
                if inner.level or name.startswith(("apps", "gpuselect")):
                    found.append((name, inner.lineno))
            elif isinstance(inner, ast.Import):
                for alias in inner.names:
                    if alias.name.startswith(("apps", "gpuselect")):
                        found.append((alias.name, inner.lineno))
    return found


def test_no_function_imports_another_project_module():
    offenders = []
    for path in sorted(APPS.rglob("*.py")):
        if "migrations" in path.parts:
            continue
        relative = path.relative_to(APPS.parent).as_posix()
        for name, line in _project_imports_inside_code(path):
            if (relative, name) not in ALLOWED:
                offenders.append(f"{relative}:{line} imports {name}")

    assert offenders == []
