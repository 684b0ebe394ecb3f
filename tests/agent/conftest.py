"""Agent fixtures: services over the demo KB with the extractive reasoner or a scripted fake LLM."""

from __future__ import annotations

import pytest

from rabbithole_lab.agent.services import Services
from rabbithole_lab.agent.session import ResearchSession
from rabbithole_lab.reasoning.extractive.extractive_reasoner import ExtractiveReasoner
from rabbithole_lab.reasoning.llm.llm_reasoner import LLMReasoner
from rabbithole_lab.settings import load_settings
from tests.conftest import DEMO_KB
from tests.scripted_fake import ScriptedFakeChatModel, default_script

GERMAN_QUESTION = "Welche Grenzwerte gelten für beruflich exponierte Personen bei Quantenstrahlung?"
ENGLISH_QUESTION = "How are detectors for quantum radiation calibrated?"
# a question context smaller than the demo KB: on the whole of it every planned task's search finds only what the
# question's own context holds, so the plan holds the question alone; with this, planned tasks that add are proposed
SMALL_QUESTION_CONTEXT = {"question_context_chars": 1000}


@pytest.fixture
def extractive_services(settings, demo_kb):
    return Services(settings, demo_kb, ExtractiveReasoner(demo_kb.index.embedder), DEMO_KB)


def services_with(demo_kb, reasoner=None, **overrides) -> Services:
    settings = load_settings(env_file=None, **overrides)
    reasoner = reasoner or ExtractiveReasoner(demo_kb.index.embedder)
    return Services(settings, demo_kb, reasoner, DEMO_KB)


def fake_llm(script: dict | None = None, language: str = "de") -> tuple[LLMReasoner, ScriptedFakeChatModel]:
    model = ScriptedFakeChatModel(script=default_script(language) | (script or {}))
    return LLMReasoner(model, max_retries=1, backoff_s=0.0), model


@pytest.fixture
def session_factory(tmp_path):
    opened: list[ResearchSession] = []

    def make(services: Services, thread_id: str | None = None, **kwargs) -> ResearchSession:
        session = ResearchSession(services, tmp_path / "sessions.sqlite", thread_id=thread_id, **kwargs)
        opened.append(session)
        return session

    yield make
    for session in opened:
        session.close()
