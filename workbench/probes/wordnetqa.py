"""WordNetQA: definitions, hypernymy, hyponymy and synonymy questions from WordNet (SPEC §2)."""

import random
from bisect import bisect_left, bisect_right
from collections import defaultdict
from collections.abc import Callable
from functools import cached_property
from itertools import accumulate, repeat

from workbench.distractors import N_DISTRACTORS, branch_of, draw_disjoint, families, family_sizes, same_text
from workbench.knowledge.graph import Graph, Taxonomy
from workbench.probes.assemble import Draft
from workbench.probes.spec import ProbeSpec, kind_of
from workbench.probes.templates import fill, load_templates
from workbench.progress import ProgressBar

MAX_SYNONYMS = 2  # lemmas shown in "(or a, b)" after a concept's first lemma
TAXONOMY_POS = ("n", "v")


class _Lexicon:
    """Per-concept text lookups over a graph's frames, by integer id."""

    def __init__(self, graph: Graph) -> None:
        self.names = graph.names
        self.pos = graph.concepts["pos"].to_list()
        self.gloss = graph.concepts["gloss"].to_list()
        self.lemmas: list[list[str]] = [[] for _ in self.names]
        self.all_lemmas: list[list[str]] = [[] for _ in self.names]  # as WordNet lists them, case variants too
        for concept, lemma in zip(graph.lemmas["id"].to_list(), graph.lemmas["lemma"].to_list()):
            self.all_lemmas[concept].append(lemma)
            if lemma.lower() not in (known.lower() for known in self.lemmas[concept]):  # Moon, moon
                self.lemmas[concept].append(lemma)
        self.folded_lemmas = [frozenset(lemma.lower() for lemma in lemmas) for lemmas in self.lemmas]
        self.complete = all(self.lemmas)  # False for a language's graph (knowledge.omw): a concept without words
        examples: dict[int, list[tuple[str, str]]] = defaultdict(list)
        usable = graph.examples.filter(graph.examples["surface"] != "")
        for concept, text, form in zip(
            usable["id"].to_list(), usable["example"].to_list(), usable["surface"].to_list()
        ):
            examples[concept].append((text, form))
        self.examples = dict(examples)  # shared by the builds of one graph: a lookup must not add a key
        self.by_pos: dict[str, list[int]] = defaultdict(list)
        for concept, pos in enumerate(self.pos):
            self.by_pos["a" if pos == "s" else pos].append(concept)

    @cached_property
    def folded_glosses(self) -> list[str]:
        """Each concept's definition as two definitions are compared: stripped, lowercase."""
        return [gloss.strip().lower() for gloss in self.gloss]

    def pool(self, concept: int) -> list[int]:
        """Concepts of the same part of speech (adjective satellites count as adjectives)."""
        pos = self.pos[concept]
        return self.by_pos["a" if pos == "s" else pos]

    def choice_fields(self, concept: int, hide_defined: bool = False) -> dict[str, str]:
        """The fields a choice template fills; with ``hide_defined``, the lemmas ``shown_lemmas`` keeps."""
        lemmas = self.shown_lemmas(concept) if hide_defined else self.lemmas[concept]
        others = lemmas[1 : 1 + MAX_SYNONYMS]
        return {
            "word": lemmas[0] if lemmas else "",
            "synonyms": f" (or {', '.join(others)})" if others else "",
            "event": "",
            "definition": self.gloss[concept],
            "lemmas": ", ".join(lemmas),
        }

    def named_fields(self, concept: int, seed: str) -> dict[str, str]:
        """``choice_fields`` as the released taxonomy choices show a concept (rule ``choice_words="name"``): the word
        of its name, lowercase ('victorian'); up to ``MAX_SYNONYMS`` of its other lemmas drawn at random, case kept
        ('(or Victorian)'), by a generator of ``seed`` made only when there are some; and ' event' after a verb's
        words (R&S 2020 Table 2: 'escape event defined as ...')."""
        word = self.names[concept].rsplit(".", 2)[0].replace("_", " ")
        others = [lemma for lemma in self.all_lemmas[concept] if lemma != word]
        shown = random.Random(seed).sample(others, min(MAX_SYNONYMS, len(others))) if others else []
        return {
            **self.choice_fields(concept),
            "word": word,
            "synonyms": f" (or {', '.join(shown)})" if shown else "",
            "event": " event" if self.pos[concept] == "v" else "",
        }

    def shown_lemmas(self, concept: int) -> list[str]:
        """The concept's lemmas but those sharing text with its definition's first clause, case ignored: a word of
        the lemma found in the clause, or a word of the clause (split at spaces, punctuation kept) found in the
        lemma ('time' in 'peacetime'): rule ``hide_defined_lemmas``, which asks nothing about a concept where that
        leaves none."""
        clause = self.gloss[concept].split(";")[0].lower()
        words = clause.split()
        return [
            lemma
            for lemma in self.lemmas[concept]
            if not any(w in clause for w in lemma.lower().split()) and not any(w in lemma.lower() for w in words)
        ]


