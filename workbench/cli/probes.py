"""``workbench probes``: build, load and describe probe sets."""

import os
from enum import Enum
from pathlib import Path

import typer

from workbench.cli.guard import Reads, Writes, declares
from workbench.cli.tables import markdown
from workbench.schema import PROBES

probes_app = typer.Typer(
    help="Build probe sets from WordNet and GCIDE, load probe files, print statistics, check their text.",
    no_args_is_help=True,
)


class Format(str, Enum):
    parquet = "parquet"
    jsonl = "jsonl"


class Preset(str, Enum):
    paper = "paper"
    uniform = "uniform"


def _print_stats(frame) -> None:
    from workbench.probes.stats import hops_by_family, table4

    typer.echo(markdown(table4(frame)))
    typer.echo(markdown(hops_by_family(frame)))


@probes_app.command("build")
@declares(templates=Reads(), paired_with=Reads(), out=Writes("probes"))
def build(
    probe: str = typer.Option(..., help=f"Which probe(s): {', '.join(PROBES)}, comma-separated, or 'all'."),
    out: Path = typer.Option(
        ..., help="Folder for {train,dev,test}.parquet (or .jsonl); one sub-folder per probe when several."
    ),
    preset: Preset = typer.Option(
        Preset.paper,
        help="Starting settings: 'paper' (the paper's population of questions, docs/REPRODUCTION.md) or 'uniform' "
        "(every hop, family and depth alike: ProbeSpec's defaults); options given override them.",
    ),
    max_hops: int | None = typer.Option(
        None,
        help="Largest hop count k of the gold (hypernymy, hyponymy): 1..5 \\[default: the preset's: 5, uniform 3].",
    ),
    distractors: str | None = typer.Option(
        None, help="Distractor families, comma-separated: random, sister, isa \\[default: all three]."
    ),
    max_depth: int | None = typer.Option(
        None,
        help="Largest depth l of sister_l and k' of isa_k': 1..5 "
        "\\[default: the preset's: sister 2, isa 4; uniform 3].",
    ),
    perturbations: str | None = typer.Option(
        None,
        help="Distractor variants per question (a number), or 'all' "
        "\\[default: the preset's: paper 143 disjoint draws, uniform 2].",
    ),
    golds_per_hop: int | None = typer.Option(
        None, help="Gold answers per hop count \\[default: the released data's: 10 for hyponymy, 1 for hypernymy]."
    ),
    instance_links: bool | None = typer.Option(
        None,
        "--instance-links/--no-instance-links",
        help="Follow WordNet instance-hypernym links \\[default: no, as the released data].",
    ),
    seed: int | None = typer.Option(None, help="Seed of every random choice; same seed, same bytes \\[default: 0]."),
    train_size: int | None = typer.Option(
        None,
        help="Most questions in the train split \\[default: 3000, drawn as the paper drew its (docs/REPRODUCTION.md)].",
    ),
    templates: Path | None = typer.Option(None, help="A template JSON file to use instead of the default."),
    concepts: str | None = typer.Option(
        None, help="Ask only about these concepts, comma-separated (e.g. dog.n.01,car.n.01)."
    ),
    format: Format = typer.Option(Format.parquet, "--format", help="File format."),
    workers: int | None = typer.Option(
        None,
        min=1,
        help="Processes building probe sets at once \\[default: 2 on a machine with two cores or more, else 1]. "
        "The paper preset's five sets on 2: 0.47 of the time they took before this round, 1.35 GB in all.",
    ),
    language: str | None = typer.Option(
        None,
        help="Ask hypernymy or hyponymy in this language: eng (English, lemmas only) or an Open Multilingual Wordnet "
        "code (fra, ita, por, nld, arb: its wn-data-<code>.tab, or a WN-LMF .xml, in $OMW_DIR/<code>/) or a .tab or "
        ".xml file; settings start "
        "from the uniform preset (docs/MULTILINGUAL.md).",
    ),
    paired_with: Path | None = typer.Option(
        None,
        help="With --language: ask this English set's questions (same concepts, hops, distractor synsets, answer "
        "positions, splits) in the language, and report how many were dropped and why.",
    ),
    within: str | None = typer.Option(
        None,
        help="With --language eng: ask only about synsets these OMW languages (comma-separated) have words for, "
        "so that a set paired with them loses few questions.",
    ),
) -> None:
    """Build probe sets from the cached graphs and write each split into train, dev and test."""
    import polars as pl

    from workbench.errors import SpecError
    from workbench.knowledge.cache import source_label
    from workbench.probes import ProbeSpec, build_probe_sets
    from workbench.probes.formats import check_probe_folder, write_probe_sets

    names = list(PROBES) if probe == "all" else [part.strip() for part in probe.split(",") if part.strip()]
    if not names:
        raise SpecError(
            f"--probe {probe!r} names no probe; choose one or more of {', '.join(PROBES)} (comma-separated), or 'all'"
        )
    check_probe_folder(out)  # a folder of other files is refused now, not after the building
    if language is None and (paired_with is not None or within is not None):
        raise SpecError("--paired-with and --within go with --language (e.g. --language fra --paired-with DIR)")
    given = {
        "max_hops": max_hops,
        "families": distractors,
        "max_depth": max_depth,
        "golds_per_hop": golds_per_hop,
        "instance_links": instance_links,
        "seed": seed,
        "train_size": train_size,
        "templates": templates,
        "concepts": concepts,
    }
    overrides = {name: value for name, value in given.items() if value is not None}
    if perturbations is not None:
        overrides["perturbations"] = None if perturbations == "all" else _whole_number("perturbations", perturbations)
    if language is not None:
        _build_in_language(names, language, overrides, out, format.value, paired_with, within)
        return
    if preset is Preset.paper:
        specs = [ProbeSpec.paper(name, **overrides) for name in names]
    else:
        specs = [ProbeSpec(probe=name, **overrides) for name in names]
    frames = build_probe_sets(specs, workers=workers or min(2, os.cpu_count() or 1))
    sets = frames if len(specs) > 1 else {"": frames[specs[0].probe]}
    knowledge = "; ".join(source_label(source) for source in dict.fromkeys(spec.source for spec in specs))
    metadata = {"knowledge": knowledge}
    for path in write_probe_sets(sets, out, fmt=format.value, metadata=metadata):  # all at once: a kill leaves the old
        typer.echo(f"wrote {path}")
    typer.echo(f"built from {knowledge}")
    _print_stats(pl.concat(list(frames.values())))


