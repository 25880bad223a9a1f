"""Measurable defects of dictionary text: glued words, unbalanced brackets, truncated ends, leftover markup.

The GCIDE cleaner (``gcide.py``) uses them to repair or drop damaged text, and the probe check
(``workbench.probes.quality``) to count what is left in a built probe set.
"""

import re
from collections import Counter
from collections.abc import Iterable

WORD = re.compile(r"[A-Za-z]+")
_CAMEL = re.compile(r"([a-z]{2,})([A-Z][a-z]{2,})")  # one lower-case run into one capitalised word, not McDonald
_PUNCT_GLUE = re.compile(r"[a-z]{2,}[,;:.][a-z]{2,}")  # "began,pasquins": no space after the punctuation
_ADDRESS = re.compile(r"www|[/@]|\.(?:com|org|edu|net|gov|html?)\b")
_MARKUP = re.compile(r"[<>\\{}]|&#?\w+;")
_PAIRS = {")": "(", "]": "["}
_BRACKET = re.compile(r"[()\[\]]")
_ENUMERATOR = re.compile(r"(?:^|\s)[a-z0-9]\)$")
# Words that never end a definition: articles and conjunctions. Prepositions are left out on purpose:
# GCIDE's definitions of transitive verbs and prepositions end in one ("To fill up the chinks of").
DANGLING = frozenset("a an the and or nor but".split())
# Function words a glued token starts or ends with (``youtriumph``, ``postand``). Two content words run
# together are too often a real compound (``wildlife``) to call glued without a person looking; so are
# short pronouns (``we`` + ``bless``, ``she`` + ``reef``).
_HEADS = frozenset(
    "the and that this these those you your they their them thou thee thy which when where what shall will not".split()
)
_TAILS = frozenset("a an the and".split())
# An article glued after a word (``daya``) looks like a Latin or Spanish word (``mellifica``, ``powan``): it
# counts only after a common word (``day``).
_ARTICLES = frozenset(["a", "an"])
_COMMON = 100  # how often a word must occur in the dictionary's text to be common
_SUFFIXES = ("s", "es", "ed", "d", "ing", "er", "est", "st", "eth", "th", "ly")
_AFTER_Y = ("es", "ed", "er", "est", "eth", "ly")  # the suffixes that turn a final y into i


class Vocabulary:
    """Lower-case words known to a dictionary, with their regular inflections (``roared`` from ``roar``).

    >>> words = Vocabulary(["roar", "day"])
    >>> words.knows("Roared"), words.knows("daya")
    (True, False)
    """

    def __init__(self, words: Iterable[str], common: Iterable[str] = ()):
        self.words = frozenset(word.lower() for word in words)
        self.common = frozenset(word.lower() for word in common) or self.words

    @classmethod
    def of_texts(cls, headwords: Iterable[str], texts: Iterable[str], min_count: int = 3) -> "Vocabulary":
        """The words of ``headwords`` and every word seen ``min_count`` times or more in ``texts``.

        A word run together by a removed line break is seen once, so a count of three keeps it out while
        letting in the irregular forms (``began``, ``yourselves``) that no headword lists. Words seen a
        hundred times are its common words.
        """
        words = {word.lower() for headword in headwords for word in WORD.findall(headword)}
        counts = Counter(WORD.findall("\n".join(texts).lower()))
        seen = {word for word, count in counts.items() if count >= min_count}
        return cls(words | seen, common={word for word, count in counts.items() if count >= _COMMON})

    def knows(self, word: str) -> bool:
        """Whether ``word`` is known or a regular inflection of a known word."""
        word = word.lower()
        if word in self.words:
            return True
        for suffix in _SUFFIXES:
            stem = word[: -len(suffix)]
            if not word.endswith(suffix) or len(stem) < 2:
                continue
            if stem in self.words or stem + "e" in self.words:
                return True
            if stem[-1] == "i" and suffix in _AFTER_Y and stem[:-1] + "y" in self.words:  # tidies, happily
                return True
            if len(stem) > 2 and stem[-1] == stem[-2] and stem[:-1] in self.words:  # grinned, robbed
                return True
        return False


