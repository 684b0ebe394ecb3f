"""The workbench panels. Each takes its back end in the constructor and exposes its controls as
attributes (so tests can click them); `widget` is what gets displayed."""

from __future__ import annotations

import html
import logging
from pathlib import Path

import ipywidgets as w
from IPython.display import HTML

from rabbithole_lab.evidence.sources import links_relative_to
from rabbithole_lab.messages.catalogue import reasoner_reason, report_labels, ui_text
from rabbithole_lab.messages.reasons import notice_text
from rabbithole_lab.records import FinalReport
from rabbithole_lab.report.view import run_counts
from rabbithole_lab.support.shown_text import shorten
from rabbithole_lab.ui.answer_view import CitationTarget, CitedAnswer, open_in
from rabbithole_lab.ui.backend import WorkbenchBackend
from rabbithole_lab.ui.pdf_view import PdfPageView
from rabbithole_lab.viz.reference_graph import (
    graph_height_px,
    graph_html,
    graph_legend_html,
    hidden_note,
    reference_graph,
)
from rabbithole_lab.viz.tables import TIERS, context_chunks, full_extracts, tier_table_html, tier_tables

PREVIEW_CHARS = 240


def full_width(**extra) -> w.Layout:
    """A full-width box: 100% plus the widgets' 2 px side margins overflowed by 4 px (a scrollbar under
    every panel), so the side margins go."""
    return w.Layout(width="100%", margin="2px 0", **extra)


class QueryPanel:
    """Question, collection choice, the session's language, reasoner status and Start."""

    def __init__(self, backend: WorkbenchBackend):
        self.backend = backend
        self.text, self.shown_language = ui_text("de"), "de"
        self.info = backend.reasoner_status()
        self.embedder_info = backend.embedder_status()
        self.question = w.Textarea(placeholder=self.text["question_placeholder"], layout=full_width(height="4em"))
        self.collection = w.Dropdown(options=[(self.text["all_collections"], "")] +
                                     [(c, c) for c in backend.collections()], description=self.text["collection"])
        self.language = w.Dropdown(options=self._language_options(), value="auto", description=self.text["language"],
                                   layout=w.Layout(width="auto"))
        self.reasoner = w.HTML()
        self.start = w.Button(description=self.text["start"], button_style="primary", icon="play",
                              layout=w.Layout(width="auto"))
        self.message = w.HTML()
        self.widget = w.VBox([self.question, w.HBox([self.collection, self.language, self.start],
                                                    layout=w.Layout(flex_flow="row wrap")),
                              self.reasoner, self.message])
        self._draw_reasoner()

    def _language_options(self) -> list[tuple[str, str]]:
        return [(self.text["language_auto"], "auto"), ("Deutsch", "de"), ("English", "en")]

    def _draw_reasoner(self) -> None:
        model = f" {self.info.model}" if self.info.model else ""
        embedder = self.embedder_info
        said = self.text["embedder_fallback"].format(model=embedder.model)  # the notice in the reader's language
        notice = f"<br><span style='color:#a15c00'>⚠ {html.escape(said)}</span>" if embedder.notice else ""
        window = ""
        if self.info.window_tokens:  # what one call to the model may hold (reasoning/llm/model_window.py)
            context = f"{self.info.context_tokens:,}" if self.info.context_tokens else self.text["context_unknown"]
            window = " · " + html.escape(self.text["model_window"].format(window=f"{self.info.window_tokens:,}",
                                                                         context=context))
        self.reasoner.value = (
            f"<b>{html.escape(self.text['reasoner'])}:</b> {html.escape(self.info.provider + model)} "
            f"<span style='color:#666'>({html.escape(reasoner_reason(vars(self.info), self.shown_language))})"
            f"{window}</span> · "
            f"<b>{html.escape(self.text['embedder'])}:</b> "
            f"{html.escape(embedder.model)} <span style='color:#666'>({html.escape(embedder.backend)})"
            f"</span>{notice}")

    def chosen_language(self) -> str | None:
        """"de" or "en" when the user chose one, None to follow the question."""
        return None if self.language.value == "auto" else self.language.value

    def set_language(self, language: str) -> None:
        self.text, self.shown_language = ui_text(language), language
        self.question.placeholder = self.text["question_placeholder"]
        self.collection.description = self.text["collection"]
        chosen = self.language.value
        self.collection.options = [(self.text["all_collections"], "")] + list(self.collection.options[1:])
        self.language.options = self._language_options()
        self.language.value = chosen
        self.language.description = self.text["language"]
        self.start.description = self.text["start"]
        self._draw_reasoner()

    def selected_collection(self) -> str | None:
        return self.collection.value or None


