"""Every text a reader sees, in German and English: one catalogue for the workbench, the report and the
reference graph. A session speaks one language (the question's, or the one chosen in the query panel);
field names never reach the reader, each has its label here.

Sections: UI (workbench panels, progress, page viewer, table headers), REPORT (report.md/html and the
answer's labels), GRAPH (the reference graph and its legend).
"""

from __future__ import annotations

LANGUAGES = ("de", "en")

UI = {
    "de": {
        "question": "Frage", "question_placeholder": "Ihre Forschungsfrage …", "collection": "Sammlung",
        "all_collections": "(alle)", "language": "Sprache", "language_auto": "wie die Frage", "start": "Start", "reasoner": "Reasoner",
        "hitl_title": "Klärung", "answer_placeholder": "Ihre Antwort …", "send": "Senden", "end": "/end",
        "round": "Runde {n}", "your_answer": "Ihre Antwort", "understanding": "So verstehe ich die Frage bisher",
        "understanding_hint": "(korrigieren Sie es in Ihrer Antwort; /end übernimmt es)", "coverage": "Abdeckung", "gaps": "Wissenslücken", "none": "keine",
        "history": "Suchverlauf", "queries": "Suchanfragen", "chunks": "neue Abschnitte",
        "dedup": "schon gefunden",
        "round_counts": "{retrieved} Treffer: {new} neu, {seen} aus früheren Runden, {duplicates} doppelt in dieser Runde",
        "convergence_rule": "Die Klärung endet von selbst, wenn die Abdeckung ≥ {coverage:.0%} ist, ≥ {dedup:.0%} der "
                            "Abschnitte einer Runde schon früher gefunden wurden und höchstens {max_gaps} Lücken offen sind.",
        "document": "Dokument", "section": "Abschnitt", "page_column": "Seite", "score": "Score", "preview": "Auszug",
        "todo_title": "Aufgaben", "remove": "entfernen", "removed_short": "entfernt", "add": "Hinzufügen", "add_placeholder": "Neue Aufgabe …",
        "approve": "Genehmigen", "task_progress": "Aufgabe {n}/{total}: {task}",
        "results_title": "Ergebnis", "findings": "Kernaussagen", "quality": "Qualität", "sources": "Quellen",
        "warnings": "Hinweise", "page": "S.", "tiers_title": "Kontext nach Stufen", "graph_title": "Verweisgraph",
        "stop": "Stopp", "sessions": "Sitzungen", "resume": "Fortsetzen", "shutdown": "Kernel beenden",
        "stopped": "Angehalten. Der Fortschritt ist gespeichert; über „Fortsetzen“ geht es weiter.",
        "running": "Läuft: {node}", "done": "Fertig.", "error": "Fehler: {error}", "log": "Protokoll",
        "primary": "Primär", "secondary": "Sekundär", "tertiary": "Tertiär", "busy": "Bitte warten …",
        "empty_question": "Bitte eine Frage eingeben.", "shutdown_done": "Kernel wird beendet.",
        "task_summaries": "Aufgaben und ihre Ergebnisse", "relevance": "Relevanz", "irrelevant": "nicht zur Frage",
        "added_during_research": "während der Recherche hinzugefügt", "closed_early": "vorzeitig erledigt",
        "added_short": "neu", "closed_short": "vorzeitig erledigt", "rounds": "Durchgänge",
        "save_report": "Bericht speichern", "saved_to": "Bericht gespeichert in {folder}",
        "save_failed": "Bericht nicht gespeichert: {error}",
        "close": "Schließen", "pdf_failed": "Seite kann nicht angezeigt werden: {error}",
        "step_understand": "Frage verstehen", "step_clarify_search": "Klärung: Suche in den Dokumenten",
        "step_clarify_analyse": "Klärung: Treffer auswerten", "step_clarify_questions": "Klärung: Rückfragen formulieren",
        "step_plan": "Aufgabenliste erstellen", "step_task": "Suche zu Aufgabe {n} von {total}",
        "step_search_round": "Suche zu Aufgabe {n} von {total} (Durchgang {done})",
        "step_follow": "Aufgabe {n} von {total}: Verweise verfolgen: {done} von {count}",
        "step_adapt": "Plan prüfen", "step_filter": "Kontext prüfen", "step_synthesize": "Antwort schreiben",
        "step_quality": "Qualität prüfen", "step_after_quality": "Qualität {score}/500 · Bericht fertigstellen",
        "step_attribute": "Quellen zuordnen", "step_working": "Arbeitet …",
        "tasks_done": "Aufgaben: {done} von {total} erledigt",
        "col_doc": "Dokument", "col_section": "Abschnitt", "col_page": "Seite", "col_depth": "Tiefe",
        "col_score": "Relevanz", "col_task": "Aufgabe", "col_cited_by": "erreicht über", "col_cites": "zitiert",
        "col_extract": "Auszug", "show_skipped": "Übersprungene Verweise zeigen",
        "pdf_marked": " · Zitat markiert", "open_page_hint": "Ein Klick auf einen Beleg öffnet die Seite daneben.",
        "problem": "Die Werkbank kann nicht öffnen:",
        "problem_hint": "Legen Sie den Ordner {kb} mit <Sammlung>__db_inserted/-Unterordnern an oder setzen Sie kb im "
                        "ersten Feld auf einen vorhandenen Ordner, dann die Zelle erneut ausführen.",
    },
    "en": {
        "question": "Question", "question_placeholder": "Your research question …", "collection": "Collection",
        "all_collections": "(all)", "language": "Language", "language_auto": "as the question", "start": "Start", "reasoner": "Reasoner",
        "hitl_title": "Clarification", "answer_placeholder": "Your answer …", "send": "Send", "end": "/end",
        "round": "Round {n}", "your_answer": "Your answer", "understanding": "How I understand the question so far",
        "understanding_hint": "(correct it in your answer; /end accepts it)", "coverage": "Coverage", "gaps": "Knowledge gaps", "none": "none",
        "history": "Retrieval history", "queries": "Queries", "chunks": "new passages",
        "dedup": "found before",
        "round_counts": "{retrieved} hits: {new} new, {seen} from earlier rounds, {duplicates} repeated within this round",
        "convergence_rule": "The clarification ends by itself once coverage is ≥ {coverage:.0%}, ≥ {dedup:.0%} of a "
                            "round's passages were found in earlier rounds and at most {max_gaps} gaps are open.",
        "document": "Document", "section": "Section", "page_column": "Page", "score": "Score", "preview": "Extract",
        "todo_title": "Tasks", "remove": "remove", "removed_short": "removed", "add": "Add", "add_placeholder": "New task …",
        "approve": "Approve", "task_progress": "Task {n}/{total}: {task}",
        "results_title": "Result", "findings": "Key findings", "quality": "Quality", "sources": "Sources",
        "warnings": "Warnings", "page": "p.", "tiers_title": "Context by tier", "graph_title": "Reference graph",
        "stop": "Stop", "sessions": "Sessions", "resume": "Resume", "shutdown": "Shut down kernel",
        "stopped": "Stopped. Progress is saved; use “Resume” to continue.",
        "running": "Running: {node}", "done": "Done.", "error": "Error: {error}", "log": "Log",
        "primary": "Primary", "secondary": "Secondary", "tertiary": "Tertiary", "busy": "Please wait …",
        "empty_question": "Please enter a question.", "shutdown_done": "Shutting down the kernel.",
        "task_summaries": "Tasks and what they found", "relevance": "relevance", "irrelevant": "off the question",
        "added_during_research": "added during research", "closed_early": "closed early",
        "added_short": "new", "closed_short": "closed early", "rounds": "rounds",
        "save_report": "Save report", "saved_to": "Report saved in {folder}",
        "save_failed": "Report not saved: {error}",
        "close": "Close", "pdf_failed": "Cannot show the page: {error}",
        "step_understand": "Understanding the question", "step_clarify_search": "Clarification: searching the documents",
        "step_clarify_analyse": "Clarification: assessing the hits",
        "step_clarify_questions": "Clarification: writing follow-up questions",
        "step_plan": "Drafting the task list", "step_task": "Searching for task {n} of {total}",
        "step_search_round": "Searching for task {n} of {total} (round {done})",
        "step_follow": "Task {n} of {total}: following references: {done} of {count}",
        "step_adapt": "Reviewing the plan", "step_filter": "Checking the context", "step_synthesize": "Writing the answer",
        "step_quality": "Checking quality", "step_after_quality": "Quality {score}/500 · finishing the report",
        "step_attribute": "Attributing sources", "step_working": "Working …",
        "tasks_done": "Tasks: {done} of {total} done",
        "col_doc": "Document", "col_section": "Section", "col_page": "Page", "col_depth": "Depth",
        "col_score": "Relevance", "col_task": "Task", "col_cited_by": "reached from", "col_cites": "cites",
        "col_extract": "Extract", "show_skipped": "Show skipped references",
        "pdf_marked": " · quote marked", "open_page_hint": "Click a citation to open its page beside the answer.",
        "problem": "The workbench cannot open:",
        "problem_hint": "Create the folder {kb} with <Collection>__db_inserted/ subfolders, or set kb in the first "
                        "cell to an existing folder, then run the cell again.",
    },
}

