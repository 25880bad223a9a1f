"""Partial-input baselines over surface features, trained on the probe itself (SPEC §5).

The paper's versions are GloVe/ELMo BiLSTMs (Richardson & Sabharwal 2020, §4.1, after Mihaylov
et al. 2018). Without GloVe here, these are their lexical equivalents: each learns a logistic
regression "is this choice the gold one?" over one choice's features, and predicts the
highest-scoring choice of each question (``docs/BASELINES.md``).

- ``ChoiceOnly``: the choice alone: TF-IDF word 1-2-grams, character 2-5-grams, and its length.
- ``ChoiceToChoice``: only how similar the choice is to the *other* choices of its question
  (word and character TF-IDF cosines: mean, max, min, and each relative to the question's average).
- ``QuestionToChoice``: only how the choice relates to the question, never the other choices:
  word and character cosines, word-overlap counts and shares, and which words they share.
"""

from dataclasses import dataclass
from functools import lru_cache
from itertools import chain
from threading import Lock

import numpy as np
import polars as pl
import scipy.sparse as sp
from sklearn.base import BaseEstimator, TransformerMixin
from sklearn.feature_extraction.text import CountVectorizer, HashingVectorizer, TfidfTransformer, TfidfVectorizer
from sklearn.linear_model import LogisticRegression
from sklearn.pipeline import FeatureUnion, Pipeline, make_pipeline
from sklearn.preprocessing import FunctionTransformer, StandardScaler

from workbench.baselines.base import Baseline, check_settings


def _word_tfidf() -> TfidfVectorizer:
    return TfidfVectorizer(analyzer="word", ngram_range=(1, 2), sublinear_tf=True, dtype=np.float64)


def _char_tfidf() -> "CharTfidf":
    return CharTfidf()


_CHAR_WB = CountVectorizer(analyzer="char_wb", ngram_range=(2, 5), lowercase=False).build_analyzer()
_GRAM_IDS: dict[str, int] = {}  # every n-gram met in this process -> its number, in the order first met
_GRAMS: list[str] = []  # number -> n-gram
_NEW_GRAM = Lock()


@lru_cache(maxsize=2**17)
def _word_gram_ids(word: str) -> np.ndarray:
    """The numbers of ``word``'s ``char_wb`` 2-5-grams, one per occurrence: a word is read once per process."""
    grams = _CHAR_WB(word)
    with _NEW_GRAM:
        for gram in grams:
            if gram not in _GRAM_IDS:
                _GRAM_IDS[gram] = len(_GRAMS)
                _GRAMS.append(gram)
    return np.array([_GRAM_IDS[gram] for gram in grams], dtype=np.int64)


class CharTfidf(TransformerMixin, BaseEstimator):
    """``TfidfVectorizer(analyzer="char_wb", ngram_range=(2, 5), sublinear_tf=True)``, counted word by word.

    scikit-learn's ``char_wb`` n-grams of a text are those of each of its words, so a text's counts are its word
    counts times each distinct word's n-gram counts, and a word's n-grams are read once per process, not once per
    text and fit it appears in (words repeat across choices, questions and baselines far more than texts do). The
    vocabulary, the counts and so the TF-IDF matrices are scikit-learn's, bit for bit (``tests/test_baselines.py``).

    Learned: ``vocabulary_`` (n-gram -> column, sorted as scikit-learn sorts it) and ``tfidf_``.
    """

    def fit(self, texts, y=None) -> "CharTfidf":
        self.fit_transform(texts)
        return self

    def fit_transform(self, texts, y=None) -> sp.csr_matrix:
        counts, self.vocabulary_ = self._counts(texts, None)
        self.tfidf_ = TfidfTransformer(sublinear_tf=True)
        return self.tfidf_.fit_transform(counts)

    def transform(self, texts) -> sp.csr_matrix:
        return self.tfidf_.transform(self._counts(texts, self.vocabulary_)[0])

    @staticmethod
    def _counts(texts, vocabulary: dict | None) -> tuple[sp.csr_matrix, dict]:
        lowered = [text.lower() for text in texts]
        if vocabulary is not None and not any(map(str.split, lowered)):  # no word to count: all-zero rows
            return sp.csr_matrix((len(lowered), len(vocabulary))), vocabulary
        words = CountVectorizer(analyzer=str.split, lowercase=False)
        per_text = words.fit_transform(lowered)
        ids = [_word_gram_ids(word) for word in words.get_feature_names_out().tolist()]
        grams = np.concatenate(ids)
        column = np.full(len(_GRAMS), -1, dtype=np.int64)  # n-gram number -> column of the vocabulary, or -1
        fitting = vocabulary is None
        if fitting:
            used = np.unique(grams)
            used = used[np.argsort([_GRAMS[gram] for gram in used])]  # scikit-learn sorts its n-grams
            column[used] = np.arange(len(used))
            vocabulary = {_GRAMS[gram]: int(col) for col, gram in enumerate(used)}
        else:
            known = [(_GRAM_IDS[gram], col) for gram, col in vocabulary.items() if gram in _GRAM_IDS]
            if known:
                column[[gram for gram, _ in known]] = [col for _, col in known]
        rows = np.repeat(np.arange(len(ids)), [len(each) for each in ids])
        cols = column[grams]
        kept = cols >= 0
        per_word = sp.csr_matrix(
            (np.ones(kept.sum()), (rows[kept], cols[kept])), shape=(len(ids), len(vocabulary))
        )  # duplicates summed: a word's count of each n-gram
        counts = (per_text @ per_word).tocsr()
        counts.sort_indices()
        if fitting:  # as fitted by scikit-learn, a row keeps its n-grams in the order they first appear
            seen = dict.fromkeys(chain.from_iterable(map(str.split, lowered)))  # words, in order of first appearance
            met = column[np.concatenate([_word_gram_ids(word) for word in seen])]
            _, first_met = np.unique(met, return_index=True)  # for each column, where it is first met
            rank = np.argsort(np.argsort(first_met))
            rows = np.repeat(np.arange(counts.shape[0]), np.diff(counts.indptr))
            order = np.lexsort((rank[counts.indices], rows))
            counts = sp.csr_matrix((counts.data[order], counts.indices[order], counts.indptr), shape=counts.shape)
        return counts, vocabulary


