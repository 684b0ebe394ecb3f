"""The answer's selection: cover what the question and the researcher ask for, then fill by score within the
budgets; the lead states it first (text written for these tests; scores set by hand, no ranker)."""

from __future__ import annotations

from rabbithole_lab.evidence.pages import find_span
from rabbithole_lab.reasoning.base import AnswerTask
from rabbithole_lab.reasoning.extractive.asked_kinds import KINDS, asked_kinds, carried_kinds
from rabbithole_lab.reasoning.extractive.writer.answer import Provision, Sentence, links_of, read_links
from rabbithole_lab.reasoning.extractive.writer.answer_candidates import AnswerContext
from rabbithole_lab.reasoning.extractive.writer.answer_selection import (
    UNCHAINED_FILL_SHARE,
    Selection,
    Statement,
    select,
)
from rabbithole_lab.reasoning.extractive.writer.answer_text import statement_cost, written_answer
from rabbithole_lab.reasoning.extractive.writer.excerpts import excerpt
from rabbithole_lab.reasoning.extractive.writer.provision_score import ScoredProvision, Verdict
from rabbithole_lab.reasoning.extractive.writer.sentence_ranker import Candidate
from rabbithole_lab.reasoning.text import points_back
from rabbithole_lab.records import ChunkWithInfo


def _provision(section: str, texts: list[str], depth: int = 0, chunk_id: str = "") -> Provision:
    chunk = ChunkWithInfo(chunk_text=" ".join(texts), document="KranV.pdf", page=1, chunk_id=chunk_id or section,
                          section=section, depth=depth)
    provision = Provision("KranV.pdf", section, [chunk], [chunk])
    provision.sentences = [Sentence(text, chunk, 0.0, order, continues=order > 0 and points_back(text))
                           for order, text in enumerate(texts)]
    return provision


def _context(question: str, scored: list[tuple[Provision, list[float]]], chains: list[dict] | None = None,
             parts: list[str] | None = None) -> AnswerContext:
    candidates = []
    for provision, scores in scored:
        for sentence, score in zip(provision.sentences, scores, strict=True):
            candidates.append(Candidate(sentence, provision, {"cited_paragraph": 0.0},
                                        kinds=frozenset(carried_kinds(sentence.text, set(KINDS))), score=score))
    parts = parts or [question]
    return AnswerContext(sorted(candidates, key=lambda c: -c.score), [p for p, _ in scored], scored[0][0],
                         links_of(chains or []), read_links(chains or []), parts, [asked_kinds(p) for p in parts])


def _select(context: AnswerContext, lead: int = 1_200, whole: int = 4_000, additions=()) -> Selection:
    return select(context, list(additions), lambda statement: statement_cost(statement, "de"), lead, whole)


def _texts(statements) -> list[str]:
    return [s.text for statement in statements for s in statement.sentences]


def test_the_lead_states_what_the_question_asks_even_when_another_sentence_scores_higher():
    logbook = _provision("§ 3", ["Der Betreiber führt ein Logbuch über jeden Kran.",
                                 "Das Logbuch ist zehn Jahre lang aufzubewahren.",
                                 "Das Logbuch enthält die Prüfungen."])
    context = _context("Wie lange ist das Logbuch aufzubewahren?", [(logbook, [0.9, 0.4, 0.6])])
    selection = _select(context)
    assert _texts(selection.lead)[0] == "Das Logbuch ist zehn Jahre lang aufzubewahren."
    # asked for the rule, no kind: the best sentence opens
    plain = _select(_context("Was regelt das Logbuch?", [(logbook, [0.9, 0.4, 0.6])]))
    assert _texts(plain.lead)[0] == "Der Betreiber führt ein Logbuch über jeden Kran."


def test_each_part_of_the_question_gets_its_statement_in_the_lead():
    crane = _provision("§ 6", ["Der Kran ist erneut zu prüfen, wenn er umgebaut wurde.",
                               "Die Prüfung entfällt, wenn der Kran stillgelegt ist.",
                               "Die Behörde entscheidet spätestens vier Wochen nach dem Antrag.",
                               "Der Prüfer ist unabhängig."])
    question = "Unter welchen Voraussetzungen ist der Kran zu prüfen, und bis wann entscheidet die Behörde?"
    parts = ["Unter welchen Voraussetzungen ist der Kran zu prüfen", "bis wann entscheidet die Behörde"]
    selection = _select(_context(question, [(crane, [0.8, 0.7, 0.1, 0.6])], parts=parts))
    lead = _texts(selection.lead)
    assert lead[:2] == ["Der Kran ist erneut zu prüfen, wenn er umgebaut wurde.",
                        "Die Behörde entscheidet spätestens vier Wochen nach dem Antrag."]


