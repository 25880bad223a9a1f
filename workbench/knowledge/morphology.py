"""WordNet's morphology: the base forms a word or phrase may be an inflection of ("dogs" -> "dog", "geese" ->
"goose", "running" -> "run"), as NLTK's ``morphy`` finds them.

The rules are NLTK's own (``WordNetCorpusReader.MORPHOLOGICAL_SUBSTITUTIONS``: suffix detachments per part of
speech) and the exception lists are WordNet's (``noun.exc``, ``verb.exc``, ``adj.exc``, ``adv.exc`` of the
provisioned data). Unlike ``morphy``, candidates are not checked against WordNet's index here: the caller checks
them against the lemmas it cares about (a concept's), which spares opening NLTK's reader (seconds) for a few words.

>>> sorted(base_forms("domestic dogs", "n"))  # doctest: +SKIP
['domestic dog', 'domestic dogs']
"""

from functools import cache

from workbench.errors import DataSourceError

EXCEPTION_FILES = {"n": "noun", "v": "verb", "a": "adj", "s": "adj", "r": "adv"}


def base_forms(text: str, pos: str) -> set[str]:
    """``text`` and every form it may inflect as a ``pos`` word (n, v, a, s, r): WordNet's exceptions, then each
    suffix rule NLTK's ``morphy`` applies (to the whole phrase, as morphy does: "domestic dogs" -> "domestic dog")."""
    forms = {text, *exceptions(pos).get(text, ())}
    for old, new in substitutions(pos):
        if text.endswith(old) and len(text) > len(old):
            forms.add(text[: len(text) - len(old)] + new)
    return forms


@cache
def substitutions(pos: str) -> tuple[tuple[str, str], ...]:
    """NLTK's suffix rules of a part of speech (old ending, new ending). NLTK is imported here, on first use, not
    with the scorers that import this module: ``import nltk`` takes 1.5 s of CPU in every process that loads them."""
    from nltk.corpus.reader.wordnet import WordNetCorpusReader

    return tuple(WordNetCorpusReader.MORPHOLOGICAL_SUBSTITUTIONS.get(pos, []))


@cache
def exceptions(pos: str) -> dict[str, tuple[str, ...]]:
    """WordNet's irregular inflections of a part of speech: inflected form -> base forms (underscores as spaces)."""
    import nltk

    from workbench.knowledge.wordnet import INSTALL_HINT, find_wordnet

    name = EXCEPTION_FILES.get(pos)
    if name is None:
        return {}
    root = find_wordnet()
    try:
        if root.suffix == ".zip":
            pointer = nltk.data.find(f"corpora/wordnet.zip/wordnet/{name}.exc")
        else:
            pointer = nltk.data.FileSystemPathPointer(str(root / f"{name}.exc"))
        with pointer.open() as handle:
            text = handle.read().decode("utf-8")
    except (OSError, LookupError) as err:
        raise DataSourceError(f"WordNet's exception list {name}.exc cannot be read ({err}).\n{INSTALL_HINT}") from err
    table = {}
    for line in text.splitlines():
        words = [word.replace("_", " ") for word in line.split()]
        if len(words) > 1:
            table[words[0]] = tuple(words[1:])
    return table