_LEXICONS: dict[str, _Lexicon] = {}


def _lexicon(graph: Graph) -> _Lexicon:
    """The ``_Lexicon`` of ``graph``, kept for the graph last asked about: the probes of one graph built in a row
    (``--probe all``) read it once."""
    if graph.key not in _LEXICONS:
        _LEXICONS.clear()
        _LEXICONS[graph.key] = _Lexicon(graph)
    return _LEXICONS[graph.key]


def pos_key(pos: str) -> str:
    """A part of speech as ``pos_mix`` counts it: adjective satellites are adjectives."""
    return "a" if pos == "s" else pos


def eligible(lexicon: _Lexicon, spec: ProbeSpec, taxonomy: Taxonomy) -> list[int]:
    """Concepts a probe can ask about: with a usable example (unless ``examples_only`` is off) and the probe's
    other needs (a gold ISA link, lemmas)."""
    found = sorted(lexicon.examples) if spec.examples_only else range(len(lexicon.names))
    if not lexicon.complete:  # a language's graph: ask only about concepts with words in it
        found = [c for c in found if lexicon.lemmas[c]]
    if spec.probe in ("hypernymy", "hyponymy"):
        direction = "up" if spec.probe == "hypernymy" else "down"
        found = [c for c in found if lexicon.pos[c] in TAXONOMY_POS and taxonomy.hops(c, direction, 1)]
    if spec.probe == "synonymy":
        found = [c for c in found if len(lexicon.lemmas[c]) >= spec.min_lemmas]
        if spec.hide_defined_lemmas:  # every lemma in the definition: the question would give its answer away
            found = [c for c in found if lexicon.shown_lemmas(c)]
    return list(found)


def askable(graph: Graph, spec: ProbeSpec) -> set[str]:
    """The names of the concepts ``spec``'s probe can ask about in ``graph`` (``eligible``): those a
    ``ProbeSpec.concepts`` may name."""
    lexicon = _lexicon(graph)
    return {lexicon.names[c] for c in eligible(lexicon, spec, graph.taxonomy_for(spec.instance_links))}


def _validity(graph: Graph, lexicon: _Lexicon, probe: str, concept: int):
    """The rule a distractor must pass so that it is never also a right answer (instance links included)."""
    taxonomy = graph.taxonomy
    if probe == "hypernymy":
        ancestors = taxonomy.ancestors(concept)
        return lambda x: x != concept and x not in ancestors
    if probe == "hyponymy":
        return lambda x: x != concept and not taxonomy.is_descendant(x, concept)
    if probe == "definitions":
        folded = lexicon.folded_glosses
        gold = folded[concept]
        return lambda x: x != concept and folded[x] != gold
    own, folded = lexicon.folded_lemmas[concept], lexicon.folded_lemmas
    return lambda x: x != concept and own.isdisjoint(folded[x])


