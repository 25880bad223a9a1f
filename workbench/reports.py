"""Reports of a prediction frame: a terminal text report, a JSON document and a standalone HTML page.

All three show the same numbers, computed by ``workbench.metrics``: instance accuracy, strict
cluster accuracy and its gap (with bootstrap intervals), per model and per probe, and the
accuracy of every heat-map cell. The HTML page inlines Vega, Vega-Lite and vega-embed (from
``vl-convert-python``), so it opens offline; its heat map filters a question table on click.

    >>> print(text_report(preds))
    >>> write_html_report(preds, "report.html")
"""

import html
import json
from pathlib import Path

import altair as alt
import polars as pl

from workbench import charts, markup, metrics
from workbench.analysis import atlas, difficulty, recall
from workbench.analysis.calibration import calibration
from workbench.analysis.consistency import template_consistency
from workbench.errors import WorkbenchError
from workbench.io import REPORT_MARKER, write_text
from workbench.schema import RULE_NOTES, population_line, populations

TAXONOMY_DEPTH, TAXONOMY_MIN_CLUSTERS = 6, 10
"""The report's taxonomy atlas: WordNet nodes down to this depth (``atlas.ROOT`` is 0, ``entity.n.01`` 2) holding
at least this many clusters, per model and probe."""
_CI_NOTE = "95% bootstrap intervals in brackets (whole clusters resampled, for instance and cluster accuracy alike)"


REPORT_FORMATS = ("text", "json", "html")


def report(
    preds: pl.DataFrame,
    format: str = "text",
    *,
    n_boot: int = 1000,
    seed: int = 0,
    probes: pl.DataFrame | None = None,
) -> str | dict:
    """The report of a prediction frame: summary, per-probe accuracy and the heat map's cells.

    Parameters
    ----------
    preds : polars.DataFrame
        Predictions (``PREDICTION_SCHEMA``), one model or several.
    format : {"text", "json", "html"}
        A terminal report, JSON-ready data, or a standalone HTML page (charts inlined, opens offline).
    n_boot, seed
        Bootstrap resamples of the intervals and their seed.
    probes : polars.DataFrame, optional
        The probe set the predictions came from: clusters scored only in part are then warned about.

    Returns
    -------
    str or dict
        The text or HTML, or (``json``) a dict: ``metrics.summary`` plus ``by_probe``, ``rules``,
        ``breakdown`` and ``warnings``.

    Examples
    --------
    >>> print(report(preds))  # doctest: +SKIP
    >>> report(preds, "json")["instance_accuracy"]  # doctest: +SKIP
    """
    makers = {"text": text_report, "json": json_report, "html": html_report}
    if format not in makers:
        raise WorkbenchError(f"format={format!r} is not a report format; choose one of {list(REPORT_FORMATS)}")
    return makers[format](preds, n_boot=n_boot, seed=seed, probes=probes)


def text_report(preds: pl.DataFrame, n_boot: int = 1000, seed: int = 0, probes: pl.DataFrame | None = None) -> str:
    """A plain-text report: summary, per-probe accuracy and the heat map's cells as tables.

    ``probes``: the probe set the predictions came from; clusters scored only in part are then warned about.

    >>> print(text_report(preds))
    Probe Workbench report: 2254 questions in 1555 clusters (hypernymy); 1 model: roberta-base ...
    """
    tables = _tables(preds, n_boot, seed)
    parts = [f"Probe Workbench report: {_headline(preds)}", population_line(preds), ""]
    if warning := metrics.partial_cluster_warning(preds, probes):
        parts = [warning, "", *parts]
    parts += ["Summary (accuracy in %; gap = cluster - instance, in points)", _CI_NOTE]
    parts += [_text_table(tables["summary"], left=1), "", "By probe", _text_table(tables["by_probe"], left=2)]
    notes = rule_notes(preds)
    if notes:
        parts += ["", "Scoring rules", *(f"  {rule}: {note}" for rule, note in notes.items())]
    found = populations(preds).unique("population", maintain_order=True).iter_rows(named=True)
    parts += ["", "Populations", *(f"  {row['population']}: {row['note']}" for row in found)]
    if lines := served_lines(preds):
        parts += ["", "Served models (scored through an OpenAI-compatible server)", *lines]
    for title, cells in tables["cells"]:
        parts += ["", f"Accuracy % (questions) by probe x hops k and distractors: {title}", _text_table(cells, left=1)]
    if (paired := recall_tables(preds)) is not None:
        parts += ["", _RECALL_TITLE, _RECALL_NOTE]
        parts += [_text_table(_shown_recall(paired[by]), left=3 + len(by)) for by in _RECALL_BY]
    if (taxonomy := taxonomy_nodes(preds, n_boot, seed)) is not None and (lines := _taxonomy_lines(taxonomy)):
        parts += ["", *lines]
    elif taxonomy is None:
        parts += ["", atlas.ATLAS_SKIPPED]
    coefficients, note = difficulty.fit_models(preds)
    parts += ["", _DIFFICULTY_TITLE]
    if coefficients is None:
        parts.append(note)
    else:
        parts += [_DIFFICULTY_NOTE, _text_table(_difficulty_table(coefficients), left=2)]
        parts += [f"  {label}: {line}" for label, lines in _difficulty_readings(coefficients) for line in lines]
    return "\n".join(parts) + "\n"


