"""Find, provision and read WordNet (3.0, 3.1 or Open English WordNet in the Princeton layout) through NLTK's reader.

Two layouts are supported: NLTK's own data (``nltk.download('wordnet')``) anywhere on
``nltk.data.path``, and the Princeton files that Debian's ``wordnet-base`` installs in
``/usr/share/wordnet``. NLTK only reads corpora under its data path and needs a
``lexnames`` file the Debian package lacks, so the Princeton files are copied into
``<workspace>/nltk_data/corpora/wordnet`` with ``lexnames`` written beside them.
"""

import hashlib
import io
import os
import re
import shutil
import warnings
import zipfile
from importlib import resources
from pathlib import Path

import nltk
import polars as pl
from nltk.corpus.reader.wordnet import WordNetCorpusReader

from workbench.errors import DataSourceError
from workbench.paths import workspace

PRINCETON_DIRS = ("/usr/share/wordnet", "/usr/local/share/wordnet", "/usr/local/WordNet-3.0/dict")
REQUIRED_FILES = tuple(f"{kind}.{pos}" for kind in ("data", "index") for pos in ("noun", "verb", "adj", "adv"))

_TOKEN = re.compile(r"[A-Za-z][A-Za-z'\-]*")

INSTALL_HINT = (
    "Install WordNet 3.0 in one of these ways:\n"
    "  * Debian/Ubuntu: sudo apt-get install wordnet-base wordnet-sense-index\n"
    "  * with internet: python -c \"import nltk; nltk.download('wordnet')\"\n"
    "  * or point WORDNET_DIR at a folder holding the Princeton dict files (data.noun, index.noun, ...)\n"
    "then run `workbench data setup`."
)


def nltk_data_dir() -> Path:
    """The workspace's own NLTK data folder (added to ``nltk.data.path``)."""
    path = workspace() / "nltk_data"
    if str(path) not in nltk.data.path:
        nltk.data.path.insert(0, str(path))
    return path


def _princeton_dir() -> Path | None:
    candidates = [os.environ["WORDNET_DIR"]] if os.environ.get("WORDNET_DIR") else []
    for folder in map(Path, [*candidates, *PRINCETON_DIRS]):
        if all((folder / name).is_file() for name in REQUIRED_FILES):
            return folder
    return None


def provision_princeton(folder: Path) -> Path:
    """Copy the Princeton files in ``folder`` under the NLTK data path, writing ``lexnames``."""
    target = nltk_data_dir() / "corpora" / "wordnet"
    staging = target.with_name("wordnet.partial")
    shutil.rmtree(staging, ignore_errors=True)
    staging.mkdir(parents=True)
    for item in folder.iterdir():
        if item.is_file():
            shutil.copy2(item, staging / item.name)
    if not (staging / "lexnames").exists():
        lexnames = resources.files("workbench.knowledge").joinpath("lexnames").read_text()
        (staging / "lexnames").write_text(lexnames)
    shutil.rmtree(target, ignore_errors=True)
    staging.rename(target)
    return target


def find_wordnet(provision: bool = True) -> Path:
    """Return the folder (or zip) NLTK reads WordNet from, provisioning Princeton files if needed.

    Raises ``DataSourceError`` with install instructions when no WordNet is found.
    """
    nltk_data_dir()
    try:
        return Path(str(nltk.data.find("corpora/wordnet")))
    except LookupError:
        pass
    try:  # nltk.download('wordnet') leaves only the zip on some versions
        return Path(str(nltk.data.find("corpora/wordnet.zip")))
    except LookupError:
        pass
    folder = _princeton_dir()
    if folder is None or not provision:
        raise DataSourceError(f"WordNet 3.0 was not found.\n{INSTALL_HINT}")
    return provision_princeton(folder)


class _Reader(WordNetCorpusReader):
    """NLTK's reader without the map from WordNet 3.0 that it builds on opening for its multilingual functions
    (it reads ``index.sense`` twice: about half of the opening time). The workbench reads OMW itself
    (``knowledge.omw``) and never asks NLTK for another language, so nothing reads that map."""

    def map_wn(self, version: str = "wordnet") -> None:
        return None


def open_wordnet() -> WordNetCorpusReader:
    """An NLTK WordNet reader over the provisioned data."""
    path = find_wordnet()
    try:
        if path.suffix == ".zip":
            root = nltk.data.find("corpora/wordnet.zip/wordnet/")
        else:
            root = nltk.data.FileSystemPathPointer(str(path))
        with warnings.catch_warnings():  # "multilingual functions are not available": they are not used
            warnings.filterwarnings("ignore", "The multilingual functions", UserWarning)
            return _Reader(root, None)
    except (OSError, ValueError, LookupError) as err:
        raise DataSourceError(
            f"WordNet at {path} could not be read ({err}). Delete that folder and run "
            f"`workbench data setup` again.\n{INSTALL_HINT}"
        ) from err


# The first noun synset of "dog" moved in every release: the files' own content tells 3.0 from 3.1 whatever their
# header or folder says. Open English WordNet names itself in its header ("English WordNet 2021").
VERSION_BY_DOG = {"02084071": "3.0", "02086723": "3.1"}
_OEWN = re.compile(r"English WordNet\W+(\d{4}(?:\.\d+)?)")


