"""Probe Workbench: controlled probes of what NLP models know.

``import workbench as wb`` gives the verbs a notebook needs, each imported when first used (so that
``import workbench`` stays fast and loads neither torch nor altair):

    >>> import workbench as wb
    >>> probes = wb.build_probes("hypernymy", max_hops=2)         # doctest: +SKIP
    >>> preds = wb.score(probes, model_folder, "similarity")      # doctest: +SKIP
    >>> wb.cluster_accuracy(preds); wb.heatmap(preds)             # doctest: +SKIP

The library is layered (docs/ARCHITECTURE.md): knowledge -> probes -> scoring -> metrics, inoculation,
analysis -> views -> charts -> report, cli; the panels (package ``widgets``) sit on top and the library
never imports them. Every verb takes frames and returns frames (or charts), with its settings in one
spec: ``verb(data, spec=None, **overrides)``.
"""

from importlib import import_module

from workbench.errors import WorkbenchError

__version__ = "0.1.0"

_PUBLIC = {  # name -> the module that defines it
    "load_graph": "workbench.knowledge",
    "ProbeSpec": "workbench.probes",
    "build_probes": "workbench.probes",
    "read_probes": "workbench.probes.formats",
    "write_probes": "workbench.probes.formats",
    "table4": "workbench.probes.stats",
    "ScoreSpec": "workbench.scoring",
    "score": "workbench.scoring",
    "read_predictions": "workbench.io",
    "instance_accuracy": "workbench.metrics",
    "cluster_accuracy": "workbench.metrics",
    "breakdown": "workbench.metrics",
    "drilldown": "workbench.metrics",
    "compare": "workbench.analysis.comparison",
    "calibration": "workbench.analysis.calibration",
    "template_consistency": "workbench.analysis.consistency",
    "rephrase": "workbench.probes.phrasings",
    "taxonomy_accuracy": "workbench.analysis.atlas",
    "item_properties": "workbench.analysis.difficulty",
    "fit_difficulty": "workbench.analysis.difficulty",
    "report": "workbench.reports",
    "publish": "workbench.site",
    "heatmap": "workbench.charts",
    "cluster_bars": "workbench.charts",
    "inoculation_curves": "workbench.charts",
    "coefficient_plot": "workbench.charts",
    "train_source": "workbench.inoculation",
    "InoculationSpec": "workbench.inoculation",
    "plan_inoculation": "workbench.inoculation",
    "run_inoculation": "workbench.inoculation",
    "inoculate": "workbench.inoculation",
    "load_run": "workbench.inoculation",
    "learning_curve": "workbench.inoculation",
    "fit_pls": "workbench.analysis",
    "population": "workbench.analysis.populations",
    "decodability": "workbench.analysis.decodability",
    "fit_irt": "workbench.irt",
    "SweepSpec": "workbench.sweep",
    "plan_sweep": "workbench.sweep",
    "run_sweep": "workbench.sweep",
}
__all__ = ["WorkbenchError", "__version__", *_PUBLIC]


def __getattr__(name: str):
    if name in _PUBLIC:
        value = getattr(import_module(_PUBLIC[name]), name)
        globals()[name] = value  # imported once
        return value
    raise AttributeError(f"module 'workbench' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_PUBLIC))
