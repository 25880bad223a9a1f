"""Results without a server: a folder of static HTML, vendored JavaScript and data that opens from file://.

``publish(preds, out)`` writes ``out/index.html`` with the heat map (click a cell: the question table below it
lists that cell's questions), the cluster bars with their intervals, the taxonomy atlas when the concepts are
WordNet synsets (click a node: the icicle zooms into it and its concepts are listed), a per-concept cluster view
(question, choices, gold, each model's pick and scores) and the probe's statistics. Vega, Vega-Lite and vega-embed are
vendored from ``vl-convert-python`` (``assets/vega.js``); the page's own script and style are package data
(``workbench/site_assets``). Nothing is loaded from the internet, and nothing needs a server.

Large prediction sets stay fast: the page holds only aggregated rows (heat-map cells, bars, atlas nodes,
statistics) and the first questions; each heat-map cell's questions, each atlas node's concepts and each block of
concepts are separate files under ``data/``, loaded when asked for by ``<script src>`` (``file://`` pages may not
``fetch``), each calling ``WB.loaded(name, value)``.

The page is a list of ``Section`` values; a further one is one call away:

    >>> publish(preds, "site", sections=[chart_section("atlas", "Taxonomy atlas", atlas_chart)])  # doctest: +SKIP
"""

import html
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from importlib.resources import files
from pathlib import Path

import altair as alt
import polars as pl

from workbench import charts, markup, metrics, views
from workbench.analysis import atlas
from workbench.analysis.crosslingual import language_report
from workbench.charts.atlas import LEVEL_HEIGHT
from workbench.charts.crosslingual import language_chart
from workbench.errors import WorkbenchError
from workbench.io import exclusive, staged_folder, unlisted_files, write_text
from workbench.paths import cache_dir
from workbench.probes.select import cluster_verdicts
from workbench.probes.stats import hops_by_family, table4
from workbench.reports import script_json
from workbench.schema import population_line

FIRST_QUESTIONS = 100
"""Questions the table shows before any cell is clicked (those most models got wrong), held in the page itself."""
CONCEPT_BLOCK = 2_000
"""Question rows per concept file: one file is loaded to show any concept of its block."""
MANIFEST = "site.json"
"""The file that marks a folder as a published site (so that publishing again may replace it whole)."""
CELL_COLUMNS = ("concept", "question", "gold", "pick", "correct")
"""The columns of a cell file's rows (the cell's model, row and column are its key in the page)."""
ASSETS = ("site.js", "site.css")
ATLAS_NODES = 1_000
"""At most this many taxonomy atlas nodes per model in the page: nodes of fewer clusters fold into their parent."""
ATLAS_BOOT = 200
"""At most this many bootstrap resamples of each atlas node's interval (shown in its tooltip), as in the panel."""
ATLAS_LEVELS = 7
"""Levels of the icicle drawn below the node zoomed into."""
ATLAS_COLUMNS = (
    "label", "node", "parent", "level", "x0", "x1", "n_clusters", "n",
    "cluster_accuracy", "cluster_lo", "cluster_hi", "instance_accuracy", "examples",
)  # fmt: skip
"""The columns of the atlas's node rows in the page (``site.js`` derives the rest of a rectangle from them)."""
CONCEPT_UNDER_COLUMNS = ("concept", "clusters", "right", "questions", "questions_right")
"""The columns of an atlas node file's rows: ``atlas.concepts_under`` of the node."""


@dataclass(frozen=True)
class Section:
    """One section of the page: a heading, its HTML, the charts it embeds and the data files it loads.

    ``charts``: element id -> altair chart (or Vega-Lite dict), embedded into ``<div id=...>`` of ``html``.
    ``files``: data name ("cells/3") -> JSON-ready value, written as ``data/NAME.js`` (``WB.load(name)`` reads it).
    ``data``: JSON-ready values the page's script reads at once (``WB.page[key]``).
    """

    key: str
    title: str
    html: str
    charts: Mapping[str, object] = field(default_factory=dict)
    files: Mapping[str, object] = field(default_factory=dict)
    data: Mapping[str, object] = field(default_factory=dict)


