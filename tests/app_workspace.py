"""A small real workspace for the panel and browser tests: real WordNet probes, real MiniLM predictions.

The graph caches are linked from the tests' workspace (``tests/conftest.py``: a temporary copy of the
user's); the probe sets are built for a few hundred concepts only (dog.n.01 among them) so that everything is
quick. The built probes and predictions are kept in the folder the run's workers share (``WORKBENCH_TESTS_SHARED``,
``tests/conftest.py``; else that workspace), in ``test-apps/`` keyed by the graph, and copied into each test
workspace, so only the first test of a run builds and scores: the others wait for it (a lock), then copy.
"""

import os
import shutil
from pathlib import Path

import polars as pl

CONCEPTS = ("dog.n.01", "cat.n.01", "oak.n.01", "car.n.01")


def make_app_workspace(home: Path, minilm_path: Path | None = None, n_concepts: int = 150, n_scored: int = 300) -> Path:
    """Fill ``home`` as a workspace: linked graph caches, hypernymy and definitions probes, predictions."""
    from workbench.io import exclusive
    from workbench.knowledge import load_graph
    from workbench.paths import workspace

    main = workspace()
    for name in ("graphs", "nltk_data"):
        (home / name).symlink_to(main / name, target_is_directory=True)
    graph = load_graph("wordnet")
    shared = Path(os.environ["WORKBENCH_TESTS_SHARED"]) if "WORKBENCH_TESTS_SHARED" in os.environ else main
    built = shared / "test-apps" / f"{graph.key}-{n_concepts}-{n_scored}-{minilm_path is not None}"
    with exclusive(built, wait=True):  # the first worker to ask builds; the others wait, then copy
        if not (built / "done").exists():
            shutil.rmtree(built, ignore_errors=True)
            _build(built, graph, minilm_path, n_concepts, n_scored)
            (built / "done").touch()
    for name in ("probes", "predictions"):
        if (built / name).is_dir():
            shutil.copytree(built / name, home / name)
    return home


def _build(home: Path, graph, minilm_path: Path | None, n_concepts: int, n_scored: int) -> None:
    from workbench.probes import ProbeSpec, build_probes
    from workbench.probes.formats import write_probes

    for probe in ("hypernymy", "definitions"):  # the concepts drawn from a quick build (random distractors, one hop)
        quick = build_probes(ProbeSpec(probe, max_hops=1, families=("random",), max_depth=1), graph, progress=False)
        askable = quick.select(pl.col("concept").unique(maintain_order=True))["concept"]
        named = [concept for concept in CONCEPTS if askable.is_in([concept]).any()]
        concepts = tuple(dict.fromkeys([*askable.sample(n_concepts, seed=0), *named]))
        spec = ProbeSpec(probe, max_hops=3, max_depth=2, seed=0, train_size=200, concepts=concepts)
        frame = build_probes(spec, graph, progress=False)
        write_probes(frame, home / "probes" / probe)
    if minilm_path is not None:
        from workbench.scoring import score

        probes = pl.read_parquet(home / "probes" / "hypernymy" / "*.parquet")
        chosen = probes.filter(pl.col("concept").is_in(CONCEPTS)).vstack(
            probes.filter(~pl.col("concept").is_in(CONCEPTS)).head(n_scored)
        )
        preds = score(
            chosen,
            minilm_path,
            scorer="similarity",
            cache=home / "cache.sqlite",
            progress=False,
        )  # on the worker's share of the cores (tests/conftest.py): on cores others keep busy, more threads spin
        (home / "predictions").mkdir()
        preds.write_parquet(home / "predictions" / "minilm-similarity.parquet")


def add_inoculation_inputs(home: Path, minilm_path: Path, mcqa_dir: Path, n_questions: int = 60) -> Path:
    """Add to ``home`` what the inoculation app needs: a source model and a small original task.

    The source model is a tiny random BERT with a multiple-choice head (``runs/tiny-source/model``,
    MiniLM's tokenizer); the original task is the first ``n_questions`` real ARC-Easy dev questions.
    """
    from tiny_models import tiny_multiple_choice_bert

    tiny_multiple_choice_bert(
        home / "runs" / "tiny-source" / "model", minilm_path, layers=1, positions=128
    )  # apps use 128
    (home / "mcqa" / "arc_easy").mkdir(parents=True)
    lines = (mcqa_dir / "arc_easy" / "dev.jsonl").read_text().splitlines()[:n_questions]
    (home / "mcqa" / "arc_easy" / "dev.jsonl").write_text("\n".join(lines) + "\n")
    return home
