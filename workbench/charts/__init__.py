"""Altair charts: each function takes a frame and returns an ``alt.Chart`` value; none displays,
saves or reads files. One module per kind of result:

- ``accuracy``: prediction frames (the Figure 3 heat map, cluster bars, the linked drill-down).
"""

from workbench.charts.accuracy import (
    DRILLDOWN_COLUMNS,
    Chart,
    cell_selection,
    cluster_bars,
    dashboard,
    drilldown_table,
    heatmap,
)

__all__ = ["DRILLDOWN_COLUMNS", "Chart", "cell_selection", "cluster_bars", "dashboard", "drilldown_table", "heatmap"]
