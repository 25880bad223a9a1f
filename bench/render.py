"""bench/README.md's tables, drawn from the records: ``python bench/render.py`` rewrites what lies between each
``<!-- bench:CASE -->`` and ``<!-- /bench:CASE -->`` from that case's latest record in bench/records/ (its latest
``Case.shown`` records, oldest first), and between ``<!-- bench:awaiting -->`` and ``<!-- /bench:awaiting -->`` the
cases that have no record yet, each with the command that makes it. Everything outside the markers is prose, kept
as written. ``--check`` fails where the README is not what the records render (tests/test_bench.py).
"""

import argparse
import json
import re
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import harness  # noqa: E402
from cases import CASES  # noqa: E402

README = harness.BENCH / "README.md"
SECTION = re.compile(r"(<!-- bench:(?P<name>[\w.-]+) -->\n)(?P<body>.*?)(<!-- /bench:(?P=name) -->)", re.DOTALL)


def figure(value: object) -> str:
    """A cell: numbers to three significant figures (whole numbers with thousands separators), lists and dicts as
    compact JSON, None as a dash."""
    if value is None:
        return "–"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, int):
        return f"{value:,}"
    if isinstance(value, float):
        return f"{value:,.0f}" if abs(value) >= 1000 else f"{value:.3g}"
    if isinstance(value, (list, dict)):
        return json.dumps(value, separators=(", ", ": "))
    return str(value).replace("|", "\\|").replace("\n", " ")


def table(rows: list[dict], widest: int = 10) -> str:
    """A Markdown table of ``rows``, a column per figure; rows of more than ``widest`` figures in all as two columns,
    what was measured and its figures."""
    columns = list(dict.fromkeys(key for row in rows for key in row))
    if len(columns) > widest:
        lines = ["| measure | figures |", "|---|---|"]
        for row in rows:
            figures = "; ".join(f"{key} {figure(value)}" for key, value in row.items() if key != "measure")
            lines.append(f"| {figure(row.get('measure'))} | {figures} |")
        return "\n".join(lines)
    lines = ["| " + " | ".join(columns) + " |", "|" + "---|" * len(columns)]
    lines += ["| " + " | ".join(figure(row.get(column)) for column in columns) + " |" for row in rows]
    return "\n".join(lines)


def provenance(record: dict, line: int) -> str:
    """Where a table came from: its record, the commit and tree, the machine and its load, the rounds."""
    m = record["machine"]
    tree = (
        "clean"
        if not record["dirty"]
        else f"dirty: {', '.join(record['dirty'][:5])}"
        + (f" and {len(record['dirty']) - 5} more" if len(record["dirty"]) > 5 else "")
    )
    where = ", ".join(part for part in (
        m.get("cpu"), f"{m['cores']} cores" + (f" of {m['cores_present']}" if m.get("cores_present", m["cores"])
                                               != m["cores"] else ""),
        f"{m['memory_gib']} GiB" if m.get("memory_gib") else None, m.get("gpu"),
    ) if part) + f"; Python {m['python']}, torch {m['torch']}"  # fmt: skip
    imported = f" (imported from `{record['imported_from']}`)" if record.get("imported_from") else ""
    ratio = f"; `ratio`: each row over `{record['baseline']}` in the same round" if record.get("baseline") else ""
    settings = f"; settings {json.dumps(record['params'])}" if record["params"] else ""
    load = (f"load average (1, 5, 15 min) {m['load_start']} at the start, {record['load_end']} at the end"
            if m.get("load_start") else "load average not logged")  # fmt: skip
    load += f", at nice {m['nice']}" if m.get("nice") else ""  # under `nice`: others had the cores first
    return (f"Record `bench/records/{record['case']}.jsonl` line {line}{imported}, {record['started']}, "
            f"{record['seconds']} s: commit {record['commit']} ({tree}); {where}; {load}; {record['repeats']} "
            f"round(s), medians{ratio}{settings}. Made by `{record['command']}`.")  # fmt: skip


def section(name: str, records: Path) -> str:
    if name == "awaiting":
        return awaiting(records)
    if name not in CASES:
        raise SystemExit(f"bench/README.md has a section for {name!r}, which is no case in bench/cases.py")
    found = harness.read_records(records / f"{name}.jsonl")
    if not found:
        return f"No record yet: `{CASES[name].command()}` makes one.\n"
    first = max(0, len(found) - CASES[name].shown)
    return "\n".join(
        table(record["rows"]) + "\n\n" + provenance(record, line) + "\n"
        for line, record in enumerate(found[first:], start=first + 1)
    )


def awaiting(records: Path) -> str:
    """The cases with no record yet, each with what it needs and the command that makes its record."""
    lines = ["| case | what | cost here | needs | command |", "|---|---|---|---|---|"]
    for case in CASES.values():
        if not (records / f"{case.name}.jsonl").exists():
            needs = ", ".join((["a GPU"] if case.device == "gpu" else []) + list(case.needs)) or "–"
            lines.append(f"| {case.name} | {case.title} | {case.cost} | {needs} | `{case.command()}` |")
    return "\n".join(lines) + "\n"


def render(text: str, records: Path = harness.RECORDS) -> str:
    """``text`` with every marked section drawn from ``records``."""
    return SECTION.sub(lambda m: m.group(1) + section(m.group("name"), records) + m.group(4), text)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="fail if bench/README.md is not what the records render")
    args = parser.parse_args()
    text = README.read_text(encoding="utf-8")
    drawn = render(text)
    if args.check:
        if drawn != text:
            raise SystemExit("bench/README.md differs from its records: run python bench/render.py")
        return
    if drawn != text:
        sys.path.insert(0, str(harness.ROOT))
        from workbench.io import write_text

        write_text(drawn, README)


if __name__ == "__main__":
    main()
