"""The answer quotes what a reference names: the provision the decisive one cites, found by search or by
following, and of it the paragraph the reference names ("§ 9 Absatz 3")."""

from __future__ import annotations

from rabbithole_lab.reasoning.base import SynthesisInput
from rabbithole_lab.reasoning.extractive.writer.answer import Provision, Sentence, links_of, paragraphs_of, read_links
from rabbithole_lab.reasoning.llm.llm_reasoner import LLMReasoner
from rabbithole_lab.records import ChunkWithInfo
from rabbithole_lab.steps.synthesis_context import reference_chains
from tests.scripted_fake import ScriptedFakeChatModel, default_script


def _chunk(doc: str, section: str, chunk_id: str) -> ChunkWithInfo:
    return ChunkWithInfo(chunk_text="…", document=doc, page=1, chunk_id=chunk_id, section=section)


def _provision(doc: str, section: str, texts: list[str], scores: list[float]) -> Provision:
    chunk = _chunk(doc, section, f"{doc}{section}")
    chunk.chunk_text = " ".join(texts)
    provision = Provision(doc, section, [chunk], [chunk])
    provision.sentences = [Sentence(text, chunk, score, order, paragraphs)
                           for order, (text, score, paragraphs)
                           in enumerate(zip(texts, scores, paragraphs_of(texts), strict=True))]
    return provision


def _edge(decision: str, to_section: str, to_paragraphs: list[str], from_chunk: str = "KranV.pdf§ 21") -> dict:
    return {"from_chunk": from_chunk, "to_chunks": [], "type": "legal_section", "target": f"{to_section} KranG",
            "depth": 1, "decision": decision, "reason": "context similarity to the question 0.07 < threshold 0.30",
            "from_doc": "KranV.pdf", "from_section": "§ 21", "to_docs": ["KranG.pdf"], "to_sections": [to_section],
            "to_paragraphs": to_paragraphs}


def test_a_sentence_stands_in_the_paragraph_its_number_opens():
    sentences = ["Der Kran ist zu prüfen.", "(1) Der Betreiber prüft.", "Er zeichnet auf.",
                 "(2a) (weggefallen) (3) Die Behörde prüft.", "Sie kann nach § 5 (2) Satz 1 verlangen.",
                 "(4) Vier. (5) Fünf."]
    assert paragraphs_of(sentences) == [frozenset(), {"1"}, {"1"}, {"2a", "3"}, {"3"}, {"4", "5"}]
    # a passage that starts inside a paragraph does not say which one
    assert paragraphs_of(["Er zeichnet auf.", "(2) Die Behörde prüft."]) == [frozenset(), {"2"}]


def test_a_reference_the_gate_skipped_counts_where_search_brought_the_cited_provision():
    context = {"primary": [_chunk("KranV.pdf", "§ 21", "KranV.pdf§ 21"), _chunk("KranG.pdf", "§ 9", "KranG.pdf§ 9")]}
    state = {"detected_language": "en", "reference_edges": [_edge("skipped", "§ 9", ["3"]),
                                                             _edge("skipped", "§ 10", [])]}
    chains = reference_chains(state, context)
    # § 10 is not in the context: its reference adds nothing the answer could quote
    assert [(c["citing"], c["cited"], c["paragraphs"]) for c in chains] == [
        (["KranV.pdf", "§ 21"], [["KranG.pdf", "§ 9"]], [["KranG.pdf", "§ 9", ["3"]]])]
    assert chains[0]["reason_key"] == "cited_in_context" and not chains[0]["reason"]
    assert links_of(chains) == {("KranV.pdf", "§ 21"): {("KranG.pdf", "§ 9"): {"3"}}}
    # without the cited provision in the context there is no chain
    assert reference_chains(state, {"primary": context["primary"][:1]}) == []


