"""UI strings in German and English (German when the question is German)."""

from __future__ import annotations

_TEXT = {
    "de": {
        "question": "Frage", "question_placeholder": "Ihre Forschungsfrage …", "collection": "Sammlung",
        "all_collections": "(alle)", "start": "Start", "reasoner": "Reasoner",
        "hitl_title": "Klärung", "answer_placeholder": "Ihre Antwort …", "send": "Senden", "end": "/end",
        "round": "Runde {n}", "coverage": "Abdeckung", "gaps": "Wissenslücken", "none": "keine",
        "history": "Suchverlauf", "queries": "Suchanfragen", "chunks": "Abschnitte", "dedup": "Anteil neu",
        "todo_title": "Aufgaben", "remove": "entfernen", "add": "Hinzufügen", "add_placeholder": "Neue Aufgabe …",
        "approve": "Genehmigen", "task_progress": "Aufgabe {n}/{total}: {task}",
        "results_title": "Ergebnis", "findings": "Kernaussagen", "quality": "Qualität", "sources": "Quellen",
        "warnings": "Hinweise", "page": "S.", "tiers_title": "Kontext nach Stufen", "graph_title": "Verweisgraph",
        "stop": "Stopp", "sessions": "Sitzungen", "resume": "Fortsetzen", "shutdown": "Kernel beenden",
        "stopped": "Angehalten. Der Fortschritt ist gespeichert; über „Fortsetzen“ geht es weiter.",
        "running": "Läuft: {node}", "done": "Fertig.", "error": "Fehler: {error}", "log": "Protokoll",
        "primary": "Primär", "secondary": "Sekundär", "tertiary": "Tertiär", "busy": "Bitte warten …",
        "empty_question": "Bitte eine Frage eingeben.", "shutdown_done": "Kernel wird beendet.",
    },
    "en": {
        "question": "Question", "question_placeholder": "Your research question …", "collection": "Collection",
        "all_collections": "(all)", "start": "Start", "reasoner": "Reasoner",
        "hitl_title": "Clarification", "answer_placeholder": "Your answer …", "send": "Send", "end": "/end",
        "round": "Round {n}", "coverage": "Coverage", "gaps": "Knowledge gaps", "none": "none",
        "history": "Retrieval history", "queries": "Queries", "chunks": "passages", "dedup": "share new",
        "todo_title": "Tasks", "remove": "remove", "add": "Add", "add_placeholder": "New task …",
        "approve": "Approve", "task_progress": "Task {n}/{total}: {task}",
        "results_title": "Result", "findings": "Key findings", "quality": "Quality", "sources": "Sources",
        "warnings": "Warnings", "page": "p.", "tiers_title": "Context by tier", "graph_title": "Reference graph",
        "stop": "Stop", "sessions": "Sessions", "resume": "Resume", "shutdown": "Shut down kernel",
        "stopped": "Stopped. Progress is saved; use “Resume” to continue.",
        "running": "Running: {node}", "done": "Done.", "error": "Error: {error}", "log": "Log",
        "primary": "Primary", "secondary": "Secondary", "tertiary": "Tertiary", "busy": "Please wait …",
        "empty_question": "Please enter a question.", "shutdown_done": "Shutting down the kernel.",
    },
}


def ui_text(language: str) -> dict[str, str]:
    return _TEXT["en" if language == "en" else "de"]