REPORT = {
    "de": {"title": "Recherchebericht", "question": "Frage", "answer": "Antwort", "findings": "Kernaussagen",
           "quality": "Qualität", "sources": "Quellen", "references": "Verfolgte Verweise", "tasks": "Aufgaben",
           "run": "Ablauf", "warnings": "Hinweise", "dimension": "Dimension", "score": "Punkte",
           "document": "Dokument", "page": "Seite", "section": "Abschnitt", "relevance": "Relevanz",
           "from": "Von", "to": "Nach", "decision": "Entscheidung", "reason": "Begründung", "via": "Verweis",
           "why": "Warum verfolgt", "reasoner": "Reasoner", "hitl": "Klärungsdialog beendet durch",
           "none": "keine", "irrelevant": "nicht zur Frage", "added": "während der Recherche hinzugefügt",
           "closed": "vorzeitig erledigt", "round": "Durchgang", "llm_calls": "LLM-Aufrufe", "graph": "Verweisgraph",
           "factual_accuracy": "Sachliche Richtigkeit", "semantic_validity": "Bezug zur Frage",
           "structural_integrity": "Aufbau", "citation_correctness": "Belege auf der zitierten Seite",
           "query_relevance": "Beantwortet die Frage"},
    "en": {"title": "Research report", "question": "Question", "answer": "Answer", "findings": "Key findings",
           "quality": "Quality", "sources": "Sources", "references": "Followed references", "tasks": "Tasks",
           "run": "Run", "warnings": "Warnings", "dimension": "Dimension", "score": "Score",
           "document": "Document", "page": "Page", "section": "Section", "relevance": "Relevance",
           "from": "From", "to": "To", "decision": "Decision", "reason": "Reason", "via": "Reference",
           "why": "Why followed", "reasoner": "Reasoner", "hitl": "Clarification ended by",
           "none": "none", "irrelevant": "off the question", "added": "added during research",
           "closed": "closed early", "round": "Round", "llm_calls": "LLM calls", "graph": "Reference graph",
           "factual_accuracy": "Factual accuracy", "semantic_validity": "On the question",
           "structural_integrity": "Structure", "citation_correctness": "Quotes on the cited page",
           "query_relevance": "Answers the question"},
}