def served_lines(preds: pl.DataFrame) -> list[str]:
    """A line per served model of ``preds``: its label, the server's host and what the server reports of it.

    >>> frame = pl.DataFrame({"model": ["smol"], "served": ['{"host": "127.0.0.1:8000", "model": "smollm2"}']})
    >>> served_lines(frame)
    ['  smol: 127.0.0.1:8000 serving smollm2']
    """
    if "served" not in preds.columns:
        return []
    lines = []
    for label, text in preds.filter(pl.col("served") != "").select("model", "served").unique().sort("model").rows():
        identity = json.loads(text)
        rest = ", ".join(f"{key} {value}" for key, value in sorted(identity.items()) if key not in ("host", "model"))
        lines.append(f"  {label}: {identity['host']} serving {identity['model']}" + (f" ({rest})" if rest else ""))
    return lines


def json_report(preds: pl.DataFrame, n_boot: int = 1000, seed: int = 0, probes: pl.DataFrame | None = None) -> dict:
    """The report as JSON-ready data: ``metrics.summary`` plus ``by_probe``, ``breakdown`` rows, ``taxonomy`` (the
    top nodes of the taxonomy atlas: ``taxonomy_nodes``; empty without WordNet concepts), ``difficulty`` (the difficulty
    model's coefficients; empty with too few questions) and ``warnings`` (a
    partial-cluster warning when ``probes`` is given and some clusters were scored only in part).

    >>> json_report(preds)["instance_accuracy"], len(json_report(preds)["breakdown"])
    """
    keys = metrics.identity_keys(preds)
    labels = metrics.model_labels(preds)
    return {
        **metrics.summary(preds, n_boot=n_boot, seed=seed),
        "by_probe": _accuracy_table(preds, ("probe",), n_boot, seed).to_dicts(),
        "rules": rule_notes(preds),
        "populations": populations(preds).to_dicts(),
        "breakdown": labels.join(metrics.breakdown(preds), on=keys, nulls_equal=True).to_dicts(),
        "template_consistency": labels.join(template_consistency(preds), on=keys, nulls_equal=True).to_dicts(),
        "calibration": labels.join(
            calibration(preds, by=("probe", "hops", "distractor_family")), on=keys, nulls_equal=True
        ).to_dicts(),
        "recall": {
            "_".join(by): [] if paired is None else paired[by].to_dicts()
            for paired in [recall_tables(preds)]
            for by in _RECALL_BY
        },
        "taxonomy": [] if (taxonomy := taxonomy_nodes(preds, n_boot, seed)) is None else taxonomy.to_dicts(),
        "difficulty": [] if (coefficients := difficulty.fit_models(preds)[0]) is None else coefficients.to_dicts(),
        "warnings": [warning] if (warning := metrics.partial_cluster_warning(preds, probes)) else [],
    }


