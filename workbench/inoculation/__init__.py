"""Inoculation by fine-tuning (SPEC §6): train a source model on the original task, continue training
it on k probe examples over a hyperparameter grid, and read back learning curves and costs.

- ``read_mcqa`` / ``read_mcqa_dir``: science QA JSONL (ARC, OpenBookQA, SciQ) as ``PROBE_SCHEMA`` frames;
- ``TrainSpec``, ``fit``, ``predict``: the explicit training loop and its evaluation;
- ``train_source``: fine-tune the source model (a run folder with ``model/``);
- ``InoculationSpec``, ``plan_inoculation`` (a frame of trials to inspect and filter), ``run_inoculation``,
  ``inoculate`` (plan, then run), ``load_run``, ``best_trials`` (M* per k), ``summarize``: resumable runs;
- ``run_trial``, ``Trial``, ``TrialData``: one grid cell, the function every backend runs (``BACKENDS``);
- ``learning_curve``, ``curve_summaries``: k=0..k curves, oLMpics WS and MAX.

>>> train_source(minilm, "mcqa/arc_easy", "runs/src", TrainSpec(lr=1e-4), max_train=2000)  # doctest: +SKIP
>>> inoculate("runs/src", "probes/hypernymy", "mcqa/arc_easy", ks=(100, 500), out="runs/inoc")  # doctest: +SKIP

The names load on first use (``lazy_loader``): reading runs and curves does not import torch.
"""

import lazy_loader

__getattr__, __dir__, __all__ = lazy_loader.attach(
    __name__,
    submod_attrs={
        "backends": ["BACKENDS"],
        "curves": ["curve_summaries", "learning_curve"],
        "data": ["read_mcqa", "read_mcqa_dir"],
        "runs": [
            "PLAN_SCHEMA",
            "TRIALS_SCHEMA",
            "DiskFullError",
            "InoculationPlan",
            "InoculationSpec",
            "add_some_mix",
            "best_trials",
            "inoculate",
            "load_run",
            "plan_inoculation",
            "run_inoculation",
            "stage_predictions",
            "summarize",
        ],
        "source": ["train_source"],
        "train": ["TrainingError", "TrainSpec", "fit", "predict", "score_frame"],
        "trial": ["Trial", "TrialData", "run_trial"],
    },
)