def _build_in_language(
    names: list[str], language: str, overrides: dict, out: Path, fmt: str, paired_with: Path | None, within: str | None
) -> None:
    """``probes build --language``: one taxonomy set in ``language``, built or paired with an English set."""
    from workbench.errors import SpecError
    from workbench.probes.formats import read_probes, write_probe_sets
    from workbench.probes.languages import build_language_probes, language_spec, pair_with

    if len(names) != 1:
        raise SpecError(f"--language builds one probe at a time (hypernymy or hyponymy), not {', '.join(names)}")
    if paired_with is not None:
        built = pair_with(read_probes(paired_with), language, seed=overrides.get("seed", 0))
    else:
        shared = tuple(part.strip() for part in (within or "").split(",") if part.strip())
        built = build_language_probes(language, language_spec(names[0], language, **overrides), shared=shared)
    for path in write_probe_sets({"": built.probes}, out, fmt=fmt, metadata={"knowledge": built.knowledge}):
        typer.echo(f"wrote {path}")
    typer.echo(f"{built.probes.height:,} questions in {language} from {built.knowledge}; dropped:")
    typer.echo(markdown(built.dropped))
    _print_stats(built.probes)


def _whole_number(name: str, text: str) -> int:
    from workbench.errors import SpecError

    try:
        return int(text)
    except ValueError:
        raise SpecError(f"{name}={text!r} is not a whole number or 'all'") from None


@probes_app.command("load")
@declares(path=Reads())
def load(
    path: Path = typer.Argument(..., help="A probe file (Parquet, JSONL, released ARC-style JSONL) or a split folder."),
    rows: int = typer.Option(5, help="How many questions to show."),
) -> None:
    """Read a probe file into the workbench's probe schema and show its first questions."""
    import polars as pl

    from workbench.probes.formats import read_probes

    frame = read_probes(path)
    typer.echo(f"{frame.height:,} questions from {path}{_built_from(path)}")
    with pl.Config(tbl_rows=rows, fmt_str_lengths=80, tbl_hide_column_data_types=True):
        typer.echo(
            frame.select("id", "probe", "split", "question", "choices", "answer", "hops", "distractor_family").head(
                rows
            )
        )


@probes_app.command("stats")
@declares(path=Reads())
def stats(path: Path = typer.Argument(..., help="A probe folder or file.")) -> None:
    """Print the SPEC Table 4 statistics and a hops x distractor-family count table."""
    from workbench.probes.formats import read_probes

    frame = read_probes(path)
    typer.echo(f"{frame.height:,} questions from {path}{_built_from(path)}")
    _print_stats(frame)


