"""The research graph (DESIGN.md §4). `build_graph` returns the uncompiled builder; the caller adds
the checkpointer and runs it with the services as LangGraph's runtime context:
`build_graph(settings).compile(checkpointer=SqliteSaver(...)).stream(input, config, context=services)`.

hitl_init -> hitl_generate_queries -> hitl_retrieve_chunks -> hitl_analyze_retrieval
  -> (hitl_finalize on convergence | hitl_generate_questions -> hitl_process_response [interrupt]
  -> (loop | hitl_finalize))
  -> generate_todo -> hitl_approve_todo [interrupt] -> process_hitl_todo -> execute_task -> adapt_todo (loops)
  -> validate_relevance -> synthesize -> quality_check -> (remediate -> synthesize | attribute_sources) -> END

Every node leaves by a `Command` (open_deep_research's shape): its update and the next node, which its pure
router (agent/routing.py) reads off the state after the update; the graph has no edges but the one from START.
A node that fails (the LLM cannot be reached, the knowledge base is gone, ...) leaves by
`Command(goto=END)` with `error` and `failed_node` recorded, so no router looks for an error;
`ResearchSession.resume()` re-runs that node from the checkpoint. The graph's input and output are typed
(`ResearchInput`, `ResearchOutput` in agent/state.py).
"""

from __future__ import annotations

import logging
import typing
from collections.abc import Callable

from langgraph.errors import GraphBubbleUp
from langgraph.graph import END, START, StateGraph
from langgraph.runtime import Runtime
from langgraph.types import Command

from rabbithole_lab.agent.nodes import attribution, drift_filter, human_in_loop, planning, run_tasks, synthesis
from rabbithole_lab.agent.routing import (
    proceed_to,
    route_after_analysis,
    route_after_quality,
    route_after_remediation,
    route_after_response,
    route_after_task,
)
from rabbithole_lab.agent.services import Services
from rabbithole_lab.agent.state import AgentState, ResearchInput, ResearchOutput
from rabbithole_lab.reasoning.base import ModelHostNotOllamaError, ReasonerUnavailableError
from rabbithole_lab.records import Notice, notice
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


def user_message(node: str, exc: Exception, store: str = "") -> Notice:
    """A readable error for the UI/CLI (a notice the front ends word); the technical detail stays in the log.
    `store`: the Chroma server's address when the index is one, named when it is what stopped answering."""
    if store.startswith("http") and not isinstance(exc, ReasonerUnavailableError) and _connection_lost(exc):
        return notice("chroma_unreachable", location=store, error=str(exc))
    if isinstance(exc, ModelHostNotOllamaError):
        return notice("llm_not_ollama", error=str(exc))
    if isinstance(exc, ReasonerUnavailableError):
        return notice("llm_unreachable", error=str(exc))
    return notice("step_failed", node=node, error=str(exc))


Node = Callable[[AgentState, Runtime[Services]], dict]
NODES: dict[str, Node] = {
    "hitl_init": human_in_loop.hitl_init,
    "hitl_generate_queries": human_in_loop.hitl_generate_queries,
    "hitl_retrieve_chunks": human_in_loop.hitl_retrieve_chunks,
    "hitl_analyze_retrieval": human_in_loop.hitl_analyze_retrieval,
    "hitl_generate_questions": human_in_loop.hitl_generate_questions,
    "hitl_process_response": human_in_loop.hitl_process_response,
    "hitl_finalize": human_in_loop.hitl_finalize,
    "generate_todo": planning.generate_todo,
    "hitl_approve_todo": planning.hitl_approve_todo,
    "process_hitl_todo": planning.process_hitl_todo,
    "execute_task": run_tasks.execute_task,
    "adapt_todo": planning.adapt_todo,
    "validate_relevance": drift_filter.validate_relevance,
    "synthesize": synthesis.synthesize,
    "quality_check": synthesis.quality_check,
    "remediate": synthesis.remediate,
    "attribute_sources": attribution.attribute_sources,
}


Router = Callable[[AgentState], str]


def routes(settings: Settings) -> dict[str, Router]:
    """Each node's router (`settings` fixes the quality loop's)."""
    return {
        "hitl_init": proceed_to("hitl_generate_queries"),
        "hitl_generate_queries": proceed_to("hitl_retrieve_chunks"),
        "hitl_retrieve_chunks": proceed_to("hitl_analyze_retrieval"),
        "hitl_analyze_retrieval": route_after_analysis,
        "hitl_generate_questions": proceed_to("hitl_process_response"),
        "hitl_process_response": route_after_response,
        "hitl_finalize": proceed_to("generate_todo"),
        "generate_todo": proceed_to("hitl_approve_todo"),
        "hitl_approve_todo": proceed_to("process_hitl_todo"),
        "process_hitl_todo": proceed_to("execute_task"),
        "execute_task": proceed_to("adapt_todo"),
        "adapt_todo": route_after_task,
        "validate_relevance": proceed_to("synthesize"),
        "synthesize": proceed_to("quality_check"),
        "quality_check": route_after_quality(settings.quality.max_reflections, settings.quality.threshold),
        "remediate": route_after_remediation,
        "attribute_sources": proceed_to(END),
    }


def destinations(router: Router) -> tuple[str, ...]:
    """Where a router may lead, by its `Literal` return type: the graph's drawing."""
    return typing.get_args(typing.get_type_hints(router)["return"])


def _failed(name: str, exc: Exception, state: AgentState, services: Services) -> Command:
    if isinstance(exc, ReasonerUnavailableError):
        logger.warning("Node %s stopped: %s", name, exc)
        message = user_message(name, exc)
    else:  # one line; the traceback with -v (a server gone mid-run gave 99 lines)
        logger.error("Node %s failed: %s: %s", name, type(exc).__name__, exc)
        logger.debug("Node %s failed", name, exc_info=True)
        message = user_message(name, exc, getattr(services.kb.index, "location", ""))
    return Command(goto=END, update={"error": message, "failed_node": name,
                                     "warnings": services.reasoner.drain_warnings()})


def _guarded(name: str, node: Node, route: Router) -> Callable[[AgentState, Runtime[Services]], Command]:
    def run(state: AgentState, runtime: Runtime[Services]) -> Command:
        services = runtime.context
        try:
            update = node(state, runtime)
        except GraphBubbleUp:  # interrupts and other control flow belong to LangGraph
            raise
        except Exception as exc:
            return _failed(name, exc, state, services)
        drained = services.reasoner.drain_warnings()
        if drained:
            update["warnings"] = [*update.get("warnings", []), *drained]
        # routers read keys their node sets whole (no reducer), so the state after the update is the merge
        return Command(goto=route({**state, **update}), update=update)

    run.__name__ = name
    return run


def build_graph(settings: Settings) -> StateGraph:
    """The uncompiled graph; run it with the services as its context:
    `graph.stream(input, config, context=services)`."""
    builder = StateGraph(AgentState, context_schema=Services, input_schema=ResearchInput,
                         output_schema=ResearchOutput)
    for name, route in routes(settings).items():
        builder.add_node(name, _guarded(name, NODES[name], route), destinations=destinations(route))
    builder.add_edge(START, "hitl_init")
    return builder
