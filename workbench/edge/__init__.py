"""Edge probing: span-classification probes on frozen representations, with their controls
(random-weights encoder, control tasks and selectivity, MDL online code) and the memorisation audit.

>>> frame = supersense_task(load_graph("wordnet"), n=2000)  # doctest: +SKIP
>>> result = probe_task(load_encoder(minilm), frame, EdgeSpec("mlp"), mdl=True)  # doctest: +SKIP
>>> audit_table(frame.filter(pl.col("split") == "train"), result["predictions"])  # doctest: +SKIP
"""

from workbench.edge.audit import HEURISTICS, audit_table, memorisation_flags, memorisation_shares
from workbench.edge.data import (
    EDGE_SCHEMA,
    EDGE_TASKS,
    gcide_pos_task,
    read_jiant,
    supersense_task,
    words_of,
    write_jiant,
)
from workbench.edge.probes import (
    MDL_SCHEDULE,
    EdgeSpec,
    SpanProbe,
    control_labels,
    evaluate,
    mdl_blocks,
    online_codelength,
    probe_task,
    span_features,
)

__all__ = [
    "EDGE_SCHEMA",
    "EDGE_TASKS",
    "HEURISTICS",
    "MDL_SCHEDULE",
    "EdgeSpec",
    "SpanProbe",
    "audit_table",
    "control_labels",
    "evaluate",
    "gcide_pos_task",
    "mdl_blocks",
    "memorisation_flags",
    "memorisation_shares",
    "online_codelength",
    "probe_task",
    "read_jiant",
    "span_features",
    "supersense_task",
    "words_of",
    "write_jiant",
]
