"""The research graph (DESIGN.md §4). `build_graph` returns the uncompiled builder; the caller adds
the checkpointer and runs it with the services as LangGraph's runtime context:
`build_graph(settings).compile(checkpointer=SqliteSaver(...)).stream(input, config, context=services)`.

hitl_init -> hitl_generate_queries -> hitl_retrieve_chunks -> hitl_analyze_retrieval
  -> (hitl_finalize on convergence | hitl_generate_questions -> hitl_process_response [interrupt]
  -> (loop | hitl_finalize))
  -> generate_todo -> hitl_approve_todo [interrupt] -> process_hitl_todo -> execute_task -> adapt_todo (loops)
  -> validate_relevance -> synthesize -> quality_check -> (remediate -> synthesize | attribute_sources) -> END

A node that fails (the LLM cannot be reached, the knowledge base is gone, ...) records `error` and
`failed_node` and the graph ends; `ResearchSession.resume()` re-runs that node from the checkpoint.
"""

from __future__ import annotations

import logging
from collections.abc import Callable

from langgraph.errors import GraphBubbleUp
from langgraph.graph import END, START, StateGraph
from langgraph.runtime import Runtime

from rabbithole_lab.agent.nodes import attribution, planning, synthesis
from rabbithole_lab.agent.nodes import drift_filter as relevance
from rabbithole_lab.agent.nodes import human_in_loop as hitl
from rabbithole_lab.agent.nodes import run_tasks as research
from rabbithole_lab.agent.routing import (
    proceed_to,
    route_after_analysis,
    route_after_quality,
    route_after_remediation,
    route_after_response,
    route_after_task,
)
from rabbithole_lab.agent.services import Services
from rabbithole_lab.agent.state import AgentState
from rabbithole_lab.messages.catalogue import run_text
from rabbithole_lab.reasoning.base import ModelHostNotOllamaError, ReasonerUnavailableError
from rabbithole_lab.settings import Settings

logger = logging.getLogger(__name__)


def _connection_lost(exc: BaseException) -> bool:
    """A failure to reach a server (refused, reset, timed out), by the exception or one it was raised from."""
    while exc is not None:
        if isinstance(exc, ConnectionError | TimeoutError) or type(exc).__module__.split(".")[0] in ("httpx",
                                                                                                   "httpcore"):
            return True
        exc = exc.__cause__ or exc.__context__
    return False


def user_message(node: str, exc: Exception, language: str, store: str = "") -> str:
    """A readable error for the UI/CLI; the technical detail stays in the log. `store`: the Chroma server's
    address when the index is one, named when it is what stopped answering."""
    said = run_text(language)
    if store.startswith("http") and not isinstance(exc, ReasonerUnavailableError) and _connection_lost(exc):
        return said["chroma_unreachable"].format(location=store, error=exc)
    if isinstance(exc, ModelHostNotOllamaError):
        return said["llm_not_ollama"].format(error=exc)
    if isinstance(exc, ReasonerUnavailableError):
        return said["llm_unreachable"].format(error=exc)
    return said["step_failed"].format(node=node, error=exc)


Node = Callable[[AgentState, Runtime[Services]], dict]
NODES: dict[str, Node] = {
    "hitl_init": hitl.hitl_init,
    "hitl_generate_queries": hitl.hitl_generate_queries,
    "hitl_retrieve_chunks": hitl.hitl_retrieve_chunks,
    "hitl_analyze_retrieval": hitl.hitl_analyze_retrieval,
    "hitl_generate_questions": hitl.hitl_generate_questions,
    "hitl_process_response": hitl.hitl_process_response,
    "hitl_finalize": hitl.hitl_finalize,
    "generate_todo": planning.generate_todo,
    "hitl_approve_todo": planning.hitl_approve_todo,
    "process_hitl_todo": planning.process_hitl_todo,
    "execute_task": research.execute_task,
    "adapt_todo": planning.adapt_todo,
    "validate_relevance": relevance.validate_relevance,
    "synthesize": synthesis.synthesize,
    "quality_check": synthesis.quality_check,
    "remediate": synthesis.remediate,
    "attribute_sources": attribution.attribute_sources,
}


def _guarded(name: str, node: Node) -> Node:
    def run(state: AgentState, runtime: Runtime[Services]) -> dict:
        services = runtime.context
        try:
            update = node(state, runtime)
        except GraphBubbleUp:  # interrupts and other control flow belong to LangGraph
            raise
        except ReasonerUnavailableError as exc:
            logger.warning("Node %s stopped: %s", name, exc)
            return {"error": user_message(name, exc, state.get("detected_language", "de")), "failed_node": name,
                    "warnings": services.reasoner.drain_warnings()}
        except Exception as exc:  # one line; the traceback with -v (a server gone mid-run gave 99 lines)
            logger.error("Node %s failed: %s: %s", name, type(exc).__name__, exc)
            logger.debug("Node %s failed", name, exc_info=True)
            store = getattr(services.kb.index, "location", "")
            return {"error": user_message(name, exc, state.get("detected_language", "de"), store), "failed_node": name,
                    "warnings": services.reasoner.drain_warnings()}
        drained = services.reasoner.drain_warnings()
        if drained:
            update["warnings"] = [*update.get("warnings", []), *drained]
        return update

    run.__name__ = name
    return run


def build_graph(settings: Settings) -> StateGraph:
    """The uncompiled graph; run it with the services as its context:
    `graph.stream(input, config, context=services)`. `settings` fixes the quality loop's routing."""
    builder = StateGraph(AgentState, context_schema=Services)
    for name, node in NODES.items():
        builder.add_node(name, _guarded(name, node))

    def chain(source: str, target: str) -> None:
        builder.add_conditional_edges(source, proceed_to(target), [target, END])

    builder.add_edge(START, "hitl_init")
    chain("hitl_init", "hitl_generate_queries")
    chain("hitl_generate_queries", "hitl_retrieve_chunks")
    chain("hitl_retrieve_chunks", "hitl_analyze_retrieval")
    builder.add_conditional_edges("hitl_analyze_retrieval", route_after_analysis,
                                  ["hitl_generate_questions", "hitl_finalize", END])
    chain("hitl_generate_questions", "hitl_process_response")
    builder.add_conditional_edges("hitl_process_response", route_after_response,
                                  ["hitl_generate_queries", "hitl_finalize", END])
    chain("hitl_finalize", "generate_todo")
    chain("generate_todo", "hitl_approve_todo")
    chain("hitl_approve_todo", "process_hitl_todo")
    chain("process_hitl_todo", "execute_task")
    chain("execute_task", "adapt_todo")
    builder.add_conditional_edges("adapt_todo", route_after_task, ["execute_task", "validate_relevance", END])
    chain("validate_relevance", "synthesize")
    chain("synthesize", "quality_check")
    builder.add_conditional_edges(
        "quality_check", route_after_quality(settings.quality.max_reflections, settings.quality.threshold),
        ["remediate", "attribute_sources", END])
    builder.add_conditional_edges("remediate", route_after_remediation, ["synthesize", "attribute_sources", END])
    builder.add_edge("attribute_sources", END)
    return builder
