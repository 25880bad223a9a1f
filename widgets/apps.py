"""The three apps, assembled from the panels and the workspace's files (what the Voilà notebooks call).

Each app reads only inside the workspace (``$WORKBENCH_HOME``): probe sets in ``probes/``, prediction
files in ``predictions/``, inoculation runs and source models in ``runs/``, science QA in ``mcqa/``,
oLMpics learning curves in ``olmpics/`` and edge-probing results in ``edge/``.

    >>> from widgets import apps
    >>> apps.explorer()       # concept picker + probe controls + cluster browser (+ taxonomy atlas of the predictions)
"""

# ruff: noqa: E402 (the imports below come after the one call that must precede them)
from pathlib import Path

from workbench.startup import skip_iri_grammar

skip_iri_grammar()  # an app's kernel starts per visitor: its imports are on each visitor's clock

import ipywidgets as w

from widgets.atlas import TaxonomyAtlas
from widgets.clusters import ClusterBrowser
from widgets.concepts import ConceptPicker
from widgets.dashboard import ResultsDashboard
from widgets.files import load_probes, prediction_files, workspace_fit
from widgets.probing import ProbingResults
from widgets.runs import RunCurves
from widgets.state import Session
from widgets.toggles import ProbeControls
from widgets.ways import WaysOfAsking
from workbench import markup
from workbench.annotation import workspace_flags
from workbench.io import read_predictions
from workbench.irt.estimates import full_runs
from workbench.knowledge import load_graph
from workbench.knowledge.omw import omw_languages

NO_PROBES = (
    "<b>No probe sets in the workspace yet</b>: run "
    "<code>workbench probes build --probe all --out $WORKBENCH_HOME/probes</code>."
)


def _header(title: str, what: str) -> w.HTML:
    return w.HTML(f"<h2 class='wb-app-title'>{markup.text(title)}</h2><p>{markup.text(what)}</p>")


def explorer(home: Path | None = None, concept: str = "") -> w.Widget:
    """Probe explorer: pick a concept, set the probe toggles, browse the concept's cluster.

    The newest prediction file in the workspace (of a full run: an adaptive run's accuracy is an estimate), if any,
    adds a model's picks to the cluster browser and the taxonomy atlas below (strict cluster accuracy over WordNet;
    picking a concept there opens its cluster). The concept card lists the concept's words in every OMW wordnet found
    (``$OMW_DIR``, ``<workspace>/omw``); a fit under ``<workspace>/irt``, the picked question's IRT parameters.
    """
    probes = load_probes(home)
    if probes is None:
        return w.VBox([_header("Probe explorer", ""), w.HTML(NO_PROBES)])
    files = full_runs(prediction_files(home))  # an adaptive run's accuracy is an estimate: not the atlas's
    preds = read_predictions(max(files, key=lambda p: p.stat().st_mtime)) if files else None
    session = Session(
        graph=load_graph("wordnet"), probes=probes, predictions=preds, languages=omw_languages(),
        flags=workspace_flags(home), fit=workspace_fit(home),
    )  # fmt: skip
    picker, controls, browser = ConceptPicker(session), ProbeControls(session), ClusterBrowser(session)
    if concept:
        session.concept = concept
    left = w.VBox([picker.widget, controls.widget], layout=w.Layout(width="45%"))
    right = w.VBox([browser.widget], layout=w.Layout(width="55%"))
    panels = {"concepts": picker, "controls": controls, "cluster": browser}
    if preds is not None:
        panels["atlas"] = TaxonomyAtlas(session)
    app = w.VBox(
        [
            _header("Probe explorer", "Search a concept, set the probe toggles, read the semantic cluster."),
            w.HBox([left, right]),
            *([panels["atlas"].widget] if preds is not None else []),
        ]
    )
    app.session, app.panels = session, panels  # for notebooks and tests
    return app


