"""Imports go downward (DESIGN.md): front ends use the knowledge base's face and never the extractive reasoner's
internals, the layers below the agent never import LangGraph, the knowledge base imports nothing above it, and
no module imports itself back through another. Every import counts, a deferred one inside a function too: a
circle deferred is still a circle."""

from __future__ import annotations

import ast
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "rabbithole_lab"
FRONT_ENDS = ("cli", "ui", "batch", "report", "viz")
BELOW_THE_AGENT = ("kb", "rabbithole", "reasoning", "evidence", "support", "language")
# what a front end may take from kb/: open and ingest a knowledge base, what its folder holds, which embedder, what
# a page says as the ingest read it
KB_FACE = ("kb.kb_factory", "kb.ingest.ingest", "kb.ingest.kb_folder", "kb.embedding.embedder_choice",
           "kb.ingest.page_reading")


def _module_name(path: Path, package: Path) -> str:
    return ".".join(path.relative_to(package).with_suffix("").parts).removesuffix(".__init__")


def import_edges(package: Path) -> dict[str, set[str]]:
    """Module (relative to the package) -> what it imports: package modules and names relative to the package
    (`from pkg.kb.store import index` -> "kb.store.index", `from pkg.kb.store.index import ChromaIndex` ->
    "kb.store.index.ChromaIndex"), outside modules by their full name."""
    prefix = package.name + "."
    edges: dict[str, set[str]] = {}
    for path in package.rglob("*.py"):
        targets: set[str] = set()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and node.module:
                targets |= {f"{node.module}.{alias.name}" for alias in node.names}
            elif isinstance(node, ast.Import):
                targets |= {alias.name for alias in node.names}
        edges[_module_name(path, package)] = {target.removeprefix(prefix) for target in targets}
    return edges


def broken(edges: dict[str, set[str]], rule: Callable[[str, str], bool]) -> set[tuple[str, str]]:
    return {(module, target) for module, targets in edges.items() for target in targets if rule(module, target)}


def circles(edges: dict[str, set[str]]) -> list[set[str]]:
    """Groups of modules that import each other, directly or through others (Tarjan's components)."""
    modules = set(edges)
    graph = {module: {target if target in modules else target.rsplit(".", 1)[0] for target in targets} & modules
             - {module} for module, targets in edges.items()}
    order: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found: list[set[str]] = []

    def visit(module: str) -> None:
        order[module] = low[module] = len(order)
        stack.append(module)
        for target in graph[module]:
            if target not in order:
                visit(target)
                low[module] = min(low[module], low[target])
            elif target in stack:
                low[module] = min(low[module], order[target])
        if low[module] == order[module]:
            group = set()
            while True:
                member = stack.pop()
                group.add(member)
                if member == module:
                    break
            if len(group) > 1:
                found.append(group)

    for module in sorted(modules):
        if module not in order:
            visit(module)
    return found


def _is_error(target: str) -> bool:
    return target.rsplit(".", 1)[-1].endswith(("Error", "Error_"))


def test_no_module_imports_itself_back():
    assert circles(import_edges(PACKAGE)) == []


def test_front_ends_use_the_knowledge_bases_face():
    inside = broken(import_edges(PACKAGE), lambda module, target: module.startswith(FRONT_ENDS)
                    and target.startswith("kb.") and not target.startswith(KB_FACE) and not _is_error(target))
    assert not inside, sorted(inside)


def test_front_ends_do_not_reach_into_the_extractive_reasoner():
    inside = broken(import_edges(PACKAGE), lambda module, target: module.startswith(FRONT_ENDS)
                    and target.startswith("reasoning.extractive"))
    assert not inside, sorted(inside)


def test_nothing_below_the_agent_imports_langgraph():
    graphs = broken(import_edges(PACKAGE), lambda module, target: module.startswith(BELOW_THE_AGENT)
                    and target.split(".")[0] == "langgraph")
    assert not graphs, sorted(graphs)


def test_the_knowledge_base_imports_nothing_above_it():
    above = ("agent", "steps", "rabbithole", "reasoning", "usecase", "messages", *FRONT_ENDS)
    upward = broken(import_edges(PACKAGE), lambda module, target: module.startswith("kb") and target.startswith(above))
    assert not upward, sorted(upward)


def test_the_language_profiles_import_nothing_above_them():
    """Each language's words, patterns and citation grammar stand below every layer that reads them: they import
    only each other and the shared records."""
    upward = broken(import_edges(PACKAGE), lambda module, target: module.startswith("language") and target.split(
        ".")[0] in {path.stem for path in PACKAGE.iterdir()} - {"language", "records"})
    assert not upward, sorted(upward)


def test_the_rule_engines_do_not_import_each_other():
    """The reference follower judges with what the reasoner gives it; the LLM adapter never runs extractive rules
    and meets the follower only through the gate's contract in records.py."""
    edges = import_edges(PACKAGE)
    crossing = (broken(edges, lambda module, target: module.startswith("rabbithole")
                       and target.startswith("reasoning"))
                | broken(edges, lambda module, target: module.startswith(("reasoning.llm", "agent", "steps"))
                         and target.startswith("reasoning.extractive"))
                | broken(edges, lambda module, target: module.startswith("reasoning.llm")
                         and target.startswith("rabbithole")))
    assert not crossing, sorted(crossing)


def test_nothing_below_the_front_ends_words_what_it_tells_the_reader():
    """The follower, the agent's nodes and the steps record what they tell the reader as notices and reasons, keys
    with their values (records.notice, records.Reason); only the use case, the report and the front ends word them
    (messages/reasons.py). The reasoners write the answer and the dialogue in the reader's language: their words
    are their output, not a layer leak."""
    wording = broken(import_edges(PACKAGE), lambda module, target: module.startswith(
        ("agent", "steps", "rabbithole", "kb", "evidence", "support")) and target.startswith("messages"))
    assert not wording, sorted(wording)


def test_the_checks_see_a_circle_and_a_broken_rule(tmp_path):
    package = tmp_path / "pkg"
    (package / "kb").mkdir(parents=True)
    (package / "ui").mkdir()
    (package / "kb" / "a.py").write_text("from pkg.kb import b\n", encoding="utf-8")
    (package / "kb" / "b.py").write_text("def f():\n    from pkg.kb.a import x\n", encoding="utf-8")
    (package / "ui" / "view.py").write_text("from pkg.kb.b import f\nimport langgraph.graph\n", encoding="utf-8")
    edges = import_edges(package)
    assert circles(edges) == [{"kb.a", "kb.b"}]
    assert broken(edges, lambda module, target: module.startswith("ui") and target.startswith("kb.")) == {
        ("ui.view", "kb.b.f")}
    assert broken(edges, lambda module, target: target.split(".")[0] == "langgraph") == {("ui.view", "langgraph.graph")}


def test_no_file_name_repeats():
    """A file's name says which one it is: no two modules of the package or the benchmarks share one."""
    names: dict[str, list[str]] = {}
    for path in [*PACKAGE.rglob("*.py"), *(ROOT / "bench").glob("*.py")]:
        if path.name not in ("__init__.py", "__main__.py"):
            names.setdefault(path.name, []).append(str(path.relative_to(ROOT)))
    assert not {name: paths for name, paths in names.items() if len(paths) > 1}


def test_the_top_level_holds_the_face_and_what_every_layer_shares():
    """Everything else lives in the folder of its layer; the prompts stay where the project's rules name them."""
    shared = {"__init__.py", "settings.py", "records.py", "schemas.py", "prompts.py", "project.py"}
    assert {path.name for path in PACKAGE.glob("*.py")} == shared