def html_report(
    preds: pl.DataFrame,
    title: str = "Probe Workbench report",
    n_boot: int = 1000,
    seed: int = 0,
    probes: pl.DataFrame | None = None,
) -> str:
    """A standalone HTML page (inline JavaScript, works offline) with the tables and the charts.

    >>> Path("report.html").write_text(html_report(preds))
    """
    import vl_convert

    tables = _tables(preds, n_boot, seed)
    specs = [
        ("Accuracy by probe x hops and distractors (click a cell to list its questions)", charts.dashboard(preds)),
        ("Instance vs strict cluster accuracy", charts.cluster_bars(preds, n_boot=n_boot, seed=seed)),
    ]
    body_html = [
        f"<h1>{html.escape(title)}</h1>",
        f"<p>{_headline_html(preds)}</p>",
        f'<p class="population">{markup.text(population_line(preds))}</p>',
        *(
            f'<p class="warning"><b>{html.escape(w)}</b></p>'
            for w in [metrics.partial_cluster_warning(preds, probes)]
            if w
        ),
        "<h2>Summary</h2>",
        f"<p>Accuracy in %; gap = strict cluster minus instance accuracy, in points; {html.escape(_CI_NOTE)}.</p>",
        _table_html(tables["summary"]),
        "<h2>By probe</h2>",
        _table_html(tables["by_probe"]),
    ]
    notes = rule_notes(preds)
    if notes:
        items_html = "".join(
            f"<li><b>{markup.text(rule)}</b>: {html.escape(note)}</li>" for rule, note in notes.items()
        )
        body_html += ["<h2>Scoring rules</h2>", f"<ul>{items_html}</ul>"]
    coefficients, note = difficulty.fit_models(preds)
    if coefficients is not None:
        specs.append((_DIFFICULTY_TITLE, charts.coefficient_plot(coefficients)))
    scripts_html = []
    for index, (heading, chart) in enumerate(specs):
        spec = script_json(chart.to_dict(), sort_keys=True)
        body_html += [f"<h2>{html.escape(heading)}</h2>", f'<div id="chart-{index:d}"></div>']
        scripts_html.append(f'vegaEmbed("#chart-{index}", {spec}, {{"actions": false}}).catch(console.error);')
    body_html.append("<h2>Accuracy % (questions) per cell</h2>")
    for heading, cells in tables["cells"]:
        body_html += [f"<h3>{markup.text(heading)}</h3>", _table_html(cells)]
    if coefficients is None:
        body_html += [f"<h2>{html.escape(_DIFFICULTY_TITLE)}</h2>", f"<p>{html.escape(note)}</p>"]
    else:  # the table and the reading under the coefficient plot
        readings_html = "".join(
            f"<li><b>{markup.text(label)}</b>: {html.escape(line)}</li>"
            for label, lines in _difficulty_readings(coefficients)
            for line in lines
        )
        at = body_html.index(f'<div id="chart-{len(specs) - 1:d}"></div>') + 1
        body_html[at:at] = [
            f"<p>{html.escape(_DIFFICULTY_NOTE)}</p>",
            _table_html(_difficulty_table(coefficients)),
            f"<ul>{readings_html}</ul>",
        ]
    bundle = vl_convert.javascript_bundle(vl_version="_".join(alt.SCHEMA_VERSION.split(".")[:2]))
    bundle_html = bundle.replace("</script", "<\\/script")
    return _PAGE.format(
        marker=REPORT_MARKER,
        title=html.escape(title),
        bundle=bundle_html,
        body="\n".join(body_html),
        scripts="\n".join(scripts_html),
    )


def page_html(title: str, body_html: str) -> str:
    """A standalone report page of ``body_html`` with no charts (an adaptive estimate's: ``irt.estimates``)."""
    return _PAGE.format(marker=REPORT_MARKER, title=html.escape(title), bundle="", body=body_html, scripts="")


def script_json(value: object, **options) -> str:
    """``value`` as JSON that no text can break out of inside a page's ``<script>``: ASCII only (U+2028 and U+2029
    escaped) and ``<``, ``>``, ``&`` written as ``\\u003c``, ``\\u003e``, ``\\u0026`` (JSON only has them inside
    strings), so ``</script>`` or ``<!--<script>`` in a model name, concept or question cannot end or comment out
    the script. ``options`` go to ``json.dumps``.

    >>> script_json({"model": "</script><!--<script>"})
    '{"model": "\\u003c/script\\u003e\\u003c!--\\u003cscript\\u003e"}'
    """
    text = json.dumps(value, ensure_ascii=True, **options)
    return text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")