def chart_section(key: str, title: str, chart: object, note: str = "") -> Section:
    """A section holding one chart (and a line of ``note`` above it): how a further view joins the page.

    >>> extra = chart_section("calibration", "Calibration", charts.reliability_diagram(preds))
    >>> publish(preds, "site", sections=[extra])  # doctest: +SKIP
    """
    intro_html = f"<p>{html.escape(note)}</p>" if note else ""
    chart_html = f'{intro_html}<div id="{markup.attr(key)}-chart" class="wb-chart"></div>'
    return Section(key, title, chart_html, charts={f"{key}-chart": chart})


def link_section(key: str, title: str, url: str, text: str, option: str = "the link") -> Section:
    """A section holding one link (``text`` around it, escaped): how a site points to another (the course's).
    ``url`` passes ``markup.link`` (http(s) or relative), else a one-line error naming ``option``."""
    return Section(key, title, f"<p>{html.escape(text)} {markup.anchor(url, url, option)}</p>")


def publish(
    preds: pl.DataFrame,
    out: str | Path,
    probes: pl.DataFrame | None = None,
    *,
    title: str = "Probe Workbench results",
    n_boot: int = 1000,
    seed: int = 0,
    sections: Sequence[Section] = (),
    estimates: Sequence = (),
) -> Path:
    """Write a self-contained static site of ``preds`` into the folder ``out``, replacing it whole.

    Opens from ``file://``, a file share or any static host; nothing loads from the internet.

    Parameters
    ----------
    preds : polars.DataFrame
        Predictions (``PREDICTION_SCHEMA``), one model or several (``read_predictions`` of several files).
    out : str or Path
        The site's folder: new, empty, or a site published before (anything else is refused, not deleted).
    probes : polars.DataFrame, optional
        The probe set the predictions came from: its statistics are shown, and clusters scored in part warned of.
    title : str
        The page's title.
    n_boot, seed
        Bootstrap resamples of the cluster bars' intervals (and of the atlas's, at most ``ATLAS_BOOT``) and their seed.
    sections : sequence of Section
        Further sections, after the standard ones (``chart_section`` makes one of a chart).
    estimates : sequence of irt.estimates.Estimate
        Where ``preds`` are adaptive runs' (``irt.estimates.estimates`` of their files): the site shows their
        estimates in place of the standard sections, which would show the asked questions' accuracy as the model's.

    Returns
    -------
    Path
        ``out/index.html``.

    Examples
    --------
    >>> publish(read_predictions("minilm.parquet", "random.parquet"), "site")  # doctest: +SKIP
    PosixPath('site/index.html')
    """
    out = Path(out)
    _check_replaceable(out)
    if preds.is_empty():
        raise WorkbenchError("the prediction frame is empty: there is nothing to publish; score a probe set first")
    if estimates:
        from workbench.irt.estimates import estimate_html

        headline_html = "adaptive estimates, not full runs"
        parts = [Section("estimate", "Adaptive estimate", estimate_html(list(estimates))), *sections]
    else:
        headline_html = _headline_html(preds)
        parts = [*standard_sections(preds, probes, n_boot=n_boot, seed=seed), *sections]
    keys = [section.key for section in parts]
    if len(set(keys)) != len(keys):
        raise WorkbenchError(f"two sections share a key among {keys}; give each further section its own key")
    page = _page(parts, title, headline_html)
    with exclusive(out), staged_folder(out) as staging:
        _write_assets(staging)
        _write_data(staging, parts)
        (staging / "index.html").write_text(page, encoding="utf-8")
        _write_manifest(staging, preds, title, keys)
    return out / "index.html"


def _write_assets(folder: Path) -> None:
    """The page's scripts and styles (Vega, Vega-Lite and vega-embed inlined: nothing loads from the internet)."""
    (folder / "assets").mkdir()
    (folder / "assets" / "vega.js").write_text(_vega_bundle(), encoding="utf-8")
    for name in ASSETS:
        (folder / "assets" / name).write_text(_asset(name), encoding="utf-8")