class HITLPanel:
    """Follow-up questions, answer box with Send and /end, coverage, gaps and retrieval history."""

    def __init__(self, backend: WorkbenchBackend):
        self.backend = backend
        self.text = ui_text("de")
        self.title = w.HTML()
        self.previous = w.HTML()
        self.questions = w.HTML()
        self.coverage = w.HTML()
        self.answer_box = w.Textarea(placeholder=self.text["answer_placeholder"], layout=full_width())
        self.send = w.Button(description=self.text["send"], button_style="primary", layout=w.Layout(width="auto"))
        self.end = w.Button(description=self.text["end"], layout=w.Layout(width="auto"))
        self.history = w.Accordion(children=[])
        self.send.on_click(lambda _: self._reply(self.answer_box.value.strip()))
        self.end.on_click(lambda _: self._reply("/end"))
        self.widget = w.VBox([self.title, self.previous, self.questions, self.coverage, self.answer_box,
                              w.HBox([self.send, self.end]), self.history],
                             layout=w.Layout(display="none"))

    def set_language(self, language: str) -> None:
        self.text = ui_text(language)
        self.send.description = self.text["send"]
        self.answer_box.placeholder = self.text["answer_placeholder"]

    def _reply(self, value: str) -> None:
        if not value:
            return
        self.send.disabled = self.end.disabled = True
        self.answer_box.value = ""
        self.backend.answer(value)

    def show(self, interrupt: dict) -> None:
        t = self.text
        self.widget.layout.display = "flex"
        self.title.value = f"<h3>{t['hitl_title']} · {t['round'].format(n=interrupt.get('iteration', 0) + 1)}</h3>"
        previous = interrupt.get("previous_answer", "")
        understanding = interrupt.get("understanding", "")
        self.previous.value = "".join([
            f"<div class='rh-previous-answer'><b>{html.escape(t['your_answer'])}:</b> {html.escape(previous)}</div>"
            if previous else "",
            f"<div class='rh-understanding'><b>{html.escape(t['understanding'])}:</b> {html.escape(understanding)} "
            f"<i style='color:#666'>{html.escape(t['understanding_hint'])}</i></div>" if understanding else ""])
        self.questions.value = "<ol>" + "".join(f"<li>{html.escape(q)}</li>" for q in interrupt.get("questions", [])) \
            + "</ol>"
        gaps = ", ".join(html.escape(g) for g in interrupt.get("knowledge_gaps", [])) or t["none"]
        rule = interrupt.get("convergence")
        self.coverage.value = (f"<b>{t['coverage']}:</b> {interrupt.get('coverage_score', 0.0):.0%} · "
                               f"<b>{t['gaps']}:</b> {gaps} · <b>{t['dedup']}:</b> "
                               f"{interrupt.get('dedup_ratio', 0.0):.0%}"
                               + (f"<br><i>{t['convergence_rule'].format(**rule)}</i>" if rule else ""))
        self.send.disabled = self.end.disabled = False

    def show_history(self, history: list[dict]) -> None:
        t = self.text
        children, titles = [], []
        for entry in history:
            rows = "".join(
                f"<tr><td>{html.escape(c['doc'])}</td><td>{html.escape(c.get('section', ''))}</td>"
                f"<td>{c['page']}</td><td>{c['score']:.2f}</td><td title=\"{html.escape(c['preview'], quote=True)}\">"
                f"{html.escape(shorten(c['preview'], PREVIEW_CHARS))}</td></tr>"
                for c in entry.get("chunks", []))
            queries = "".join(f"<li>{html.escape(q)}</li>" for q in entry.get("queries", []))
            counts = t["round_counts"].format(retrieved=entry.get("retrieved", 0), new=entry.get("new", 0),
                                              seen=entry.get("seen_before", 0),
                                              duplicates=entry.get("within_round_duplicates", 0))
            header = (f"<tr><th>{t['document']}</th><th>{t['section']}</th><th>{t['page_column']}</th>"
                      f"<th>{t['score']}</th><th>{t['preview']}</th></tr>")
            children.append(w.HTML(f"<b>{t['queries']}:</b><ul>{queries}</ul><p>{counts}</p>"
                                   f"<table>{header}{rows}</table>"))
            new = entry.get("new", 0)
            chunks = t["chunks_one" if new == 1 else "chunks"]
            titles.append(f"{t['round'].format(n=entry['iteration'] + 1)}: {new} {chunks}, "
                          f"{t['dedup']} {entry.get('dedup_ratio', 0.0):.0%}")
        self.history.children = children
        for index, title in enumerate(titles):
            self.history.set_title(index, title)

    def hide(self) -> None:
        self.widget.layout.display = "none"