def write_html_report(preds: pl.DataFrame, path: str | Path, **options) -> Path:
    """Write ``html_report(preds, **options)`` to ``path`` atomically; returns the path.

    >>> write_html_report(preds, "out/report.html")
    """
    return write_text(html_report(preds, **options), path)


def taxonomy_nodes(preds: pl.DataFrame, n_boot: int = 1000, seed: int = 0) -> pl.DataFrame | None:
    """The taxonomy atlas's top nodes (``atlas.taxonomy_accuracy`` per model label and probe, nodes down to
    ``TAXONOMY_DEPTH`` with at least ``TAXONOMY_MIN_CLUSTERS`` clusters), or None when no concept is a WordNet
    synset or WordNet is not installed (``workbench data setup``).

    >>> taxonomy_nodes(preds).select("label", "probe", "node", "depth", "n_clusters", "cluster_accuracy")
    """
    found = atlas.placed(preds)
    if found is None:
        return None
    graph, _ = found
    table = atlas.taxonomy_accuracy(
        preds,
        graph,
        min_clusters=TAXONOMY_MIN_CLUSTERS,
        max_depth=TAXONOMY_DEPTH,
        by=("probe",),
        n_boot=n_boot,
        seed=seed,
    )
    keys = metrics.identity_keys(preds)
    return metrics.model_labels(preds).join(table.drop("concepts"), on=keys, nulls_equal=True)


_RECALL_BY = (("probe",), ("probe", "hops"))
_RECALL_TITLE = "Recognition (choosing among the choices) beside recall (a free answer), on the same questions"
_RECALL_NOTE = (
    "% of the questions asked both ways; near: free answers naming a concept next to the gold (not recall); "
    "both / recognised only / recalled only split the questions"
)


def recall_tables(preds: pl.DataFrame) -> dict[tuple[str, ...], pl.DataFrame] | None:
    """``recall.recognition_recall`` per probe and per probe and hops, when ``preds`` holds a choice scorer's and the
    generate scorer's predictions of one model on the same questions; else None."""
    choosing, generating = recall.split(preds)
    if choosing.is_empty() or generating.is_empty():
        return None
    tables = {by: recall.recognition_recall(choosing, generating, by) for by in _RECALL_BY}
    return None if tables[_RECALL_BY[0]].is_empty() else tables


def _shown_recall(table: pl.DataFrame) -> pl.DataFrame:
    """A recognition/recall table as display strings."""
    shares = ("recognition", "recall", "near", "both", "recognised_only", "recalled_only")
    keys = [name for name in table.columns if name not in ("n", *shares)]
    return table.select(
        *(pl.col(name).cast(pl.String).fill_null("") for name in keys),
        questions=pl.col("n").cast(pl.String),
        **{name.replace("_", " "): _pct(name) for name in shares},
    )


def _taxonomy_lines(taxonomy: pl.DataFrame, shown: int = 3) -> list[str]:
    """Per model and probe, the WordNet regions (below tops such as entity.n.01) known worst and best; none: []."""
    regions = taxonomy.filter(pl.col("depth") > 2)
    if regions.is_empty():
        return []

    def named(rows: pl.DataFrame) -> str:
        return ", ".join(f"{r['node']} {100 * r['cluster_accuracy']:.1f} ({r['n_clusters']})" for r in rows.to_dicts())

    lines = [
        f"Taxonomy atlas: strict cluster accuracy % (clusters) of WordNet regions of >= {TAXONOMY_MIN_CLUSTERS} "
        f"clusters down to depth {TAXONOMY_DEPTH} (all of them: --json key taxonomy)"
    ]
    for (label, probe), part in regions.group_by("label", "probe", maintain_order=True):
        ranked = part.sort("cluster_accuracy", "n_clusters", "node", descending=[False, True, False])
        lines.append(f"  {label}, {probe}: worst {named(ranked.head(shown))}; best {named(ranked.tail(shown)[::-1])}")
    return lines