def _length_features(texts) -> np.ndarray:
    """log(1 + characters) and log(1 + words) of each text."""
    texts = list(texts)
    chars = np.array([len(text) for text in texts], dtype=np.float64)
    words = np.array([len(text.split()) for text in texts], dtype=np.float64)
    return np.log1p(np.column_stack([chars, words]))


def _classifier(C: float, seed: int, wide: bool) -> LogisticRegression:
    """liblinear: deterministic for a seed, and about twice as fast as lbfgs on sparse n-gram features. ``wide``
    (more features than training rows: n-grams, hashed terms) solves its dual problem, as scikit-learn advises there:
    the same accuracies on the released hyponymy train, the three baselines in half the time (bench/README.md,
    ``baselines-dual``); a few dense features, the primal."""
    return LogisticRegression(C=C, solver="liblinear", dual=wide, max_iter=2000, random_state=seed)


def _transform(vectorizer, texts: pl.Series) -> sp.csr_matrix:
    """``vectorizer`` applied to each distinct text once, one row per entry of ``texts``."""
    distinct = texts.unique(maintain_order=True)
    rows = texts.replace_strict(distinct, range(len(distinct)), return_dtype=pl.Int64).to_numpy()
    return vectorizer.transform(distinct.to_list())[rows]


@dataclass(eq=False)
class _Logistic(Baseline):
    """A baseline whose last step is a seeded logistic regression with inverse regularisation ``C``."""

    C: float = 1.0
    seed: int = 0

    def __post_init__(self) -> None:
        check_settings(self.seed, self.C)

    def params(self) -> dict:
        return {"C": self.C, "seed": self.seed}


@dataclass(eq=False)
class ChoiceOnly(_Logistic):
    """Score a choice from its own text only (the question is never seen).

    Learned: ``pipeline_`` (TF-IDF word and character n-grams + length, then logistic regression).

    >>> ChoiceOnly(seed=0).fit(train).predict(dev)["correct"].mean()
    """

    name = "choice-only"
    rule = "tfidf word+char n-grams, length; logistic regression"

    def _fit(self, pairs: pl.DataFrame) -> None:
        features = FeatureUnion(
            [
                ("words", _word_tfidf()),
                ("chars", _char_tfidf()),
                ("length", make_pipeline(FunctionTransformer(_length_features), StandardScaler())),
            ]
        )
        self.pipeline_ = Pipeline([("features", features), ("classifier", _classifier(self.C, self.seed, wide=True))])
        self.pipeline_.fit(pairs["choice"].to_list(), pairs["gold"].to_numpy())

    def _scores(self, pairs: pl.DataFrame) -> np.ndarray:
        return self.pipeline_.decision_function(pairs["choice"].to_list())