def _write_data(folder: Path, sections: Sequence[Section]) -> None:
    """Each section's data as a script the page loads on demand (``data/NAME.js``), so the page opens from file://."""
    for section in sections:
        for name, value in section.files.items():
            path = folder / "data" / f"{name}.js"
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(f"WB.loaded({json.dumps(name)}, {_script_json(value)});\n", encoding="utf-8")


def _write_manifest(folder: Path, preds: pl.DataFrame, title: str, keys: list[str]) -> None:
    """``site.json``: what the site holds and every file written, so a later publish knows the user's files."""
    written = sorted(str(path.relative_to(folder)) for path in folder.rglob("*") if path.is_file())
    manifest = {"generator": "workbench publish", "title": title, "sections": keys, "files": written}
    manifest |= {"models": metrics.model_labels(preds)["label"].to_list(), "questions": metrics.n_questions(preds)}
    (folder / MANIFEST).write_text(json.dumps(manifest, indent=2) + "\n", encoding="utf-8")


def standard_sections(
    preds: pl.DataFrame, probes: pl.DataFrame | None = None, n_boot: int = 1000, seed: int = 0
) -> list[Section]:
    """The page's sections: heat map and questions, cluster bars, English against each other language (where the
    predictions pair them), the taxonomy atlas (of WordNet concepts), concepts, the probe's statistics."""
    drill = metrics.drilldown(preds)  # every question row, with label, cell labels, gold and pick; most wrong first
    taxonomy = atlas_section(preds, n_boot, seed)  # None without WordNet concepts (or without WordNet)
    skipped = Section("atlas-skipped", "Taxonomy atlas", f"<p>{html.escape(atlas.ATLAS_SKIPPED)}.</p>")
    languages = language_section(preds, n_boot)  # None unless English and another language are paired
    return [
        heatmap_section(preds, drill),
        cluster_section(preds, n_boot, seed),
        *([languages] if languages is not None else []),
        taxonomy if taxonomy is not None else skipped,
        concept_section(drill),
        statistics_section(preds, probes),
    ]


def heatmap_section(preds: pl.DataFrame, drill: pl.DataFrame) -> Section:
    """The heat map (one panel per model) over the question table that a click on a cell filters.

    Each model x cell's questions are one file (``cells/N``); the page holds the first ``FIRST_QUESTIONS``.
    """
    selection = alt.selection_point(name="cell", fields=["label", "row", "column"], on="click", clear="dblclick")
    cells = views.heatmap_data(preds).select("label", "row", "column", "n")
    keyed = drill.join(cells.with_row_index("file"), on=["label", "row", "column"], maintain_order="left")
    files = {
        f"cells/{number}": part.select(CELL_COLUMNS).rows()
        for (number,), part in keyed.group_by("file", maintain_order=True)
    }
    several = cells["label"].n_unique() > 1
    text = (
        "<p>Click a cell to list its questions below (shift-click adds cells, double-click clears); "
        f"{'one panel per model; ' if several else ''}grey cells hold fewer than {views.SMALL_CELL} questions.</p>"
        '<div id="wb-heatmap" class="wb-chart"></div>'
        '<p id="wb-questions-caption" class="wb-caption"></p>'
        '<table id="wb-questions" class="wb-questions"><thead></thead><tbody></tbody></table>'
        '<button id="wb-more" type="button" hidden>show more</button>'
    )
    first = drill.head(FIRST_QUESTIONS).select("label", "row", "column", *CELL_COLUMNS)
    data = {
        "cells": cells.with_row_index("file").select("label", "row", "column", "n", "file").rows(),
        "first": first.rows(),
        "several_models": several,
    }
    chart = charts.heatmap(preds, selection=selection)
    return Section("heatmap", "Accuracy by probe × hops and distractors", text, {"wb-heatmap": chart}, files, data)