class _Concept:
    """One concept's questions before their distractors are drawn: sentences, golds, distractor families."""

    def __init__(self, build: "_Build", concept: int, mixed: list | None = None) -> None:
        """``mixed``: the concept's ``mixed`` kinds as the build's count drew them (not drawn again)."""
        spec, lexicon, taxonomy = build.spec, build.lexicon, build.taxonomy
        self.concept, self.spec, self.build = concept, spec, build
        self.examples = lexicon.examples.get(concept) or [("", lexicon.lemmas[concept][0])]  # synonymy, no sentence
        if spec.sentences == "lemmas":
            self.units = [("", lemma) for lemma in lexicon.lemmas[concept]]
        else:
            self.units = [self.opening[1]] if spec.sentences == "one" else list(self.examples)
        if mixed is not None:
            self.mixed = mixed
        self.golds = [(0, concept)]
        self.branches: dict[tuple[str, int], Callable[[int], int] | None] = {}  # ``branch``, per option drawn
        if spec.probe in ("hypernymy", "hyponymy"):
            found = _golds(taxonomy, spec, concept, self.rng, None if lexicon.complete else lexicon.lemmas)
            self.golds = [(hops, gold) for hops, gold in found if build.kept(concept, hops, gold)]

    @cached_property
    def kinds(self) -> "_Kinds":
        """The distractor kinds the concept's family sizes allow (shared with every concept they allow the same)."""
        return self.build.kinds_for(self.sizes)

    @property
    def usable(self) -> list[tuple[str, int]]:
        """The options that can give a distractor set: ``random`` and every non-empty family."""
        return self.kinds.usable

    @cached_property
    def opening(self) -> tuple[random.Random, tuple[str, str] | None, str]:
        """The concept's generator and its first draws: the sentence (``sentences="one"``) and the template. Seeded
        on first use: counting a probe that draws neither a sentence nor golds never seeds it."""
        rng = random.Random(f"{self.spec.seed}:{self.spec.probe}:{self.concept}")
        sentence = rng.choice(self.examples) if self.spec.sentences == "one" else None
        return rng, sentence, rng.choice(self.build.template_ids)  # phrasings=1: one template for the whole cluster

    @property
    def rng(self) -> random.Random:
        """The concept's generator, past its ``opening`` draws."""
        return self.opening[0]

    @property
    def template(self) -> str:
        """The template of the concept's questions when ``phrasings`` is 1."""
        return self.opening[2]

    @cached_property
    def is_valid(self) -> Callable[[int], bool]:
        """Whether a candidate may be a distractor (``_validity``; in a language's graph, one with words in it)."""
        rule = _validity(self.build.graph, self.build.lexicon, self.spec.probe, self.concept)
        if self.build.lexicon.complete:
            return rule
        words = self.build.lexicon.lemmas
        return lambda x: bool(words[x]) and rule(x)

    @cached_property
    def families(self) -> dict[tuple[str, int], list[int]]:
        """Each option's candidates (``random``: none of its own); with ``draws="disjoint"`` as WordNet gives them,
        the draw skipping a candidate that would also be right, as it does for a family filtered here."""
        build = self.build
        found = families(build.taxonomy, self.concept, build.options, self.spec.isa_up_skip)
        if self.spec.draws != "disjoint":
            found = {option: [x for x in members if self.is_valid(x)] for option, members in found.items()}
        return {option: found.get(option, []) for option in build.options}

    def branch(self, option: tuple[str, int]) -> Callable[[int], int] | None:
        """With ``one_per_branch``, the option's ``branch_of``, made on the concept's first draw of it."""
        if not self.spec.one_per_branch:
            return None
        if option not in self.branches:
            self.branches[option] = branch_of(self.build.taxonomy, self.concept, *option)
        return self.branches[option]

    def positions(self, option: tuple[str, int], count: int, rng: random.Random) -> list[int] | None:
        """Which of the family's disjoint sets a question's ``count`` sets of ``option`` are, in order: drawn at random
        among all of them (its capacity) for a kind in ``spread_sets``; None for the first ``count``."""
        if option not in self.build.spread:
            return None
        capacity = self.kinds.capacity[self.kinds.usable.index(option)]
        return None if count >= capacity else sorted(rng.sample(range(capacity), count))

    @cached_property
    def sizes(self) -> dict[tuple[str, int], int]:
        """Each family option's number of candidates: with ``draws="disjoint"`` counted without building the
        families (cheap for every concept of the count), else of the filtered ``families``."""
        build = self.build
        if self.spec.draws != "disjoint":
            return {option: len(members) for option, members in self.families.items()}
        return family_sizes(build.taxonomy, self.concept, build.options, self.spec.isa_up_skip)

    @cached_property
    def mixed(self) -> list[list[tuple[tuple[str, int], int]]]:
        """With ``draws="disjoint"`` and ``family_mix``, each question's kinds: as many sets as the plan gives, each
        of a kind drawn from the mix, and a kind keeping at most its ``capacity`` (a set beyond it is not drafted:
        no released family set is random filler only). Drawn with the concept's own generator, so that the count of
        the build's rows and its drafting agree."""
        kinds, questions = self.kinds, len(self.units) * len(self.golds)
        if kinds.cum_weights is None:
            return [[] for _ in range(questions)]
        rng = random.Random(f"{self.spec.seed}:{self.spec.probe}:{self.concept}:kinds")
        mixed = []
        for _ in range(questions):
            drawn = _choice_counts(rng, kinds.cum_weights, kinds.total)
            mixed.append([(kinds.usable[i], min(count, kinds.capacity[i])) for i, count in enumerate(drawn) if count])
        return mixed

    @cached_property
    def per_question(self) -> int:
        """The rows (perturbations) of each question when every question has as many (not with ``family_mix``)."""
        spec = self.spec
        if spec.draws == "sample":
            return len(self.usable) if spec.perturbations is None else min(spec.perturbations, len(self.usable))
        return self.kinds.total

    def rows_of(self, question: int) -> int:
        """The rows (perturbations) of the concept's ``question``-th question: known before any distractor is drawn."""
        if self.spec.draws == "disjoint" and self.spec.family_mix:
            return sum(count for _, count in self.mixed[question])
        return self.per_question

    @property
    def rows(self) -> int:
        """The questions (with perturbations) this concept yields."""
        return sum(self.rows_of(question) for question in range(len(self.units) * len(self.golds)))