@probes_app.command("tiny")
@declares(path=Reads(), irt=Reads(), out=Writes("table"))
def tiny(
    path: Path = typer.Argument(..., help="A probe folder or file the fit holds questions of."),
    irt: Path = typer.Option(..., help="The IRT fit to choose anchors by (workbench irt fit)."),
    n: int = typer.Option(100, help="How many anchor questions."),
    seed: int = typer.Option(0, help="Seed of the clustering."),
    out: Path = typer.Option(..., help="The anchors (.parquet): probe rows with a weight; score it like a probe file."),
) -> None:
    """A fixed small set of anchor questions chosen from an IRT fit (tinyBenchmarks); then score it and estimate
    with workbench irt ability FIT PREDICTIONS --anchors OUT."""
    from workbench.io import write_parquet
    from workbench.irt import IrtFit
    from workbench.irt.anchors import anchors
    from workbench.probes.formats import read_probes

    chosen = anchors(IrtFit.load(irt), read_probes(path), n, seed)
    write_parquet(chosen, out)
    typer.echo(f"{chosen.height} anchor questions of {path} -> {out}")


def _built_from(path: Path) -> str:
    """', built from <knowledge>' where the probe file names the sources it was built from (else '')."""
    from workbench.probes.formats import probe_metadata

    knowledge = probe_metadata(path).get("knowledge")
    return f", built from {knowledge}" if knowledge else ""


@probes_app.command("reproduce")
@declares(released=Reads(), out=Writes("markdown"))
def reproduce(
    released: Path = typer.Option(..., help="The folder of the released probe data (ARC-style JSONL with notes)."),
    out: Path | None = typer.Option(None, help="Write the Markdown here instead of printing it."),
    seed: int = typer.Option(0, help="Seed of the paper-preset builds."),
) -> None:
    "Build the paper preset of every released probe and compare: Table 4, hops, families, clusters, positions, golds."
    from workbench.io import write_text
    from workbench.probes.reproduction import reproduction_tables

    text = reproduction_tables(released, seed=seed)
    if out is None:
        typer.echo(text)
    else:
        typer.echo(f"wrote {write_text(text, out)}")


@probes_app.command("compare-release")
@declares(ours=Reads(), released=Reads(), model=Reads())
def compare_release(
    ours: Path = typer.Argument(..., help="Our probe set of one probe: a folder of splits or a file."),
    released: Path = typer.Argument(
        ..., help="A released file of the same probe (hypernymy_train.jsonl; a test file is set beside our test split)."
    ),
    model: Path | None = typer.Option(
        None, help="Also score both samples zero-shot with this sentence encoder's `similarity` scorer."
    ),
    seed: int = typer.Option(0, help="Seed of the sample drawn from ours and of the baselines' folds."),
    seeds: int = typer.Option(
        1,
        min=1,
        help="Baselines over this many seeds from --seed (new folds each, and a new draw where OURS holds more "
        "questions than the release: a paper-preset train split holds exactly as many): mean and sd.",
    ),
    baselines: bool = typer.Option(
        True,
        "--baselines/--no-baselines",
        help="The partial-input baselines, fitted on both sets (the slow part: tens of seconds for 3,000 questions); "
        "--no-baselines prints the rest in seconds.",
    ),
    alike: bool = typer.Option(
        False,
        help="With --model, also score our questions that ask what the released ones ask (same concept, gold, "
        "distractor family and depth) beside them: whether a gap lies in how questions are made or which are asked "
        "(every such question of ours: 3,000-50,000, minutes on a CPU).",
    ),
) -> None:
    """Draw from OURS as the release was drawn and print both side by side: marginals, total-variation
    distances, clusters and choice lengths, Table 4, partial-input baselines (and a model's accuracy). A released
    gold-standard test file adds its annotators' judgements: their accuracy, the share of questions they agreed on,
    and the model's accuracy by how many distinct choices they picked. With --alike, the model also scores our
    questions that ask what each released one asks, beside it."""
    import polars as pl

    from workbench.analysis.release import (
        alike_accuracy,
        asked_alike,
        drawn_like_release,
        human_votes,
        release_comparison,
        released_split,
    )
    from workbench.probes.formats import read_probes

    if alike and model is None:
        raise typer.BadParameter("--alike scores questions: give --model too", param_hint="--alike")
    ours_frame, released_frame = read_probes(ours), read_probes(released)
    tables = release_comparison(
        ours_frame, released_frame, seed=seed, baselines=baselines, seeds=seeds, progress=seeds > 1
    )
    votes = human_votes(released) if released.is_file() and released.suffix == ".jsonl" else pl.DataFrame()
    if votes.height:
        tables["humans"] = pl.DataFrame(
            {
                "human_accuracy": [round(votes["human_correct"].mean(), 4)],
                "one_pick": [round((votes["picks"] == 1).mean(), 4)],
            }
        )
    if model is not None:
        from workbench.scoring import score

        drawn = drawn_like_release(ours_frame, released_frame.height, seed, released_split(released_frame))
        predictions = {
            side: score(frame, str(model), "similarity", progress=False)
            for side, frame in (("ours", drawn), ("released", released_frame))
        }
        rows = [{"set": side, "similarity_accuracy": round(p["correct"].mean(), 4)} for side, p in predictions.items()]
        tables["model"] = pl.DataFrame(rows)
        if votes.height:
            tables["model_by_picks"] = (
                predictions["released"]
                .join(votes, on="id")
                .group_by("picks")
                .agg(questions=pl.len(), similarity_accuracy=pl.col("correct").mean().round(4))
                .sort("picks")
            )
        if alike:
            from workbench.knowledge import load_graph

            alike_frame = asked_alike(released_frame, load_graph("wordnet"))
            scored = score(alike_frame, str(model), "similarity")  # the long part: tens of thousands of questions
            tables["alike"] = alike_accuracy(scored, predictions["released"])
    for name, table in tables.items():
        typer.echo(f"\n{name}\n")
        typer.echo(markdown(table))