def cluster_section(preds: pl.DataFrame, n_boot: int, seed: int) -> Section:
    """Instance against strict cluster accuracy per model and probe, with bootstrap intervals: chart and table."""
    bars = views.cluster_bar_data(preds, n_boot=n_boot, seed=seed)
    table = bars.select(
        model="label",
        probe="probe",
        measure="measure",
        accuracy=_percent("accuracy"),
        interval=pl.when(pl.col("lo").is_null())
        .then(pl.lit(metrics.TOO_FEW))
        .otherwise(pl.format("[{}, {}]", _percent("lo"), _percent("hi"))),
        n=pl.col("n").cast(pl.String),
    )
    text = (
        f"<p>Strict cluster accuracy counts a concept's cluster right only if every one of its questions is; "
        f"95% bootstrap intervals ({n_boot:,} resamples of whole clusters, for instance and cluster accuracy alike); "
        "n is questions or clusters.</p>"
        f'<div id="wb-bars" class="wb-chart"></div>{_table_html(table)}'
    )
    chart = charts.cluster_bars(preds, n_boot=n_boot, seed=seed)
    return Section("clusters", "Instance vs strict cluster accuracy", text, {"wb-bars": chart})


def language_section(preds: pl.DataFrame, n_boot: int = 1000) -> Section | None:
    """English against each other language, question by question (``analysis.crosslingual.language_report``): the
    accuracy dumbbell and the concepts known in one language only, over the pairs' table; None without such pairs; the
    reason where the sets were not paired (`--paired-with`)."""
    try:
        summary, concepts = language_report(preds, n_boot=n_boot)
    except WorkbenchError as err:  # English and French sets built apart: no question to pair
        return Section("languages", "English and other languages", f"<p>{html.escape(str(err))}</p>")
    if summary.is_empty():
        return None
    table = summary.select(
        "pair",
        "questions",
        "concepts",
        english=_percent("cluster_accuracy_a"),
        other=_percent("cluster_accuracy_b"),
        difference=pl.when(pl.col("diff_lo").is_null())
        .then(_percent("diff") + f" ({metrics.TOO_FEW})")
        .otherwise(pl.format("{} [{}, {}]", _percent("diff"), _percent("diff_lo"), _percent("diff_hi"))),
        p_mcnemar=pl.col("p_mcnemar").round(4).cast(pl.String),
        known_in_english_only="known_a_only",
        known_in_the_other_only="known_b_only",
    )
    text = (
        "<p>The same questions (concept, gold, hops, distractor synsets, answer position) asked in English and in "
        "another language: strict cluster accuracy in each, the difference in question accuracy (other − English) "
        f"with its 95% cluster-bootstrap interval ({n_boot:,} resamples) and McNemar's exact p.</p>"
        f'<div id="wb-languages" class="wb-chart"></div>{_table_html(table)}'
    )
    return Section(
        "languages", "English and other languages", text, {"wb-languages": language_chart(summary, concepts)}
    )


