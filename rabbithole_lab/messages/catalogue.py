"""Every text a reader sees, in German and English: one catalogue for the workbench, the report and the
reference graph. A session speaks one language (the question's, or the one chosen in the query panel);
field names never reach the reader, each has its label here.

Sections: UI (workbench panels, progress, page viewer, table headers), REPORT (report.md/html and the
answer's labels), GRAPH (the reference graph and its legend), REASONER (what the extractive reasoner
writes: answer framing, clarification questions, tasks, assessments), TERMINAL (the CLI's dialogue), RUN
(progress lines, warnings, errors, why a reference was not followed).
"""

from __future__ import annotations

from rabbithole_lab.messages.ui_catalogue import UI

LANGUAGES = ("de", "en")

REPORT = {
    "de": {"title": "Recherchebericht", "question": "Frage", "answer": "Antwort", "findings": "Kernaussagen",
           "quality": "Qualität", "sources": "Quellen", "references": "Verfolgte Verweise", "tasks": "Aufgaben",
           "run": "Ablauf", "warnings": "Hinweise",
           "consulted": "Gelesen, nicht zitiert", "dimension": "Dimension", "score": "Punkte",
           "addressed_to_model": "Text an KI-Systeme gerichtet, nicht verwendet",
           "unresolved": "Verweise ohne Ziel", "not_in_law": "in {law} nicht vorhanden",
           "repealed": "in {law} weggefallen",
           "document": "Dokument", "page": "Seite", "section": "Abschnitt", "relevance": "Relevanz",
           "from": "Von", "to": "Nach", "decision": "Entscheidung", "reason": "Begründung", "via": "Verweis",
           "why": "Warum verfolgt", "found_by": "gefunden durch", "reasoner": "Reasoner",
           "hitl": "Klärungsdialog beendet durch", "none": "keine",
           "irrelevant": "{count} gelesene Stellen nicht zur Frage",
           "in_answer": "Die Antwort zitiert schon {count} Fundstelle(n) dieser Aufgabe",
           "added": "während der Recherche hinzugefügt",
           "closed": "vorzeitig erledigt", "round": "Durchgang", "llm_calls": "LLM-Aufrufe", "graph": "Verweisgraph",
           "factual_accuracy": "Sachliche Richtigkeit", "semantic_validity": "Bezug zur Frage",
           "structural_integrity": "Aufbau", "citation_correctness": "Belege auf der zitierten Seite",
           "query_relevance": "Beantwortet die Frage", "verdict": "Maßgebliche Vorschrift belegt",
           "verdict_named": "Maßgeblich", "verdict_open": "Keine einzelne Vorschrift maßgeblich; in Betracht kommen",
           "verdict_score": "Bewertung", "verdict_margin": "Abstand zur nächsten", "clarification": "Klärung",
           "clarified_added": "ergänzt", "clarified_excluded": "ausgeschlossen", "clarified_named": "genannt",
           "invented": "Entfernte Behauptungen (nicht in den gefundenen Stellen)"},
    "en": {"title": "Research report", "question": "Question", "answer": "Answer", "findings": "Key findings",
           "quality": "Quality", "sources": "Sources", "references": "Followed references", "tasks": "Tasks",
           "run": "Run", "warnings": "Warnings",
           "consulted": "Read, not cited", "dimension": "Dimension", "score": "Score",
           "addressed_to_model": "Text addressed to AI systems, not used",
           "unresolved": "References without a target", "not_in_law": "not in {law}",
           "repealed": "repealed in {law}",
           "document": "Document", "page": "Page", "section": "Section", "relevance": "Relevance",
           "from": "From", "to": "To", "decision": "Decision", "reason": "Reason", "via": "Reference",
           "why": "Why followed", "found_by": "found by", "reasoner": "Reasoner", "hitl": "Clarification ended by",
           "none": "none",
           "irrelevant": "{count} passages read were off the question",
           "in_answer": "The answer quotes {count} finding(s) of this task already",
           "added": "added during research",
           "closed": "closed early", "round": "Round", "llm_calls": "LLM calls", "graph": "Reference graph",
           "factual_accuracy": "Factual accuracy", "semantic_validity": "On the question",
           "structural_integrity": "Structure", "citation_correctness": "Quotes on the cited page",
           "query_relevance": "Answers the question", "verdict": "Decisive provision borne out",
           "verdict_named": "Decisive", "verdict_open": "No single provision is decisive; in question",
           "verdict_score": "score", "verdict_margin": "margin over the next", "clarification": "Clarification",
           "clarified_added": "added", "clarified_excluded": "excluded", "clarified_named": "named",
           "invented": "Removed claims (not in the passages found)"},
}