def glued_words(text: str, vocabulary: Vocabulary) -> list[str]:
    """The tokens of ``text`` that are two words run together where a line break or a tag was removed.

    Three signs, each precise: a lower-case word running into a capitalised one, both known
    (``perceiveStrange``); two words joined by a comma, semicolon, colon or full stop with no space
    (``began,pasquins``); an unknown lower-case token made of a function word and a known word
    (``youtriumph``) or of a common word and an article (``daya``), not after a capitalised word (a Latin
    name after its genus: ``Apis mellifica``).

    >>> glued_words("a daya yeara yard", Vocabulary(["a", "day", "year", "yard"]))
    ['daya', 'yeara']
    >>> glued_words("I might perceiveStrange alteration", Vocabulary(["perceive", "strange"]))
    ['perceiveStrange']
    """
    found, previous = [], ""
    for match in WORD.finditer(text):
        token = match.group()
        camel = _CAMEL.fullmatch(token)
        if camel and vocabulary.knows(camel[1]) and vocabulary.knows(camel[2]):
            found.append(token)
        elif token.islower() and len(token) > 3 and not vocabulary.knows(token):
            split = function_word_glue(token, vocabulary)
            if split and not previous[:1].isupper():  # not a Latin name after its genus: Apis mellifica
                found.append(token)
        previous = token
    return found + [match[0] for match in _PUNCT_GLUE.finditer(text) if not _in_address(text, match.start())]


def _in_address(text: str, index: int) -> bool:
    """Whether ``index`` is inside a web or mail address (``www.word-detective.com``), not glued prose."""
    start, end = text.rfind(" ", 0, index) + 1, text.find(" ", index)
    return bool(_ADDRESS.search(text[start : end if end >= 0 else len(text)]))


def function_word_glue(token: str, vocabulary: Vocabulary) -> tuple[str, str] | None:
    """A split of ``token`` into a function word and a known word of three letters or more, if any.

    >>> function_word_glue("youtriumph", Vocabulary(["triumph"])), function_word_glue("mellifica", Vocabulary([]))
    (('you', 'triumph'), None)
    """
    for cut in range(3, len(token)):
        head, tail = token[:cut], token[cut:]
        if head in _HEADS and len(tail) >= 3 and tail not in ("ever", "soever") and vocabulary.knows(tail):
            return head, tail
        if tail in _TAILS and (head in vocabulary.common if tail in _ARTICLES else vocabulary.knows(head)):
            return head, tail
    return None


def first_unbalanced(text: str) -> int:
    """The index of the first bracket of ``text`` that is never closed, or closed without an opener; -1 if none.
    An enumerator's closer (``a)``, ``2)``) needs no opener.

    >>> first_unbalanced("-- A sharp (A"), first_unbalanced("Plates of Bal) are"), first_unbalanced("(A sharp)")
    (11, 13, -1)
    >>> first_unbalanced("Lit., a) To those Jews")
    -1
    """
    if not _BRACKET.search(text):
        return -1
    stack: list[int] = []
    for index, char in enumerate(text):
        if char in "([":
            stack.append(index)
        elif char in _PAIRS and stack and text[stack[-1]] == _PAIRS[char]:
            stack.pop()
        elif char in _PAIRS and not (char == ")" and _ENUMERATOR.search(text, 0, index + 1)):
            return index
    return stack[0] if stack else -1


def truncation(text: str) -> str:
    """How a definition ends cut short: an open bracket and a short fragment after it, ``--``, ``,``,
    ``:`` or ``;``, or a dangling article or conjunction; '' if it ends whole.

    >>> truncation("tuned to the A in the treble staff. -- A sharp (A"), truncation("Crooked; lame")
    ('(A', '')
    """
    text = text.rstrip()
    for end in ("--", ",", ":", ";", "(", "["):
        if text.endswith(end):
            return end
    opened = first_unbalanced(text)
    if opened >= 0 and text[opened] in "([" and len(text) - opened <= 12:
        return text[opened:]
    words = WORD.findall(text[-12:])
    if words and words[-1] in DANGLING and text[-1].isalpha():
        return words[-1]
    return ""


def markup(text: str) -> list[str]:
    """Leftover tags, entities, escapes or sense references in ``text``.

    >>> markup("marked thus: <8star/."), markup("a big scale{4}"), markup("In each; to or for each")
    (['<'], ['{', '}'], [])
    """
    return _MARKUP.findall(text)
