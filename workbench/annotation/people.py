"""What people's votes say: their picks as a prediction frame beside the models', the gold-standard test they let
through, and the flags they raised.

People become a member of every report: ``people_predictions`` turns a batch's votes into a prediction frame
(``workbench.schema.PREDICTION_SCHEMA``; scorer ``people``, rule ``majority``), so ``workbench report``, the
dashboard, ``publish`` and ``compare`` read them like a model's. The gold test keeps the questions people answered
right (``RULES``) and is written in the released files' shape (``notes.total_votes``, ``notes.turk_vote``).

>>> preds = people_predictions(batch.questions, read_votes(batch))  # doctest: +SKIP
>>> gold = gold_test(batch.questions, read_votes(batch), rule="majority")  # doctest: +SKIP
"""

import hashlib
import json
from pathlib import Path

import polars as pl

from workbench.errors import WorkbenchError
from workbench.schema import PREDICTION_SCHEMA, PROBE_SCHEMA, conform

RULES = {
    "majority": "more than half of the question's votes picked the gold",
    "all": "every vote picked the gold",
    "any": "at least one vote picked the gold (the released tests' rule: a question nobody got right was left out)",
    "M": "at least M votes picked the gold (a whole number, e.g. 2)",
}
"""Which questions a gold test keeps, by the votes that picked the gold."""
PEOPLE = "people"


def tallies(questions: pl.DataFrame, votes: pl.DataFrame) -> pl.DataFrame:
    """Per voted question: ``votes``, ``right`` (votes for the gold), ``counts`` (votes per choice), ``pick`` (the
    majority choice; a tie goes to the choice voted first), ``picks`` (the distinct choices voted, the majority first,
    then in the order they were first voted)."""
    from workbench.annotation.votes import known_votes

    ordered = known_votes(questions, votes).select("id", "choice").with_row_index("order")
    per_choice = ordered.group_by("id", "choice").agg(n=pl.len(), first=pl.col("order").min())
    ranked = per_choice.sort("id", "n", "first", descending=[False, True, False])
    by_question = ranked.group_by("id", maintain_order=True).agg(
        pick=pl.col("choice").first(), picks=pl.col("choice").sort_by("n", "first", descending=[True, False]),
        votes=pl.col("n").sum(), per_choice=pl.struct("choice", "n"),
    )  # fmt: skip
    sizes = questions.select("id", "answer", n_choices=pl.col("choices").list.len())
    joined = by_question.join(sizes, on="id", how="inner")
    counts = [
        [next((item["n"] for item in row if item["choice"] == index), 0) for index in range(size)]
        for row, size in zip(joined["per_choice"].to_list(), joined["n_choices"], strict=True)
    ]
    return (
        joined.with_columns(counts=pl.Series(counts, dtype=pl.List(pl.Int64)))
        .with_columns(right=pl.col("counts").list.get(pl.col("answer")))
        .drop("per_choice", "n_choices")
    )


def people_predictions(
    questions: pl.DataFrame, votes: pl.DataFrame, label: str = PEOPLE, each: bool = False
) -> pl.DataFrame:
    """People's picks as a prediction frame: per voted question, the majority of its votes (scores: votes per choice;
    a tie goes to the choice voted first). With ``each``, one member per annotator instead (``people:NAME``)."""
    if votes.is_empty():
        raise WorkbenchError("nobody has voted in this batch yet: there are no people's answers to score")
    questions = conform(questions, PROBE_SCHEMA, what="probe frame")
    groups = votes.partition_by("annotator", as_dict=True) if each else {(label,): votes}
    frames = []
    for (name,), part in sorted(groups.items()):
        member = f"{label}:{name}" if each else label
        counted = tallies(questions, part)
        digest = hashlib.sha256(part.select("annotator", "id", "choice").sort("annotator", "id").write_csv().encode())
        frames.append(
            questions.join(counted.select("id", "pick", "counts"), on="id", how="inner").select(
                *PROBE_SCHEMA,
                scores=pl.col("counts").cast(pl.List(pl.Float64)),
                pred=pl.col("pick"),
                correct=pl.col("pick") == pl.col("answer"),
                model=pl.lit(member),
                fingerprint=pl.lit(digest.hexdigest()[:16]),
                scorer=pl.lit(PEOPLE),
                rule=pl.lit("majority"),
                control=pl.lit("none"),
                asking=pl.lit(""),
                prompt=pl.lit(None, pl.String),
                generated=pl.lit(None, pl.String),
                matched=pl.lit(None, pl.String),
                match=pl.lit(None, pl.String),
                served=pl.lit(""),
            )
        )
    return conform(pl.concat(frames), PREDICTION_SCHEMA, what="people's predictions")


