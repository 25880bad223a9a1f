"""Altair charts: each function takes a frame and returns an ``alt.Chart`` value; none displays,
saves or reads files. One module per kind of result:

- ``pls``: PLS path model fits (path diagram, loadings per block, bootstrap distributions).
- ``accuracy``: prediction frames (the Figure 3 heat map, cluster bars, the linked drill-down).
- ``curves``: inoculation learning curves (probe solid, original dashed, seed spread, control, human line).
- ``olmpics``: oLMpics learning curves (MLP / LINEAR, language controls dashed) and language sensitivity.
- ``atlas``: the taxonomy atlas (strict cluster accuracy over WordNet as a zoomable icicle).
- ``difficulty``: the difficulty model's coefficients (a point and interval per item property).
- ``ways``: ways of asking side by side (the paired difference of two ways of asking one model, per cell; one
  model against its control, each way).
- ``irt``: item response theory (members on one ability scale, item characteristic curves).
- ``edge``: edge probes (task vs control-task accuracy, MDL compression, memorisation audit drops).
"""

from workbench.charts.accuracy import (
    DRILLDOWN_COLUMNS,
    Chart,
    cell_selection,
    cluster_bars,
    dashboard,
    drilldown_table,
    heatmap,
    reliability_diagram,
)
from workbench.charts.atlas import node_selection, taxonomy_atlas
from workbench.charts.curves import HUMAN_ACCURACY, inoculation_curves
from workbench.charts.difficulty import coefficient_plot
from workbench.charts.edge import edge_accuracy_bars, mdl_bars, memorisation_bars
from workbench.charts.irt import ability_chart, characteristic_chart
from workbench.charts.olmpics import language_sensitivity_bars, olmpics_curves
from workbench.charts.pls import bootstrap_histograms, loading_bars, path_diagram
from workbench.charts.ways import way_difference_heatmap, ways_against_control

__all__ = [
    "DRILLDOWN_COLUMNS",
    "ability_chart",
    "characteristic_chart",
    "bootstrap_histograms",
    "loading_bars",
    "path_diagram",
    "HUMAN_ACCURACY",
    "Chart",
    "cell_selection",
    "cluster_bars",
    "coefficient_plot",
    "dashboard",
    "drilldown_table",
    "heatmap",
    "reliability_diagram",
    "inoculation_curves",
    "olmpics_curves",
    "language_sensitivity_bars",
    "edge_accuracy_bars",
    "mdl_bars",
    "memorisation_bars",
    "node_selection",
    "taxonomy_atlas",
    "way_difference_heatmap",
    "ways_against_control",
]