class ResultsPanel:
    """Answer with clickable citations and the sources (a click opens the cited page beside the answer, the
    quote marked), key findings, quality per dimension, tasks, warnings, and "save report"."""

    def __init__(self, notebook_dir: Path | None = None):
        self.text = ui_text("de")
        self.notebook_dir = notebook_dir or Path.cwd()
        self.viewer = PdfPageView()
        self.answer = CitedAnswer(on_citation=self.open_citation)
        self.hint = w.HTML()
        self.findings = w.HTML()
        self.verdict = w.HTML()
        self.quality = w.HTML()
        self.tasks = w.HTML()
        self.warnings = w.HTML()
        self.save = w.Button(description=self.text["save_report"], icon="save", layout=w.Layout(width="auto"))
        self.saved = w.HTML()
        column = w.VBox([self.hint, self.answer], layout=w.Layout(flex="1 1 55%", min_width="0"))
        self.widget = w.VBox([w.HTML(), self.verdict,
                              w.HBox([column, self.viewer.widget], layout=w.Layout(width="100%")),
                              self.findings, self.quality, self.tasks, self.warnings,
                              w.HBox([self.save, self.saved])], layout=w.Layout(display="none"))

    def set_language(self, language: str) -> None:
        self.text = ui_text(language)
        self.save.description = self.text["save_report"]
        self.viewer.set_language(language)

    def open_citation(self, target: CitationTarget) -> bool:
        return open_in(self.viewer, target)

    def show_saved(self, folder: Path | None, error: str = "") -> None:
        message = (self.text["saved_to"].format(folder=folder) if folder is not None
                   else self.text["save_failed"].format(error=error))
        self.saved.value = html.escape(message)

    def show(self, report: dict, language: str) -> None:
        t = self.text = ui_text(language)
        self.widget.children[0].value = f"<h3>{t['results_title']}</h3>"
        self.save.description, self.saved.value = t["save_report"], ""
        self.viewer.set_language(language)
        self.viewer.hide()
        self.hint.value = f"<i style='color:#666'>{html.escape(t['open_page_hint'])}</i>"
        # the answer's text (question and document text included) is escaped: it renders as the text it is
        self.answer.show(FinalReport.model_validate(report), links_relative_to(self.notebook_dir), language)
        self.findings.value = f"<h4>{t['findings']}</h4><ul>" + "".join(
            f"<li>{html.escape(f['claim'])}</li>" for f in report.get("findings", [])) + "</ul>"
        names = report_labels(language)
        rows = "".join(f"<tr><td>{html.escape(names.get(k, k.replace('_', ' ')))}</td><td>{v}</td></tr>"
                       for k, v in report.get("quality_breakdown", {}).items())
        meta = report.get("metadata", {})
        self.verdict.value = verdict_html(meta.get("verdict") or {}, names)
        # each deduction with its reason, and the claims taken out of the answer
        reasons = "".join(f"<li>{html.escape(issue)}</li>" for issue in meta.get("quality_issues", []))
        removed = "".join(f"<li>{html.escape(claim)}</li>" for claim in meta.get("invented_citations", []))
        counts = run_counts(FinalReport.model_validate(report))
        said = t["counts"].format(cited=counts.cited, read=counts.read, followed=counts.followed)
        self.quality.value = (f"<h4>{t['quality']}: {report.get('quality_score', 0)}/500</h4>"
                              f"<p class='rh-counts'>{html.escape(said)}</p><table>{rows}</table>"
                              + (f"<ul class='rabbithole-quality-reasons'>{reasons}</ul>" if reasons else "")
                              + (f"<p>{html.escape(names['invented'])}:</p><ul>{removed}</ul>" if removed else ""))
        self.tasks.value = f"<h4>{t['task_summaries']}</h4><ol>" + "".join(
            f"<li><b>{html.escape(task['task'])}</b>"
            + (f" ({t['relevance']} {task['relevance_score']:.2f})"
               if isinstance(task.get("relevance_score"), (int, float)) else "")
            + (f"<br>{html.escape(task['summary'])}" if task.get("summary") else "")
            + (f"<br><i>{t['added_during_research']}: {html.escape(task.get('added_reason', ''))}</i>"
               if task.get("origin") == "added" else "")
            + (f"<br><i>{t['closed_early']}: {html.escape(task['closed_reason'])}</i>"
               if task.get("closed_reason") else "")
            + (f"<br>{len(task['rounds'])} {t['rounds']}: " + "; ".join(
                html.escape(notice_text(r.get("reason", ""), language)) for r in task["rounds"])
               if len(task.get("rounds", [])) > 1 else "")
            # what was off the question is counted, not listed (a list of 20 chunk names buried the summary)
            + (f"<br><i>{html.escape(t['irrelevant'].format(count=len(task['irrelevant_findings'])))}</i>"
               if task.get("irrelevant_findings") else "")
            + (f"<br><i>{html.escape(t['in_answer'].format(count=task['in_answer']))}</i>"
               if task.get("in_answer") else "")
            + "</li>" for task in report.get("metadata", {}).get("tasks", [])) + "</ol>"
        warnings = [notice_text(x, language) for x in report.get("metadata", {}).get("warnings", [])]
        self.warnings.value = (f"<h4>{t['warnings']}</h4><ul>" + "".join(f"<li>{html.escape(x)}</li>" for x in warnings)
                               + "</ul>") if warnings else ""
        self.widget.layout.display = "flex"


