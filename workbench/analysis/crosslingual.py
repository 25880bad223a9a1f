"""One model, one concept, two languages: does it know *chien → canidé* as well as *dog → canine*?

A set and its pair (``probes.languages.pair_with``) ask the same questions, concept, gold, hop count, distractor
synsets and answer position, in two languages; their prediction frames (one model each) are paired question by
question on that content (``PAIR_KEY``), not on the text, which differs. ``concept_table`` gives per concept the
strict cluster accuracy in each language (every paired question of the concept right) and which language knows it;
``compare_languages`` runs the workbench's paired comparison (``analysis.comparison.compare``: cluster bootstrap and
exact McNemar, Holm across cells) with language B against language A.

>>> table = concept_table(read_predictions("minilm-eng.parquet"), read_predictions("minilm-fra.parquet"))
>>> table.filter(pl.col("known") == "eng only")  # doctest: +SKIP
"""

import polars as pl

from workbench.errors import WorkbenchError

PAIR_KEY = ("probe", "concept", "gold_concept", "hops", "distractor_family", "distractor_depth",
            "distractor_concepts", "answer")  # fmt: skip
"""What a question is across languages: two rows with these equal ask the same thing in two languages."""

CONCEPTS_SCHEMA = {
    "probe": pl.String(),
    "concept": pl.String(),
    "word_a": pl.String(),  # the concept's word in language A's questions
    "word_b": pl.String(),
    "questions": pl.Int64(),  # paired questions of the concept
    "right_a": pl.Int64(),
    "right_b": pl.Int64(),
    "known_a": pl.Boolean(),  # strict: every paired question of the concept right
    "known_b": pl.Boolean(),
    "known": pl.String(),  # "both", "<A> only", "<B> only", "neither"
}


def language_of(preds: pl.DataFrame) -> str:
    """The language of a prediction frame's questions: ``eng`` for WordNet's, the code of ``omw-<code>``'s."""
    sources = preds["source"].unique().to_list()
    if len(sources) != 1:
        raise WorkbenchError(f"the frame mixes knowledge sources {sorted(sources)}; give one language per frame")
    return "eng" if sources[0] == "wordnet" else sources[0].removeprefix("omw-")


def paired_questions(a: pl.DataFrame, b: pl.DataFrame) -> pl.DataFrame:
    """One row per question both frames asked (``PAIR_KEY``): ``cluster_id``, ``concept``, ``word_a``, ``word_b``,
    ``correct_a``, ``correct_b`` and the heat-map cell keys."""
    keep = ["cluster_id", *PAIR_KEY, "word", "correct"]
    for name, frame in (("A", a), ("B", b)):
        if missing := [column for column in keep if column not in frame.columns]:
            raise WorkbenchError(f"{name} lacks {missing}: give prediction frames of probe sets (workbench score)")
    left = a.select(keep).unique(list(PAIR_KEY), keep="first", maintain_order=True)
    right = b.select([*PAIR_KEY, "word", "correct"]).unique(list(PAIR_KEY), keep="first", maintain_order=True)
    both = left.join(right, on=list(PAIR_KEY), suffix="_b", nulls_equal=True)
    if both.is_empty():
        raise WorkbenchError(
            "A and B share no question (same concept, gold, distractor synsets, answer position): pair the sets with "
            "`workbench probes build --language LANG --paired-with ENGLISH_SET` and score both"
        )
    return both.rename({"word": "word_a", "correct": "correct_a"})


def concept_table(a: pl.DataFrame, b: pl.DataFrame) -> pl.DataFrame:
    """Per concept, its paired questions' accuracy in each language and which language knows it (``CONCEPTS_SCHEMA``),
    concepts known in exactly one language first.

    >>> concept_table(eng, fra).group_by("known").len()  # doctest: +SKIP
    """
    name_a, name_b = language_of(a), language_of(b)
    both = paired_questions(a, b)
    table = both.group_by("probe", "concept", maintain_order=True).agg(
        word_a=pl.col("word_a").first(),
        word_b=pl.col("word_b").first(),
        questions=pl.len(),
        right_a=pl.col("correct_a").sum(),
        right_b=pl.col("correct_b").sum(),
        known_a=pl.col("correct_a").all(),
        known_b=pl.col("correct_b").all(),
    )
    known = (
        pl.when(pl.col("known_a") & pl.col("known_b"))
        .then(pl.lit("both"))
        .when(pl.col("known_a"))
        .then(pl.lit(f"{name_a} only"))
        .when(pl.col("known_b"))
        .then(pl.lit(f"{name_b} only"))
        .otherwise(pl.lit("neither"))
    )
    rank = pl.col("known").replace_strict({f"{name_a} only": 0, f"{name_b} only": 1, "both": 2}, default=3)
    table = table.with_columns(known=known).sort(rank, "probe", "concept")
    return table.select(pl.col(column).cast(dtype) for column, dtype in CONCEPTS_SCHEMA.items())