def rule_notes(preds: pl.DataFrame) -> dict[str, str]:
    """One line per scoring rule the predictions use (``workbench.schema.RULE_NOTES``), in order of appearance."""
    rules = preds["rule"].unique(maintain_order=True).to_list() if "rule" in preds.columns else []
    return {rule: RULE_NOTES[rule] for rule in rules if rule in RULE_NOTES}


def _headline_html(preds: pl.DataFrame) -> str:
    """``_headline`` for a page: each probe name and model label escaped and isolated (``markup.text``), so that a
    label holding a bidi control reorders itself at most, never the line around it (issue 60)."""
    labels = metrics.model_labels(preds)["label"].to_list()
    probes = sorted(preds["probe"].unique().to_list())
    return (
        f"{metrics.n_questions(preds):,} questions in {preds['cluster_id'].n_unique():,} clusters "
        f"({', '.join(markup.text(probe) for probe in probes)}); {len(labels)} model{'s' if len(labels) != 1 else ''}: "
        f"{', '.join(markup.text(label) for label in labels)}"
    )


def _headline(preds: pl.DataFrame) -> str:
    """One line: how many questions, clusters, probes and models the frame holds."""
    labels = metrics.model_labels(preds)["label"].to_list()
    probes = sorted(preds["probe"].unique().to_list())
    return (
        f"{metrics.n_questions(preds)} questions in {preds['cluster_id'].n_unique()} clusters "
        f"({', '.join(probes)}); {len(labels)} model{'s' if len(labels) != 1 else ''}: {', '.join(labels)}"
    )


def _accuracy_table(preds: pl.DataFrame, by: tuple[str, ...], n_boot: int, seed: int) -> pl.DataFrame:
    """Instance and strict cluster accuracy per model x ``by``, in one frame with the model label."""
    keys = metrics.identity_keys(preds)
    inst = metrics.instance_accuracy(preds, by=by, n_boot=n_boot, seed=seed)
    clus = metrics.cluster_accuracy(preds, by=by, n_boot=n_boot, seed=seed).drop("n", "instance_accuracy")
    return (
        metrics.model_labels(preds)
        .join(inst, on=keys, nulls_equal=True)
        .join(clus, on=[*keys, *by], nulls_equal=True)
        .rename({"accuracy": "instance_accuracy", "lo": "instance_lo", "hi": "instance_hi"})
    )


def _tables(preds: pl.DataFrame, n_boot: int, seed: int) -> dict:
    """Display-ready string frames: ``summary``, ``by_probe`` and ``cells`` ((title, pivot) per model)."""
    if preds.is_empty():
        raise WorkbenchError("the prediction frame is empty: there is nothing to report.")
    keys = metrics.identity_keys(preds)

    def shown(frame: pl.DataFrame, *first: str) -> pl.DataFrame:
        return frame.select(
            pl.col("label").alias("model"),
            *first,
            questions=pl.col("n").cast(pl.String),
            instance=_pct_ci("instance_accuracy", "instance_lo", "instance_hi"),
            clusters=pl.col("n_clusters").cast(pl.String),
            cluster=_pct_ci("cluster_accuracy", "cluster_lo", "cluster_hi"),
            gap=_pct_ci("gap", "gap_lo", "gap_hi"),
        )

    labels = metrics.model_labels(preds)
    cells = metrics.breakdown(preds).join(labels, on=keys, nulls_equal=True, maintain_order="left")
    _, columns = metrics.cell_order(cells)
    pivots = [
        (
            label,
            part.with_columns(value=pl.format("{} ({})", _pct("accuracy"), "n"))
            .pivot(on="column", index="row", values="value")
            .select("row", *(name for name in columns if name in part["column"]))
            .fill_null("")
            .rename({"row": "probe, hops"}),
        )
        for (label,), part in cells.group_by("label", maintain_order=True)
    ]
    return {
        "summary": shown(_accuracy_table(preds, (), n_boot, seed)),
        "by_probe": shown(_accuracy_table(preds, ("probe",), n_boot, seed), "probe"),
        "cells": pivots,
    }


_DIFFICULTY_TITLE = "What makes an item hard (mixed-effects logistic model, the concept as a random intercept)"
_DIFFICULTY_NOTE = (
    "Odds ratios of a right answer with 95% intervals (variational Bayes posterior), per SD of a continuous property "
    "or against the reference level; docs/ANALYSES.md"
)