def _kept(rule: str | int) -> pl.Expr:
    if rule == "majority":
        return pl.col("right") * 2 > pl.col("votes")
    if rule == "all":
        return pl.col("right") == pl.col("votes")
    if rule == "any":
        return pl.col("right") >= 1
    if (isinstance(rule, int) or str(rule).isdigit()) and int(rule) >= 1:
        return pl.col("right") >= int(rule)
    raise WorkbenchError(f"unknown gold rule {rule!r}; use majority, all, any, or a number M of votes, 1 or more")


def gold_test(
    questions: pl.DataFrame, votes: pl.DataFrame, rule: str | int = "majority", least: int = 1
) -> pl.DataFrame:
    """The questions people answered right by ``rule`` (``RULES``) among those with ``least`` votes or more, as a
    probe frame of population ``gold``, with columns ``total_votes`` (the distinct picks, the majority first) and
    ``turk_vote`` (the majority pick), the released tests' notes."""
    counted = tallies(questions, votes).filter(pl.col("votes") >= least).filter(_kept(rule))
    if counted.is_empty():
        raise WorkbenchError(
            f"no question has {least} vote(s) or more and passes the rule {rule!r}; collect more votes or relax "
            "--rule / --least"
        )
    kept = conform(questions, PROBE_SCHEMA, what="probe frame").join(
        counted.select("id", "pick", "picks"), on="id", how="inner"
    )
    return kept.with_columns(
        population=pl.lit("gold"),
        turk_vote=pl.col("pick").cast(pl.String),
        total_votes=pl.col("picks").cast(pl.List(pl.String)),
    ).drop("pick", "picks")


def write_gold_jsonl(gold: pl.DataFrame, path: str | Path) -> Path:
    """Write a gold test (``gold_test``) as ARC JSONL in the released tests' shape: our notes plus ``total_votes``
    and ``turk_vote``, so ``analysis.release.human_votes`` reads its votes back."""
    from workbench.io import write_text
    from workbench.probes.formats import _arc_record

    lines = []
    for row in gold.iter_rows(named=True):
        record = _arc_record(row)
        record["notes"].update(turk_vote=row["turk_vote"], total_votes=row["total_votes"])
        lines.append(json.dumps(record, ensure_ascii=False) + "\n")
    return write_text("".join(lines), path)


def release_votes(path: str | Path) -> pl.DataFrame:
    """The votes a released gold-standard test keeps (``notes.total_votes``, ``notes.turk_vote``) as a vote frame:
    one vote per distinct pick, the kept pick (``turk_vote``) first, so the majority of ``tallies`` is the kept
    pick. The files do not say how many people voted: these are the distinct picks, not every vote."""
    from workbench.annotation.votes import VOTE_SCHEMA
    from workbench.probes.formats import arc_records

    rows = []
    for _, record in arc_records(path):
        notes = record.get("notes") or {}
        if "total_votes" not in notes or "turk_vote" not in notes:
            continue
        labels = [str(choice["label"]) for choice in record["question"]["choices"]]
        kept = str(notes["turk_vote"])
        picks = [kept, *(str(pick) for pick in notes["total_votes"] if str(pick) != kept)]
        for number, pick in enumerate(picks):
            if pick not in labels:
                raise WorkbenchError(f"{path}: question {record['id']} holds a vote {pick!r} for no choice {labels}")
            rows.append(
                {"annotator": f"release-{number + 1}", "place": number, "id": str(record["id"]),
                 "choice": labels.index(pick), "shown": labels.index(pick) + 1, "order": list(range(len(labels))),
                 "flags": [], "comment": "", "seconds": None, "at": f"{number:04d}", "source": "release"}
            )  # fmt: skip
    if not rows:
        raise WorkbenchError(f"{path} keeps no votes (notes.total_votes, notes.turk_vote): it is not a gold test")
    return pl.DataFrame(rows, schema=VOTE_SCHEMA)


def gold_figures(gold: pl.DataFrame) -> dict[str, float]:
    """What ``workbench probes compare-release`` prints of a gold test's votes: ``human_accuracy`` (the kept pick is
    the gold) and ``one_pick`` (the share of questions whose voters all picked one choice)."""
    return {
        "human_accuracy": round((gold["turk_vote"] == gold["answer"].cast(pl.String)).mean(), 4),
        "one_pick": round((gold["total_votes"].list.len() == 1).mean(), 4),
    }


