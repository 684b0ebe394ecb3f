"""A table states its figures in no sentence: its rows are quotable on their own, as the PDF's text layer lays
them out (a cell a line), and the answer quotes the row a question asks about. Text written for these tests."""

from __future__ import annotations

from rabbithole_lab.reasoning.base import SynthesisInput
from rabbithole_lab.reasoning.checks.quality import is_fragment, statements
from rabbithole_lab.reasoning.extractive.extractive_reasoner import ExtractiveReasoner
from rabbithole_lab.reasoning.extractive.writer.answer import Provision, Sentence, name_rows
from rabbithole_lab.reasoning.text import named_rows, passage_sentences, table_rows
from rabbithole_lab.records import ChunkWithInfo

# a two-column table of deadlines, one cell a line, as pymupdf extracts it; the header too
DEADLINES = ("Anlage 2\n(zu § 4 Absatz 2)\nAnlage\nTermin\nNordhafen A\n31.03.2011\nSüdheide\n30. 9.2012\n"
             "Westmark 2\n31.12.2014\nOstmoor\n30. 6.2016\n")
# a rate table whose label runs over several lines
RATES = ("Anlage 5\nZuschläge\nüber 20 bis 100\nTonnen für jede\nweitere angefangene\nTonne\n0,0031\n"
         "über 100 bis 400\nTonnen für jede\nweitere angefangene\nTonne\n0,0027\n")
PROSE = ("(1) Der Betreiber einer Windkraftanlage hat der Behörde bis zu dem in Anlage 2\n"
         "genannten Termin die Ergebnisse der Sicherheitsüberprüfung vorzulegen.\n"
         "(2) Die Behörde kann die Frist verlängern, wenn der Betreiber darlegt, dass\n"
         "die Überprüfung aus Gründen, die er nicht zu vertreten hat, nicht rechtzeitig\n"
         "abgeschlossen werden kann.\n")


def test_a_row_is_its_label_cells_followed_by_its_value_cells():
    # the table's caption and header are cells too: they open its first row
    assert table_rows(DEADLINES) == ["Anlage 2 (zu § 4 Absatz 2) Anlage Termin Nordhafen A 31.03.2011",
                                     "Südheide 30. 9.2012", "Westmark 2 31.12.2014", "Ostmoor 30. 6.2016"]
    assert table_rows(RATES) == [
        "Anlage 5 Zuschläge über 20 bis 100 Tonnen für jede weitere angefangene Tonne 0,0031",
        "über 100 bis 400 Tonnen für jede weitere angefangene Tonne 0,0027"]


def test_prose_a_table_of_words_and_entry_numbers_make_no_rows():
    assert table_rows(PROSE) == []
    words = "Umweltbereich\nHerkunft\nLuft\nWetterdienst\nBoden\nGeologischer Dienst\nWasser\nGewässerkunde\n"
    assert table_rows(words) == []  # no cell holds a figure: nothing a row would state
    # an entry's number ("4.2.1") is a label, not a figure
    numbered = "4.2\nAnlagen zur Lagerung\nvon Heizöl\n4.2.1\nmehr als 500 Tonnen\n4.2.2\nbis 500 Tonnen\n"
    assert table_rows(numbered) == []
    # too few short lines in a row are a heading and a label, not a table
    assert table_rows("Anlage 3\nTermin\nNordhafen\n31.03.2011\n") == []


def test_a_passage_offers_its_rows_beside_its_sentences_and_a_quoted_row_is_whole():
    text = f"{PROSE}{DEADLINES}"
    sentences = passage_sentences(text)
    assert sentences[0].startswith("(1) Der Betreiber") and "Westmark 2 31.12.2014" in sentences
    assert not is_fragment("Westmark 2 31.12.2014", set(table_rows(text)))
    assert is_fragment("Westmark 2 31.12.2014")  # without its table it would be a cut sentence