def compare_languages(a: pl.DataFrame, b: pl.DataFrame, n_boot: int = 1000, seed: int = 0) -> pl.DataFrame:
    """The paired comparison of language B against language A on the questions both asked (``compare``'s table:
    ``diff`` = B − A, overall and per cell, cluster bootstrap intervals, McNemar p-values Holm-adjusted).

    >>> compare_languages(eng, fra).filter(pl.col("scope") == "overall")  # doctest: +SKIP
    """
    from workbench.analysis.comparison import compare  # scipy and statsmodels: only when languages are compared

    both = paired_questions(a, b)
    shared = both.select(PAIR_KEY).unique()
    return compare(_as_pairs(a, shared), _as_pairs(b, shared), n_boot=n_boot, seed=seed)


def language_summary(pairs: dict[str, tuple[pl.DataFrame, pl.DataFrame]], n_boot: int = 1000) -> pl.DataFrame:
    """One row per (model, language pair): questions and concepts paired, accuracy and strict cluster accuracy in
    each language, B − A with its interval, McNemar's p, and the concepts known in one language only.

    ``pairs`` maps a label (``"MiniLM eng-fra"``) to the prediction frames (A, B) of one model.
    """
    rows = []
    for label, (a, b) in pairs.items():
        overall = compare_languages(a, b, n_boot=n_boot).row(0, named=True)
        concepts = concept_table(a, b)
        rows.append(
            {
                "pair": label,
                "model": a["model"][0],
                "a": language_of(a),
                "b": language_of(b),
                "questions": overall["n"],
                "concepts": overall["n_clusters"],
                "accuracy_a": round(overall["accuracy_a"], 4),
                "accuracy_b": round(overall["accuracy_b"], 4),
                "diff": round(overall["diff"], 4),
                "diff_lo": round(overall["diff_lo"], 4) if overall["diff_lo"] is not None else None,
                "diff_hi": round(overall["diff_hi"], 4) if overall["diff_hi"] is not None else None,
                "cluster_accuracy_a": round(overall["cluster_accuracy_a"], 4),
                "cluster_accuracy_b": round(overall["cluster_accuracy_b"], 4),
                "p_mcnemar": overall["p_mcnemar"],
                "known_a_only": concepts.filter(pl.col("known_a") & ~pl.col("known_b")).height,
                "known_b_only": concepts.filter(pl.col("known_b") & ~pl.col("known_a")).height,
            }
        )
    return pl.DataFrame(rows)


def _as_pairs(preds: pl.DataFrame, shared: pl.DataFrame) -> pl.DataFrame:
    """``preds`` restricted to the ``shared`` questions, their text replaced by the language-free ``PAIR_KEY`` content,
    so that ``compare`` pairs the two languages' rows as one question each."""
    key = pl.struct(*PAIR_KEY).struct.json_encode()
    kept = preds.join(shared, on=list(PAIR_KEY), how="semi", nulls_equal=True)
    kept = kept.unique(list(PAIR_KEY), keep="first", maintain_order=True)
    synsets = pl.concat_list(pl.col("gold_concept"), pl.col("distractor_concepts"))
    return kept.with_columns(id=key, question=pl.lit(""), context=pl.lit(""), choices=synsets)


def language_pairs(preds: pl.DataFrame) -> dict[str, tuple[pl.DataFrame, pl.DataFrame]]:
    """Each model's English questions against its questions in every other language of one frame (several prediction
    files read together; WordNet's and the OMW wordnets' questions only): ``{"minilm eng-fra": (eng, fra)}``, empty
    when no model was asked English and another language; ``language_summary``'s input."""
    if "source" not in preds.columns or "model" not in preds.columns:
        return {}
    pairs = {}
    taxonomy = preds.filter((pl.col("source") == "wordnet") | pl.col("source").str.starts_with("omw-"))
    for (model,), runs in taxonomy.group_by("model", maintain_order=True):
        languages = {language_of(part): part for _, part in runs.group_by("source", maintain_order=True)}
        english = languages.pop("eng", None)
        if english is not None:
            pairs |= {f"{model} eng-{language}": (english, part) for language, part in languages.items()}
    return pairs


def language_report(preds: pl.DataFrame, n_boot: int = 1000) -> tuple[pl.DataFrame, pl.DataFrame]:
    """What the dashboard and the static site show of a frame holding English and other languages: the pairs'
    ``language_summary`` and their ``concept_table`` rows stacked with a ``pair`` column (both empty when the frame
    pairs no language with English); ``charts.crosslingual.language_chart`` draws them."""
    pairs = language_pairs(preds)
    if not pairs:
        return pl.DataFrame(), pl.DataFrame(schema={"pair": pl.String(), **CONCEPTS_SCHEMA})
    tables = [concept_table(a, b).select(pl.lit(label).alias("pair"), pl.all()) for label, (a, b) in pairs.items()]
    return language_summary(pairs, n_boot=n_boot), pl.concat(tables)
