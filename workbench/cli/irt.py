"""``workbench irt``: fit item response theory over the population (``fit``), read a fit (``show``), place a new
model on its scale (``ability``), predict a new probe set's difficulties (``predict``). docs/IRT.md."""

from pathlib import Path

import typer

from workbench.cli.guard import Reads, Writes, declares

irt_app = typer.Typer(help="Item response theory over the population of models (docs/IRT.md).", no_args_is_help=True)


@irt_app.command("fit")
@declares(predictions=Reads(), sweeps=Reads(), runs=Reads(), out=Writes("irt"))
def fit(
    predictions: list[Path] = typer.Argument(None, help="Prediction files or folders: one member per fingerprint."),
    sweeps: list[Path] = typer.Option([], "--sweep", help="Sweep folder: one member per model, control and seed."),
    runs: list[Path] = typer.Option([], "--run", help="Inoculation run folder: one member per finished trial."),
    model: str = typer.Option("2pl", help="1pl (Rasch), 2pl, or 3pl (guessing floor fixed at 1 / choices)."),
    explain: list[str] = typer.Option(
        [],
        help="A design factor difficulty is regressed on inside the model (hops, distractor_family, "
        "distractor_depth, probe, choices; concept_depth and polysemy, read from WordNet); repeatable.",
    ),
    held_out: float = typer.Option(0.1, help="Share of answers held out of a first fit to score it (0: none)."),
    seed: int = typer.Option(0, help="Seed of the held-out draw."),
    out: Path = typer.Option(..., help="The fit's folder (fit.json, items, members, effects)."),
) -> None:
    """Fit 1PL/2PL/3PL over the population's answers, questions matched by content; write items, abilities and
    the fit's quality."""
    from workbench.irt import fit_irt, responses

    result = fit_irt(responses(predictions or [], sweeps, runs), model=model, explain=tuple(explain),
                     held_out=held_out, seed=seed)  # fmt: skip
    result.save(out)
    typer.echo(summary(result) + f"-> {out}")


@irt_app.command("show")
@declares(fit_folder=Reads())
def show(
    fit_folder: Path = typer.Argument(..., help="A fit folder (workbench irt fit --out)."),
    top: int = typer.Option(5, min=1, help="How many questions of each end to list."),
) -> None:
    """The fit's quality, members by ability, factor effects, and its suspected defects."""
    from workbench.irt import IrtFit

    typer.echo(summary(IrtFit.load(fit_folder), top), nl=False)


@irt_app.command("ability")
@declares(fit_folder=Reads(), predictions=Reads(), anchors=Reads())
def ability(
    fit_folder: Path = typer.Argument(..., help="A fit folder (workbench irt fit --out)."),
    predictions: Path = typer.Argument(..., help="One model's prediction file on some of the fit's questions."),
    anchors: Path | None = typer.Option(None, help="The anchors the predictions are of (workbench probes tiny)."),
) -> None:
    """A new model's ability on the fit's scale, and its estimated accuracy on each probe, with intervals."""
    from workbench.io import read_predictions
    from workbench.irt import IrtFit
    from workbench.irt.fit import ability as estimate

    for row in estimate(IrtFit.load(fit_folder), read_predictions(predictions)).iter_rows(named=True):
        typer.echo(f"{row['model']} {row['probe']}: estimated accuracy {row['accuracy']:.3f} "
                   f"[{row['lo']:.3f}, {row['hi']:.3f}] from {row['asked']} answers; ability {row['theta']:+.2f} "
                   f"± {row['theta_se']:.2f}")  # fmt: skip
    if anchors is not None:
        import polars as pl

        from workbench.irt.anchors import anchor_estimate

        for row in anchor_estimate(pl.read_parquet(anchors), read_predictions(predictions)).iter_rows(named=True):
            typer.echo(f"{row['probe']}: anchors' weighted accuracy {row['accuracy']:.3f} ({row['anchors']} anchors)")


