"""Claims the answer cannot back are removed and named: an invented source, a quotation on the wrong page, and
a paraphrase passed off as a quotation (text written for these tests)."""

from __future__ import annotations

from rabbithole_lab.reasoning.checks.claim_check import checked_answer
from rabbithole_lab.records import ChunkWithInfo

PAGE_FOUR = "(1) Der Betreiber führt für jeden Kran ein Kranbuch. "
PAGE_FIVE = "(2) Das Kranbuch ist zehn Jahre lang aufzubewahren."
SOURCE = ChunkWithInfo(chunk_text=PAGE_FOUR + PAGE_FIVE, document="KranV.pdf", page=4, page_end=5,
                       chunk_id="k1", section="§ 7", page_map=f"0:4,{len(PAGE_FOUR)}:5")


def test_a_claim_that_stands_is_kept():
    answer = "**Ergebnis:** „(2) Das Kranbuch ist zehn Jahre lang aufzubewahren.“ [KranV.pdf, S. 5]"
    checked = checked_answer(answer, [SOURCE])
    assert checked.answer == answer and checked.invented == []


def test_an_invented_source_a_wrong_page_and_a_paraphrase_are_removed_and_named():
    good = "Das Kranbuch ist aufzubewahren: „(2) Das Kranbuch ist zehn Jahre lang aufzubewahren.“ [KranV.pdf, S. 5]"
    invented = "Kranführer brauchen eine Lizenz [Lizenzordnung.pdf, S. 3]."
    wrong_page = "„(2) Das Kranbuch ist zehn Jahre lang aufzubewahren.“ [KranV.pdf, S. 4]"
    paraphrase = "„Das Kranbuch muss eine Dekade aufbewahrt werden.“ [KranV.pdf, S. 5]"
    answer = "\n".join([good, invented, wrong_page, paraphrase])
    checked = checked_answer(answer, [SOURCE])
    assert checked.answer.splitlines()[0] == good
    for removed in ("Lizenz", "Dekade"):
        assert removed not in checked.answer
    assert "[KranV.pdf, S. 4]" not in checked.answer
    assert len(checked.invented) == 3
    assert [entry.split(":")[0] for entry in checked.invented] == ["Lizenzordnung.pdf p. 3", "KranV.pdf p. 4",
                                                                  "KranV.pdf p. 5"]


def test_a_line_keeps_its_good_claims_when_one_of_them_is_removed():
    answer = ("„(1) Der Betreiber führt für jeden Kran ein Kranbuch.“ [KranV.pdf, S. 4] "
              "„Der Kran darf nie überlastet werden.“ [KranV.pdf, S. 4]")
    checked = checked_answer(answer, [SOURCE])
    assert checked.answer == "„(1) Der Betreiber führt für jeden Kran ein Kranbuch.“ [KranV.pdf, S. 4]"
    assert checked.invented == ["KranV.pdf p. 4: quotation not found"]
