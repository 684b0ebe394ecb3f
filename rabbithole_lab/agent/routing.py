"""Pure routers: state in, the next node's name out (END when a critical error was recorded)."""

from __future__ import annotations

from typing import Literal

from langgraph.graph import END

from rabbithole_lab.agent.state import AgentState
from rabbithole_lab.records import ToDoList


def route_after_response(state: AgentState) -> Literal["hitl_generate_queries", "hitl_finalize", "__end__"]:
    if state.get("error"):
        return END
    return "hitl_finalize" if state.get("hitl_termination_reason") else "hitl_generate_queries"


def route_after_analysis(state: AgentState) -> Literal["hitl_generate_questions", "hitl_finalize", "__end__"]:
    """The convergence rule ends the dialogue before another round of questions."""
    if state.get("error"):
        return END
    return "hitl_finalize" if state.get("hitl_termination_reason") else "hitl_generate_questions"


def route_after_task(state: AgentState) -> Literal["execute_task", "validate_relevance", "__end__"]:
    if state.get("error"):
        return END
    todo = ToDoList.model_validate(state["todo_list"])
    return "execute_task" if todo.get_next_task() is not None else "validate_relevance"


def route_after_quality(max_reflections: int, threshold: int):
    def route(state: AgentState) -> Literal["remediate", "attribute_sources", "__end__"]:
        if state.get("error"):
            return END
        quality = state.get("quality_assessment") or {}
        if not quality:  # quality check disabled
            return "attribute_sources"
        weak = int(quality.get("overall_score", 0)) < threshold
        if weak and state.get("reflection_count", 0) < max_reflections:
            return "remediate"
        return "attribute_sources"

    return route


def route_after_remediation(state: AgentState) -> Literal["synthesize", "attribute_sources", "__end__"]:
    if state.get("error"):
        return END
    return "synthesize" if state.get("remediation_instructions") else "attribute_sources"


def proceed_to(target: str):
    """A plain edge that still stops on a critical error."""

    def route(state: AgentState) -> str:
        return END if state.get("error") else target

    route.__name__ = f"to_{target}"
    return route