GRAPH = {
    "de": {"question": "Frage", "followed": "verfolgt", "skipped": "übersprungen", "primary": "Primär",
           "secondary": "Sekundär", "tertiary": "Tertiär", "unresolved": "nicht im Kontext", "entry": "gefunden",
           "depth": "Tiefe", "pages": "Seiten", "tier": "Stufe", "collection": "Sammlung", "empty": "(keine Verweise)"},
    "en": {"question": "Question", "followed": "followed", "skipped": "skipped", "primary": "Primary",
           "secondary": "Secondary", "tertiary": "Tertiary", "unresolved": "not in the context", "entry": "found",
           "depth": "depth", "pages": "pages", "tier": "tier", "collection": "collection", "empty": "(no references)"},
}


def _pick(table: dict[str, dict[str, str]], language: str) -> dict[str, str]:
    return table["en" if language == "en" else "de"]


def ui_text(language: str) -> dict[str, str]:
    """The workbench's texts."""
    return _pick(UI, language)


def report_labels(language: str) -> dict[str, str]:
    """The report's headings, column names and the quality dimensions' names."""
    return _pick(REPORT, language)


def graph_text(language: str) -> dict[str, str]:
    """The reference graph's labels and legend."""
    return _pick(GRAPH, language)


def column_headers(language: str) -> dict[str, str]:
    """Table column -> its header in the reader's language."""
    return {key[4:]: value for key, value in ui_text(language).items() if key.startswith("col_")}
