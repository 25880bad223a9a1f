"""lm-evaluation-harness run in this process on a task `workbench export lm-eval` wrote, its samples logged."""

from pathlib import Path


def logged_run(model, tasks: Path, task: str, out: Path, **asked) -> tuple[dict, list[dict], Path]:
    """Run ``task`` from the folder ``tasks`` with a loaded ``Model`` (lm-eval's ``HFLM`` over its network and
    tokenizer); ``asked``: ``simple_evaluate``'s ``apply_chat_template``, ``fewshot_as_multiturn``. The results,
    the task's samples and the samples file lm-eval wrote under ``out``."""
    from lm_eval import simple_evaluate
    from lm_eval.loggers import EvaluationTracker
    from lm_eval.models.huggingface import HFLM
    from lm_eval.tasks import TaskManager

    harness = HFLM(pretrained=model.network, tokenizer=model.tokenizer, batch_size=8, device="cpu")
    tracker = EvaluationTracker(output_path=str(out))
    results = simple_evaluate(
        model=harness,
        tasks=[task],
        task_manager=TaskManager(include_path=str(tasks)),
        log_samples=True,
        evaluation_tracker=tracker,
        **asked,
    )
    samples = results.pop("samples")
    tracker.save_results_aggregated(results=results, samples=samples)
    tracker.save_results_samples(task, samples[task])
    return results, samples[task], next(Path(out).rglob(f"samples_{task}_*.jsonl"))
