"""Our paper-preset build beside the released data (docs/REPRODUCTION.md), on real WordNet."""

import polars as pl
import pytest

from workbench.errors import WorkbenchError
from workbench.probes import ProbeSpec, build_probes
from workbench.probes.formats import read_probes
from workbench.probes.reproduction import TABLES, compare_with_released, to_markdown

pytestmark = pytest.mark.wordnet


@pytest.fixture(scope="module")
def hyponymy(released_dir, wordnet_graph):
    released = read_probes(released_dir / "hyponymy_test.jsonl")
    names = set(wordnet_graph.names)
    concepts = sorted(c for c in released["concept"].unique() if c in names)[:60]
    spec = ProbeSpec.paper("hyponymy", concepts=tuple(concepts))
    try:
        ours = build_probes(spec, wordnet_graph, progress=False)
    except WorkbenchError:  # a released concept our build cannot ask about: drop it and say so in the doc
        pytest.fail("a released hyponymy concept is not askable by the paper preset")
    return ours, released


def test_paper_preset_gives_the_released_hyponyms_at_one_hop(hyponymy):
    """R&S 2020: the released hyponymy golds at one hop are hyponyms our preset also asks for, almost always."""
    ours, released = hyponymy
    tables = compare_with_released(ours, released)
    assert set(tables) == set(TABLES)
    overlap = tables["gold_overlap"].filter(pl.col("hops") == 1).row(0, named=True)
    assert overlap["pairs"] >= 50 and overlap["share_coinciding"] >= 0.9


def test_comparison_counts_every_shared_row_once(hyponymy):
    ours, released = hyponymy
    tables = compare_with_released(ours, released)
    shared = set(ours["concept"].unique()) & set(released["concept"].unique())
    for name in ("hops", "families", "answer_positions"):
        assert tables[name]["ours"].sum() == ours.filter(pl.col("concept").is_in(list(shared))).height
        assert tables[name]["released"].sum() == released.filter(pl.col("concept").is_in(list(shared))).height
    families = set(
        tables["families"].filter(pl.col("ours") > 0).select("distractor_family", "distractor_depth").iter_rows()
    )
    released_families = set(released.select("distractor_family", "distractor_depth").unique().iter_rows())
    assert families <= released_families
    assert to_markdown(tables["hops"]).startswith("| hops |")


def test_probe_sets_without_a_shared_concept_are_refused(hyponymy):
    ours, released = hyponymy
    with pytest.raises(WorkbenchError, match="share no concept"):
        compare_with_released(ours, released.with_columns(concept=pl.lit("nothing.n.01")))


def test_cli_paper_preset_builds_the_released_settings(cli, tmp_path, wordnet_graph):
    from typer.testing import CliRunner

    out = tmp_path / "dog"
    run = CliRunner().invoke(
        cli,
        [
            "probes",
            "build",
            "--probe",
            "hyponymy",
            "--preset",
            "paper",
            "--concepts",
            "dog.n.01",
            "--perturbations",
            "all",
            "--out",
            str(out),
        ],
    )
    assert run.exit_code == 0, run.output
    frame = read_probes(out)
    assert set(frame.select("distractor_family", "distractor_depth").unique().iter_rows()) <= set(
        ProbeSpec.paper("hyponymy").distractor_options()
    )
    assert frame.filter(pl.col("distractor_family") == "sister")["distractor_depth"].max() == 2
    assert frame.group_by("hops").agg(pl.col("gold_concept").n_unique())["gold_concept"].max() == 10
