"""One bench command: run the benchmarks, write bench/results/<name>.json, regenerate bench/RESULTS.md.

    make bench                                   # the full run, for milestones
    make bench-quick                             # python -m bench --quick: ≤ 10 min with a warm index
    .venv/bin/python -m bench --only xref,refex  # some benchmarks
    .venv/bin/python -m bench --scoreboard       # only regenerate bench/RESULTS.md from the results

Quick mode runs the dev cross-reference retrieval and the answers re-synthesised from kept research. The
full run adds reference detection (refex), ObliQA-XRef ADGM and UKFIN, ingest speed, answers from fresh
research (which also refreshes the kept research) and the extractive answers on UKFIN (answers-ukfin).
`suite` (the README's test command on a clean clone) runs only when named. Indexes are ingested once per
machine into the index cache (RABBITHOLE_INDEX_CACHE, default ~/.cache/rabbithole-lab/indexes).
"""

from __future__ import annotations

import argparse
import logging
import sys
import time

from tqdm.auto import tqdm

from bench.common import BenchContext, BenchDataMissing

QUICK = ("xref", "answers")
FULL = ("xref", "refex", "refs-ukfin", "embed-speed", "obliqa-adgm", "obliqa-ukfin", "ingest", "answers",
        "answers-ukfin")
ALL = (*FULL, "suite", "first-stage-ukfin", "first-stage-adgm", "tokens", "ranker", "provision", "ingest-shared",
       "ocr", "english-entries", "scale")


def run_one(name: str, context: BenchContext, args: argparse.Namespace) -> dict:
    if name == "xref":
        from bench import xref
        return xref.bench(context)
    if name == "english-entries":
        from bench import english_entries
        return english_entries.bench(context)
    if name == "refs-ukfin":
        from bench import refs_ukfin
        return refs_ukfin.bench(context)
    if name == "ranker":
        from bench import ranker_fit
        return ranker_fit.bench(context)
    if name == "provision":
        from bench import provision_fit
        return provision_fit.bench(context, limit=args.limit)
    if name == "tokens":
        from bench import tokens
        return tokens.bench(context)
    if name == "embed-speed":
        from bench import embed_speed
        return embed_speed.bench(context)
    if name == "refex":
        from bench import refex
        return refex.bench(context)
    if name.startswith("first-stage-"):
        from bench import first_stage
        return first_stage.bench(context, name.removeprefix("first-stage-"))
    if name.startswith("obliqa-"):
        from bench import obliqa
        return obliqa.bench_set(context, name.removeprefix("obliqa-"), limit=args.limit)
    if name == "answers-ukfin":
        from bench import answers_ukfin
        return answers_ukfin.bench(context, limit=args.limit)
    if name == "answers":
        from bench import answers
        return answers.bench(context, reuse_sessions=args.reuse_sessions)
    if name == "ingest-shared":
        from bench import shared_ingest
        return shared_ingest.bench(context)
    if name == "scale":
        from bench import scale_table
        return scale_table.bench(context)
    if name == "ocr":
        from bench import ocr_scans
        return ocr_scans.bench(context)
    if name == "ingest":
        from bench import ingest_speed
        return ingest_speed.bench(context)
    from bench import suite
    return suite.bench(context)


def parse(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m bench", description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help=f"only {', '.join(QUICK)} (answers re-synthesised)")
    parser.add_argument("--only", default="", help=f"comma-separated benchmarks of: {', '.join(ALL)}")
    parser.add_argument("--reuse-sessions", action="store_true",
                        help="re-synthesise on the kept research even when the code before synthesis changed")
    parser.add_argument("--limit", type=int, default=0,
                        help="ObliQA and UKFIN answers: only the first N questions (a smoke run)")
    parser.add_argument("--scoreboard", action="store_true", help="only regenerate bench/RESULTS.md")
    parser.add_argument("--no-progress", action="store_true")
    args = parser.parse_args(argv)
    names = [name.strip() for name in args.only.split(",") if name.strip()]
    unknown = [name for name in names if name not in ALL]
    if unknown:
        parser.error(f"unknown benchmark {', '.join(unknown)}; choose from {', '.join(ALL)}")
    args.names = names or list(QUICK if args.quick else FULL)
    return args


def main(argv: list[str] | None = None) -> int:
    args = parse(sys.argv[1:] if argv is None else argv)
    logging.basicConfig(level=logging.WARNING, format="%(levelname)s %(name)s: %(message)s")
    from bench.scoreboard import write_scoreboard

    if not args.scoreboard:
        context = BenchContext(quick=args.quick, show_progress=not args.no_progress,
                               command=" ".join(["python -m bench", *(argv if argv is not None else sys.argv[1:])]))
        started = time.perf_counter()
        for name in tqdm(args.names, desc="benchmarks", unit="bench", disable=args.no_progress):
            try:
                result = run_one(name, context, args)
            except BenchDataMissing as exc:
                print(f"error: {exc}", file=sys.stderr)
                return 2
            print(f"{name}: wrote {result['path'].relative_to(result['path'].parents[2])}", flush=True)
        print(f"benchmarks done in {time.perf_counter() - started:.0f} s", flush=True)
    path = write_scoreboard()
    print(f"scoreboard: {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