def test_a_reference_already_followed_from_elsewhere_points_where_it_pointed_then():
    context = {"primary": [_chunk("KranV.pdf", "§ 21", "KranV.pdf§ 21"), _chunk("KranG.pdf", "§ 9", "KranG.pdf§ 9")]}
    earlier = _edge("skipped", "§ 9", []) | {"from_doc": "KranV.pdf", "from_section": "§ 30",
                                               "from_chunk": "KranV.pdf§ 30"}
    visited = _edge("skipped", "§ 9", ["3"]) | {"to_docs": [], "to_sections": [], "reason": "",
                                                  "reason_key": "already_visited"}
    links = links_of(reference_chains({"reference_edges": [earlier, visited]}, context))
    assert links == {("KranV.pdf", "§ 21"): {("KranG.pdf", "§ 9"): {"3"}}}
    # a reference recorded without a target for another reason (an earlier version) points nowhere
    other = visited | {"reason_key": "earlier_version", "reason_values": {"version": "a. F."}}
    assert links_of(reference_chains({"reference_edges": [earlier, other]}, context)) == {}


def test_the_scripted_model_is_told_which_paragraph_a_reference_names():
    model = ScriptedFakeChatModel(script=default_script("de"))
    finding = ChunkWithInfo(chunk_text="(3) Dauert die Sperre länger als drei Jahre, kann der Eigentümer "
                            "Entschädigung verlangen.", document="KranG.pdf", page=2, section="§ 9")
    chains = reference_chains({"reference_edges": [_edge("skipped", "§ 9", ["3"])]},
                              {"primary": [_chunk("KranV.pdf", "§ 21", "KranV.pdf§ 21"), finding]})
    LLMReasoner(model, max_retries=0).synthesize(SynthesisInput(anchor="Ab wann gibt es Entschädigung?",
                                                                language="de", primary=[finding], chains=chains))
    prompt = next(p for p in model.prompts_seen if model.step_of(p) == "synthesize")
    assert '§ 21 KranV.pdf → § 9 KranG.pdf ("§ 9 KranG", § 9 KranG.pdf: Abs. 3)' in prompt


def test_a_reference_in_a_passage_links_the_provisions_of_the_context_it_names():
    # nothing was followed: the passages themselves say which provision of the context they refer to
    citing = ChunkWithInfo(chunk_text="§ 21 Prüffristen\n(1) Der Betreiber prüft den Kran nach § 9 Absatz 3 des "
                           "Krangesetzes und zu den in Anlage 2 zu dieser Verordnung genannten Terminen. "
                           "§ 30 gilt entsprechend.", document="KranV.pdf", page=4, chunk_id="v21", section="§ 21")
    context = {"primary": [citing, _chunk("KranG.pdf", "§ 9", "g9")],
               "secondary": [_chunk("KranV.pdf", "Anlage 2", "va2")]}
    books = {"Krangesetzes": "KranG.pdf"}
    chains = reference_chains({"detected_language": "de", "reference_edges": []}, context, books.get)
    assert sorted((c["cited"], c["paragraphs"]) for c in chains) == [
        ([["KranG.pdf", "§ 9"]], [["KranG.pdf", "§ 9", ["3"]]]), ([["KranV.pdf", "Anlage 2"]], [])]
    assert all(c["citing"] == ["KranV.pdf", "§ 21"] and c["reason_key"] == "cited_in_context" for c in chains)
    # § 30 is not in the context; a book the knowledge base does not hold names nothing; and without a way
    # to read books only the book-less reference to the citing document's own annex links
    assert len(chains) == 2
    assert [c["cited"] for c in reference_chains({}, context, {}.get)] == [[["KranV.pdf", "Anlage 2"]]]
    assert reference_chains({}, context) == []


def test_a_reference_only_read_in_the_text_is_followed_where_the_answer_quotes_the_sentence_making_it():
    says = "(1) Der Betreiber legt den Bericht bis zu dem in Anlage 2 genannten Termin vor."
    other = "(2) Die Prüfung der Kräne richtet sich nach Anlage 5."
    citing = _provision("KranV.pdf", "§ 4", [says, other], [0.9, 0.1])
    deadlines = _provision("KranV.pdf", "Anlage 2", ["Hafen Nord 31.03.2011"], [0.05])
    checks = _provision("KranV.pdf", "Anlage 5", ["Hubwerk 12 Monate"], [0.05])
    context = {"primary": [chunk for p in (citing, deadlines, checks) for chunk in p.chunks]}
    chains = reference_chains({}, context, {}.get)
    assert read_links(chains) == {(("KranV.pdf", "§ 4"), ("KranV.pdf", "Anlage 2")): {"Anlage 2"},
                                  (("KranV.pdf", "§ 4"), ("KranV.pdf", "Anlage 5")): {"Anlage 5"}}
    # which of them the answer follows is the selection's (tests/reasoning/test_answer_selection.py)