class ContextPanel:
    """Tier tables (pandas) and the followed reference graph (pyvis, inline)."""

    def __init__(self):
        self.text = ui_text("de")
        self.tables = w.Tab(children=[w.Output() for _ in TIERS])
        self.graph = w.HTML()
        self.legend = w.HTML()
        self.show_skipped = w.Checkbox(value=False, description=self.text["show_skipped"], indent=False)
        self.show_skipped.observe(lambda _: self._draw_graph(), names="value")
        self._state: dict = {}
        self._language = "de"
        self.widget = w.VBox([w.HTML(), self.tables, w.HTML(), w.HBox([self.show_skipped]), self.legend, self.graph],
                             layout=w.Layout(display="none"))

    def show(self, state: dict, language: str) -> None:
        t = self.text = ui_text(language)
        self._state, self._language = state, language
        self.widget.children[0].value = f"<h3>{t['tiers_title']}</h3>"
        self.widget.children[2].value = f"<h3>{t['graph_title']}</h3>"
        self.show_skipped.description = t["show_skipped"]
        for index, (tier, frame) in enumerate(tier_tables(state).items()):
            self.tables.set_title(index, f"{t[tier]} ({len(frame)})")
            output = self.tables.children[index]
            output.outputs = ()
            table = tier_table_html(frame, language, full_extracts(state, tier))
            output.append_display_data(HTML(table))
        self.tables.selected_index = 0
        self._draw_graph()
        self.widget.layout.display = "flex"

    def _draw_graph(self) -> None:
        """The followed chain by depth; skipped references only when the reader asks for them."""
        graph = reference_graph(self._state.get("reference_edges", []), context_chunks(self._state),
                                include_skipped=self.show_skipped.value, question=True)
        height_px = graph_height_px(graph)
        page = graph_html(graph, height=f"{height_px}px", language=self._language)
        hidden = hidden_note(graph, self._language)
        self.legend.value = graph_legend_html(graph, self._language) + (
            f"<div style='font-size:12px;color:#555'>{html.escape(hidden)}</div>" if hidden else "")
        self.graph.value = (f'<iframe class="rh-graph" srcdoc="{html.escape(page, quote=True)}" '
                            f'style="width:100%;box-sizing:border-box;height:{height_px + 40}px;'
                            f'border:1px solid #ddd"></iframe>')


