"""Run bench cases and record them: ``python bench/run.py CASE ...`` (``--list`` shows every case, its cost and
whether it has a record; ``--set key=value`` changes one setting for this run, recorded with it).

    python bench/run.py --list
    python bench/run.py knowledge-load threads --repeats 2
    python bench/run.py scoring-scale --set small=true
    python bench/render.py          # bench/README.md's tables, from the records
"""

import argparse
import json
import os
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(1, os.environ.get("BENCH_TREE", str(Path(__file__).resolve().parents[1])))  # whose workbench
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("HF_DATASETS_OFFLINE", "1")

import harness  # noqa: E402
from cases import CASES  # noqa: E402


def setting(text: str) -> tuple[str, object]:
    """``key=value``, the value read as JSON where it is JSON (``3``, ``true``, ``[1, 2]``), else as text."""
    key, sep, value = text.partition("=")
    if not sep:
        raise argparse.ArgumentTypeError(f"{text!r} is not key=value")
    try:
        return key, json.loads(value)
    except json.JSONDecodeError:
        return key, value


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("cases", nargs="*", help="case names (see --list)")
    parser.add_argument("--list", action="store_true", help="every case, its cost, device and latest record")
    parser.add_argument("--repeats", type=int, default=None, help="rounds (default: the case's own)")
    parser.add_argument("--set", type=setting, action="append", default=[], help="key=value over a case's params")
    parser.add_argument("--records", type=Path, default=harness.RECORDS, help="records folder (default bench/records)")
    parser.add_argument("--child", nargs="+", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:  # harness.in_child: one call in a fresh interpreter, its result as the last line
        print(json.dumps(harness.function(args.child[0])(*args.child[1:]), default=str))
        return
    if args.list or not args.cases:
        for case in CASES.values():
            records = harness.read_records(args.records / f"{case.name}.jsonl")
            latest = records[-1]["started"] if records else "no record"
            print(f"{case.name:<28}{case.cost:<9}{case.device:<5}{latest:<22}{case.title}")
        return
    unknown = [name for name in args.cases if name not in CASES]
    if unknown:
        raise SystemExit(f"no case {', '.join(unknown)}; python bench/run.py --list shows them")
    for name in args.cases:
        record = harness.run(CASES[name], args.repeats, dict(args.set), args.records)
        print(
            f"{name}: {record['repeats']} round(s) in {record['seconds']} s, load {record['machine']['load_start']}"
            f" -> {record['load_end']}; {args.records / name}.jsonl"
        )
        for row in record["rows"]:
            print("  ", json.dumps(row, default=str))


if __name__ == "__main__":
    main()
