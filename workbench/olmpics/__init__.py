"""oLMpics-style MC-MLM probes (SPEC §4, §5, §9; Talmor et al. 2020): generators, the user JSONL
format, the NO-LANG / PERTURBED-LANG controls, zero-shot scoring and frozen-encoder learning curves.

>>> frame = with_controls(build_olmpics(OlmpicsSpec("age-compare", n_train=1000, n_dev=200)))  # doctest: +SKIP
>>> curves = run_curves(frame, "bert-base-uncased", CurveSpec(seeds=(0, 1)))  # doctest: +SKIP
>>> results_table(curves)  # doctest: +SKIP
"""

from workbench.olmpics.curves import (
    CURVE_SCHEMA,
    SETTINGS,
    CurveSpec,
    language_sensitivity,
    results_table,
    run_curves,
    summarize,
    to_probe_frame,
    zero_shot,
)
from workbench.olmpics.head import CandidateHead, MaskedLM, load_masked_lm
from workbench.olmpics.language_controls import NONSENSE, no_lang, perturbed_lang, with_controls
from workbench.olmpics.probes import (
    OLMPICS_PROBES,
    OLMPICS_SCHEMA,
    OlmpicsSpec,
    antonym_and_synonym_pairs,
    build_olmpics,
    read_jsonl,
    write_jsonl,
)

__all__ = [
    "CURVE_SCHEMA",
    "NONSENSE",
    "OLMPICS_PROBES",
    "OLMPICS_SCHEMA",
    "SETTINGS",
    "CandidateHead",
    "CurveSpec",
    "MaskedLM",
    "OlmpicsSpec",
    "antonym_and_synonym_pairs",
    "build_olmpics",
    "language_sensitivity",
    "run_curves",
    "load_masked_lm",
    "no_lang",
    "perturbed_lang",
    "read_jsonl",
    "results_table",
    "summarize",
    "to_probe_frame",
    "with_controls",
    "write_jsonl",
    "zero_shot",
]
