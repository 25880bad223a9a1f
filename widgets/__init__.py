"""Interactive panels over the workbench (ipywidgets), and the apps the Voilà notebooks show.

Panels share one observable ``Session``; each owns its widgets (``panel.widget``) and calls
``workbench`` functions, so they compose without knowing each other.

    >>> from widgets import Session, ConceptPicker, ProbeControls, ClusterBrowser
    >>> session = Session(graph=load_graph("wordnet"), probes=probes)
    >>> display(ConceptPicker(session).widget, ProbeControls(session).widget, ClusterBrowser(session).widget)

Panels are imported on first use (``lazy_loader``), so an app's kernel loads only what it shows: the explorer and the
dashboard never import torch, which only the inoculation panels need.
"""

import lazy_loader

__getattr__, __dir__, __all__ = lazy_loader.attach(
    __name__,
    submod_attrs={
        "atlas": ["TaxonomyAtlas"],
        "clusters": ["ClusterBrowser"],
        "concepts": ["ConceptPicker"],
        "dashboard": ["ResultsDashboard"],
        "inoculation": ["InoculationLauncher"],
        "probing": ["ProbingResults"],
        "runs": ["RunCurves"],
        "source": ["SourceTrainer"],
        "state": ["Session"],
        "toggles": ["ProbeControls"],
        "ways": ["WaysOfAsking"],
    },
)
