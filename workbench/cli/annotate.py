"""``workbench annotate ...``: people answer the probe questions (docs/ANNOTATION.md).

``sample`` draws a batch, ``link`` gives a person their URL, ``status`` shows who answered what; ``agreement``,
``people``, ``gold`` and ``flags`` read the votes; ``export`` writes them; ``label-studio-export`` and
``label-studio-import`` hand a batch to a crowd platform and take its answers back. ``workbench serve annotate``
serves the app people answer in.
"""

import os
from pathlib import Path

import typer

from workbench.cli.guard import Label, Reads, Writes, declares
from workbench.cli.tables import markdown

annotate_app = typer.Typer(help="People answer the probe questions: batches, links, votes, agreement, gold tests.")


@annotate_app.command("sample")
@declares(probes=Reads(), out=Writes("annotation"))
def sample(
    probes: Path = typer.Argument(..., help="A probe folder or file (ours, a released file, an OMW language's)."),
    out: Path = typer.Option(
        ..., help="The batch folder to write (new or empty), e.g. $WORKBENCH_HOME/annotation/NAME."
    ),
    questions: int = typer.Option(2000, min=1, help="Questions to draw (the paper drew about 2,000)."),
    per_question: int = typer.Option(3, min=1, help="Votes each question gets, from distinct people."),
    annotators: int = typer.Option(3, min=1, max=10_000, help="Annotator places (people who will get a link)."),
    clusters: bool = typer.Option(False, "--clusters", help="Draw whole clusters rather than random questions."),
    split: str | None = typer.Option(None, help="Draw from this split only (train, dev, test)."),
    seed: int = typer.Option(0, min=0, help="Seed of the draw, the assignment and each person's choice order."),
) -> None:
    """Draw a reproducible sample of a probe set and assign each question to --per-question of the --annotators
    places, balanced, none twice to one person."""
    import polars as pl

    from workbench.annotation import create_batch
    from workbench.errors import WorkbenchError
    from workbench.paths import workspace_path
    from workbench.probes.formats import read_probes

    frame = read_probes(probes)
    if split is not None:
        frame = frame.filter(pl.col("split") == split)
        if frame.is_empty():
            raise WorkbenchError(f"{probes} has no {split} questions; choose another --split or none")
    batch = create_batch(frame, out, questions, per_question, annotators, seed, clusters, source=str(probes))
    served = workspace_path("annotation").resolve()
    if batch.folder.resolve().parent != served:
        typer.echo(f"note: {out} is not in {served}: `workbench serve annotate` finds batches there only (the "
                   "library and the other commands read it anywhere)", err=True)  # fmt: skip
    loads = batch.assignments.group_by("place").len()["len"]
    typer.echo(
        f"batch {batch.name}: {batch.questions.height:,} questions, {per_question} votes each, {annotators} places "
        f"of {loads.min()}-{loads.max()} questions; give each person a link: workbench annotate link {out} NAME"
    )


@annotate_app.command("link")
@declares(batch=Writes("annotation"), name=Label())
def link(
    batch: Path = typer.Argument(..., help="The batch folder."),
    name: str = typer.Argument(..., help="The person's name (letters, digits, '.', '_', '-', '@')."),
    url: str = typer.Option(
        "http://127.0.0.1:8866/", help="Where `workbench serve annotate` is reached (the URL it printed)."
    ),
) -> None:
    """Give NAME a place in the batch and print their personal link (a new link for a name already there: the old
    one stops working). The lab's token rides along: the one in --url, else $WORKBENCH_SERVE_TOKEN."""
    from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

    from workbench.annotation import add_annotator, open_batch
    from workbench.errors import WorkbenchError
    from workbench.paths import workspace_path

    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.netloc:
        raise WorkbenchError(f"--url {url!r} is not the http(s) address `workbench serve annotate` printed "
                             "(e.g. http://lab-server:8866/)")  # fmt: skip
    opened = open_batch(batch)
    served = workspace_path("annotation").resolve()
    if opened.folder.resolve().parent != served:
        raise WorkbenchError(f"{batch} is not in {served}, where `workbench serve annotate` finds batches: its links "
                             "would not open; move the batch folder there (or set $WORKBENCH_HOME)")  # fmt: skip
    token = add_annotator(opened, name)
    query = dict(parse_qsl(parts.query))
    lab = query.get("token") or os.environ.get("WORKBENCH_SERVE_TOKEN")
    query = urlencode({**query, **({"token": lab} if lab else {}), "annotator": token})
    typer.echo(f"{name}: {urlunsplit((parts.scheme, parts.netloc, parts.path or '/', query, ''))}")


