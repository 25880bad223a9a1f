"""Probe Workbench: controlled probes of what NLP models know.

The library is layered (knowledge -> probes -> scoring -> metrics/analysis -> charts);
every layer is a set of pure functions over polars frames.
"""

from workbench.errors import WorkbenchError

__version__ = "0.1.0"
__all__ = ["WorkbenchError", "__version__"]