class LogPanel:
    """Log records of the package go to an Output widget instead of the cell."""

    def __init__(self):
        self.output = w.Output(layout=w.Layout(max_height="12em", overflow="auto"))
        self.handler = _OutputHandler(self.output)
        self.widget = w.Accordion(children=[self.output])
        self.widget.set_title(0, ui_text("de")["log"])
        self.widget.selected_index = None

    def set_language(self, language: str) -> None:
        self.widget.set_title(0, ui_text(language)["log"])

    def attach(self, logger_name: str = "rabbithole_lab") -> None:
        target = logging.getLogger(logger_name)
        if self.handler not in target.handlers:
            target.addHandler(self.handler)
        target.setLevel(min(target.level or logging.INFO, logging.INFO))

    def detach(self, logger_name: str = "rabbithole_lab") -> None:
        logging.getLogger(logger_name).removeHandler(self.handler)

    def clear(self) -> None:
        """A new session's log starts empty: another session's lines are not this one's."""
        self.output.outputs = ()


class _OutputHandler(logging.Handler):
    def __init__(self, output: w.Output):
        super().__init__(logging.INFO)
        self.output = output
        # time and message only: level names and module paths are the program's words, not the reader's
        self.setFormatter(logging.Formatter("%(asctime)s %(message)s", "%H:%M:%S"))

    def emit(self, record: logging.LogRecord) -> None:
        mark = "⚠ " if record.levelno >= logging.WARNING else ""
        line = self.format(record)
        self.output.append_stdout(line.replace(" ", f" {mark}", 1) + "\n" if mark else line + "\n")


def verdict_html(verdict: dict, names: dict[str, str]) -> str:
    """The verdict above the answer: the provision named as decisive and the chain it brought, with its score and
    margin; or the contenders with their scores when the answer names none. Empty without a verdict record."""
    if not verdict:
        return ""
    if verdict.get("stated"):
        chain = " → ".join([verdict.get("label", ""), *(item.get("label", "") for item in verdict.get("chain", []))])
        said = (f"<b>{html.escape(names['verdict_named'])}:</b> {html.escape(chain)} "
                f"({html.escape(names['verdict_score'])} {float(verdict.get('score', 0)):.2f}, "
                f"{html.escape(names['verdict_margin'])} {float(verdict.get('margin', 0)):.2f})")
    else:
        contenders = ", ".join(f"{html.escape(item.get('label', ''))} ({float(item.get('score', 0)):.2f})"
                               for item in verdict.get("candidates", [])[:3])
        said = f"<b>{html.escape(names['verdict_open'])}:</b> {contenders}"
    return f"<p class='rabbithole-verdict'>{said}</p>"