@annotate_app.command("status")
@declares(batch=Reads())
def status(batch: Path = typer.Argument(..., help="The batch folder.")) -> None:
    """Each person's progress, and the votes each question has."""
    import polars as pl

    from workbench.annotation import annotators, open_batch, read_votes

    opened = open_batch(batch)
    cast, people = read_votes(opened), annotators(opened)
    votes = cast.filter(pl.col("id").is_in(opened.questions["id"].implode()))  # the batch's questions only
    loads = opened.assignments.group_by("place").agg(assigned=pl.len())
    done = votes.group_by("annotator").agg(answered=pl.len(), flagged=(pl.col("flags").list.len() > 0).sum())
    table = (
        people.join(loads, on="place", how="left")
        .join(done, left_on="name", right_on="annotator", how="left")
        .fill_null(0)
        .select("place", "name", "assigned", "answered", "flagged", "created")
    )
    per_question = votes.group_by("id").len()["len"]
    complete = int((per_question >= opened.per_question).sum())
    typer.echo(markdown(table) if table.height else "nobody has a link yet: workbench annotate link BATCH NAME")
    typer.echo(f"\n{votes.height:,} votes; {complete:,} of {opened.questions.height:,} questions have all "
               f"{opened.per_question} votes")  # fmt: skip
    if strangers := cast.height - votes.height:
        typer.echo(f"{strangers:,} votes are for questions the batch does not hold and are not counted: its "
                   "questions.parquet was replaced; restore the batch folder from a copy")  # fmt: skip


@annotate_app.command("export")
@declares(batch=Reads(), out=Writes("votes"))
def export(
    batch: Path = typer.Argument(..., help="The batch folder."),
    out: Path = typer.Option(..., help="votes.parquet or votes.csv: one row per vote, with the gold and the cell."),
) -> None:
    """Write every vote (with its question's gold, probe, hops and distractor family) as Parquet or CSV."""
    from workbench.annotation import export_votes, open_batch

    typer.echo(f"wrote {export_votes(open_batch(batch), out)}")


def _questions_and_votes(source: Path):
    """A batch folder's questions and votes, or a released gold-standard test file's questions and kept votes."""
    from workbench.annotation import open_batch, read_votes, release_votes
    from workbench.probes.formats import read_probes

    if source.is_file():
        return read_probes(source), release_votes(source)
    opened = open_batch(source)
    return opened.questions, read_votes(opened)


@annotate_app.command("agreement")
@declares(batch=Reads())
def agreement(
    batch: Path = typer.Argument(..., help="The batch folder."),
    cells: bool = typer.Option(False, "--cells", help="Per hops x distractor family too, not per probe only."),
    n_boot: int = typer.Option(1000, min=0, help="Bootstrap resamples of questions for the intervals."),
    seed: int = typer.Option(0, help="Seed of the bootstrap."),
) -> None:
    """Krippendorff's alpha and Fleiss' kappa (95% intervals over questions) and people's accuracy per vote."""
    import polars as pl

    from workbench.annotation import agreement as measured

    questions, votes = _questions_and_votes(batch)
    by = ("probe", "hops", "distractor_family") if cells else ("probe",)
    table = measured(questions, votes, by=by, n_boot=n_boot, seed=seed)
    typer.echo(markdown(table))
    if table.select(pl.col("alpha", "kappa").is_nan().any()).row(0) != (False, False):
        typer.echo("NaN: too few votes to say (alpha needs two questions with two votes or more; kappa two questions "
                   "with the most votes; intervals two questions)")  # fmt: skip


@annotate_app.command("people")
@declares(batch=Reads(), out=Writes("predictions"), name=Label())
def people(
    batch: Path = typer.Argument(..., help="The batch folder."),
    out: Path = typer.Option(..., help="The prediction file to write (.parquet)."),
    name: str = typer.Option("people", help="The label people carry in reports, beside the models'."),
    each: bool = typer.Option(False, "--each", help="One member per person (NAME:person) instead of the majority."),
    force: bool = typer.Option(False, help="Replace --out even if it holds something other than predictions."),
) -> None:
    """People's answers as a prediction file: `workbench report`, `compare`, the dashboard and `publish` read it
    beside the models' (the majority of each question's votes; votes per choice as scores)."""
    from workbench.annotation import people_predictions
    from workbench.io import write_parquet

    questions, votes = _questions_and_votes(batch)
    frame = people_predictions(questions, votes, label=name, each=each)
    write_parquet(frame, out)
    typer.echo(f"wrote {out}: {frame.height:,} answers of {frame['model'].n_unique()} member(s), "
               f"accuracy {frame['correct'].mean():.3f}")  # fmt: skip