def test_what_the_decisive_provision_cites_is_quoted_as_its_chain_with_the_paragraph_named():
    citing = _provision("§ 4", ["Der Betreiber meldet jede Überlast nach § 9 Absatz 2 der Aufsicht."])
    cited = _provision("§ 9", ["(1) Die Aufsicht führt ein Register.",
                               "(2) Die Meldung ist binnen drei Tagen schriftlich zu erstatten."], depth=1)
    unrelated = _provision("§ 12", ["Die Aufsicht kann Kräne jederzeit besichtigen."])
    chains = [{"citing": ["KranV.pdf", "§ 4"], "cited": [["KranV.pdf", "§ 9"]],
               "paragraphs": [["KranV.pdf", "§ 9", ["2"]]]}]
    context = _context("Was muss der Betreiber bei Überlast tun?",
                       [(citing, [0.9]), (unrelated, [0.5]), (cited, [0.2, 0.05])], chains)
    context.candidates[[c.text for c in context.candidates].index(cited.sentences[1].text)].features[
        "cited_paragraph"] = 1.0
    cited.sentences[1].paragraphs = frozenset({"2"})
    selection = _select(context)
    chained = [s for s in selection.statements() if s.source is not None]
    assert selection.lead[0].provision.section == "§ 4"
    assert [(s.provision.section, s.source.section) for s in chained] == [("§ 9", "§ 4")]
    # the paragraph the reference names, though the other paragraph scores higher
    assert _texts(chained) == ["(2) Die Meldung ist binnen drei Tagen schriftlich zu erstatten."]
    # scoring far below the best, it is quoted as the chain below the lead; scoring near it, in the lead
    assert chained[0] in selection.body
    answer = "\n".join(written_answer(selection, [], "de"))
    assert any(line.startswith("**§ 4 KranV → § 9 KranV**: „(2) Die Meldung") for line in answer.splitlines())
    near = _context("Was muss der Betreiber bei Überlast tun?", [(citing, [0.9]), (unrelated, [0.5]),
                                                                 (cited, [0.2, 0.85])], chains)
    near.candidates[[c.text for c in near.candidates].index(cited.sentences[1].text)].features[
        "cited_paragraph"] = 1.0
    leading = _select(near)
    assert [(s.provision.section, s.source.section if s.source else None) for s in leading.lead[:2]] == [
        ("§ 4", None), ("§ 9", "§ 4")]
    lines = written_answer(leading, [], "de")
    assert "§ 4 KranV → § 9 KranV" in lines[0]  # named decisive with its chain
    assert lines[2].startswith("§ 4 KranV → § 9 KranV: „(2) Die Meldung")


def test_a_cited_rule_the_lead_quotes_already_is_the_statement_its_chain_brought():
    """The chain quoted the target's next free sentence (its exception for apprentices) while the target's rule,
    quoted for a part of the question, stood apart without the chain."""
    citing = _provision("§ 4", ["Der Betreiber sorgt dafür, dass die Grenzwerte nach § 9 eingehalten werden."])
    cited = _provision("§ 9", ["(1) Der Grenzwert beträgt 20 Einheiten im Kalenderjahr.",
                               "(3) Für Lehrlinge gilt ein Grenzwert von einer Einheit."], depth=1)
    chains = [{"citing": ["KranV.pdf", "§ 4"], "cited": [["KranV.pdf", "§ 9"]]}]
    context = _context("Welcher Grenzwert gilt im Kalenderjahr?", [(citing, [0.7]), (cited, [0.9, 0.6])], chains)
    # the verdict names the citing provision; the target's rule is the question's best sentence
    context.verdict = Verdict([ScoredProvision(citing, {}, 0.8), ScoredProvision(cited, {}, 0.4)], stated=True)
    selection = _select(context)
    chained = [s for s in selection.statements() if s.source is not None]
    assert [(s.provision.section, s.source.section) for s in chained] == [("§ 9", "§ 4")]
    assert _texts(chained) == ["(1) Der Grenzwert beträgt 20 Einheiten im Kalenderjahr."]
    lines = written_answer(selection, [], "de")
    assert any(line.startswith("§ 4 KranV → § 9 KranV: „(1) Der Grenzwert") for line in lines), lines


