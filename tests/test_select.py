"""Selecting questions from real WordNet probes: toggles, counts, options, a concept's cluster."""

import polars as pl
import pytest

from workbench.errors import SpecError
from workbench.probes import ProbeSpec, build_probes
from workbench.probes.select import ProbeFilter, cluster_of, cluster_verdicts, counts, options, select

pytestmark = pytest.mark.wordnet


@pytest.fixture(scope="module")
def probes(wordnet_graph) -> pl.DataFrame:
    frame = build_probes(ProbeSpec("hypernymy", max_hops=3, max_depth=2, seed=0), wordnet_graph, progress=False)
    return frame.filter(pl.col("concept").str.starts_with("d"))


def test_select_keeps_exactly_the_rows_inside_every_toggle(probes):
    where = ProbeFilter(probe="hypernymy", split="test", hops=(2, 3), families=("sister", "random"), depths=(2, 2))
    chosen = select(probes, where)
    assert not chosen.is_empty()
    assert set(chosen["split"]) == {"test"} and set(chosen["hops"]) <= {2, 3}
    assert set(chosen["distractor_family"]) <= {"sister", "random"}
    assert set(chosen.filter(pl.col("distractor_family") == "sister")["distractor_depth"]) == {2}
    assert chosen.filter(pl.col("distractor_family") == "random").height > 0  # depth 0 is never dropped
    rest = probes.join(chosen, on="id", how="anti")
    inside = (
        (pl.col("split") == "test") & pl.col("hops").is_between(2, 3)
        & (
            (pl.col("distractor_family") == "random")
            | ((pl.col("distractor_family") == "sister") & (pl.col("distractor_depth") == 2))
        )
    )  # fmt: skip
    assert rest.filter(inside).is_empty()
    assert select(probes, ProbeFilter()).height == probes.height


def test_counts_add_up_to_the_selection_and_count_clusters(probes):
    chosen = select(probes, ProbeFilter(hops=(1, 2)))
    table = counts(chosen)
    assert table["n"].sum() == chosen.height
    assert set(table["hops"]) == {1, 2}
    row = table.row(0, named=True)
    cell = chosen.filter(
        pl.col("hops") == row["hops"],
        pl.col("distractor_family") == row["distractor_family"],
        pl.col("distractor_depth") == row["distractor_depth"],
    )
    assert row["clusters"] == cell["cluster_id"].n_unique()


def test_options_list_what_the_frame_offers(probes):
    found = options(probes)
    assert found["probes"] == ["hypernymy"]
    assert found["hops"] == [1, 3] and found["depths"] == [0, 2]
    assert set(found["families"]) == set(probes["distractor_family"].unique())


def test_cluster_of_returns_every_question_about_the_concept(probes):
    concept = probes["concept"][0]
    cluster = cluster_of(probes, concept)
    assert set(cluster["concept"]) == {concept}
    assert cluster.height == probes.filter(pl.col("concept") == concept).height


def test_cluster_verdict_is_all_right_only_when_every_question_is(probes):
    concept = probes.group_by("concept").len().filter(pl.col("len") >= 2)["concept"][0]
    cluster = cluster_of(probes, concept).with_columns(model=pl.lit("m"), fingerprint=pl.lit("f"), correct=pl.lit(True))
    assert cluster_verdicts(cluster)["all_right"].all()
    one_wrong = cluster.with_columns(correct=pl.int_range(pl.len()) > 0)
    verdicts = cluster_verdicts(one_wrong)
    assert not verdicts["all_right"].any() and verdicts["n_correct"].sum() == cluster.height - 1


def test_filter_rejects_bad_toggles_naming_them():
    with pytest.raises(SpecError, match="hops"):
        ProbeFilter(hops=(3, 1))
    with pytest.raises(SpecError, match="families"):
        ProbeFilter(families=("cousins",))
    with pytest.raises(SpecError, match="probe"):
        ProbeFilter(probe="antonymy")


def test_sample_clusters_keeps_whole_clusters_within_the_budget(released_dir):
    """Evaluation samples whole clusters, never questions (R&S 2020 §4.3: strict cluster accuracy)."""
    from workbench.probes.formats import read_probes
    from workbench.probes.select import sample_clusters

    probes = read_probes(released_dir / "hypernymy_test.jsonl")
    sample = sample_clusters(probes, 400, seed=0)
    assert 0 < sample.height <= 400
    full = probes.group_by("cluster_id").len()
    kept = sample.group_by("cluster_id").len().join(full, on="cluster_id", suffix="_full")
    assert (kept["len"] == kept["len_full"]).all()
    assert sample.equals(sample_clusters(probes, 400, seed=0)) and not sample.equals(
        sample_clusters(probes, 400, seed=1)
    )
    assert sample_clusters(probes, None).equals(probes)
    assert sample_clusters(probes, 1).height >= 1  # one cluster at least, even when it is larger than the budget