GRAPH = {
    "de": {"question": "Frage", "followed": "verfolgt", "skipped": "übersprungen", "primary": "Primär",
           "secondary": "Sekundär", "tertiary": "Tertiär", "unresolved": "nicht im Kontext",
           "absent": "nicht in der Sammlung", "entry": "gefunden",
           "pages": "Seiten", "tier": "Stufe", "collection": "Sammlung", "empty": "(keine Verweise)",
           "summary": "{followed} verfolgte, {skipped} übersprungene Verweise",
           "hidden": "{count} übersprungene oder nicht im Kontext stehende Abschnitte ausgeblendet",
           "interactive": "Interaktiver Verweisgraph (im Browser öffnen)",
           "col_from": "von", "col_reference": "Verweis", "col_type": "Art", "col_decision": "Entscheidung",
           "col_reason": "Begründung", "col_depth": "gefunden durch", "col_to": "nach",
           "type_section": "Abschnitt", "type_document": "Dokument", "type_external": "externe Quelle",
           "type_legal_section": "Vorschrift", "type_academic_numbered": "Literatur (Nummer)",
           "type_academic_shortform": "Literatur (Kurzform)", "type_document_mention": "Dokumentnennung",
           "relation_delegates": "Ermächtigung", "relation_applies_correspondingly": "gilt entsprechend",
           "relation_annex": "Anlage", "relation_note": "Fußnote"},
    "en": {"question": "Question", "followed": "followed", "skipped": "skipped", "primary": "Primary",
           "secondary": "Secondary", "tertiary": "Tertiary", "unresolved": "not in the context",
           "absent": "not in the collection", "entry": "found",
           "pages": "pages", "tier": "tier", "collection": "collection", "empty": "(no references)",
           "summary": "{followed} followed, {skipped} skipped references",
           "hidden": "{count} skipped sections or sections outside the context hidden",
           "interactive": "Interactive reference graph (open in the browser)",
           "col_from": "from", "col_reference": "reference", "col_type": "kind", "col_decision": "decision",
           "col_reason": "reason", "col_depth": "found by", "col_to": "to",
           "type_section": "section", "type_document": "document", "type_external": "external source",
           "type_legal_section": "provision", "type_academic_numbered": "literature (number)",
           "type_academic_shortform": "literature (short form)", "type_document_mention": "document named",
           "relation_delegates": "delegation", "relation_applies_correspondingly": "applies correspondingly",
           "relation_annex": "annex", "relation_note": "footnote"},
}


