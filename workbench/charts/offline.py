"""Vega's JavaScript for altair's ``JupyterChart``, bundled by vl-convert: the charts fetch nothing from a CDN.

In a notebook every chart's widget state carries the whole bundle (about 900 KB): the page receives it and compiles
it once per chart. An app under ``workbench serve`` gets it once instead: the server serves the kept bundle
(``chart_bundle``) and names its address in ``$WORKBENCH_CHART_MODULE``; every chart of the app's kernels then
carries a few lines that import it from there, which a page fetches and compiles once for all its charts (the
dashboard's widget state, what each page receives, went from 7.3 MB to 137 KB; the explorer's from 1.9 MB to 95 KB).
"""

import contextlib
import json
import os
from pathlib import Path

import altair as alt

from workbench.io import write_text
from workbench.paths import workspace_path

MODULE_ENV = "WORKBENCH_CHART_MODULE"  # the bundle's path on the app's server (below its base URL), set by the server
LOADER = """const config = document.getElementById("jupyter-config-data");
const base = (config && JSON.parse(config.textContent).baseUrl) || "/";
const chart = await import(new URL(base + {path}, document.baseURI).href);
export default chart.default;
"""
"""A chart's module under ``workbench serve``: the served bundle, imported by address (anywidget evaluates a module
given as text from a ``blob:`` address, against which only a full address resolves)."""


def offline_charts() -> None:
    """Make ``JupyterChart`` draw with Vega from this machine, never from a CDN: altair's public switch, or the
    loader of the bundle the app's server serves (``MODULE_ENV``).

    vl-convert bundles for one to two seconds of CPU, in every kernel; the bundle is kept in the workspace
    (``vendor/``, per altair and vl-convert version) so that the next kernels read it instead, which matters
    when many visitors' kernels start at once. A read-only workspace is not written: its kernels bundle anew.
    """
    chart = alt.JupyterChart
    if chart._is_offline:
        return
    if served := os.environ.get(MODULE_ENV):
        chart._esm, chart._is_offline = LOADER.replace("{path}", json.dumps(served)), True
        return
    kept = _kept()
    if kept.is_file():  # what enable_offline would set (tests/test_widgets.py checks they agree)
        chart._esm, chart._is_offline = kept.read_text(encoding="utf-8"), True
        return
    _bundle(kept)


def chart_bundle() -> Path | None:
    """The kept bundle (made and kept if missing), for a server to serve; None in a read-only workspace."""
    kept = _kept()
    if not kept.is_file():
        alt.JupyterChart.enable_offline(False)  # altair's own module, then bundled (whatever this process set before)
        _bundle(kept)
    return kept if kept.is_file() else None


def _bundle(kept: Path) -> None:
    """Bundle Vega into ``JupyterChart`` (vl-convert) and keep the bundle at ``kept``, unless the workspace is
    read-only."""
    alt.JupyterChart.enable_offline()
    with contextlib.suppress(OSError):
        write_text(alt.JupyterChart._esm, kept)


def _kept() -> Path:
    import vl_convert

    return workspace_path("vendor") / f"jupyterchart-altair{alt.__version__}-vlconvert{vl_convert.__version__}.js"