@irt_app.command("predict")
@declares(fit_folder=Reads(), probes=Reads())
def predict(
    fit_folder: Path = typer.Argument(..., help="A fit with factor effects (workbench irt fit --explain ...)."),
    probes: Path = typer.Argument(..., help="A probe set (file or folder) no model need have answered."),
    top: int = typer.Option(5, min=1, help="How many of the hardest and easiest questions to list."),
) -> None:
    """Predicted difficulties of a probe set's questions from the fit's factor effects."""
    from workbench.irt import IrtFit, predict_difficulty
    from workbench.probes.formats import read_probes

    predicted = predict_difficulty(IrtFit.load(fit_folder), read_probes(probes)).sort("b_predicted")
    typer.echo(f"{predicted.height} questions, predicted difficulty {predicted['b_predicted'].mean():+.2f} on average")
    for row in [*predicted.tail(top).reverse().iter_rows(named=True), *predicted.head(top).iter_rows(named=True)]:
        typer.echo(f"  {row['b_predicted']:+.2f} [{row['b_lo']:+.2f}, {row['b_hi']:+.2f}]  {row['probe']}: "
                   f"{row['question'][:70]}")  # fmt: skip


def adaptive_run(fit, probes, ask, n: int, se: float | None, out: Path) -> str:
    """``workbench score --adaptive``: the run, its predictions written with the estimate they carry, its lines."""
    from workbench.io import write_parquet
    from workbench.irt.adaptive import adaptive

    result = adaptive(fit, probes, ask, n, se)
    write_parquet(result.asked, out, metadata=result.metadata())
    lines = [f"asked {result.asked.height} questions adaptively (ability {result.theta:+.2f} ± {result.theta_se:.2f});"
             f" accuracy on the whole set is an estimate -> {out}"]  # fmt: skip
    for r in result.estimate.iter_rows(named=True):
        lines.append(f"  {r['probe']}: estimated accuracy {r['accuracy']:.3f} [{r['lo']:.3f}, {r['hi']:.3f}] over "
                     f"{r['questions']} questions, {r['asked']} asked")  # fmt: skip
    return "\n".join(lines)


def summary(result, top: int = 5) -> str:
    """The fit in plain text: its size and quality, the members by ability, the effects, the suspects."""
    q = result.quality
    lines = [f"{result.spec.model}: {q['members']} members x {q['questions']} questions, {q['answers']} answers"]
    if "held_out_loglik" in q:
        lines.append(f"held-out log-likelihood per answer {q['held_out_loglik']:.3f} (members' accuracy alone "
                     f"{q['held_out_baseline']:.3f}; {q['held_out_answers']} answers)")  # fmt: skip
    if q.get("predicted_difficulty_r") is not None:
        lines.append(f"difficulties of {q['held_out_questions']} held-out questions predicted from the factors: r "
                     f"{q['predicted_difficulty_r']:.2f} with the free fit's, mean absolute difference "
                     f"{q['predicted_difficulty_mae']:.2f}")  # fmt: skip
    lines.append("members by ability (95% interval):")
    for row in result.members.sort("theta", descending=True).iter_rows(named=True):
        lines.append(f"  {row['theta']:+.2f} [{row['theta_lo']:+.2f}, {row['theta_hi']:+.2f}]  "
                     f"accuracy {row['accuracy']:.3f}  {row['label']}")  # fmt: skip
    if not result.effects.is_empty():
        lines.append("difficulty effects (logits, 95% interval):")
        lines += [f"  {r['term']:<28} {r['effect']:+.3f} [{r['lo']:+.3f}, {r['hi']:+.3f}]"
                  for r in result.effects.iter_rows(named=True)]  # fmt: skip
    suspects = result.items.filter("suspect").sort("a")
    lines.append(f"{suspects.height} suspected defect(s) (discrimination near zero):")
    lines += [f"  a {r['a']:.2f}  {r['probe']} {r['id']}: {r['question'][:70]}"
              for r in suspects.head(top).iter_rows(named=True)]  # fmt: skip
    return "\n".join(lines) + "\n"


def register(app: typer.Typer) -> None:
    app.add_typer(irt_app, name="irt")