def test_words_two_provisions_share_stay_in_each_so_a_cited_paragraph_is_whole():
    """Licensing conditions are often listed alike in two laws; the cited paragraph keeps its item all the same.
    (A list longer than a quote is quoted item by item, so the shared item is a sentence of its own in both.)"""
    from rabbithole_lab.reasoning.extractive.extractive_base import sentences_of
    from rabbithole_lab.reasoning.extractive.writer.answer import provisions_of

    shared = ("3. der erforderliche Schutz der Kranbahn, der Laufkatze und der Lastaufnahmemittel gegen Sturmschäden, "
              "Blitzschlag und Anfahrschäden durch Schiffe nach dem Stand der Technik gewährleistet ist.")
    crane_act = ChunkWithInfo(
        chunk_text=("(1) Wer einen Hafenkran betreibt, bedarf der Genehmigung.\n(2) Die Genehmigung darf nur erteilt "
                    "werden, wenn\n1. keine Tatsachen vorliegen, aus denen sich Bedenken gegen die Zuverlässigkeit "
                    "des Betreibers und der für die Errichtung, Leitung und Beaufsichtigung des Kranbetriebs "
                    "verantwortlichen Personen ergeben,\n2. gewährleistet ist, dass die Kranführer die notwendigen "
                    "Kenntnisse über einen sicheren Betrieb des Krans, die möglichen Gefahren und die anzuwendenden "
                    "Schutzmaßnahmen besitzen, regelmäßig an Schulungen der Hafenbehörde teilnehmen und die Teilnahme "
                    "jährlich durch eine Bescheinigung des Schulungsträgers nachweisen,\n" + shared),
        document="KranG.pdf", page=4, chunk_id="g9", section="§ 9")
    port_act = ChunkWithInfo(
        chunk_text=("(1) Ein Umschlagplatz wird zugelassen, wenn\n1. die Zufahrt für Lastkraftwagen, Bahn und "
                    "Rettungsdienste zu jeder Tageszeit gesichert ist und die Verkehrsflächen für die zulässigen "
                    "Achslasten bemessen sind,\n2. die Beleuchtung der Verkehrsflächen, Liegeplätze und Kranbahnen "
                    "den Anforderungen der Hafenordnung genügt und bei Stromausfall eine Notbeleuchtung bereitsteht "
                    "und regelmäßig geprüft wird, wobei die Prüfung von einer anerkannten Sachverständigenorganisation "
                    "durchzuführen und das Ergebnis der Hafenbehörde binnen eines Monats mitzuteilen ist,\n" + shared),
        document="HafenG.pdf", page=2, chunk_id="h4", section="§ 4")
    provisions = provisions_of([port_act, crane_act], sentences_of, lambda batch: [0.5] * len(batch))
    crane = next(p for p in provisions if p.section == "§ 9")
    items = [s.text for s in crane.sentences if s.paragraphs == {"2"}]
    assert any(text.startswith("3. der erforderliche Schutz der Kranbahn") for text in items)
    # words a document repeats in a second provision are held by the first that says them
    annex = port_act.model_copy(update={"document": "KranG.pdf", "section": "Anlage 1", "chunk_id": "g-a1"})
    in_one_law = provisions_of([crane_act, annex], sentences_of, lambda batch: [0.5] * len(batch))
    annex_texts = [s.text for p in in_one_law if p.section == "Anlage 1" for s in p.sentences]
    assert annex_texts and not any(text.startswith("3. der erforderliche Schutz") for text in annex_texts)
    # a sentence a provision repeats is held once
    twice = ChunkWithInfo(chunk_text=crane_act.chunk_text, document="KranG.pdf", page=4, chunk_id="g9b", section="§ 9")
    again = provisions_of([crane_act, twice], sentences_of, lambda batch: [0.5] * len(batch))
    texts = [s.text for s in again[0].sentences]
    assert len(texts) == len(set(texts))
