"""Probe Workbench: controlled probes of what NLP models know.

The library is layered (knowledge -> probes -> scoring -> metrics/analysis -> charts);
every layer is a set of pure functions over polars frames.
"""

from workbench.errors import WorkbenchError

__version__ = "0.1.0"
__all__ = ["WorkbenchError", "__version__"]


def __getattr__(name: str):
    """``workbench.widgets``: the ipywidget panels (package ``widgets``), imported only when asked for.

    >>> from workbench import widgets  # doctest: +SKIP
    """
    if name == "widgets":
        from importlib import import_module

        return import_module("widgets")
    raise AttributeError(f"module 'workbench' has no attribute {name!r}")