def atlas_section(preds: pl.DataFrame, n_boot: int = 1000, seed: int = 0) -> Section | None:
    """The taxonomy atlas (``atlas.taxonomy_accuracy``): an icicle per model that a click zooms into, over the list of
    the concepts below the node clicked; None when no concept is a WordNet synset or WordNet is not installed.

    The page holds every node's rectangle of the whole tree (at most ``ATLAS_NODES`` per model: ``min_clusters``
    grows until they fit); a zoom re-scales a subtree in ``site.js`` (a child's width is its share of its parent's,
    so a subtree's layout is the whole one scaled). Node N's concepts (``atlas.concepts_under``) are ``atlas/N``.
    """
    found = atlas.placed(preds)
    if found is None:
        return None
    graph, placed = found
    clusters = placed.select("cluster_id", "concept").unique()
    paths = atlas.tree_paths(graph, clusters["concept"].unique().sort())
    sizes = paths.join(clusters, on="concept").group_by("node").agg(pl.col("cluster_id").n_unique())["cluster_id"]
    min_clusters = int(sizes.sort(descending=True)[ATLAS_NODES]) + 1 if sizes.len() > ATLAS_NODES else 1
    boot = min(n_boot, ATLAS_BOOT)
    table = atlas.taxonomy_accuracy(placed, graph, min_clusters=min_clusters, n_boot=boot, seed=seed)
    layout = views.taxonomy_layout(table).with_columns(  # every level: a zoom re-scales a part
        pl.col("x0", "x1").round(7), pl.col(pl.Float64).exclude("x0", "x1").round(4)
    )
    nodes = table["node"].unique(maintain_order=True).to_list()
    number = {node: i for i, node in enumerate(nodes)}
    verdicts = paths.filter(pl.col("node").is_in(nodes)).join(clusters, on="concept")
    under = atlas.concept_verdicts(verdicts.join(cluster_verdicts(placed), on="cluster_id"), by=("node",))  # per node
    files = {
        f"atlas/{number[node]}": part.select(CONCEPT_UNDER_COLUMNS).rows()
        for (node,), part in under.group_by("node", maintain_order=True)
    }
    spec = charts.taxonomy_atlas(layout.filter(pl.col("level") < ATLAS_LEVELS)).to_dict()
    spec["datasets"] = dict.fromkeys(spec["datasets"], [])  # site.js fills it from the rows below
    data = {
        "nodes": nodes,
        "columns": list(ATLAS_COLUMNS),
        "rows": layout.select(ATLAS_COLUMNS).rows(),
        "levels": ATLAS_LEVELS,
        "level_height": LEVEL_HEIGHT,
        "label_width": views.ATLAS_LABEL_WIDTH,
    }
    left = preds["cluster_id"].n_unique() - placed["cluster_id"].n_unique()
    notes = [f"nodes of fewer than {min_clusters} clusters fold into their parent"] if min_clusters > 1 else []
    notes += [f"{left:,} clusters without a WordNet concept (GCIDE senses) are left out"] if left else []
    text = (
        "<p>Strict cluster accuracy over the WordNet hierarchy: each node holds the clusters at and below it "
        f"(width: clusters; colour: strict cluster accuracy{''.join('; ' + html.escape(note) for note in notes)}). "
        f"Click a node to zoom in and list the concepts below it, the worst known first; intervals of {boot:,} "
        "bootstrap resamples of clusters in the tooltips.</p>"
        '<p><button id="wb-atlas-up" type="button" disabled>up</button> '
        '<button id="wb-atlas-top" type="button" disabled>top</button> '
        '<span id="wb-atlas-path" class="wb-caption"></span></p>'
        '<div id="wb-atlas" class="wb-chart"></div>'
        '<p id="wb-atlas-caption" class="wb-caption"></p>'
        '<ul id="wb-atlas-concepts" class="wb-concept-list"></ul>'
    )
    return Section("atlas", "Taxonomy atlas", text, {"wb-atlas": spec}, files, {"atlas": data})


_content = pl.struct("probe", "id", "question", "choices", "answer").struct.json_encode()
_key = _content + "#" + pl.int_range(pl.len()).over(_content, "label").cast(pl.String)
"""A drill-down row's question: its content and occurrence per model (ids repeat in the released files)."""