def test_the_rule_that_sends_to_the_named_provision_stands_beside_the_verdict_in_the_lead():
    """The verdict names the annex holding the figure; the rule that sends to it for the case ("… nach Anlage 2")
    is quoted right after it in the lead, though another sentence answers the question's part better."""
    sending = _provision("§ 7", ["Wer einen Kran umbaut, lässt ihn nach Anlage 2 prüfen.",
                                 "Der Umbau ist der Aufsicht anzuzeigen."])
    annex = _provision("Anlage 2", ["Die Prüfung umfasst die Tragkraft und die Bremsen."], depth=1)
    other = _provision("§ 3", ["Die Prüfung eines Krans ist schriftlich festzuhalten."])
    chains = [{"citing": ["KranV.pdf", "§ 7"], "cited": [["KranV.pdf", "Anlage 2"]]}]
    context = _context("Was umfasst die Prüfung eines umgebauten Krans?",
                       [(annex, [0.9]), (other, [0.8]), (sending, [0.75, 0.3])], chains)
    context.verdict = Verdict([ScoredProvision(annex, {}, 0.8), ScoredProvision(sending, {}, 0.6)], stated=True)
    lead = _texts(_select(context).lead)
    assert lead[:2] == ["Die Prüfung umfasst die Tragkraft und die Bremsen.",
                        "Wer einen Kran umbaut, lässt ihn nach Anlage 2 prüfen."], lead
    # a rule that only scores far below the best is not brought into the lead for it
    context = _context("Was umfasst die Prüfung eines umgebauten Krans?",
                       [(annex, [0.9]), (other, [0.8]), (sending, [0.1, 0.05])], chains)
    context.verdict = Verdict([ScoredProvision(annex, {}, 0.8), ScoredProvision(sending, {}, 0.6)], stated=True)
    assert "Wer einen Kran umbaut, lässt ihn nach Anlage 2 prüfen." not in _texts(_select(context).lead)[:2]


def test_a_verdict_the_check_is_unsure_of_keeps_its_closest_rival_in_the_lead(monkeypatch):
    """The verdict stays; when the check's table believes it less than even, the rival it believes next is quoted
    in the lead too, said as such; a verdict it is sure of stands alone."""
    from rabbithole_lab.reasoning.extractive.writer import answer_selection
    from rabbithole_lab.reasoning.extractive.writer.provision_score import ProvisionWeights

    named = _provision("§ 5", ["Wird die Tragkraft überschritten, ist der Kran stillzulegen."])
    rival = _provision("§ 6", ["Nach einer Überlast darf der Kran nur mit Zustimmung der Aufsicht weiter betrieben "
                               "werden."])
    other = _provision("§ 2", ["Ein Kran ist jährlich zu prüfen."])
    question = "Was gilt, wenn die Tragkraft eines Krans überschritten wurde?"
    check = ProvisionWeights(0.0, {"relevance": 5.0}, model="softmax")
    monkeypatch.setattr(answer_selection, "fitted_check_weights", lambda: check)

    def lead_lines(relevance: tuple[float, float, float]) -> list[str]:
        context = _context(question, [(named, [0.9]), (rival, [0.5]), (other, [0.4])])
        context.verdict = Verdict([ScoredProvision(p, {"relevance": r}, 0.9 - i / 10) for i, (p, r)
                                   in enumerate(zip((named, rival, other), relevance, strict=True))], stated=True)
        lines = written_answer(_select(context), [], "de")
        return lines[:next((i for i, line in enumerate(lines) if i and not line.strip()), len(lines))]

    unsure = lead_lines((1.0, 0.95, 0.9))  # three provisions the check can hardly tell apart
    assert unsure[0] == "**Ergebnis:** Maßgeblich ist § 5 KranV."
    assert any(line.startswith("In Betracht kommt auch § 6 KranV: „Nach einer Überlast") for line in unsure), unsure
    sure = lead_lines((1.0, 0.2, 0.1))
    assert sure[0] == "**Ergebnis:** Maßgeblich ist § 5 KranV."
    assert not any("In Betracht kommt auch" in line for line in sure), sure