def test_the_answer_quotes_the_row_the_question_asks_about(demo_kb):
    chunks = [ChunkWithInfo(chunk_text=f"§ 4 Sicherheitsüberprüfung\n{PROSE}", document="WindG.pdf", page=3,
                            chunk_id="c1", section="§ 4", tier="primary", relevance_score=0.8),
              ChunkWithInfo(chunk_text=DEADLINES, document="WindG.pdf", page=9, chunk_id="c2", section="Anlage 2",
                            tier="primary", relevance_score=0.7)]
    # § 4 names the table the deadline stands in ("bis zu dem in Anlage 2 genannten Termin")
    chains = [{"source": "§ 4 WindG.pdf", "reference": "Anlage 2", "target": "Anlage 2 WindG.pdf", "reason": "",
               "citing": ["WindG.pdf", "§ 4"], "cited": [["WindG.pdf", "Anlage 2"]], "paragraphs": []}]
    question = "Bis wann musste der Betreiber der Windkraftanlage Westmark 2 die Ergebnisse der Überprüfung vorlegen?"
    request = SynthesisInput(anchor=question, question=question, language="de", primary=chunks, chains=chains)
    answer = ExtractiveReasoner(demo_kb.index.embedder).synthesize(request).answer
    quoted = [statement for statement in statements(answer) if "Westmark 2 31.12.2014" in statement.quote]
    assert quoted and quoted[0].citations == [("WindG.pdf", 9)]
    assert "Ostmoor" not in answer and "Südheide" not in answer  # the row asked about, not the whole table


def test_a_row_is_named_by_a_label_word_of_the_question_that_only_it_holds():
    rows = table_rows(DEADLINES)
    assert named_rows(rows, "Bis wann war Westmark 2 zu prüfen?") == {"Westmark 2 31.12.2014"}
    assert named_rows(rows, "Welche Termine gelten für Nordhafen und Ostmoor?") == {
        "Anlage 2 (zu § 4 Absatz 2) Anlage Termin Nordhafen A 31.03.2011", "Ostmoor 30. 6.2016"}
    # the table's own name, which its caption puts in the first row, names no row
    assert named_rows(rows, "Was gilt nach Anlage 2 für Westmark 2?", "Anlage 2") == {
        "Westmark 2 31.12.2014"}
    assert "Anlage 2 (zu § 4 Absatz 2) Anlage Termin Nordhafen A 31.03.2011" in named_rows(
        rows, "Was gilt nach Anlage 2 für Westmark 2?")
    # a word every row holds names none of them
    assert named_rows(table_rows(RATES), "Welcher Zuschlag gilt je weitere angefangene Tonne?") == set()


def test_the_named_row_is_quoted_before_rows_that_read_closer_to_the_question():
    chunk = ChunkWithInfo(chunk_text=DEADLINES, document="WindG.pdf", page=9, chunk_id="c2", section="Anlage 2")
    rows = table_rows(DEADLINES)
    provision = Provision("WindG.pdf", "Anlage 2", [chunk], [chunk],
                          [Sentence(row, chunk, score, order) for order, (row, score)
                           in enumerate(zip(rows, [0.9, 0.8, 0.3, 0.7], strict=True))])
    assert not any(s.named for s in provision.sentences)
    name_rows([provision], "Bis wann war die Überprüfung für Westmark 2 vorzulegen?")
    assert [s.text for s in provision.sentences if s.named] == ["Westmark 2 31.12.2014"]
    assert max(provision.sentences, key=lambda s: s.score).score == 0.9  # its score rises to the provision's best
    assert provision.strength == 0.9  # ranked as the provision's best, not above it


def test_a_label_alone_on_its_line_heads_what_follows_and_is_no_word_of_its_sentence():
    # written for this test: a caption's label at the foot of one page, its title and table on the next
    text = ("Die Zuschläge gelten für jeden Hafenkran.\nTabelle 3\nListe der Krantypen und der bei der Abnahme "
            "geprüften Bauteile\nTurmdrehkran Ausleger Seil Haken.\n")
    sentences = passage_sentences(text)
    assert "Liste der Krantypen und der bei der Abnahme geprüften Bauteile Turmdrehkran Ausleger Seil Haken." \
        in sentences
    assert not any("Tabelle 3" in sentence for sentence in sentences)
    # a label that is part of a sentence stays in it
    assert passage_sentences("Tabelle 3 gilt entsprechend für Schwimmkrane.") == [
        "Tabelle 3 gilt entsprechend für Schwimmkrane."]
