"""Prompt format rules and language detection (AC-1.1)."""

from __future__ import annotations

import json
import re
import string

import pytest

from rabbithole_lab import prompts
from rabbithole_lab.language.detection import detect_language
from tests.conftest import CORPUS, CORPUS_MISSING


@pytest.mark.parametrize("name", sorted(prompts.ALL_PROMPTS))
def test_every_prompt_has_four_sections_in_order(name):
    text = prompts.ALL_PROMPTS[name]
    positions = [text.find(f"### {section}") for section in ("Task", "Input", "Rules", "Output format")]
    assert all(p >= 0 for p in positions), name
    assert positions == sorted(positions), name


@pytest.mark.parametrize("name", sorted(prompts.ALL_PROMPTS))
def test_content_prompts_take_language_and_format_cleanly(name):
    text = prompts.ALL_PROMPTS[name]
    fields = {f for _, f, _, _ in string.Formatter().parse(text) if f}
    if name in prompts.LANGUAGE_EXEMPT:
        assert "language" not in fields
    else:
        assert "language" in fields
    filled = text.format(**{f: "X" for f in fields})
    # the output format example is literal JSON once formatted
    example = filled.split("### Output format", 1)[1]
    assert "{" in example and "{{" not in example


def test_all_prompts_are_collected():
    assert len(prompts.ALL_PROMPTS) >= 16
    assert "SYNTHESIS_PROMPT" in prompts.ALL_PROMPTS


def test_language_detection_on_the_benchmark_questions_is_above_95_percent():
    path = CORPUS / "questions.dev.jsonl"
    if not path.is_file():
        pytest.skip(CORPUS_MISSING)
    rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    correct = sum(detect_language(row["question"]) == row["language"] for row in rows)
    assert len(rows) >= 20
    assert correct / len(rows) > 0.95


@pytest.mark.parametrize("text, expected", [
    ("Welche Dosisgrenzwerte gelten für beruflich exponierte Personen?", "de"),
    ("Which dose limits apply to occupationally exposed workers?", "en"),
    ("Wie wird ein Detektor kalibriert?", "de"),
    ("How is a detector calibrated according to section 4.2?", "en"),
    ("", "de"),
    ("§ 78 12", "de"),
])
def test_language_detection_examples(text, expected):
    assert detect_language(text) == expected


def test_no_prompt_is_defined_outside_prompts_module():
    """Every '### Task' prompt text lives in prompts.py (the seeds' prompt-management rule)."""
    from pathlib import Path

    package = Path(prompts.__file__).parent
    offenders = [p for p in package.rglob("*.py") if p.name != "prompts.py" and re.search(r"### Task", p.read_text())]
    assert offenders == []