def test_a_part_reached_by_a_reference_is_quoted_with_the_sentence_making_it_below_the_lead():
    checks = _provision("§ 2", ["Der Kran ist jährlich zu prüfen.", "Die Prüfung umfasst die Bremsen.",
                                "Der Prüfer führt ein Prüfbuch."])
    citing = _provision("§ 4", ["Eine Überlast ist nach § 9 der Aufsicht zu melden."])
    cited = _provision("§ 9", ["(2) Die Meldung ist binnen drei Tagen zu erstatten."], depth=1)
    chains = [{"citing": ["KranV.pdf", "§ 4"], "cited": [["KranV.pdf", "§ 9"]]}]
    question = "Wie oft ist der Kran zu prüfen, und bis wann ist eine Überlast zu melden?"
    parts = ["Wie oft ist der Kran zu prüfen", "bis wann ist eine Überlast zu melden"]
    making = "Eine Überlast ist nach § 9 der Aufsicht zu melden."

    def context(citing_score: float):  # the citing sentence scores below the fills
        return _context(question, [(checks, [0.9, 0.5, 0.4]), (citing, [citing_score]), (cited, [0.6])], chains,
                        parts=parts)

    # the lead holds the two parts' statements; the fills and the chain stand below it
    lead_max = sum(statement_cost(Statement(provision, provision.sentences[:1], "part"), "de")
                   for provision in (checks, cited))
    spacious = _select(context(0.35), lead=lead_max, whole=10_000)
    assert _texts(spacious.lead) == ["Der Kran ist jährlich zu prüfen.",
                                     "(2) Die Meldung ist binnen drei Tagen zu erstatten."]
    assert making in _texts(spacious.body)
    # a full answer makes room for the chain by dropping its weakest fill
    size = sum(statement_cost(item, "de") for item in spacious.statements())
    tight = _select(context(0.35), lead=lead_max, whole=size - 5)
    assert _texts(tight.lead) == _texts(spacious.lead)
    texts = _texts(tight.statements())
    assert making in texts and "Die Prüfung umfasst die Bremsen." in texts
    assert "Der Prüfer führt ein Prüfbuch." not in texts
    # a citing sentence scoring below what the fill takes is not worth the room
    assert making not in _texts(_select(context(0.2), lead=lead_max, whole=10_000).statements())


def test_a_link_only_read_in_the_text_is_followed_only_where_the_quoted_sentence_says_it():
    citing = _provision("§ 4", ["Der Betreiber prüft den Kran.", "Die Fristen richten sich nach Anlage 2."])
    annex = _provision("Anlage 2", ["Die Prüffrist beträgt zwölf Monate."], depth=0)
    read_only = [{"citing": ["KranV.pdf", "§ 4"], "cited": [["KranV.pdf", "Anlage 2"]], "phrases": ["Anlage 2"]}]
    said = _select(_context("Was prüft der Betreiber?", [(citing, [0.9, 0.2]), (annex, [0.1])], read_only),
                   whole=200)
    assert all(s.source is None for s in said.statements())  # the quoted sentence does not say "Anlage 2"
    says = _select(_context("Was prüft der Betreiber?", [(citing, [0.2, 0.9]), (annex, [0.1])], read_only),
                   whole=200)
    assert [s.source.section for s in says.statements() if s.source] == ["§ 4"]


def test_a_statement_is_quoted_whole_with_the_sentence_that_points_back_at_it():
    repair = _provision("§ 7", ["(1) Der Betreiber lässt jeden Kran vor der ersten Inbetriebnahme abnehmen.",
                                "Satz 1 gilt nicht für den Hafenkran Nord.",
                                "(2) Ändert der Betreiber die Tragwerkspläne, ist die Abnahme zu wiederholen."])
    selection = _select(_context("Wann ist ein Kran abzunehmen?", [(repair, [0.9, 0.1, 0.3])]), lead=120)
    assert _texts(selection.lead)[:2] == [repair.sentences[0].text, repair.sentences[1].text]
    assert len(_texts(selection.statements())) == len(set(_texts(selection.statements())))  # each once


