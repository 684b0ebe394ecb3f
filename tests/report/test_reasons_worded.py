"""Why a reference was followed or skipped is recorded as a catalogue key with its values; the front ends word it
in the reader's language, and a record from before keys (or a model's own words) is shown as it is."""

from __future__ import annotations

from rabbithole_lab.messages.catalogue import run_text
from rabbithole_lab.messages.reasons import edge_reason, notice_text, stop_reason
from rabbithole_lab.records import Reason, ReferenceEdge, notice, notice_or_words


def _edge(reason: Reason) -> dict:
    return ReferenceEdge(from_chunk="c1", type="legal_section", target="§ 999 XG", depth=1, decision="skipped",
                         **reason.edge_fields()).model_dump()


def test_a_key_is_worded_in_the_readers_language_with_its_values():
    edge = _edge(Reason("section_not_found", {"law": "XG"}))
    german, english = edge_reason(edge, "de"), edge_reason(edge, "en")
    assert german == run_text("de")["section_not_found"].format(law="XG")
    assert english == run_text("en")["section_not_found"].format(law="XG")
    assert german != english and "XG" in german and "XG" in english
    assert edge["reason"] == ""  # the record holds no words of either language


def test_a_models_words_and_a_record_from_before_keys_are_shown_as_they_are():
    assert edge_reason(_edge(Reason(text="the cited rule sets the limit")), "de") == "the cited rule sets the limit"
    assert edge_reason({"reason": "bereits besucht"}, "en") == "bereits besucht"
    assert stop_reason("Token-Budget erschöpft", "en") == "Token-Budget erschöpft"


def test_a_key_missing_a_value_or_unknown_does_not_break_the_view():
    assert edge_reason({"reason_key": "converged", "reason_values": {}}, "de") == "converged"
    assert edge_reason({"reason_key": "no_such_key", "reason": ""}, "en") == "no_such_key"
    assert stop_reason({"key": "token_budget", "values": {}}, "en") == run_text("en")["token_budget"]


def test_an_empty_reason_is_false_and_a_key_or_words_are_true():
    assert not Reason() and Reason("chunk_limit") and Reason(text="weil")


def test_a_notice_is_worded_with_its_values_and_a_notice_inside_it():
    ended = notice("hitl_ended", reason=notice("hitl_convergence"))
    german, english = notice_text(ended, "de"), notice_text(ended, "en")
    assert german == run_text("de")["hitl_ended"].format(reason=run_text("de")["hitl_convergence"])
    assert english == run_text("en")["hitl_ended"].format(reason=run_text("en")["hitl_convergence"])
    assert german != english


def test_a_notice_without_a_sentence_shows_its_words_and_words_stay_words():
    unknown = notice_or_words("reason_no_such_key", {"url": "http://x"}, "Ollama at http://x does not answer")
    assert notice_text(unknown, "de") == "Ollama at http://x does not answer"
    assert notice_text("Aufgabe 1/3: Grenzwerte", "en") == "Aufgabe 1/3: Grenzwerte"  # a run saved before notices
    # a notice whose values do not fill its sentence shows its key rather than failing the front end
    assert notice_text(notice("task_progress", n=1), "de") == "task_progress"
