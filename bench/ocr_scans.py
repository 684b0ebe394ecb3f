"""OCR on ingest (issue 74): what scanned copies cost and what they keep, against the text copies.

Scanned copies (`bench/scanned_copy.py`: every page an image, no text layer) are made in a scratch folder of the
demo knowledge base's four PDFs and of two corpus laws, StrlSchG and StrlSchV, and ingested by `rabbithole ingest`
with Tesseract (the default settings). Reported:
- OCR throughput: scanned pages a second over the ingest's wall time, and Tesseract's mean confidence;
- section labels found: of the (document, section) labels the text copy's chunks carry, the share the scanned
  copy's chunks carry too;
- the dev questions whose entry is in StrlSchG or StrlSchV: entry@25k and both@25k (rabbithole mode through
  `rabbithole eval`, scored by the shared scorer) on the corpus with the two laws scanned, against the corpus as it
  is; target: at least 0.90 of the text copy's entry rate;
- every quote page-exact: of the text-layer sentences of sample pages, the share found on the same page of the
  scanned copy's OCR text (as the page-exact check reads it).
The scans are clean renderings (no skew or speckle): an upper bound for what a real scanner's pages give.
"""

from __future__ import annotations

import os
import re
import shutil
import sys
import tempfile
import time
from pathlib import Path

from bench.common import CORPUS, DEV_QUESTIONS, REPO, BenchContext, read_jsonl, require, run, write_jsonl, write_result
from bench.scanned_copy import scanned_copy
from bench.xref import score

SCANNED_LAWS = ("StrlSchG.pdf", "StrlSchV.pdf")
LAW_COLLECTION = "StrlSch__db_inserted"
BUDGET_CHARS = 25_000
OCR_LINE = re.compile(r"OCR: (\d+) scanned page\(s\) read by Tesseract, mean confidence (\d+)")
SAMPLE_PAGES = 12  # pages of each scanned law whose sentences are looked up on their page


def _ingest(kb: Path, db: Path, env: dict) -> dict:
    started = time.perf_counter()
    printed = run([sys.executable, "-m", "rabbithole_lab.cli.main", "--env-file", "none", "ingest", str(kb),
                   "--db", str(db), "--no-progress"], env=env)
    wall_s = time.perf_counter() - started
    found = OCR_LINE.search(printed)
    pages = int(found.group(1)) if found else 0
    return {"wall_s": round(wall_s, 1), "pages_ocr": pages, "mean_confidence": int(found.group(2)) if found else 0,
            "pages_per_s": round(pages / wall_s, 2) if wall_s else 0.0}


def _labels(kb: Path, db: Path, settings) -> set[tuple[str, str, str]]:
    from rabbithole_lab.kb.kb_factory import open_index

    index = open_index(settings, kb, db, read_only=True)
    return {(collection, chunk.doc, chunk.section) for collection in index.collections()
            for chunk in index.get_chunks(collection) if chunk.section}


def _copy_kb(source: Path, target: Path, scan: dict[str, tuple[str, ...]]) -> int:
    """The folder `source` copied to `target` with the named PDFs scanned (their text files left out, so OCR is
    what is measured); returns the pages scanned."""
    import pymupdf

    pages = 0
    for folder in sorted(source.glob("*__db_inserted")):
        for file in sorted(folder.iterdir()):
            (target / folder.name).mkdir(parents=True, exist_ok=True)
            scanned = file.name in scan.get(folder.name, ())
            if file.suffix != ".pdf" and file.with_suffix(".pdf").name in scan.get(folder.name, ()):
                continue
            if scanned:
                scanned_copy(file, target / folder.name / file.name)
                with pymupdf.open(file) as pdf:
                    pages += pdf.page_count
            elif file.is_file():
                shutil.copy2(file, target / folder.name / file.name)
    for extra in ("document_registry.json",):
        if (source / extra).is_file():
            shutil.copy2(source / extra, target / extra)
    return pages