def test_the_budgets_hold_and_the_fill_stops_at_sentences_far_below_the_best():
    texts = [f"Der Kran Nummer {n} wird jährlich von einem Sachverständigen im Hafen geprüft." for n in range(40)]
    many = _provision("§ 8", texts)
    scores = [0.9 - 0.01 * n for n in range(40)]
    selection = _select(_context("Wie oft wird der Kran geprüft?", [(many, scores)]), lead=300, whole=1_000)
    answer = "\n".join(written_answer(selection, [], "de"))
    assert len(answer) <= 1_000 + 200  # the framing line and headings beyond the statements
    lead_cost = sum(statement_cost(s, "de") for s in selection.lead)
    assert lead_cost <= 300
    low = _select(_context("Wie oft?", [(many, [0.9] + [0.05] * 39)]), whole=4_000)
    assert len(low.statements()) == 1  # the rest scores below the fill's share of the best


def test_the_fill_adds_to_the_entrys_chain_and_spends_only_its_share_of_characters_besides():
    """Provisions outside the entry's chain score as well as the entry's own second sentence: the fill takes the
    entry's sentence, and of the others only as much text as its share of the answer's budget, best first: six
    short passages, but not one long one that would take more than the share alone."""
    entry = _provision("§ 2", ["Der Kran ist jährlich zu prüfen.", "Die Prüfung nimmt ein Sachverständiger vor."])
    others = [(_provision(f"§ {n}", [f"Der Kran Nummer {n} steht im Hafen und wird dort gewartet."]), [0.8 - n / 100])
              for n in range(10, 16)]
    long = " ".join(f"Der Hafenkran {n} wird nach jedem Sturm von der Hafenbehörde besichtigt" for n in range(30))
    scored = [(entry, [0.9, 0.8]), (_provision("§ 9", [long + "."]), [0.85]), *others]

    def off_chain(whole: int) -> list[Statement]:
        selection = _select(_context("Wie oft ist der Kran zu prüfen?", scored), whole=whole)
        assert "Die Prüfung nimmt ein Sachverständiger vor." in _texts(selection.statements())
        return [statement for statement in selection.statements() if statement.provision is not entry]

    roomy = off_chain(4_000)
    assert len(long) > 4_000 * UNCHAINED_FILL_SHARE
    assert {statement.provision.section for statement in roomy} == {f"§ {n}" for n in range(10, 16)}
    tight = off_chain(1_000)  # the share of a smaller budget: the best of the short passages only
    assert 0 < len(tight) < len(roomy)
    assert sum(statement_cost(statement, "de") for statement in tight) <= 1_000 * UNCHAINED_FILL_SHARE
    assert {statement.provision.section for statement in tight} == {f"§ {n}" for n in range(10, 10 + len(tight))}


def test_what_the_researcher_added_is_covered():
    crane = _provision("§ 5", ["Der Kran wird jährlich geprüft.", "Für Schwimmkräne gilt eine Frist von sechs "
                                                                   "Monaten."])
    selection = _select(_context("Wie oft wird der Kran geprüft?", [(crane, [0.9, 0.1])]), additions=["Schwimmkräne"])
    assert "Für Schwimmkräne gilt eine Frist von sechs Monaten." in _texts(selection.lead)


def test_a_task_section_says_only_what_the_lead_lacks():
    crane = _provision("§ 5", ["Der Kran wird jährlich geprüft."], chunk_id="c1")
    fees = _provision("§ 11", ["Für die Prüfung wird eine Gebühr erhoben.", "Die Gebühr trägt der Betreiber."],
                      chunk_id="c2")
    tasks = [AnswerTask(1, "Prüfpflicht", ["Prüfung Kran"], {"c1"}), AnswerTask(2, "Gebühren", ["Gebühr"], {"c2"}),
             AnswerTask(3, "Haftung", ["Haftung Kran"], set())]
    selection = _select(_context("Wie oft wird der Kran geprüft?", [(crane, [0.9]), (fees, [0.5, 0.4])]), lead=60)
    lines = written_answer(selection, tasks, "de")
    answer = "\n".join(lines)
    assert "Aufgabe 1" not in answer  # everything it found is in the lead
    assert "Aufgabe 2" in answer and "Gebühr trägt der Betreiber" in answer
    assert "Aufgabe 3" in answer and "Haftung Kran" in answer  # found nothing: says what was searched
    assert answer.count("Der Kran wird jährlich geprüft.") == 1