def dashboard(home: Path | None = None) -> w.Widget:
    """Results dashboard: probe toggles beside the heat map, cluster bars and drill-down of the workspace's predictions.

    The toggles offer what the chosen prediction files scored; picking other files resets them (several
    files, or one file holding several models, are drawn side by side; each model's label names its way of asking
    where one model was asked several ways). Below: the ways of asking one model side by side (a heat map each and
    the paired difference of two, when the chosen files hold one model asked several ways), the learning curves of
    the inoculation runs in the workspace, then the oLMpics curves (``olmpics/*.parquet``) and edge-probing
    results (``edge/<name>/``) in it.
    """
    files = prediction_files(home)
    session = Session()
    curves, probing = RunCurves(session, home=home), ProbingResults(home=home)
    if not files:
        app = w.VBox(
            [_header("Results dashboard", ""), ResultsDashboard(session).widget, curves.widget, probing.widget]
        )
        app.session, app.panels = session, {"runs": curves, "probing": probing}
        return app
    session.observe(lambda change: setattr(session, "probes", change.new), "predictions")
    session.predictions = read_predictions(files[0])
    controls, board, ways = ProbeControls(session), ResultsDashboard(session, files=files), WaysOfAsking(session)
    app = w.VBox([
        _header("Results dashboard", "Pick models, set the toggles, click a heat-map cell to list its questions."),
        w.HBox([
            w.VBox([controls.widget], layout=w.Layout(width="35%")),
            w.VBox([board.widget], layout=w.Layout(width="65%")),
        ]),
        ways.widget,
        curves.widget,
        probing.widget,
    ])  # fmt: skip
    app.session = session
    app.panels = {"controls": controls, "dashboard": board, "ways": ways, "runs": curves, "probing": probing}
    return app


def inoculation(home: Path | None = None) -> w.Widget:
    """Inoculation dashboard: launch a run on the workspace's models, probes and science QA; watch it; cancel it.

    The learning curves of the runs already in the workspace are below the launcher; the list is re-read
    whenever a run ends.
    """
    from widgets.inoculation import InoculationLauncher
    from widgets.source import SourceTrainer

    session = Session()
    launcher = InoculationLauncher(session, home=home)
    trainer = SourceTrainer(home=home, on_done=launcher.refresh_inputs)
    curves = RunCurves(session, home=home, launcher_above=True)
    launcher.start.observe(
        lambda change: curves.refresh() if not change.new else None, "disabled"
    )  # Start enabled again: a run ended
    app = w.VBox([
        _header("Inoculation dashboard", "Continue training a source model on k probe examples; "
                "watch probe (solid) and original-task (dashed) accuracy."),
        trainer.widget, launcher.widget, curves.widget,
    ])  # fmt: skip
    app.session, app.panels = session, {"source": trainer, "inoculation": launcher, "runs": curves}
    return app


NO_LINK = (
    "<b>This page needs your personal link.</b> Ask the person who runs the study for it (they make it with "
    "<code>workbench annotate link BATCH YOUR-NAME</code>); it ends in <code>?annotator=...</code>."
)


def annotate(home: Path | None = None, token: str | None = None) -> w.Widget:
    """Annotation app: the questions of the batch whose person holds ``token`` (under Voilà, the link's
    ``?annotator=`` value), one at a time; after the last, their answers beside the gold and the workspace's models."""
    from widgets.annotate import AnnotationPanel
    from workbench.annotation import find_annotator
    from workbench.errors import WorkbenchError

    token = token if token is not None else _query("annotator")
    member = find_annotator(token or "", home)
    header = _header("Annotation", "Pick the answer you think is right: click it, or press its number (1-5).")
    if member is None:
        return w.VBox([header, w.HTML(NO_LINK)])
    files = prediction_files(home)
    try:  # the models are for the review after the last answer: files that cannot be read together only lose it
        preds = read_predictions(*files) if files else None
    except WorkbenchError:
        preds = None
    panel = AnnotationPanel(member, preds)
    app = w.VBox([header, panel.widget])
    app.panels = {"annotate": panel}
    return app


def _query(key: str) -> str | None:
    """``key``'s value in the page's query string under Voilà (a preheated kernel waits for its page first)."""
    import os
    from urllib.parse import parse_qs

    if "VOILA_KERNEL_ID" not in os.environ and "VOILA_PREHEAT" not in os.environ:
        return None
    from voila.utils import get_query_string

    values = parse_qs(get_query_string() or "").get(key)
    return values[0] if values else None