def _sentences_read(text_pdf: Path, scanned_pdf: Path, ocr) -> float:
    """Of the sentences of sample pages of the text copy, the share OCR read exactly (every word, case and
    punctuation aside) on the same page of the scan."""
    import pymupdf

    from rabbithole_lab.kb.ingest.page_reading import page_text

    def words(text: str) -> str:
        return " ".join(re.sub(r"[^\w§]+", " ", text.replace("-\n", "")).split()).casefold()

    found = total = 0
    with pymupdf.open(text_pdf) as pdf:
        step = max(1, pdf.page_count // SAMPLE_PAGES)
        for number in range(1, pdf.page_count + 1, step):
            printed = words(page_text(scanned_pdf, number, ocr))
            for sentence in re.split(r"(?<=[.;:])\s+", " ".join(pdf[number - 1].get_text().split())):
                if len(sentence) >= 40:
                    total += 1
                    found += words(sentence) in printed
    return round(found / total, 3) if total else 0.0


def _page_exact(kb: Path, db: Path, settings, ocr) -> float:
    """Of the scanned laws' chunks, the share whose every page piece (`_page_pieces`: its text from each offset of
    its page map to the next) stands on that page as the page-exact check reads it (the OCR text, from the cache)."""
    from rabbithole_lab.kb.ingest.page_reading import page_text
    from rabbithole_lab.kb.kb_factory import open_index

    index = open_index(settings, kb, db, read_only=True)
    exact = total = 0
    for name in SCANNED_LAWS:
        pages: dict[int, str] = {}
        for chunk in index.get_chunks(LAW_COLLECTION.split("__")[0], where={"doc": name}):
            total += 1
            skip = len(chunk.heading) + 1 if chunk.heading else 0  # a repeated heading is on an earlier page
            pieces = [(page, piece) for page, piece in _page_pieces(chunk.text, chunk.page_map, chunk.page_start, skip)
                      if piece]
            for page, _ in pieces:
                if page not in pages:
                    pages[page] = _words(page_text(kb / LAW_COLLECTION / name, page, ocr))
            exact += all(piece in pages[page] for page, piece in pieces)
    return round(exact / total, 3) if total else 0.0


def _words(text: str) -> str:
    return " ".join(re.sub(r"[^\w§]+", " ", text).split())


def _page_pieces(text: str, page_map: str, first_page: int, skip: int) -> list[tuple[int, str]]:
    """Each page's piece of a chunk as the page-exact check looks it up: from its offset in the page map (past a
    repeated heading) to the next page's offset, its first 40 characters of words. A page whose part of the chunk
    is only the heading has no piece; a piece never runs on into the next page's text."""
    from rabbithole_lab.evidence.pages import decode_page_map

    starts = decode_page_map(page_map) or [(0, first_page)]
    ends = [offset for offset, _ in starts[1:]] + [len(text)]
    return [(page, _words(text[max(offset, skip):min(end, max(offset, skip) + 80)])[:40])
            for (offset, page), end in zip(starts, ends, strict=True)]


def bench(context: BenchContext) -> dict:
    require(CORPUS / LAW_COLLECTION, "The German law corpus (shared/corpus/de-strahlenschutz)")
    started = time.perf_counter()
    numbers: dict = {}
    with tempfile.TemporaryDirectory(prefix="bench-ocr-") as folder:
        scratch = Path(folder)
        env = {**os.environ, "LLM_PROVIDER": "extractive", "OCR_CACHE": str(scratch / "ocr-cache"),
               "EMBEDDING_VECTOR_CACHE": str(scratch / "vectors")}
        ocr = context.settings.ocr.model_copy(update={"cache": str(scratch / "ocr-cache")})
        demo = REPO / "kb"
        demo_scan = scratch / "demo"
        _copy_kb(demo, demo_scan, {folder.name: tuple(p.name for p in folder.glob("*.pdf"))
                                   for folder in demo.glob("*__db_inserted")})
        numbers["demo"] = _ingest(demo_scan, scratch / "demo-db", env)
        numbers["demo"]["labels_found"] = _share(_labels(demo, context.index(demo), context.settings),
                                                 _labels(demo_scan, scratch / "demo-db", context.settings))
        corpus_scan = scratch / "corpus"
        pages = _copy_kb(CORPUS, corpus_scan, {LAW_COLLECTION: SCANNED_LAWS})
        law = _ingest(corpus_scan, scratch / "corpus-db", env)
        text_labels = {label for label in _labels(CORPUS, context.index(CORPUS), context.settings)
                       if label[1] in SCANNED_LAWS}
        scan_labels = {label for label in _labels(corpus_scan, scratch / "corpus-db", context.settings)
                       if label[1] in SCANNED_LAWS}
        law |= {"pages": pages, "labels_found": _share(text_labels, scan_labels),
                "sentences_read_exactly": {name: _sentences_read(CORPUS / LAW_COLLECTION / name,
                                                                 corpus_scan / LAW_COLLECTION / name, ocr)
                                           for name in SCANNED_LAWS},
                "page_exact": _page_exact(corpus_scan, scratch / "corpus-db", context.settings, ocr)}
        numbers["laws"] = law
        numbers["dev questions on the scanned laws"] = _entry_rates(context, corpus_scan, scratch)
    return {"numbers": numbers, "path": write_result("ocr", context, numbers, started)}


def _share(expected: set, found: set) -> dict:
    return {"text copy": len(expected), "found": len(expected & found),
            "share": round(len(expected & found) / len(expected), 3) if expected else 0.0}


def _entry_rates(context: BenchContext, corpus_scan: Path, scratch: Path) -> dict:
    """entry@25k and both@25k of the dev questions whose entry is in a scanned law: text copy against scan."""
    questions = [q for q in read_jsonl(DEV_QUESTIONS) if q["entry"]["doc"] in SCANNED_LAWS]
    chosen = scratch / "questions.jsonl"
    write_jsonl(chosen, questions)
    out: dict = {"n": len(questions)}
    for name, kb, db in (("text", CORPUS, context.index(CORPUS)), ("scanned", corpus_scan, scratch / "corpus-db")):
        prediction = scratch / f"pred_{name}.jsonl"
        run([sys.executable, "-m", "rabbithole_lab.cli.main", "--env-file", "none", "eval", "--kb", str(kb),
             "--db", str(db), "--questions", str(chosen), "--mode", "rabbithole", "--budget-chars",
             str(BUDGET_CHARS), "--out", str(prediction), "--no-progress"],
            env={**os.environ, "LLM_PROVIDER": "extractive"})
        scores = score(chosen, prediction)
        out[name] = {"entry@25k": scores["entry@25k"], "both@25k": scores["both@25k"]}
    text_entry = out["text"]["entry@25k"]
    out["scanned of text (entry)"] = round(out["scanned"]["entry@25k"] / text_entry, 3) if text_entry else 0.0
    return out