@probes_app.command("check")
@declares(path=Reads(), out=Writes("table"), irt=Reads())
def check(
    path: Path = typer.Argument(..., help="A probe folder or file."),
    examples: int = typer.Option(3, min=0, help="How many flagged texts to show for each kind of problem."),
    out: Path | None = typer.Option(None, help="Write every flagged (question, field, kind) row here as Parquet."),
    people: int = typer.Option(
        2, min=1, help="A choice people flagged as also right counts (kind also-right) when this many agree."
    ),
    irt: Path | None = typer.Option(
        None, help="An IRT fit (workbench irt fit): its questions of near-zero discrimination (kind undiscriminating)."
    ),
) -> None:
    """Flag text problems in questions: glued words, unbalanced brackets, truncated definitions, leftover markup;
    and choices the workspace's annotators flagged as also right (docs/ANNOTATION.md)."""
    import polars as pl

    from workbench.annotation import flag_problems, workspace_flags
    from workbench.io import write_parquet
    from workbench.probes.formats import read_probes
    from workbench.probes.quality import problem_counts, problem_examples, text_problems

    frame = read_probes(path)
    flagged_by_people = flag_problems(workspace_flags(), least=people).filter(pl.col("id").is_in(frame["id"].implode()))
    problems = pl.concat([text_problems(frame), flagged_by_people])
    if irt is not None:
        from workbench.irt import IrtFit
        from workbench.irt.diagnostics import overlap, suspect_problems

        problems = pl.concat([problems, suspect_problems(IrtFit.load(irt), frame)])
        met = overlap(problems)
        typer.echo(f"the fit suspects {met['irt']} question(s), people flagged {met['people']}, both {met['both']}")
    counts = problem_counts(problems, frame.height)
    flagged = counts.filter(pl.col("kind") == "any").row(0, named=True)
    typer.echo(f"{frame.height:,} questions from {path}; {flagged['questions']:,} ({flagged['share']:.2%}) flagged")
    typer.echo(markdown(counts))
    for row in problem_examples(problems, examples).iter_rows(named=True):
        text = row["text"] if len(row["text"]) <= 100 else "..." + row["text"][-97:]
        typer.echo(f"{row['kind']:<10} {row['field']:<7} {row['detail']!r}: {text!r}")
    if out is not None:
        typer.echo(f"wrote {write_parquet(problems, out)}")


class ControlKind(str, Enum):
    no_lang = "no-lang"
    perturbed_lang = "perturbed-lang"


@probes_app.command("control")
@declares(probes=Reads(), templates=Reads(), out=Writes("probes"))
def control(
    kind: ControlKind = typer.Option(
        ..., help="no-lang (keep only the task's arguments) or perturbed-lang (template words become nonsense words)."
    ),
    probes: Path = typer.Option(..., help="The probe folder or file to make a control of."),
    out: Path = typer.Option(..., help="Folder for the control's {train,dev,test} files."),
    seed: int = typer.Option(0, help="Seed of the nonsense words (perturbed-lang)."),
    templates: Path | None = typer.Option(
        None, help="The template JSON file the probes were built with (default: the packaged one)."
    ),
    format: Format = typer.Option(Format.parquet, "--format", help="File format."),
) -> None:
    """Write the oLMpics NO-LANG or PERTURBED-LANG control of a probe set (same choices, answers and splits)."""
    from workbench.errors import WorkbenchError
    from workbench.probes.formats import read_probes, write_probes
    from workbench.probes.language_controls import ControlSpec, language_control

    frame = language_control(read_probes(probes), ControlSpec(kind.value, seed=seed, templates=templates))
    if frame.is_empty():  # an empty set written would replace --out with an empty folder
        raise WorkbenchError(f"{probes} holds no questions; give a probe set with some")
    for path in write_probes(frame, out, fmt=format.value):
        typer.echo(f"wrote {path}")
    typer.echo(f"example: {frame['question'][0]}")


def register(app: typer.Typer) -> None:
    app.add_typer(probes_app, name="probes")