def _read_member(path: Path, name: str) -> str:
    """The text of one WordNet file, ``name``, from the folder or zip ``path``."""
    if path.is_file():
        with zipfile.ZipFile(path) as archive:
            member = next((item for item in archive.namelist() if item.rsplit("/", 1)[-1] == name), None)
            if member is None:
                raise DataSourceError(f"{path} holds no {name}; it is not a WordNet zip.\n{INSTALL_HINT}")
            return io.TextIOWrapper(archive.open(member), encoding="utf-8", errors="replace").read()
    return (path / name).read_text(encoding="utf-8", errors="replace")


def wordnet_version(path: Path | None = None) -> str:
    """The release of the WordNet at ``path`` (folder or zip), read from its content: ``"3.0"``, ``"3.1"`` or
    ``"oewn<year>"``; anything else raises ``DataSourceError`` naming what was found.

    >>> wordnet_version()  # doctest: +SKIP
    '3.0'
    """
    path = path or find_wordnet()
    header = "".join(line for line in _read_member(path, "data.noun").splitlines(True)[:60] if line.startswith("  "))
    oewn = _OEWN.search(header)
    if oewn:
        return f"oewn{oewn.group(1)}"  # no "-": the cache folder's name splits at them
    index = _read_member(path, "index.noun")
    start = index.find("\ndog n ") + 1
    dog = index[start : index.find("\n", start)].split() if start else []
    offsets = [field for field in dog if len(field) == 8 and field.isdigit()]
    if offsets and offsets[0] in VERSION_BY_DOG:
        return VERSION_BY_DOG[offsets[0]]
    claimed = re.search(r"WordNet (\d+\.\d+)", header)
    raise DataSourceError(
        f"the WordNet at {path} is no release the workbench knows (its header says "
        f"{claimed.group(0) if claimed else 'no version'}, the first synset of 'dog' is "
        f"{offsets[0] if offsets else 'missing'}; 3.0 has 02084071, 3.1 02086723, Open English WordNet names itself). "
        f"Point WORDNET_DIR at a Princeton 3.0/3.1 or Open English WordNet dict folder.\n{INSTALL_HINT}"
    )


def checksum(path: Path | None = None) -> str:
    """A short sha256 over the WordNet data files, so caches follow the data they came from."""
    path = path or find_wordnet()
    digest = hashlib.sha256()
    files = [path] if path.is_file() else [path / name for name in REQUIRED_FILES]
    for file in files:
        with open(file, "rb") as handle:
            for block in iter(lambda: handle.read(1 << 20), b""):
                digest.update(block)
    return digest.hexdigest()[:16]


def _surface(example: str, lemmas: list[str], pos: str, reader: WordNetCorpusReader) -> str:
    """The form in which one of ``lemmas`` appears in ``example`` (inflected or not); '' if none."""
    lowered = example.lower()
    for lemma in lemmas:
        if " " in lemma and lemma.lower() in lowered:
            start = lowered.index(lemma.lower())
            return example[start : start + len(lemma)]
    wanted = {lemma.lower() for lemma in lemmas}
    tag = "a" if pos == "s" else pos
    for token in _TOKEN.findall(example):
        low = token.lower()
        if low in wanted or reader.morphy(low, tag) in wanted:
            return token
    return ""


def build_graph(reader: WordNetCorpusReader | None = None):
    """Read every WordNet synset into a ``Graph`` (slow: ~10 s; use ``load_graph`` for the cache)."""
    from workbench.knowledge.graph import CONCEPTS_SCHEMA, EXAMPLES_SCHEMA, ISA_SCHEMA, LEMMAS_SCHEMA, Graph
    from workbench.progress import ProgressBar

    reader = reader or open_wordnet()
    synsets = list(reader.all_synsets())
    ids = {synset.name(): index for index, synset in enumerate(synsets)}
    concepts, lemmas, examples, isa = [], [], [], []
    for index, synset in enumerate(ProgressBar(synsets, desc="WordNet synsets", unit="synset", leave=False)):
        names = [name.replace("_", " ") for name in synset.lemma_names()]
        concepts.append((index, synset.name(), synset.pos(), synset.definition(), synset.lexname()))
        lemmas.extend((index, rank, name) for rank, name in enumerate(names))
        examples.extend(
            (index, rank, text, _surface(text, names, synset.pos(), reader))
            for rank, text in enumerate(synset.examples())
        )
        isa.extend((index, ids[parent.name()], False) for parent in synset.hypernyms())
        isa.extend((index, ids[parent.name()], True) for parent in synset.instance_hypernyms())
    frame = lambda rows, schema: pl.DataFrame(rows, schema=schema, orient="row")  # noqa: E731
    return Graph(
        source="wordnet",
        version=wordnet_version(),
        checksum=checksum(),
        concepts=frame(concepts, CONCEPTS_SCHEMA),
        lemmas=frame(lemmas, LEMMAS_SCHEMA),
        examples=frame(examples, EXAMPLES_SCHEMA),
        isa=frame(isa, ISA_SCHEMA),
    )