def flag_table(questions: pl.DataFrame, votes: pl.DataFrame) -> pl.DataFrame:
    """Per question and flag raised: how many of its votes raised it, of how many, the choices those people picked
    (text, and the concept behind each), and the relation that made the question's distractors (family, depth)."""
    flagged = votes.select("id", "annotator", "choice", "flags", "comment").explode("flags").drop_nulls("flags")
    if flagged.is_empty():
        return pl.DataFrame(
            schema={"id": pl.String, "flag": pl.String, "raised": pl.Int64, "votes": pl.Int64,
                    "picked": pl.List(pl.String), "picked_concepts": pl.List(pl.String),
                    "comments": pl.List(pl.String), "probe": pl.String, "concept": pl.String,
                    "distractor_family": pl.String, "distractor_depth": pl.Int64, "question": pl.String}
        )  # fmt: skip
    counts = votes.group_by("id").agg(votes=pl.len().cast(pl.Int64))
    concepts = questions.select(
        "id", "probe", "concept", "question", "distractor_family", "distractor_depth", "choices", "answer",
        "gold_concept", "distractor_concepts",
    )  # fmt: skip
    table = (
        flagged.rename({"flags": "flag"})
        .group_by("id", "flag")
        .agg(raised=pl.col("annotator").n_unique().cast(pl.Int64), chosen=pl.col("choice"), comments=pl.col("comment"))
        .join(counts, on="id")
        .join(concepts, on="id")
    )
    picked, picked_concepts = [], []
    for row in table.iter_rows(named=True):
        behind = _concepts_by_choice(row)
        picked.append([row["choices"][index] for index in row["chosen"]])
        picked_concepts.append([behind[index] for index in row["chosen"]])
    return table.with_columns(
        picked=pl.Series(picked, dtype=pl.List(pl.String)),
        picked_concepts=pl.Series(picked_concepts, dtype=pl.List(pl.String)),
        comments=pl.col("comments").list.eval(pl.element().filter(pl.element() != "")),
    ).select(
        "id", "flag", "raised", "votes", "picked", "picked_concepts", "comments", "probe", "concept",
        "distractor_family", "distractor_depth", "question",
    ).sort("flag", "raised", "id", descending=[False, True, False])  # fmt: skip


def flag_problems(flags: pl.DataFrame | None, least: int = 2) -> pl.DataFrame:
    """Flags "another choice is also right" that ``least`` or more people raised, as rows of the probe check's
    defects (``workbench.probes.quality.PROBLEMS_SCHEMA``, kind ``also-right``): the choice they picked instead of the
    gold, and the concept behind it."""
    from workbench.probes.quality import PROBLEMS_SCHEMA

    if flags is None:
        return pl.DataFrame(schema=PROBLEMS_SCHEMA)
    held = flags.filter((pl.col("flag") == "also-right") & (pl.col("raised") >= least))
    rows = [
        {"id": row["id"], "field": "choice", "kind": "also-right", "text": text,
         "detail": f"{concept} ({row['raised']} of {row['votes']} people; {row['distractor_family']})"}
        for row in held.iter_rows(named=True)
        for text, concept in dict(zip(row["picked"], row["picked_concepts"], strict=True)).items()
        if concept != row["concept"]
    ]  # fmt: skip
    return pl.DataFrame(rows, schema=PROBLEMS_SCHEMA)


def _concepts_by_choice(row: dict) -> list[str]:
    """The concept behind each choice of a question row: the gold's at ``answer``, the distractors' in order (as
    ``workbench.probes.assemble`` places the gold among them)."""
    distractors = iter(row["distractor_concepts"])
    return [row["gold_concept"] if i == row["answer"] else next(distractors, "") for i in range(len(row["choices"]))]


def workspace_flags(home: Path | None = None) -> pl.DataFrame | None:
    """The flags of every annotation batch of the workspace (``flag_table``, with the ``batch``), or None if none."""
    from workbench.annotation.batch import batches
    from workbench.annotation.votes import read_votes

    tables = [flag_table(b.questions, read_votes(b)).with_columns(batch=pl.lit(b.name)) for b in batches(home)]
    tables = [table for table in tables if table.height]
    return pl.concat(tables) if tables else None