def concept_section(drill: pl.DataFrame) -> Section:
    """Find a concept; see its cluster: every question, its choices and gold, each model's pick and scores.

    The concept index (``concepts``: concept, block, questions, right per model) and the blocks
    (``concepts/N``, about ``CONCEPT_BLOCK`` rows each) are files loaded on demand.
    """
    labels = drill["label"].unique().sort().to_list()
    index = (
        drill.group_by("concept")
        .agg(rows=pl.len(), questions=pl.col("id").n_unique())
        .sort("concept")
        .with_columns(block=(pl.col("rows").cum_sum() - pl.col("rows")) // CONCEPT_BLOCK)
    )
    right = drill.group_by("concept", "label").agg(right=pl.col("correct").sum(), n=pl.len())
    grid = index.select("concept").join(pl.DataFrame({"label": labels}).with_row_index("model"), how="cross")
    models = (  # per concept, [right, questions] of each model in label order (null where it scored none)
        grid.join(right, on=["concept", "label"], how="left")
        .sort("concept", "model")
        .group_by("concept", maintain_order=True)
        .agg(models=pl.when(pl.col("n").is_not_null()).then(pl.concat_list("right", "n")))
    )
    index = index.join(models, on="concept", maintain_order="left")
    finite = pl.col("scores").list.eval(  # JSON has no inf; the page shows 4 significant digits
        pl.when(pl.element().is_finite()).then(pl.element().round_sig_figs(6))
    )
    questions = (
        drill.with_columns(finite, model=pl.col("label").replace_strict(labels, range(len(labels))), question_key=_key)
        .group_by("question_key", maintain_order=True)
        .agg(
            pl.col("concept", "probe", "row", "column", "question", "choices", "answer").first(),
            pl.col("model", "pred", "correct", "scores"),
        )
        .sort("concept", "probe", "row", "column", "question_key")
        .join(index.select("concept", "block"), on="concept", maintain_order="left")
    )
    files: dict[str, object] = {"concepts": index.select("concept", "block", "questions", "models").rows()}
    for (block,), part in questions.group_by("block", maintain_order=True):
        blob: dict[str, list] = {}
        for concept, row, column, question, choices, answer, models, preds, right, scores in part.select(
            "concept", "row", "column", "question", "choices", "answer", "model", "pred", "correct", "scores"
        ).iter_rows():
            picks: list = [None] * len(labels)
            for model, pred, ok, score in zip(models, preds, right, scores, strict=True):
                picks[model] = [pred, ok, score]
            blob.setdefault(concept, []).append([row, column, question, choices, answer, picks])
        files[f"concepts/{block}"] = blob
    text = (
        "<p>Type part of a concept's name (a WordNet synset such as <code>dog.n.01</code>), or pick one from the "
        "list (the concepts with the most wrong answers first); a concept in the question table opens here too. "
        f"Beside each concept: questions right of those scored, per model ({html.escape(' · '.join(labels))}).</p>"
        '<input id="wb-concept-search" type="search" placeholder="find a concept" autocomplete="off">'
        '<ul id="wb-concept-list" class="wb-concept-list"></ul>'
        '<div id="wb-concept" class="wb-concept"></div>'
    )
    return Section("concepts", "Concepts and their clusters", text, files=files, data={"labels": labels})


def statistics_section(preds: pl.DataFrame, probes: pl.DataFrame | None) -> Section:
    """The probe set's statistics (SPEC Table 4; questions per probe x hops and distractors), of ``probes`` when
    given, else of the questions scored; a warning when the predictions cut clusters of ``probes`` short."""
    first = metrics.with_question_key(preds).filter(pl.col("question_key").is_first_distinct())
    frame = probes if probes is not None else first
    source = "the probe set given" if probes is not None else "the questions scored"
    warning = metrics.partial_cluster_warning(preds, probes)
    text = "".join([
        f'<p class="wb-warning"><b>{html.escape(warning)}</b></p>' if warning else "",
        f"<p>Of {html.escape(source)}: {frame.height:,} questions.</p>",
        "<h3>Per probe</h3>",
        _table_html(table4(frame)),
        "<h3>Questions per probe × hops (rows) and distractor family × depth</h3>",
        _table_html(hops_by_family(frame)),
    ])  # fmt: skip
    return Section("statistics", "Probe statistics", text)


def _page(sections: Sequence[Section], title: str, headline_html: str) -> str:
    """The page: navigation, the sections, the page data (charts as Vega-Lite specs) and the scripts."""
    specs = {}
    data: dict[str, object] = {}
    for section in sections:
        data |= dict(section.data)
        for element, chart in section.charts.items():
            spec = chart if isinstance(chart, dict) else chart.to_dict()
            specs[element] = {key: value for key, value in spec.items() if key != "$schema"}  # a URL; mode is given
    nav_html = "".join(f'<a href="#{markup.attr(s.key)}">{html.escape(s.title)}</a>' for s in sections)
    body_html = "\n".join(
        f'<section id="{markup.attr(s.key)}"><h2>{html.escape(s.title)}</h2>\n{s.html}\n</section>' for s in sections
    )  # a section's html is markup its builder made by the same rule (tests/test_markup.py)
    return _PAGE.format(
        title=html.escape(title),
        headline=headline_html,
        nav=nav_html,
        body=body_html,
        page=_script_json({"charts": specs, **data}),
    )


def _headline_html(preds: pl.DataFrame) -> str:
    """Questions, clusters, the models and the population, each model's label isolated (``markup.text``): a label
    holding a bidi control reorders itself at most, never the line (issue 60)."""
    labels = metrics.model_labels(preds)["label"].to_list()
    models = ", ".join(markup.text(label) for label in labels)
    counts = f"{metrics.n_questions(preds):,} questions in {preds['cluster_id'].n_unique():,} clusters"
    several = "s" if len(labels) != 1 else ""
    return f"{counts}; {len(labels)} model{several}: {models}. {markup.text(population_line(preds))}"


def _script_json(value: object) -> str:
    """Compact JSON, ASCII only (the data files are read whatever encoding a host declares), that no text can break
    out of a ``<script>`` (``reports.script_json``)."""
    return script_json(value, separators=(",", ":"), allow_nan=False)


def _percent(column: str) -> pl.Expr:
    return (pl.col(column) * 100).round(1).cast(pl.String) + "%"


def _table_html(frame: pl.DataFrame) -> str:
    """An HTML table of ``frame`` (every cell escaped; floats with two decimals)."""
    shown = frame.with_columns(pl.col(pl.Float64).round(2)).cast(pl.String).fill_null("")
    head_html = "".join(f"<th>{html.escape(name)}</th>" for name in shown.columns)
    rows_html = "".join(
        "<tr>" + "".join(f"<td>{html.escape(cell)}</td>" for cell in row) + "</tr>" for row in shown.rows()
    )
    return f'<table class="wb-table"><thead><tr>{head_html}</tr></thead><tbody>{rows_html}</tbody></table>'


def _asset(name: str) -> str:
    return (files("workbench") / "site_assets" / name).read_text(encoding="utf-8")


def _vega_bundle() -> str:
    """Vega, Vega-Lite (altair's version) and vega-embed as one script defining ``vegaEmbed``, from vl-convert.

    vl-convert bundles them anew on each call (seconds), so the bundle is kept in the workspace per version.
    """
    import vl_convert

    version = "_".join(alt.SCHEMA_VERSION.split(".")[:2])
    kept = cache_dir("vendor") / f"vega-embed-vl{version}-vlconvert{vl_convert.__version__}.js"
    if not kept.is_file():
        write_text(vl_convert.javascript_bundle(vl_version=version), kept)
    return kept.read_text(encoding="utf-8")


def _check_replaceable(out: Path) -> None:
    """``out`` is new, empty, or a site published before: publishing replaces the folder whole."""
    if out.exists() and not out.is_dir():
        raise WorkbenchError(f"the output {out} is a file; give a folder for the site (new, or a published site)")
    if out.is_dir() and any(out.iterdir()) and not (out / MANIFEST).is_file():
        raise WorkbenchError(
            f"{out} is not empty and holds no published site ({MANIFEST}); publishing replaces the whole folder, "
            "so give a new folder or one that `workbench publish` wrote"
        )
    if out.is_dir() and (foreign := unlisted_files(out, MANIFEST)):
        shown = ", ".join(foreign[:3]) + (f" and {len(foreign) - 3} more" if len(foreign) > 3 else "")
        raise WorkbenchError(
            f"{out} is a published site that also holds files `workbench publish` did not write ({shown}); "
            "publishing replaces the whole folder: move them out first, or give another folder"
        )


_PAGE = """<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{title}</title>
<link rel="stylesheet" href="assets/site.css">
<script src="assets/vega.js"></script>
</head>
<body>
<header>
<h1>{title}</h1>
<p class="wb-headline">{headline}</p>
<nav>{nav}</nav>
</header>
<main>
{body}
</main>
<script type="application/json" id="wb-page">{page}</script>
<script src="assets/site.js"></script>
</body>
</html>
"""