REASONER = {
    "de": {
        "broader": "Anwendungsbereich Begriffsbestimmungen",
        "angle": "Pflichten Ausnahmen Fristen",
        "q_gap": "Zu „{gap}“ steht in den gefundenen Stellen nichts. Was genau meinen Sie damit?",
        "q_answer": "Zu Ihrer Antwort „{answer}“ wurden {provisions} gefunden. "
                    "Trifft das Ihren Fall, oder fehlt etwas?",
        "q_same_number": "{section} gibt es in {docs}: welches Regelwerk ist gemeint?",
        "q_meanings": "„{term}“ wird in {docs} bestimmt: welche Bedeutung ist gemeint?",
        "q_provisions": "Gefunden wurden {provisions}. Welche dieser Vorschriften betrifft Ihren Fall?",
        "q_entity": "Ist {entity} für Ihre Frage maßgeblich, oder sollen weitere Vorschriften einbezogen werden?",
        "q_scope": "Geht es um einen bestimmten Personenkreis, eine Tätigkeit oder eine Anlage?",
        "q_docs": "Soll sich die Recherche auf {docs} beschränken?",
        "scope": "{count} Abschnitte aus {docs}",
        "summary": "Ausgangsfrage: {query} Präzisierungen des Nutzers: {answers}. Schwerpunkte: {concepts}.",
        "none": "keine",
        # (task, why, the asked kinds it serves: proposed when the question asks one of them or none at all)
        "tasks": [
            ("Maßgebliche Vorschriften und ihre Fundstellen ermitteln – Thema: {focus}",
             "Grundlage der Antwort: welche Abschnitte regeln das Thema", ()),
            ("Die Werte, Zahlen und Fristen mit ihrer Fundstelle belegen – Thema: {focus}",
             "Die Frage verlangt belastbare Werte mit Fundstelle", ("amount", "deadline", "frequency")),
            ("Klären, wer was unter welchen Voraussetzungen tun muss – Thema: {focus}",
             "Wer muss was unter welchen Bedingungen tun", ("body", "condition")),
            ("Ausnahmen, Sonderfälle und Verweise auf andere Vorschriften prüfen – Thema: {focus}",
             "Verweise führen oft zur eigentlichen Regelung", ()),
        ],
        "task_answered": "Die Fundstellen enthalten alle Begriffe der Aufgabe.",
        "task_missing": "Nicht in den Fundstellen: {missing}.",
        "task_nothing": "Keine Fundstelle zur Aufgabe.",
        "task_provision": "Was regelt {provision}?",
        "why_provision": "Durch einen Verweis erreicht ({via}), von keiner Aufgabe abgedeckt",
        "why_gap": "Wissenslücke aus der Klärung, noch offen",
        "why_saturated": "Die Suche zu dieser Aufgabe findet nur, was schon im Kontext ist",
        "assessment": "{kept} von {total} Fundstellen tragen zur Aufgabe bei (mittlere Relevanz {score:.2f}).",
        "relevance": "Vektorähnlichkeit {vector:.2f}, Schlüsselwortüberdeckung {overlap:.2f}{inherited}",
        "inherited": ", über einen Verweis erreicht ({score:.2f})",
        "opening": "**Ergebnis:** Maßgeblich ist {decisive}.",
        "rival": "In Betracht kommt auch {line}",
        "opening_chain": "**Ergebnis:** Maßgeblich ist {decisive}; dort wird auf {targets} verwiesen.",
        "opening_several": "**Ergebnis:** Mehrere Vorschriften kommen in Betracht: {provisions}.",
        "task_heading": "**Aufgabe {number}: {task}**",
        "task_not_found": "Nicht gefunden. Gesucht wurde nach: {queries}.",
        "task_quoted_above": "Die Fundstellen dieser Aufgabe ({provisions}) sind oben zitiert.",
        "chain_heading": "**Verweiskette**",
        "chain_above": "**{source}** verweist auf **{target}** (oben im Ergebnis zitiert).",
        "more_heading": "**Weitere Fundstellen**",
        "chain": "**{source}** verweist auf **{target}**:",
        "details": "Weitere Einzelheiten:",
        "no_answer": "Die durchsuchten Dokumente enthalten keine Passage, die die Frage „{anchor}“ beantwortet.",
        "issue_citation": "{count} Zitate stehen nicht auf der angegebenen Seite",
        "issue_kind_lead": "Der Anfang der Antwort nennt nicht, wonach gefragt ist: {kinds}",
        "issue_question_part": "Keine zitierte Aussage beantwortet: {parts}",
        "issue_outside": "{count} Zitate stehen in keiner gefundenen Stelle",
        "issue_no_lead": "Die Antwort beginnt ohne belegte Aussage",
        "kind_names": {"amount": "Wert oder Betrag", "deadline": "Frist oder Zeitpunkt", "frequency": "Häufigkeit",
                       "body": "zuständige Stelle", "condition": "Voraussetzung"},
        "issue_entry": "Die maßgebliche Vorschrift {provision} wird nicht zitiert",
        "issue_verdict_weaker": "Als maßgeblich genannt ist {named} (Bewertung {score:.2f}); stärker belegt ist {best} "
                                "({best_score:.2f})",
        "issue_verdict_missing": "Die als maßgeblich genannte Vorschrift {named} steht nicht in den Fundstellen",
        "issue_verdict_unsure": "{named} liegt vorn, aber nicht deutlich (Bewertung {score:.2f}); {rival} kommt "
                                "ebenfalls in Betracht ({rival_score:.2f})",
        "issue_verdict_chain": "Die genannte Verweiskette ({chain}) ist nicht in den Fundstellen belegt",
        "issue_model_text": "Die Antwort zitiert Text, der sich an KI-Systeme richtet ({where}): er ist keine Aussage "
                            "der Dokumente",
        "issue_verdict_open": "Keine Vorschrift wird als maßgeblich genannt, obwohl {best} deutlich vorn liegt "
                              "({best_score:.2f})",
        "issue_part": "Ohne zitierte Aussage bleibt, wonach ausdrücklich gefragt wurde: {parts}",
        "issue_excluded": "{count} Zitate betreffen, was ausgeschlossen wurde ({cases})",
        "issue_task": "Ohne eigenen Abschnitt: {tasks}",
        "issue_off_anchor": "{count} Zitate ohne Bezug zur Frage",
        "issue_followed": "{provision} verweist auf {target}; die Antwort zitiert es nicht",
        "issue_fragments": "{count} Zitate sind keine ganzen Sätze",
        "issue_support": "{count} Aussagen werden von der zitierten Quelle nicht gestützt",
        "issue_relevance": "Die Antwort greift die Frage nur teilweise auf (Überdeckung {score:.2f})",
        "issue_structure": "Zu wenige belegte Aussagen für eine vollständige Antwort",
        "issue_duplicates": "{count} doppelte Aussagen",
        "issue_language": "Teile der Antwort sind nicht auf Deutsch (wörtliche Zitate der Quellen)",
        "remedy": "Nur Sätze mit gestützter Quellenangabe verwenden; stärker auf die Frage fokussieren; "
                  "Wiederholungen entfernen",
        "no_remedy": "Eine Überarbeitung behebt die gefundenen Probleme nicht",
    },
    "en": {
        "broader": "scope definitions",
        "angle": "duties exceptions deadlines",
        "q_gap": "The passages found say nothing about “{gap}”. What exactly do you mean by it?",
        "q_answer": "For your answer “{answer}” the search found {provisions}. Does that match your case, or is "
                    "something missing?",
        "q_same_number": "{section} exists in {docs}: which of them do you mean?",
        "q_meanings": "“{term}” is defined in {docs}: which meaning do you mean?",
        "q_provisions": "The search found {provisions}. Which of these applies to your case?",
        "q_entity": "Is {entity} the decisive source for your question, or should other rules be included?",
        "q_scope": "Is the question about a particular group of people, an activity or a facility?",
        "q_docs": "Should the research be limited to {docs}?",
        "scope": "{count} sections from {docs}",
        "summary": "Original question: {query} User's clarifications: {answers}. Focus: {concepts}.",
        "none": "none",
        "tasks": [
            ("Identify the governing rules and where they stand – topic: {focus}",
             "Basis of the answer: which sections govern it", ()),
            ("Establish the values, figures and deadlines with their source – topic: {focus}",
             "The question needs verifiable values with their source", ("amount", "deadline", "frequency")),
            ("Clarify who is responsible for what, and under which conditions – topic: {focus}",
             "Who must do what under which conditions", ("body", "condition")),
            ("Check exceptions, special cases and references to other documents – topic: {focus}",
             "References often lead to the actual rule", ()),
        ],
        "task_answered": "The passages hold every term of the task.",
        "task_missing": "Not in the passages: {missing}.",
        "task_nothing": "No passage for the task.",
        "task_provision": "What does {provision} provide?",
        "why_provision": "Reached through a reference ({via}) that no task covers",
        "why_gap": "Knowledge gap from the clarification, still open",
        "why_saturated": "Searching for this task finds only what the context holds already",
        "assessment": "{kept} of {total} passages contribute to the task (mean relevance {score:.2f}).",
        "relevance": "vector similarity {vector:.2f}, keyword overlap {overlap:.2f}{inherited}",
        "inherited": ", reached through a reference ({score:.2f})",
        "opening": "**In short:** The decisive provision is {decisive}.",
        "rival": "Also in question: {line}",
        "opening_chain": "**In short:** The decisive provision is {decisive}, which refers to {targets}.",
        "opening_several": "**In short:** Several provisions may apply: {provisions}.",
        "task_heading": "**Task {number}: {task}**",
        "task_not_found": "Not found. Searched for: {queries}.",
        "task_quoted_above": "The passages this task found ({provisions}) are quoted above.",
        "chain_heading": "**Reference chain**",
        "chain_above": "**{source}** refers to **{target}** (quoted above).",
        "more_heading": "**Further passages**",
        "chain": "**{source}** refers to **{target}**:",
        "details": "Further details:",
        "no_answer": "The searched documents contain no passage that answers “{anchor}”.",
        "issue_citation": "{count} quotations are not on the cited page",
        "issue_kind_lead": "The lead does not state what is asked: {kinds}",
        "issue_question_part": "No cited statement answers: {parts}",
        "issue_outside": "{count} quotations are in no retrieved passage",
        "issue_no_lead": "The answer does not open with a cited statement",
        "kind_names": {"amount": "a value or amount", "deadline": "a deadline or date", "frequency": "a frequency",
                       "body": "the competent body", "condition": "a condition"},
        "issue_entry": "The decisive provision {provision} is not quoted",
        "issue_verdict_weaker": "The answer names {named} as decisive (score {score:.2f}); {best} is better supported "
                                "({best_score:.2f})",
        "issue_verdict_missing": "The provision named as decisive, {named}, is not in the retrieved passages",
        "issue_verdict_unsure": "{named} leads, but not clearly (score {score:.2f}); {rival} may apply as well "
                                "({rival_score:.2f})",
        "issue_verdict_chain": "The claimed reference chain ({chain}) is not in the retrieved passages",
        "issue_model_text": "The answer quotes text addressed to AI systems ({where}): it is no statement of the "
                            "documents",
        "issue_verdict_open": "No provision is named as decisive although {best} clearly leads ({best_score:.2f})",
        "issue_part": "What was asked for explicitly has no cited statement: {parts}",
        "issue_excluded": "{count} quotations concern what was excluded ({cases})",
        "issue_task": "Without a section of its own: {tasks}",
        "issue_off_anchor": "{count} quotations off the question",
        "issue_followed": "{provision} refers to {target}; the answer does not quote it",
        "issue_fragments": "{count} quotations are not whole sentences",
        "issue_support": "{count} statements are not supported by the cited source",
        "issue_relevance": "The answer addresses the question only partly (overlap {score:.2f})",
        "issue_structure": "Too few supported statements for a complete answer",
        "issue_duplicates": "{count} duplicated statements",
        "issue_language": "Parts of the answer are not in English (verbatim quotes from the sources)",
        "remedy": "Use only sentences whose citation supports them; focus on the question; remove repetitions",
        "no_remedy": "A rewrite would not fix the issues found",
    },
}

