"""The package stays readable in pieces: modules and functions a reader can take in at once, and tests
that can fail. Nested node bodies and closures count towards their own function, not their parent's."""

from __future__ import annotations

import ast
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "rabbithole_lab"
MAX_MODULE_LINES = 450
MAX_FUNCTION_LINES = 80


def _function_lengths(tree: ast.AST) -> list[tuple[str, int, int]]:
    """(name, first line, lines without the functions defined directly inside it) for every function."""
    out = []
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            nested = sum(child.end_lineno - child.lineno + 1 for child in ast.walk(node)
                         if child is not node and isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef)
                         and child in node.body)
            out.append((node.name, node.lineno, node.end_lineno - node.lineno + 1 - nested))
    return out


def test_no_module_is_longer_than_a_reader_takes_in():
    long = {str(path.relative_to(ROOT)): n for path in PACKAGE.rglob("*.py")
            if (n := len(path.read_text(encoding="utf-8").splitlines())) > MAX_MODULE_LINES}
    assert not long, long


def test_no_function_is_longer_than_a_screen_or_two():
    long = [f"{path.relative_to(ROOT)}:{line} {name} ({n} lines)" for path in PACKAGE.rglob("*.py")
            for name, line, n in _function_lengths(ast.parse(path.read_text(encoding="utf-8")))
            if n > MAX_FUNCTION_LINES]
    assert not long, long


def test_the_length_check_sees_a_long_function():
    body = "\n".join(f"    x{i} = {i}" for i in range(MAX_FUNCTION_LINES + 5))
    lengths = _function_lengths(ast.parse(f"def long():\n{body}\n\ndef short():\n    return 1\n"))
    assert [(name, n > MAX_FUNCTION_LINES) for name, _, n in lengths] == [("long", True), ("short", False)]


def test_no_assertion_is_made_true_by_or_true():
    weak = [f"{path.relative_to(ROOT)}:{number}" for path in (ROOT / "tests").rglob("*.py")
            for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1)
            if re.search(r"\bor\s+True\s*(#.*)?$", line)]
    assert not weak, weak