@annotate_app.command("gold")
@declares(batch=Reads(), out=Writes("gold"))
def gold(
    batch: Path = typer.Argument(..., help="The batch folder (or a released gold-standard test file: its votes)."),
    out: Path = typer.Option(..., help="The gold test to write, ARC JSONL in the released tests' shape (.jsonl)."),
    rule: str = typer.Option("majority", help="Which questions stay: majority, all, any, or a number M of votes."),
    least: int = typer.Option(0, min=0, help="Only questions with this many votes (0: the batch's per-question)."),
    force: bool = typer.Option(False, help="Replace --out even if it holds something other than a gold test."),
) -> None:
    """The gold-standard test: the questions people answered right by --rule, population `gold`, with
    notes.total_votes and notes.turk_vote as the released tests keep them."""
    from workbench.annotation import gold_figures, gold_test, open_batch, write_gold_jsonl

    questions, votes = _questions_and_votes(batch)
    needed = least or (1 if batch.is_file() else open_batch(batch).per_question)
    kept = gold_test(questions, votes, rule=rule, least=needed)
    write_gold_jsonl(kept, out)
    voted = votes["id"].n_unique()
    figures = gold_figures(kept)
    typer.echo(f"wrote {out}: {kept.height:,} of {voted:,} voted questions kept (rule {rule}, {needed}+ votes); "
               f"human_accuracy {figures['human_accuracy']}, one_pick {figures['one_pick']}")  # fmt: skip


@annotate_app.command("flags")
@declares(batch=Reads(), out=Writes("table"))
def flags(
    batch: Path = typer.Argument(..., help="The batch folder."),
    least: int = typer.Option(1, min=1, help="Show flags raised by at least this many people."),
    out: Path | None = typer.Option(None, help="Also write the whole table as Parquet."),
) -> None:
    """The questions people flagged ("another choice is also right", ...), with the choices they picked, the
    concepts behind them and the relation that made the distractors."""
    import polars as pl

    from workbench.annotation import flag_table, open_batch, read_votes
    from workbench.io import write_parquet

    opened = open_batch(batch)
    table = flag_table(opened.questions, read_votes(opened))
    if out is not None:
        write_parquet(table, out)
    shown = table.filter(pl.col("raised") >= least)
    typer.echo(markdown(shown.drop("question")) if shown.height else f"no flag raised by {least} or more people")


@annotate_app.command("label-studio-export")
@declares(batch=Reads(), out=Writes("label-studio"))
def label_studio_export(
    batch: Path = typer.Argument(..., help="The batch folder."),
    out: Path = typer.Option(..., help="The folder to write label_config.xml and tasks.json into."),
) -> None:
    """The batch as a Label Studio project: paste label_config.xml as the labelling interface, import tasks.json."""
    from workbench.annotation import open_batch
    from workbench.annotation.labelstudio import label_studio_project

    written = label_studio_project(open_batch(batch), out)  # marked as ours: a user's folder is never replaced
    typer.echo("wrote " + ", ".join(map(str, written)))


@annotate_app.command("label-studio-import")
@declares(batch=Writes("annotation"), export=Reads(), voter=Label())
def label_studio_import(
    batch: Path = typer.Argument(..., help="The batch folder the Label Studio project was made from."),
    export: Path = typer.Argument(..., help="Label Studio's JSON export of that project."),
    voter: list[str] = typer.Option(
        [],
        "--voter",
        help="ID=NAME: Label Studio user ID is the batch's annotator NAME (a new name takes a free "
        "place); once given, the batch keeps it. Repeat for each user.",
    ),
) -> None:
    """Take a Label Studio project's answers as votes of the batch (each once, however often imported); each Label
    Studio user is the annotator --voter names, never who the export says."""
    from workbench.annotation import open_batch
    from workbench.annotation.labelstudio import import_label_studio, parse_voters

    done = import_label_studio(open_batch(batch), export, parse_voters(voter))  # what it leaves out: a warning
    typer.echo(
        f"{done.added:,} new votes from {len(done.people)} people ({', '.join(done.people)}); {done.held:,} held "
        "already"
    )


def register(app: typer.Typer) -> None:
    app.add_typer(annotate_app, name="annotate")
