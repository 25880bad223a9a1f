"""No text changes how a page parses: hostile strings in every field of the predictions leave the published site's
3 charts and the HTML report's charts drawn (issue 28: `<!--<script>` in a model name used to draw 0 of them)."""

import re
from pathlib import Path

import polars as pl
import pytest
from fake_scores import predictions_of

from workbench.probes.formats import read_probes

HOSTILE = "</script><!--<script>\u2028\u2029&amp;<b>\"'`${x}\u202e\u200d"  # + a bidi override, a zero-width joiner
TEXT_FIELDS = ("word", "context", "template", "question", "gold_concept", "model", "fingerprint", "scorer", "rule",
               "control", "source", "split")  # fmt: skip


@pytest.fixture(scope="module")
def pages(released_dir, tmp_path_factory) -> tuple[Path, Path]:
    """A site and an HTML report of two models whose every text field holds ``HOSTILE`` (concepts on one question
    in ten, so the atlas still places the rest)."""
    from workbench.reports import write_html_report
    from workbench.site import publish

    probes = read_probes(released_dir / "hypernymy_test.jsonl").head(90)
    frames = [predictions_of(probes, HOSTILE + name, seed=seed) for seed, name in enumerate(("a", "b"))]
    hostile = pl.concat(frames).with_columns(
        *((pl.lit(HOSTILE) + pl.col(name)).alias(name) for name in TEXT_FIELDS),
        choices=pl.col("choices").list.eval(pl.lit(HOSTILE) + pl.element()),
        concept=pl.when(pl.int_range(pl.len()) % 10 == 0).then(HOSTILE + pl.col("concept")).otherwise("concept"),
    )
    hostile = hostile.with_columns(cluster_id=pl.col("probe") + ":" + pl.col("concept"))
    folder = tmp_path_factory.mktemp("hostile")
    site = publish(hostile, folder / "site", title=HOSTILE, n_boot=10)
    return site, write_html_report(hostile, folder / "report.html", n_boot=10, title=HOSTILE)


def _inline_scripts(page: str) -> list[str]:
    return re.findall(r"<script(?![^>]*\bsrc=)[^>]*>(.*?)</script>", page, re.S)


def test_inline_json_holds_no_character_that_html_or_javascript_would_read(pages):
    site, report = pages
    page = site.read_text(encoding="utf-8")
    assert page.count("<script") == 3 and page.count("</script>") == 3  # vega, the page's data, site.js
    (data,) = _inline_scripts(page)
    assert not set(data) & {"<", ">", "&", "\u2028", "\u2029"}
    for file in (site.parent / "data").rglob("*.js"):
        assert not set(file.read_text(encoding="utf-8")) & {"<", ">", "&", "\u2028", "\u2029"}, file
    calls = _inline_scripts(report.read_text(encoding="utf-8"))[-1]  # the vegaEmbed calls, after the bundle
    assert "vegaEmbed" in calls and not set(calls) & {"<", ">", "&"}
    assert HOSTILE not in page.replace("\n", "")  # the title is escaped as HTML


ISOLATED = """() => [...document.body.querySelectorAll('h1, h2, h3, p, li, td, th, span, b, a, caption')]
    .filter(e => e.closest('svg') === null && e.textContent.trim())
    .filter(e => !['plaintext', 'isolate'].includes(getComputedStyle(e).unicodeBidi)).map(e => e.tagName)"""


@pytest.mark.browser
def test_hostile_strings_leave_every_chart_of_the_site_and_the_report_drawn(pages, browser):
    site, report = pages
    tab = browser.new_page()
    errors = []
    tab.on("pageerror", lambda error: errors.append(str(error)))
    try:
        tab.goto(site.as_uri())
        for chart in ("#wb-heatmap", "#wb-bars", "#wb-atlas"):
            tab.wait_for_selector(f"{chart} svg", timeout=60_000)
        tab.goto(report.as_uri())
        count = len(re.findall(r'<div id="chart-\d+">', report.read_text(encoding="utf-8")))
        for number in range(count):
            tab.wait_for_selector(f"#chart-{number} svg", timeout=60_000)
        assert count >= 2 and not errors, errors
        for page in (site, report):  # every element that shows text is isolated: an override reorders it at most
            tab.goto(page.as_uri())
            loose = tab.evaluate(ISOLATED)
            assert not loose, f"{page.name}: elements whose text can reorder the page: {loose[:5]}"
    finally:
        tab.close()