@dataclass(eq=False)
class ChoiceToChoice(_Logistic):
    """Score a choice by how it stands out from the other choices of its question.

    The paper's model attends over choice pairs to find the odd one out; this one learns which
    similarity profile marks the gold choice. Learned: ``word_tfidf_``, ``char_tfidf_`` (fit on the
    training choices), ``scaler_`` and ``classifier_``.

    >>> ChoiceToChoice(seed=0).fit(train).predict(dev)["correct"].mean()
    """

    name = "choice-to-choice"
    rule = "tfidf cosine to the other choices; logistic regression"

    def _fit(self, pairs: pl.DataFrame) -> None:
        texts = pairs["choice"].to_list()
        self.word_tfidf_ = _word_tfidf().fit(texts)
        self.char_tfidf_ = _char_tfidf().fit(texts)
        features = self._features(pairs)
        self.scaler_ = StandardScaler().fit(features)
        self.classifier_ = _classifier(self.C, self.seed, wide=False).fit(
            self.scaler_.transform(features), pairs["gold"].to_numpy()
        )

    def _scores(self, pairs: pl.DataFrame) -> np.ndarray:
        return self.classifier_.decision_function(self.scaler_.transform(self._features(pairs)))

    def _features(self, pairs: pl.DataFrame) -> np.ndarray:
        """Per choice and vectoriser: mean, max, min cosine to the other choices, and mean minus the question's mean."""
        indexed = pairs.select("row", "position").with_row_index("choice_index")
        others = indexed.join(indexed, on="row", suffix="_other").filter(pl.col("position") != pl.col("position_other"))
        left, right = others["choice_index"].to_numpy(), others["choice_index_other"].to_numpy()
        columns = []
        for vectorizer in (self.word_tfidf_, self.char_tfidf_):
            vectors = _transform(vectorizer, pairs["choice"])  # rows are L2-normalised: a dot product is a cosine
            cosine = np.asarray(vectors[left].multiply(vectors[right]).sum(axis=1)).ravel()
            stats = (
                others.select("choice_index", "row", cosine=pl.Series(cosine))
                .group_by("choice_index", "row")
                .agg(mean=pl.col("cosine").mean(), max=pl.col("cosine").max(), min=pl.col("cosine").min())
            )
            stats = (
                indexed.join(stats, on=["choice_index", "row"], how="left")
                .sort("choice_index")  # a fixed order before any sum, so the same input gives the same bits
                .with_columns(pl.col("mean", "max", "min").fill_null(0.0))
                .with_columns(relative=pl.col("mean") - pl.col("mean").mean().over("row"))
            )
            columns.append(stats.select("mean", "max", "min", "relative").to_numpy())
        return np.hstack(columns)


@dataclass(eq=False)
class QuestionToChoice(_Logistic):
    """Score a choice from its relation to the question alone (the other choices are never seen).

    Features: word and character TF-IDF cosine of question and choice; the number of words they
    share, as a count and as shares of each side and their Jaccard index; and the shared words
    themselves (hashed indicators), so it can learn which shared terms mark a gold answer.
    Learned: ``word_tfidf_``, ``char_tfidf_``, ``scaler_``, ``classifier_``.

    >>> QuestionToChoice(seed=0).fit(train).predict(dev)["correct"].mean()
    """

    name = "question-to-choice"
    rule = "question-choice cosine, overlap and shared terms; logistic regression"
    shared_terms: int = 2**18

    def params(self) -> dict:
        return {**super().params(), "shared_terms": self.shared_terms}

    def _fit(self, pairs: pl.DataFrame) -> None:
        texts = pl.concat([pairs["question"].unique(maintain_order=True), pairs["choice"]]).to_list()
        self.word_tfidf_ = _word_tfidf().fit(texts)
        self.char_tfidf_ = _char_tfidf().fit(texts)
        dense, shared = self._features(pairs)
        self.scaler_ = StandardScaler().fit(dense)
        self.classifier_ = _classifier(self.C, self.seed, wide=True).fit(
            self._matrix(dense, shared), pairs["gold"].to_numpy()
        )

    def _scores(self, pairs: pl.DataFrame) -> np.ndarray:
        return self.classifier_.decision_function(self._matrix(*self._features(pairs)))

    def _matrix(self, dense: np.ndarray, shared: sp.csr_matrix) -> sp.csr_matrix:
        return sp.hstack([sp.csr_matrix(self.scaler_.transform(dense)), shared], format="csr")

    def _features(self, pairs: pl.DataFrame) -> tuple[np.ndarray, sp.csr_matrix]:
        questions, choices = pairs["question"], pairs["choice"]
        cosines = [
            np.asarray(_transform(vectorizer, questions).multiply(_transform(vectorizer, choices)).sum(axis=1)).ravel()
            for vectorizer in (self.word_tfidf_, self.char_tfidf_)
        ]
        words = HashingVectorizer(
            n_features=self.shared_terms, binary=True, norm=None, alternate_sign=False, dtype=np.float64
        )
        question_words, choice_words = _transform(words, questions), _transform(words, choices)
        shared = question_words.multiply(choice_words).tocsr()
        n_shared = np.asarray(shared.sum(axis=1)).ravel()
        n_question = np.asarray(question_words.sum(axis=1)).ravel()
        n_choice = np.asarray(choice_words.sum(axis=1)).ravel()
        union = n_question + n_choice - n_shared

        def share(part: np.ndarray, whole: np.ndarray) -> np.ndarray:
            return np.divide(part, whole, out=np.zeros_like(part), where=whole > 0)

        dense = np.column_stack(
            [
                *cosines,
                np.log1p(n_shared),
                share(n_shared, n_choice),
                share(n_shared, n_question),
                share(n_shared, union),
            ]
        )
        return dense, shared
