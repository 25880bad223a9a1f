"""Interactive panels over the workbench (ipywidgets), and the apps the Voilà notebooks show.

Panels share one observable ``Session``; each owns its widgets (``panel.widget``) and calls
``workbench`` functions, so they compose without knowing each other.

    >>> from widgets import Session, ConceptPicker, ProbeControls, ClusterBrowser
    >>> session = Session(graph=load_graph("wordnet"), probes=probes)
    >>> display(ConceptPicker(session).widget, ProbeControls(session).widget, ClusterBrowser(session).widget)
"""

from widgets.atlas import TaxonomyAtlas
from widgets.clusters import ClusterBrowser
from widgets.concepts import ConceptPicker
from widgets.dashboard import ResultsDashboard
from widgets.inoculation import InoculationLauncher
from widgets.probing import ProbingResults
from widgets.runs import RunCurves
from widgets.source import SourceTrainer
from widgets.state import Session
from widgets.toggles import ProbeControls

__all__ = [
    "ClusterBrowser",
    "ConceptPicker",
    "InoculationLauncher",
    "ProbeControls",
    "ProbingResults",
    "ResultsDashboard",
    "RunCurves",
    "Session",
    "SourceTrainer",
    "TaxonomyAtlas",
]