class _Kinds:
    """A concept's distractor kinds as its family sizes allow them: the usable options (``random`` and every
    non-empty family), the most sets each gives a question (its capacity, with ``draws="disjoint"``: one random set;
    from a family every disjoint set of four, the last one topped up, so the ceiling of a quarter of the family, at
    most ``max_draws``), the plan and the mix's cumulative weights. One per distinct capacities in a build."""

    def __init__(self, build: "_Build", capacities: tuple[int | float, ...]) -> None:
        self.usable = [option for option, capacity in zip(build.options, capacities) if capacity]
        self.capacity = [capacity for capacity in capacities if capacity]
        weights = [build.weights[option] for option in self.usable]
        self.cum_weights = list(accumulate(weights)) if any(weights) else None
        self.plan = _plan(self.usable, self.capacity, build.spec.perturbations)
        self.total = sum(count for _, count in self.plan)


def _plan(
    usable: list[tuple[str, int]], capacity: list[int | float], perturbations: int | None
) -> list[tuple[tuple[str, int], int]]:
    """With ``draws="disjoint"``, how many sets each usable kind gives a question: its capacity, family by family in
    order, until the question has ``perturbations`` family sets."""
    plan, left = [], perturbations if perturbations is not None else float("inf")
    for option, most in zip(usable, capacity):
        count = most if option[0] == "random" else min(most, left)
        if count > 0:
            plan.append((option, int(count)))
            left -= 0 if option[0] == "random" else count
    return plan