def _difficulty_table(coefficients: pl.DataFrame) -> pl.DataFrame:
    """The difficulty model as display strings: model, term, odds ratio [interval] (or the note of a dropped term)."""
    ratio = pl.format(
        "{} [{}, {}]", *(pl.col(name).round(2).cast(pl.String) for name in ("odds_ratio", "odds_lo", "odds_hi"))
    )
    sd = pl.format("SD {} [{}, {}]", *(pl.col(name).round(2).cast(pl.String) for name in ("estimate", "lo", "hi")))
    shown = pl.when(pl.col("kind") == "fixed").then(ratio).when(pl.col("kind") == "random").then(sd)
    return coefficients.select(
        pl.col("label").alias("model"),
        pl.col("term_label").alias("term"),
        odds_ratio=shown.otherwise(pl.format("dropped: {}", "note")),
    )


def _difficulty_readings(coefficients: pl.DataFrame) -> list[tuple[str, list[str]]]:
    """``workbench.analysis.difficulty.reading`` per model label."""
    return [(label, difficulty.reading(part)) for (label,), part in coefficients.group_by("label", maintain_order=True)]


def _pct(column: str) -> pl.Expr:
    """A share as a percentage string with one decimal ("83.3")."""
    return (pl.col(column) * 100).round(1).cast(pl.String)


def _pct_ci(value: str, lo: str, hi: str) -> pl.Expr:
    """A share and its interval as percentages: "83.3 [58.3, 100.0]", or "100.0 (too few clusters for an
    interval)" where the metrics gave none (``metrics.MIN_CLUSTERS``)."""
    interval = pl.format("{} [{}, {}]", _pct(value), _pct(lo), _pct(hi))
    return (
        pl.when(pl.col(lo).is_null())
        .then(pl.format("{} ({})", _pct(value), pl.lit(metrics.TOO_FEW)))
        .otherwise(interval)
    )


def _text_table(frame: pl.DataFrame, left: int) -> str:
    """A fixed-width table of a string frame; the first ``left`` columns align left, the rest right."""
    widths = [max(len(name), frame[name].str.len_chars().max() or 0) for name in frame.columns]

    def pad(expr: pl.Expr, index: int) -> pl.Expr:
        return expr.str.pad_end(widths[index]) if index < left else expr.str.pad_start(widths[index])

    header = pl.select(pl.concat_str([pad(pl.lit(name), i) for i, name in enumerate(frame.columns)], separator="  "))
    rule = "  ".join("-" * width for width in widths)
    body = frame.select(pl.concat_str([pad(pl.col(name), i) for i, name in enumerate(frame.columns)], separator="  "))
    return "\n".join([header.item().rstrip(), rule, *(line.rstrip() for line in body.to_series())])


def _table_html(frame: pl.DataFrame) -> str:
    """An HTML table of a string frame, every cell escaped."""
    head_html = "".join(f"<th>{html.escape(name)}</th>" for name in frame.columns)
    rows_html = "".join(
        "<tr>" + "".join(f"<td>{html.escape(cell)}</td>" for cell in row) + "</tr>" for row in frame.rows()
    )
    return f"<table><thead><tr>{head_html}</tr></thead><tbody>{rows_html}</tbody></table>"


_PAGE = """<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
{marker}
<title>{title}</title>
<style>
  body {{ font-family: system-ui, sans-serif; margin: 2em; color: #222; }}
  table {{ border-collapse: collapse; margin: 0.5em 0 1.5em; font-size: 0.9em; }}
  th, td {{ border: 1px solid #ccc; padding: 0.25em 0.6em; text-align: right; }}
  th:first-child, td:first-child {{ text-align: left; }}
  th {{ background: #f3f3f3; }}
  /* user text (names, stems, choices) isolated: a bidi override reorders its own element at most (issue 53) */
  h1, h2, h3, p, li, td, th, span, b {{ unicode-bidi: plaintext; }}
</style>
<script type="text/javascript">
{bundle}
</script>
</head>
<body>
{body}
<script type="text/javascript">
{scripts}
</script>
</body>
</html>
"""
