"""Why a reference was followed or skipped is recorded as a catalogue key with its values; the front ends word it
in the reader's language, and a record from before keys (or a model's own words) is shown as it is."""

from __future__ import annotations

from rabbithole_lab.messages.catalogue import run_text
from rabbithole_lab.messages.reasons import edge_reason, stop_reason
from rabbithole_lab.records import Reason, ReferenceEdge


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