class _Build:
    """The settings, lookups and sampled rows of one WordNetQA build."""

    def __init__(self, graph: Graph, spec: ProbeSpec) -> None:
        self.graph, self.spec = graph, spec
        self.lexicon = _lexicon(graph)
        self.templates = load_templates(spec.probe, spec.templates)
        self.template_ids = list(self.templates.questions)
        self.taxonomy = graph.taxonomy_for(spec.instance_links)
        self.options = tuple(spec.distractor_options())
        self.weights = {option: spec.weight_of(*option) for option in self.options}  # looked up per concept
        self.caps = {option: None if option[0] == "random" else spec.draws_of(*option) for option in self.options}
        self.spread = {option for option in self.options if kind_of(*option) in spec.spread_sets}
        self.direction = "up" if spec.probe == "hypernymy" else "down"
        self.concepts = eligible(self.lexicon, spec, self.taxonomy)
        self.keep = _hop_keep(self.taxonomy, self.lexicon, spec, self.concepts, self.direction)
        self.kinds: dict[tuple[int | float, ...], _Kinds] = {}
        self.texts: dict[int, str] = {}
        self.gold_texts: dict[int, str] = {}
        self.keys: dict[int, str] = {}

    def kinds_for(self, sizes: dict[tuple[str, int], int]) -> _Kinds:
        """The ``_Kinds`` of a concept with families of these ``sizes`` (one per distinct capacities)."""
        capacities = tuple(
            [1 if cap is None else min(-(-sizes[option] // N_DISTRACTORS), cap) for option, cap in self.caps.items()]
        )
        kinds = self.kinds.get(capacities)
        if kinds is None:
            kinds = self.kinds[capacities] = _Kinds(self, capacities)
        return kinds

    def kept(self, concept: int, hops: int, gold: int) -> bool:
        """Whether ``hop_mix`` keeps this gold's questions (the same answer in every pass of the build)."""
        if not self.keep:
            return True
        chance = self.keep[hops]
        if chance >= 1.0 or chance <= 0.0:  # a draw in [0, 1) could not change the answer: none is made
            return chance >= 1.0
        return random.Random(f"{self.spec.seed}:{self.spec.probe}:{concept}:{gold}:hops").random() < chance

    def text_of(self, concept: int) -> str:
        text = self.texts.get(concept)
        if text is None:
            if self.spec.choice_words == "name":  # one draw of the shown lemmas per concept and build
                fields = self.lexicon.named_fields(concept, f"{self.spec.seed}:{self.spec.probe}:{concept}:words")
            else:
                fields = self.lexicon.choice_fields(concept)
            text = self.texts[concept] = fill(self.templates.choice, fields)
        return text

    def gold_text_of(self, concept: int) -> str:
        """The choice text of ``concept`` as a gold answer: ``text_of``, or with ``hide_defined_lemmas`` the lemmas
        its definition does not give away."""
        if not self.spec.hide_defined_lemmas:
            return self.text_of(concept)
        text = self.gold_texts.get(concept)
        if text is None:
            text = self.gold_texts[concept] = fill(self.templates.choice, self.lexicon.choice_fields(concept, True))
        return text

    def key_of(self, concept: int) -> str:
        """``same_text`` of the concept's choice text, the form two choices are compared in (kept)."""
        key = self.keys.get(concept)
        if key is None:
            key = self.keys[concept] = same_text(self.text_of(concept))
        return key


def _hop_keep(
    taxonomy: Taxonomy, lexicon: _Lexicon, spec: ProbeSpec, concepts: list[int], direction: str
) -> dict[int, float]:
    """The chance that a gold at each hop count is kept, so that the hops hold their ``hop_mix`` shares of the
    golds: the hop count scarcest for its share is kept whole, the others thinned (empty: keep every gold)."""
    if not spec.hop_mix or spec.probe not in ("hypernymy", "hyponymy"):
        return {}
    available: dict[int, int] = defaultdict(int)
    for concept in concepts:
        by_hops: dict[int, int] = defaultdict(int)
        for hops in taxonomy.hops(concept, direction, spec.max_hops).values():
            by_hops[hops] += 1
        for hops, found in by_hops.items():
            available[hops] += min(spec.gold_cap, found)
    shares = {hops: share for hops, share in spec.hop_mix if share > 0 and available[hops]}
    scale = min(available[hops] / share for hops, share in shares.items())
    return {hops: min(1.0, shares.get(hops, 0.0) * scale / available[hops]) if available[hops] else 0.0
            for hops in spec.hop_range}  # fmt: skip


def _golds(
    taxonomy: Taxonomy, spec: ProbeSpec, concept: int, rng: random.Random, words: list[list[str]] | None = None
) -> list[tuple[int, int]]:
    """(hops, gold concept) pairs: up to ``spec.gold_cap`` ancestors/descendants at each exact distance k (with
    ``words``, a language's lemmas by concept, only those it has words for)."""
    if spec.probe not in ("hypernymy", "hyponymy"):
        return [(0, concept)]
    direction = "up" if spec.probe == "hypernymy" else "down"
    by_hops: dict[int, list[int]] = defaultdict(list)
    for node, hops in taxonomy.hops(concept, direction, spec.max_hops).items():
        by_hops[hops].append(node)
    golds = []
    for k in spec.hop_range:
        found = sorted(node for node in by_hops.get(k, ()) if words is None or words[node])
        golds.extend((k, gold) for gold in sorted(rng.sample(found, min(spec.gold_cap, len(found)))))
    return golds


def _sampled(build: _Build, progress: bool) -> tuple[list[int], dict[int, set[int]] | None, dict[int, list]]:
    """The concepts to draft; per concept, the indices of its rows kept (0: its first row; None: every row); and
    per concept, its ``_Concept.mixed`` kinds where the count drew them.

    With ``size``, the rows are a uniform sample of ``size`` of every row the settings give, counted concept by
    concept in drafting order, so the whole set is a random sample of its full population, as the paper's
    (docs/REPRODUCTION.md); with ``size_unit="question"`` a sample of whole questions, each with every row of its.
    Named ``concepts`` get every row of theirs (no sample): what a user picked is shown whole.
    """
    spec = build.spec
    wanted = spec.chosen({build.lexicon.names[c]: c for c in build.concepts})
    if wanted is not None or spec.size is None:
        return (build.concepts if wanted is None else sorted(wanted)), None, {}
    offsets, total, mixed = {}, 0, {}
    questions: list[tuple[int, int, int]] = []  # size_unit="question": (concept, start, end) of each question's rows
    counting = ProgressBar(build.concepts, desc=f"{spec.probe} counting", unit="concept", disable=not progress,
                           leave=False)  # fmt: skip
    for concept in counting:
        offsets[concept] = total
        item = _Concept(build, concept)
        if spec.size_unit == "question":
            for question in range(len(item.units) * len(item.golds)):
                start, total = total, total + item.rows_of(question)
                questions.append((concept, start, total))
        else:
            total += item.rows
        if spec.draws == "disjoint" and spec.family_mix:  # kept for the drafting, which would draw them again
            mixed[concept] = item.mixed
    rng = random.Random(f"{spec.seed}:{spec.probe}:size")
    order, starts = list(offsets), list(offsets.values())
    if spec.size_unit == "row":
        spans = list(zip(order, starts, [*starts[1:], total]))
    else:
        spans = [(concept, start, end) for concept, start, end in questions if end > start]
    sample = _sample_spans if spec.size_unit == "row" else _whole_spans
    rows = set()  # each part of speech's share of the sample, drawn among that part of speech's rows or questions
    for pos, share in spec.pos_mix or ((None, 1.0),):
        mine = [(a, b) for c, a, b in spans if pos is None or pos_key(build.lexicon.pos[c]) == pos]
        rows.update(sample(rng, mine, round(spec.size * share)))
    kept: dict[int, set[int]] = defaultdict(set)
    for row in rows:
        concept = order[bisect_right(starts, row) - 1]
        kept[concept].add(row - offsets[concept])
    return sorted(kept), kept, {concept: mixed[concept] for concept in kept if concept in mixed}


def _choice_counts(rng: random.Random, cum_weights: list[float], k: int) -> list[int]:
    """How often each index comes up in ``rng.choices(range(len(cum_weights)), cum_weights=cum_weights, k=k)``,
    with the same ``k`` calls of ``rng.random`` and so the same counts, but no list of the draws: the draws sorted,
    then cut where the cumulative weights lie (``choices`` picks index i for a draw x when cum_weights[i-1] <= x *
    total < cum_weights[i])."""
    total, random_ = cum_weights[-1] + 0.0, rng.random
    draws = sorted([random_() * total for _ in repeat(None, k)])
    counts, below = [], 0
    for bound in cum_weights[:-1]:
        at = bisect_left(draws, bound)
        counts.append(at - below)
        below = at
    counts.append(k - below)
    return counts


def _sample_spans(rng: random.Random, spans: list[tuple[int, int]], k: int) -> list[int]:
    """``k`` row indices drawn uniformly (without replacement) from the union of the [start, end) ``spans``."""
    cumulative = list(accumulate(end - start for start, end in spans))
    total = cumulative[-1] if cumulative else 0
    picked = []
    for local in rng.sample(range(total), min(k, total)):
        span = bisect_right(cumulative, local)
        picked.append(spans[span][0] + local - (cumulative[span - 1] if span else 0))
    return picked


def _whole_spans(rng: random.Random, spans: list[tuple[int, int]], k: int) -> list[int]:
    """``k`` row indices from whole [start, end) ``spans`` drawn at random (the last one drawn cut to make ``k``)."""
    picked: list[int] = []
    for start, end in rng.sample(spans, len(spans)):
        if len(picked) >= k:
            break
        picked.extend(range(start, min(end, start + k - len(picked))))
    return picked


def draft_wordnetqa(graph: Graph, spec: ProbeSpec, progress: bool = True) -> list[Draft]:
    """Draft every question of a WordNetQA probe (definitions, hypernymy, hyponymy, synonymy)."""
    build = _Build(graph, spec)
    concepts, rows, mixed = _sampled(build, progress)
    drafts: list[Draft] = []
    for concept in ProgressBar(concepts, desc=f"{spec.probe} questions", unit="concept", disable=not progress,
                               leave=False):  # fmt: skip
        item = _Concept(build, concept, mixed.get(concept))
        drafts += _drafts(build, item, None if rows is None else rows[concept])
    return drafts


def _drafts(build: _Build, item: _Concept, rows: set[int] | None) -> list[Draft]:
    """One concept's questions, each perturbation a row; with ``rows``, only the rows sampled (by their index among
    the concept's rows)."""
    spec, lexicon, rng = build.spec, build.lexicon, item.rng
    names, concept = lexicon.names, item.concept
    pool = lexicon.pool(concept)
    drafts, index, question = [], 0, -1
    for context, word in item.units:
        for hops, gold in item.golds:
            question += 1
            start, index = index, index + item.rows_of(question)
            if rows is not None and not any(start <= row < index for row in rows):
                continue  # none of this question's rows is in the sample
            chain = build.taxonomy.path(concept, gold, build.direction) if hops else [concept]
            chain_names = tuple(map(names.__getitem__, chain))
            gold_text = build.gold_text_of(gold)
            phrasing = (
                [item.template]
                if spec.phrasings == 1
                else rng.sample(build.template_ids, min(spec.phrasings, len(build.template_ids)))
            )
            values = {"context": context, "word": word, "definition": lexicon.gloss[concept]}
            questions = [fill(build.templates.questions[template], values) for template in phrasing]
            valid = item.is_valid if gold == concept else lambda x: item.is_valid(x) and x != gold
            for (family, depth), count in _kinds(spec, item, rng, question):
                wanted = _wanted(rows, start, count)
                start += count
                if not any(wanted):
                    continue
                positions = item.positions((family, depth), count, rng)
                dealt = draw_disjoint(
                    rng,
                    item.families[(family, depth)],
                    pool,
                    valid,
                    build.key_of,
                    {gold_text, build.text_of(gold)},
                    _placed(wanted, positions),
                    branch=item.branch((family, depth)),
                )
                for picked in dealt if positions is None else [dealt[position] for position in positions]:
                    if picked is None:
                        continue
                    which = rng.randrange(len(phrasing)) if len(phrasing) > 1 else 0
                    drafts.append(
                        Draft(
                            concept=names[concept],
                            pos=lexicon.pos[concept],
                            word=word,
                            context=context,
                            template=phrasing[which],
                            question=questions[which],
                            gold=gold_text,
                            distractors=tuple(map(build.text_of, picked.concepts)),
                            gold_concept=names[gold],
                            hops=hops,
                            chain=chain_names,
                            family=family,
                            depth=depth,
                            distractor_concepts=tuple(map(names.__getitem__, picked.concepts)),
                            n_random_fill=0 if family == "random" else picked.n_random_fill,
                        )
                    )
    return drafts


def _placed(wanted: list[bool], positions: list[int] | None) -> list[bool]:
    """``wanted`` (one entry per set a question takes) spread over the family's sets at ``positions`` (None: the
    first sets)."""
    if positions is None:
        return wanted
    keep = [False] * (positions[-1] + 1)
    for position, kept in zip(positions, wanted):
        keep[position] = kept
    return keep


def _wanted(rows: set[int] | None, start: int, count: int) -> list[bool]:
    """Which of the ``count`` rows from index ``start`` the sample keeps (every row without a sample)."""
    if rows is None:
        return [True] * count
    wanted = [False] * count
    for row in rows:
        if start <= row < start + count:
            wanted[row - start] = True
    return wanted


def _kinds(spec: ProbeSpec, item: _Concept, rng: random.Random, question: int) -> list[tuple[tuple[str, int], int]]:
    """The distractor kinds of one question's perturbations and how many sets each gives: with ``draws="disjoint"``
    ``_Concept.mixed`` (with ``family_mix``) or ``_Kinds.plan``; else one set of every usable kind
    (``perturbations=None``) or of ``perturbations`` of them without replacement."""
    if spec.draws == "disjoint":
        return item.mixed[question] if spec.family_mix else item.kinds.plan
    usable = item.usable
    if spec.perturbations is not None:
        usable = sorted(rng.sample(usable, min(spec.perturbations, len(usable))), key=usable.index)
    return [(option, 1) for option in usable]