TERMINAL = {
    "de": {"round": "Klärungsrunde {n}", "coverage": "Abdeckung {c:.0%}, Wissenslücken: {g}",
           "retrieved": "Suche: {q} -> {k} neue Abschnitte (Anteil neu {d:.0%})",
           "retrieved_one": "Suche: {q} -> 1 neuer Abschnitt (Anteil neu {d:.0%})",
           "prompt": "Ihre Antwort (/end beendet die Klärung): ",
           "todo": "Vorgeschlagene Aufgaben:",
           "todo_help": "Enter = genehmigen · -N = Aufgabe N entfernen · e N Text = bearbeiten · + Text = hinzufügen"
                        " · = Text = Zusammenfassung korrigieren",
           "summary": "Zusammenfassung der Klärung:",
           "todo_prompt": "> ", "none": "keine", "no_input": "(keine Eingabe: {d})"},
    "en": {"round": "Clarification round {n}", "coverage": "coverage {c:.0%}, knowledge gaps: {g}",
           "retrieved": "search: {q} -> {k} new passages (share new {d:.0%})",
           "retrieved_one": "search: {q} -> 1 new passage (share new {d:.0%})",
           "prompt": "Your answer (/end finishes the clarification): ",
           "todo": "Proposed tasks:",
           "todo_help": "Enter = approve · -N = remove task N · e N text = edit · + text = add"
                        " · = text = correct the summary",
           "summary": "What the clarification settled:",
           "todo_prompt": "> ", "none": "none", "no_input": "(no input: {d})"},
}


