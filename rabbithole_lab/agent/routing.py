"""Pure routers: the state after a node's update in, the next node's name out. A node that fails never reaches
its router: the graph ends it with `Command(goto=END)` (agent/graph.py), so no router checks for an error."""

from __future__ import annotations

from typing import Literal

from rabbithole_lab.agent.state import AgentState
from rabbithole_lab.records import ToDoList


def route_after_response(state: AgentState) -> Literal["hitl_generate_queries", "hitl_finalize"]:
    return "hitl_finalize" if state.get("hitl_termination_reason") else "hitl_generate_queries"


def route_after_analysis(state: AgentState) -> Literal["hitl_generate_questions", "hitl_finalize"]:
    """The convergence rule ends the dialogue before another round of questions."""
    return "hitl_finalize" if state.get("hitl_termination_reason") else "hitl_generate_questions"


def route_after_task(state: AgentState) -> Literal["execute_task", "validate_relevance"]:
    todo = ToDoList.model_validate(state["todo_list"])
    return "execute_task" if todo.get_next_task() is not None else "validate_relevance"


def route_after_quality(max_reflections: int, threshold: int):
    def route(state: AgentState) -> Literal["remediate", "attribute_sources"]:
        quality = state.get("quality_assessment") or {}
        if not quality:  # quality check disabled
            return "attribute_sources"
        weak = int(quality.get("overall_score", 0)) < threshold
        if weak and state.get("reflection_count", 0) < max_reflections:
            return "remediate"
        return "attribute_sources"

    return route


def route_after_remediation(state: AgentState) -> Literal["synthesize", "attribute_sources"]:
    return "synthesize" if state.get("remediation_instructions") else "attribute_sources"


def proceed_to(target: str):
    """A node with one successor (its return type names it, as the other routers' do)."""

    def route(_state: AgentState) -> str:
        return target

    route.__name__ = f"to_{target}"
    route.__annotations__["return"] = Literal[target]
    return route