def test_an_english_question_gets_english_framing_and_verbatim_quotes():
    crane = _provision("§ 5", ["Der Kran wird jährlich geprüft."])
    selection = _select(_context("How often is the crane inspected?", [(crane, [0.9])]))
    lines = written_answer(selection, [], "en")
    assert lines[0].startswith("**In short:**") and "§ 5 KranV" in lines[0]
    assert "“Der Kran wird jährlich geprüft.”" in lines[1]


def test_a_numbered_chapter_of_a_document_is_not_named_as_a_provision():
    chunk = ChunkWithInfo(chunk_text="Detectors are calibrated yearly.", document="Detector_Guide.pdf", page=1,
                          chunk_id="g1", section="1")
    guide = Provision("Detector_Guide.pdf", "1", [chunk], [chunk])
    assert guide.label == "Detector_Guide, 1"
    assert _provision("§ 5", ["Der Kran wird jährlich geprüft."]).label == "§ 5 KranV"


def test_a_long_enumeration_is_written_as_its_excerpt_and_leaves_the_lead_room_for_the_next_statement():
    items = ", ".join(f"{n}. Prüfung der {part} durch einen Sachkundigen mit schriftlichem Bericht an den Betreiber"
                      for n, part in enumerate(["Seile", "Bremsen", "Haken", "Schienen", "Endschalter"], start=1))
    listing = f"Der Betreiber hat vor der ersten Inbetriebnahme des Krans folgende Prüfungen zu veranlassen: {items}."
    cranes = _provision("§ 4", [listing, "Die Prüfung der Bremsen ist jährlich zu wiederholen."])
    question = "Wer prüft die Bremsen, und wie oft?"
    context = _context(question, [(cranes, [0.9, 0.8])])
    shown = excerpt(listing, lambda texts: [float("Bremsen" in text) for text in texts])
    context.excerpts = {id(cranes.sentences[0]): shown}
    lead_max = 400  # the whole list and the second sentence would not fit; the excerpt and it do
    assert _cost(context, cranes, whole=True) > lead_max
    selection = select(context, [], lambda statement: statement_cost(statement, "de", context.excerpts),
                       lead_max, 4_000)
    answer = "\n".join(written_answer(selection, [], "de"))
    assert shown in answer and listing not in answer and "Seile" not in answer
    assert sorted(_texts(selection.lead)) == sorted([listing, "Die Prüfung der Bremsen ist jährlich zu wiederholen."])
    assert find_span(cranes.chunks[0].chunk_text, shown) is not None  # the excerpt is found where it stands


def _cost(context: AnswerContext, provision: Provision, whole: bool) -> int:
    statement = Statement(provision, [provision.sentences[0]], "fill")
    return statement_cost(statement, "de", None if whole else context.excerpts)


def test_an_english_addition_is_held_by_its_german_term_in_a_plural():
    """The writer reads an addition as the check does: "organ doses" is held by a sentence stating the
    Organ-Äquivalentdosis (the glossary's term for "organ dose"), "eye lens" by "Augenlinse"; "harbour master"
    by neither."""
    from rabbithole_lab.reasoning.extractive.writer.answer import Provision, Sentence
    from rabbithole_lab.reasoning.extractive.writer.answer_selection import holds
    from rabbithole_lab.reasoning.extractive.writer.sentence_ranker import Candidate
    from rabbithole_lab.records import ChunkWithInfo

    text = "(2) Der Grenzwert der Organ-Äquivalentdosis beträgt für die Augenlinse 15 Millisievert im Jahr."
    chunk = ChunkWithInfo(chunk_text=text, document="KranV.pdf", page=1, chunk_id="k", section="§ 5")
    provision = Provision("KranV.pdf", "§ 5", [chunk], [chunk])
    candidate = Candidate(Sentence(text, chunk, 0.5, 0), provision)
    assert holds("organ doses", candidate) and holds("eye lens", candidate)
    assert not holds("harbour master", candidate)