# what a run reports while it works (progress lines, warnings, errors) and why a reference was not followed
RUN = {
    "de": {
        "reason_configured": "eingestellt: {setting}",
        "reason_ollama_down": "Ollama unter {url} antwortet nicht ({error})",
        "reason_ollama_has": "Ollama unter {url} hat {model}",
        "reason_ollama_lacks": "Ollama unter {url} antwortet, hat aber weder {model} noch {fallback} "
                               "(ollama pull {model})",
        "task_progress": "Aufgabe {n}/{total}: {task}", "nothing_new": "Die Suche findet nichts Neues.",
        "answer_uncited": "Die Antwort zitiert keine Seite der gefundenen Stellen; keine ihrer Aussagen ist "
                          "an den Dokumenten geprüft.",
        "round_line": "  Durchgang {n}: {reason}",
        "drift": "{share:.0%} des gesammelten Kontexts passt nicht zur Frage und wurde vor der Synthese entfernt",
        "original_question": "Ursprüngliche Frage", "dialogue_query": "Forschungsquery aus dem Dialog",
        "plan_repeats": "{count} vorgeschlagene Aufgabe(n) weggelassen: ihre Suche fände nur, was die Frage findet",
        "all_removed": "Alle Aufgaben wurden entfernt; die ursprüngliche Frage wird bearbeitet",
        "task_added": "Aufgabe hinzugefügt: {task} ({reason})",
        "task_closed": "Aufgabe vorzeitig erledigt: {task} ({reason})",
        "chroma_unreachable": "Der Chroma-Server unter {location} antwortet nicht mehr ({error}); starten Sie ihn "
                              "wieder und setzen Sie die Sitzung fort.",
        "llm_unreachable": "Das Sprachmodell ist nicht erreichbar ({error}). Der Fortschritt ist gespeichert; "
                           "starten Sie Ollama und setzen Sie die Sitzung fort.",
        "llm_not_ollama": "Unter der Adresse des Sprachmodells antwortet nicht Ollama ({error}). Der Fortschritt "
                          "ist gespeichert; prüfen Sie OLLAMA_BASE_URL und setzen Sie die Sitzung fort.",
        "step_failed": "Schritt '{node}' ist fehlgeschlagen: {error}",
        "already_visited": "bereits besucht", "cites_context": "zitiert eine Fundstelle im Kontext",
        "cited_in_context": "nicht verfolgt, doch die Suche fand die zitierte Vorschrift",
        "already_in_context": "bereits im Kontext", "already_followed": "bereits verfolgt",
        "chunk_limit": "Limit je Abschnitt erreicht",
        "converged": "Konvergenz: schon genug Verweise in {doc}", "token_budget": "Token-Budget erschöpft",
        "early_refusal": "früher Abbruch: die ersten Verweise passten nicht zur Frage",
        "url_recorded": "URL vermerkt, nicht abgerufen", "earlier_version": "frühere Fassung ({version})",
        "not_in_kb": "nicht in der Wissensbasis", "not_in_collection": "Dokument nicht in der Sammlung",
        "section_not_found": "Abschnitt in {law} nicht vorhanden",
        "section_repealed": "Abschnitt in {law} weggefallen",
        "gate_similarity_follow": "Ähnlichkeit des Kontexts mit der Frage {score:.2f} ≥ Schwelle {threshold:.2f}",
        "gate_similarity_skip": "Ähnlichkeit des Kontexts mit der Frage {score:.2f} < Schwelle {threshold:.2f}",
        "gate_error": "Gate-Fehler ({error}), Referenz wird verfolgt", "gate_declined": "vom Gate abgelehnt",
        "depth_limit": "Tiefenlimit erreicht",
        "note_followed": "Fußnote der Passage: ohne Gate verfolgt (gewichtet nach Ähnlichkeit {score:.2f})",
        "gate_model_decision": "vom Sprachmodell entschieden (seine Begründung war nicht auf Deutsch)",
        "session_line": "Sprache: {language}; Reasoner: {provider} ({reason})",
        "hitl_ended": "Klärung beendet: {reason}", "hitl_user_end": "vom Nutzer beendet",
        "hitl_unattended": "keine Klärung (Lauf ohne Rückfragen)",
        "hitl_max_iterations": "höchste Zahl der Runden erreicht",
        "hitl_convergence": "die Suche findet nichts Neues mehr",
        "remediation_line": "Überarbeitung: {instructions}", "remediation_none": "keine Überarbeitung",
        "todo_unknown_remove": "Aufgabenliste: keine Aufgabe mit der Nummer {ids} zum Entfernen",
        "todo_unknown_edit": "Aufgabenliste: keine Aufgabe mit der Nummer {id} zum Bearbeiten",
        "todo_full": "Die Aufgabenliste ist voll ({max_items} Aufgaben); „{task}“ wurde nicht hinzugefügt",
        "summary_question": "Recherchiert wird: {question}",
        "summary_additions": "Zusätzlich: {items}",
        "summary_exclusions": "Ausgenommen: {items}",
        "summary_provisions": "Genannte Vorschriften: {items}",
        "summary_corrected": "Zusammenfassung korrigiert: {summary}",
        "quote_figure": "enthält einen Grenzwert oder eine Zahlenangabe",
        "quote_duty": "legt eine Pflicht oder Erlaubnis fest", "quote_definition": "enthält eine Begriffsbestimmung",
        "page_short": "S.",
    },
    "en": {
        "reason_configured": "set: {setting}", "reason_ollama_down": "Ollama at {url} does not answer ({error})",
        "reason_ollama_has": "Ollama at {url} has {model}",
        "reason_ollama_lacks": "Ollama at {url} answers but has neither {model} nor {fallback} (ollama pull {model})",
        "task_progress": "Task {n}/{total}: {task}", "nothing_new": "The search finds nothing new.",
        "answer_uncited": "The answer cites no page of the passages found; none of its statements is checked "
                          "against the documents.",
        "round_line": "  Round {n}: {reason}",
        "drift": "{share:.0%} of the gathered context does not fit the question and was removed before synthesis",
        "original_question": "Original question", "dialogue_query": "Research query from the dialogue",
        "plan_repeats": "{count} proposed task(s) left out: their search finds only what the question finds already",
        "all_removed": "All tasks were removed; researching the original question",
        "task_added": "Task added: {task} ({reason})", "task_closed": "Task closed early: {task} ({reason})",
        "chroma_unreachable": "The Chroma server at {location} stopped answering ({error}); start it again and "
                              "resume the session.",
        "llm_unreachable": "The language model cannot be reached ({error}). Progress is saved; start Ollama and "
                           "resume the session.",
        "llm_not_ollama": "Something other than Ollama answers at the model's address ({error}). Progress is "
                          "saved; check OLLAMA_BASE_URL and resume the session.",
        "step_failed": "Step '{node}' failed: {error}",
        "already_visited": "already visited", "cites_context": "cites a passage in the context",
        "cited_in_context": "not followed, but search found the cited provision",
        "already_in_context": "already in the context", "already_followed": "already followed",
        "chunk_limit": "per-chunk limit reached",
        "converged": "convergence: enough references into {doc}", "token_budget": "token budget exhausted",
        "early_refusal": "early refusal: the first references did not fit the question",
        "url_recorded": "URL recorded, never fetched", "earlier_version": "an earlier version ({version})",
        "not_in_kb": "not in the knowledge base", "not_in_collection": "document not in the collection",
        "section_not_found": "section not found in {law}",
        "section_repealed": "section repealed in {law}",
        "gate_similarity_follow": "context similarity to the question {score:.2f} >= threshold {threshold:.2f}",
        "gate_similarity_skip": "context similarity to the question {score:.2f} < threshold {threshold:.2f}",
        "gate_error": "gate error ({error}); following the reference", "gate_declined": "declined by the gate",
        "depth_limit": "depth limit reached",
        "note_followed": "a footnote of the passage: followed without the gate (weighed by similarity {score:.2f})",
        "gate_model_decision": "decided by the language model (its reason was not in English)",
        "session_line": "language: {language}; reasoner: {provider} ({reason})",
        "hitl_ended": "Clarification ended: {reason}", "hitl_user_end": "ended by the user",
        "hitl_max_iterations": "the most rounds reached",
        "hitl_unattended": "no clarification (unattended run)",
        "hitl_convergence": "the search finds nothing new",
        "remediation_line": "Revision: {instructions}", "remediation_none": "no revision",
        "todo_unknown_remove": "to-do list: no task numbered {ids} to remove",
        "todo_unknown_edit": "to-do list: no task numbered {id} to edit",
        "todo_full": "The to-do list is full ({max_items} tasks); '{task}' was not added",
        "summary_question": "To be researched: {question}",
        "summary_additions": "Also: {items}",
        "summary_exclusions": "Left out: {items}",
        "summary_provisions": "Provisions named: {items}",
        "summary_corrected": "Summary corrected: {summary}",
        "quote_figure": "states a limit or a figure", "quote_duty": "states a duty or permission",
        "quote_definition": "contains a definition",
        "page_short": "p.",
    },
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


def reasoner_text(language: str) -> dict:
    """What the extractive reasoner writes, framing and templates."""
    return _pick(REASONER, language)


def terminal_text(language: str) -> dict[str, str]:
    """The CLI's clarification and approval dialogue."""
    return _pick(TERMINAL, language)


def run_text(language: str) -> dict[str, str]:
    """Progress lines, warnings, errors and reference decisions of a run."""
    return _pick(RUN, language)


def dialogue_end(reason: str, language: str) -> str:
    """How the clarification dialogue ended, in words ("user_end" -> "vom Nutzer beendet")."""
    return run_text(language).get(f"hitl_{reason}", reason) if reason else "-"


def reasoner_reason(info: dict, language: str) -> str:
    """Why this reasoner runs, in the reader's language (`info` as the report's metadata holds it, or a
    ReasonerInfo's fields); the English reason when there is no catalogue key."""
    key, values = info.get("reason_key") or "", info.get("reason_values") or {}
    template = run_text(language).get(f"reason_{key}") if key else None
    try:
        return template.format(**values) if template else str(info.get("reason", ""))
    except (KeyError, IndexError):
        return str(info.get("reason", ""))
