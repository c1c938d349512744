"""The offline ``QuestionRouter``: linking, ontology, grammar.

No model, no I/O. The order of decisions:

1. **unsafe**: a request to change or delete stored data, to reveal the system (prompt,
   credentials) or to run commands is refused.
2. **out of scope**, answered without the stores when
   - the question asks for something else than a question about documents (a poem);
   - it names a product the catalog has, but outside ``docs=`` (``missing`` names it);
   - it names nothing the scope knows: no product, no ontology property, and none of its
     words in a product name or a class label of the ontology ("Who founded SAP?"); a
     question scoped to a few documents is about them if it has any word at all;
   - it asks about a property of a product nobody knows: its name holds words that are
     in no product name and not in the ontology's vocabulary ("the boiling point of
     Glorbium Nitrate": ``missing`` names it).
3. Otherwise the linguistic analysis (``analyse``): products,
   properties, intent. A question scoped with ``docs=`` that names no product is about
   the scoped documents (up to ``SCOPE_AS_SUBJECT`` of them). One that names no product,
   asks no question over the collection and sees more documents than that is not
   answered from one document's passage ("How is calomel classified for transport?" over
   434 sheets, none named so): the answer says which documents it could mean.
4. A follow-up that names no product takes the products of the latest earlier user turn
   that named one.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import replace
from functools import lru_cache

from hybrid_rag.ask._collection import every_document
from hybrid_rag.ask._collection_words import capitalised, collection_phrases, joined_codes
from hybrid_rag.ask.analysis import QuestionAnalysis, ScopeView, analyse, pair_question
from hybrid_rag.ask.grammar import creative_request, is_month, unsafe_request
from hybrid_rag.ask.linking import HEAD_SHARE, SubjectMatch, spelled_as
from hybrid_rag.models import ChatMessage
from hybrid_rag.ontology import document_model
from hybrid_rag.protocols import Ontology, OntologyMatching
from hybrid_rag.text import STOPWORDS, tokens
from hybrid_rag.units import currency_code, currency_names_as_codes

__all__ = ["SCOPE_AS_SUBJECT", "OfflineRouter"]

SCOPE_AS_SUBJECT = 10
"""A question scoped to at most this many documents that names none is about all of them."""

_REFUSE = (
    "I can only answer questions about the documents: I do not change, delete or reveal "
    "stored data or the system."
)
_CREATIVE = "I answer questions about the documents; writing other texts is outside that."
_UNRELATED = "Not found in the documents: they do not cover this question."
_NAMELESS = (
    "Not answered: the question names none of the {n} documents in scope, and one "
    "document's passage would not answer it for the others. Name the product or document "
    'it is about, or ask about all of them ("Which ...", "How many ...").'
)
_GRAMMAR = frozenset(
    [
        "please",
        "can",
        "could",
        "would",
        "will",
        "should",
        "shall",
        "may",
        "might",
        "must",
        "tell",
        "give",
        "show",
        "list",
        "name",
        "find",
        "say",
        "says",
        "said",
        "state",
        "stated",
        "know",
        "anything",
        "any",
        "some",
        "every",
        "each",
        "all",
        "there",
        "here",
        "much",
        "many",
    ]
)


class OfflineRouter:
    """The default router: deterministic, offline, no LLM call (see the module docstring).

    Example:
        >>> from hybrid_rag.ask.route import OfflineRouter
        >>> router = OfflineRouter()
    """

    name = "offline"

    async def route(
        self,
        question: str,
        *,
        scope: ScopeView,
        history: Sequence[ChatMessage] = (),
    ) -> QuestionAnalysis:
        """The analysis the chains run on (pure; no I/O)."""
        return self.route_sync(question, scope=scope, history=history)

    def route_sync(
        self,
        question: str,
        *,
        scope: ScopeView,
        history: Sequence[ChatMessage] = (),
    ) -> QuestionAnalysis:
        """``route`` without an event loop."""
        if unsafe_request(question):
            return _direct(question, "unsafe", _REFUSE)
        if creative_request(question):
            return _direct(question, "out_of_scope", _CREATIVE)
        a = analyse(question, index=scope.subjects, ontology=scope.ontology)
        if a.collection:  # its names are values to look for, not documents to link
            return _collection_route(question, a, scope)
        if not a.subjects and history:
            a = _follow_up(a, history, scope)
        missing = _outside_scope(question, a, scope)
        if missing:
            names = _join(missing)
            verb = "is" if len(missing) == 1 else "are"
            return replace(
                _direct(
                    question,
                    "out_of_scope",
                    f"Not found: {names} {verb} not among the documents in scope.",
                ),
                missing=tuple(missing),
            )
        if a.subjects and (compound := _of_compound(question, a, scope)) is not None:
            return replace(  # "sugar of lead" names no lead document: a name none prints
                _direct(question, "out_of_scope", f"Not found: no document is about {compound}."),
                missing=(compound,),
                unlinked=(compound,),
            )
        near = (
            (_near_namesake(question, a, scope) or _other_namesake(question, a, scope))
            if a.subjects
            else None
        )
        if near is not None:  # the supervisor looks for it on first pages and file names
            return replace(
                _direct(question, "out_of_scope", f"Not found: no document is about {near}."),
                missing=(near,),
                unlinked=(near,),
            )
        if _mentions(a.subjects) == 1 and pair_question(question):
            other = _unknown_name(question, scope)  # "Do A and <unknown> ... the same ...?"
            if other is not None:
                return replace(
                    _direct(question, "out_of_scope", f"Not found: no document is about {other}."),
                    missing=(other,),
                    unlinked=(other,),
                )
        if not a.subjects:
            unknown = _unknown_name(question, scope) or (
                None if scope.scoped else _unlinked_name(question, scope)
            )
            if unknown is not None:  # the supervisor looks for it in the documents' text
                return replace(
                    _direct(
                        question, "out_of_scope", f"Not found: no document is about {unknown}."
                    ),
                    missing=(unknown,),
                    unlinked=(unknown,),
                )
            about_scope = scope.scoped and 0 < len(scope.doc_ids) <= SCOPE_AS_SUBJECT
            if not a.properties and not _known_words(question, scope, scoped=about_scope):
                return _direct(question, "out_of_scope", _UNRELATED)
            if scope.scoped and 0 < len(scope.doc_ids) <= SCOPE_AS_SUBJECT:
                a = _about_scope(a, scope)
            elif len(scope.doc_ids) > SCOPE_AS_SUBJECT:  # one of many: which one?
                reason = _NAMELESS.format(n=len(scope.doc_ids))
                return replace(_direct(question, "out_of_scope", reason), unnamed=True)
        return a

    def __repr__(self) -> str:
        return "OfflineRouter()"


def _collection_route(question: str, a: QuestionAnalysis, scope: ScopeView) -> QuestionAnalysis:
    """A collection question, unless it names what no document prints, or has no word
    the ontology or the documents know ("made of bronze": the words are looked up by the
    supervisor first; ``collection`` stays set, so printed words are terms to look for)."""
    unknown = _unknown_name(question, scope)
    known = _ontology_words(scope.ontology) | _property_words(scope.ontology) | STOPWORDS
    known |= a.kind_words  # with the words of a named set ("cobalt SDSs")
    known |= set(tokens(a.period.said)) if a.period is not None else set()  # "December 2021"
    words = [t for t in tokens(joined_codes(unknown or "")) if not any(c.isdigit() for c in t)]
    if unknown is not None and any(t not in known and not is_month(t) for t in words):
        reason = f"Not found: no document is about {unknown}."  # "Hazard Class 2B" is a value
        out = _direct(question, "out_of_scope", reason)
        return replace(out, missing=(unknown,), unlinked=(unknown,), collection=True)
    if (stray := _stray_name(question, a, scope)) is not None:
        reason = (
            f"Not answered: no set of documents here is called '{stray}', and taken "
            "over every document the answer would be about others. Ask which documents "
            f"mention {stray}."
        )
        out = _direct(question, "out_of_scope", reason)
        return replace(out, missing=(stray,), unlinked=(stray,), collection=True)
    if (
        a.properties
        or a.period is not None
        or a.named_set
        or a.kind_noun
        or every_document(a)
        or a.concepts
    ):
        return a  # a kind noun ("liquids") is the store's to read (``kg.of_kind``)
    coded = {t for t in tokens(joined_codes(question)) if any(c.isdigit() for c in t)}
    if (_content_words(question) | coded) & scope.printed or _known_words(question, scope):
        return a
    known = _ontology_words(scope.ontology) | _subject_words(scope)
    phrases = [w for w, _whole in collection_phrases(question, a.kind_words)]
    rest = [t for t in max(phrases, key=len, default=()) if t not in known]
    out = _direct(question, "out_of_scope", _UNRELATED)  # unless the documents print them:
    return replace(out, unlinked=tuple(rest), collection=True) if rest else out


_SCALE_NAMES = frozenset(["celsius", "fahrenheit", "kelvin", "centigrade"])


def _stray_name(question: str, a: QuestionAnalysis, scope: ScopeView) -> str | None:
    """A name the question gives that an extreme over the whole scope would leave aside
    ("the most recently revised ExxonMobil sheet" when no set is called so): a word
    capitalised past the question's start that is no word of the ontology, of the asked
    properties, of a kind or a concept, nor a unit, month or currency; ``None`` for an
    extreme over a set, and for any other question."""
    if a.intent not in ("min", "max") or a.named_set or a.kind_set or a.kind_noun:
        return None
    known = _ontology_words(scope.ontology) | _property_words(scope.ontology) | STOPWORDS
    known |= _GRAMMAR | a.kind_words | a.named_words
    known |= {w for said in a.concept_words for w in tokens(said)}
    for word in capitalised(question):
        toks = [t for t in tokens(word) if t.isalpha()]
        if not toks or any(_known(t, known) for t in toks):
            continue
        if currency_code(word) or is_month(word) or word in _SCALE_NAMES:
            continue
        said = (w.strip(".,;:?!()\"'") for w in question.split())
        return next((w for w in said if w.lower() == word), word)  # as written
    return None


def _direct(question: str, intent: str, reason: str) -> QuestionAnalysis:
    return QuestionAnalysis(question, (), (), intent, reason=reason)  # type: ignore[arg-type]


def _follow_up(
    a: QuestionAnalysis, history: Sequence[ChatMessage], scope: ScopeView
) -> QuestionAnalysis:
    """A follow-up inherits the products of the latest user turn that named one."""
    for turn in reversed([m.content for m in history if m.role == "user"]):
        prev = analyse(turn, index=scope.subjects, ontology=scope.ontology)
        if prev.subjects:
            names = "; ".join(p.label for p in prev.subjects)
            expanded = analyse(
                f"{a.question} ({names})", index=scope.subjects, ontology=scope.ontology
            )
            return replace(expanded, question=a.question, search=expanded.topic)
    return a


def _outside_scope(question: str, a: QuestionAnalysis, scope: ScopeView) -> list[str]:
    """Names of catalogued products the question names that are outside ``docs=``."""
    if not scope.scoped or scope.catalog is None:
        return []
    inside = set(scope.doc_ids)
    explained = {t for p in a.subjects for t in p.matched}
    out = [
        m.label
        for m in scope.catalog.link(question)
        if m.doc_id not in inside and not m.matched <= explained
    ]
    return list(dict.fromkeys(out))


def _about_scope(a: QuestionAnalysis, scope: ScopeView) -> QuestionAnalysis:
    """The scoped documents as the question's products (it named none)."""
    subjects = tuple(
        SubjectMatch(d, scope.subjects.label_of(d) or d, 1.0, frozenset()) for d in scope.doc_ids
    )
    if len(subjects) == 1:
        return replace(a, subjects=subjects)
    names = "; ".join(p.label for p in subjects)  # read the comparison as if they were named
    redone = analyse(f"{a.question} ({names})", index=scope.subjects, ontology=scope.ontology)
    return replace(redone, question=a.question, subjects=subjects, search=a.question)


def _known_words(question: str, scope: ScopeView, *, scoped: bool = False) -> bool:
    """Whether any content word of the question is one the scope or ontology knows.

    A question scoped to a few documents is about them whatever its words, as long as it
    has words at all ("What is 2 + 2?" has none).
    """
    words = _content_words(question)
    if scoped:
        return bool(words)
    return bool(words & (_ontology_words(scope.ontology) | _subject_words(scope)))


def _mentions(subjects: Sequence[SubjectMatch]) -> int:
    """How many names the question gives: documents linked by the same words (an invoice
    and its scanned copy) are one name."""
    return len({m.matched for m in subjects})


def _unknown_name(question: str, scope: ScopeView) -> str | None:
    """A product-like name in the question whose words nobody knows ("Glorbium Nitrate").

    Only capitalised words and words with digits count as name words, so a lower-case
    paraphrase never makes a question out of scope. Words the documents print
    (``ScopeView.printed``: "USD", "ISO") are known.
    """
    known = _ontology_words(scope.ontology) | _subject_words(scope) | STOPWORDS | _GRAMMAR
    known |= _property_words(scope.ontology) | scope.printed
    priced = document_model(scope.ontology).amount is not None
    question = _DEGREES.sub(" ", question)
    question = currency_names_as_codes(question) if priced else question  # "Indian rupees"
    words = _WORD.findall(question)
    for i, w in enumerate(words):
        if i > 0 and _unknown_code(w, words[i - 1], known, scope.ontology):
            return _name_around(question, words, i)
        toks = [t for t in tokens(w) if t.isalpha()]
        if i == 0 or not w[0].isupper() or not toks or any(_known(t, known) for t in toks):
            continue
        if priced and currency_code(w.strip(".,;:?!")):  # "in USD": a currency, no name
            continue
        return _name_around(question, words, i)
    return None


def _known(token: str, known: set[str] | frozenset[str]) -> bool:
    """Whether a word, or the singular of its plural, is known ("SDSs" of "SDS"), or two
    known words written as one ("ExxonMobil" of "Exxon Mobil")."""
    if token in known or (token.endswith("s") and token[:-1] in known):
        return True
    return len(spelled_as((token,), known)) == 2


def _unlinked_name(question: str, scope: ScopeView) -> str | None:
    """A name of two or more name-like words (capitalised, or with digits) that links no
    product although each word is known ("Lead Acetate" while "Lead Nitrate" and "Ethyl
    Acetate" are stored; "Sulfuric Acid 70%" while the 96% is): another product's.

    Words of the ontology's properties and classes do not make a name ("Flash Point").
    """
    vocab = _ontology_words(scope.ontology) | _property_words(scope.ontology)
    plain = vocab | STOPWORDS | _GRAMMAR
    words = _WORD.findall(question)
    for start, end in _name_runs(question):
        named = [t for w in words[start:end] for t in tokens(w) if any(c.isalpha() for c in t)]
        if end - start >= 2 and any(t not in plain for t in named):
            return " ".join(words[start:end]).strip(" ,.?")
    return None


def _near_namesake(question: str, a: QuestionAnalysis, scope: ScopeView) -> str | None:
    """A product the question names by a code no product has, right after words of a
    linked product whose own name has another code: "Examplon Solvent 98X" while only
    "Examplon Solvent 99%" is stored names another product, not that one."""
    known = _subject_words(scope) | _ontology_words(scope.ontology) | STOPWORDS | _GRAMMAR
    words = _WORD.findall(question)
    for i in range(1, len(words)):
        if not _unknown_code(words[i], words[i - 1], known, scope.ontology):
            continue
        before = set(tokens(words[i - 1]))
        for p in a.subjects:
            rest = set(tokens(p.label)) - p.matched
            if before & p.matched and any(c.isdigit() for t in rest for c in t):
                return _name_around(question, words, i)
    return None


def _other_namesake(question: str, a: QuestionAnalysis, scope: ScopeView) -> str | None:
    """A name that holds a linked product's words and a word of its own that no linked
    product's name has: a capitalised word before or among them ("Glycolic Acid 70%
    Solution" while "Sulfuric Acid 70% Solution" is stored) or a strength anywhere in it
    ("Sodium Hydroxide 50% Solution" while the 10N is). Linked on generic words, the
    question names another product."""
    names = set().union(*(scope.subjects.doc_tokens(p.doc_id) for p in a.subjects))
    plain = _ontology_words(scope.ontology) | _property_words(scope.ontology)
    plain |= STOPWORDS | _GRAMMAR
    words = _WORD.findall(question)
    for p in a.subjects:
        full = not set(tokens(p.label)) - p.matched  # every word of the name is said
        # then only a strength that contradicts one of its names' ("NaOH 10N" of the 2N)
        rival = any(_STRENGTH.fullmatch(t) for t in scope.subjects.doc_tokens(p.doc_id) - p.matched)
        for start, end in _name_runs(question):
            run = [tokens(w) for w in words[start:end]]
            hit = [i for i, ts in enumerate(run) if set(ts) & p.matched]
            said = {t for ts in run for t in ts} & p.matched
            if not any(c.isalpha() for t in said for c in t):
                continue  # a bare number ("Category 2") is no name ("2-Propanone")
            if scope.subjects.share(p.doc_id, said) < HEAD_SHARE:
                continue  # only generic words of its name ("Lab Grade") in another name
            for i, ts in enumerate(run):
                own = [t for t in ts if t not in names and t not in plain]
                strength = any(_STRENGTH.fullmatch(t) for t in own)
                word = not full and i < hit[-1] and any(c.isalpha() for t in own for c in t)
                if own and ((strength and (rival or not full)) or word):
                    return " ".join(words[start:end]).strip(" ,.?")
    return None


_STRENGTH = re.compile(r"\d[\d.,]*[a-z%]{0,2}")  # "70", "10n", "0.1m"; not "h2so4"
_WORD = re.compile(r"[\w%][\w%.,'/-]*")
_DEGREES = re.compile(
    r"[°º]\s*[CFK]\b|(?<=\d)\s*(?:deg(?:rees)?\s*)?[FK]\b"
    r"|(?:\bdegrees?\s+)?\b(?:Fahrenheit|Celsius|Kelvin)\b",
    re.I,
)
"""A temperature's unit ("100 °F", "500 K"): no name."""
_BREAK = re.compile(r"[;:()\[\]\"'\u2018\u2019\u201c\u201d]")  # between words: a new name


def _name_runs(question: str) -> list[tuple[int, int]]:
    """Spans (over ``_WORD`` matches) of name-like words (capitalised, or with digits),
    the first word excepted; punctuation other than a comma or a period ends a span
    ("LD50): Sodium Fluoride", "'Warning': Tannic Acid; Lauric Acid" are three names),
    and so does the end of a sentence ("... Pump Manual. What ...": a period after a word
    of more than three letters; "Co." or "Inc." go on).
    """
    out: list[tuple[int, int]] = []
    start: int | None = None
    prev_end = 0
    matches = list(_WORD.finditer(question))
    for i, m in enumerate([*matches, None]):
        w = "" if m is None else m.group(0)
        core = w.strip(",.'")
        namey = i > 0 and bool(core) and (core[0].isupper() or any(c.isdigit() for c in core))
        gap = "" if m is None else question[prev_end : m.start()]
        before = matches[i - 1].group(0) if i > 0 else ""
        broken = bool(_BREAK.search(gap)) or before.endswith("'") or _sentence_end(before)
        if start is not None and (not namey or broken):
            out.append((start, i))
            start = None
        if namey and start is None:
            start = i
        prev_end = 0 if m is None else m.end()
    return out


def _sentence_end(word: str) -> bool:
    """A word that ends a sentence: a period after more than three letters or digits
    ("Manual.", "0.5N." are; "Co.", "Inc.", "St." are not)."""
    return word.endswith(".") and len(word.rstrip(".")) > 3 and not word.endswith("..")


def _unknown_code(
    word: str, before: str, known: set[str] | frozenset[str], ontology: Ontology
) -> bool:
    """A letters-and-digits name word no product has ("Gadget Fluid R0N1" when only
    "Gadget Fluid R0N0" is stored), right after a capitalised name word. Identifiers
    the ontology knows by their pattern (UN1090, H225) are values, not names."""
    core = word.strip(",.'")
    if not (re.search(r"\d", core) and re.search(r"[A-Za-z]", core)) or not before[:1].isupper():
        return False
    if any(t in known for t in tokens(core)):
        return False
    return not any(re.search(p, core) for p in _identifier_patterns(ontology))


def _identifier_patterns(ontology: Ontology) -> tuple[str, ...]:
    """Patterns of identifier values (asked only for a letters-and-digits name word)."""
    if not isinstance(ontology, OntologyMatching):
        return ()
    names = [p.name for p in ontology.properties()]
    return tuple(
        pat
        for n in names
        if ontology.value_kind(n) == "identifier" and (pat := ontology.value_pattern(n))
    )


def _name_around(question: str, words: list[str], i: int) -> str:
    """The run of name-like words (capitalised, with digits) around ``words[i]``, within
    the punctuation that ends a name (``_name_runs``: "Vantor K2; Brenwick X-114" are two
    names, and so are "... Pump Manual. What ..."); a leading "The" is no part of it."""
    start, end = next(((s, e) for s, e in _name_runs(question) if s <= i < e), (i, i + 1))
    if start < i and tokens(words[start])[:1] == ["the"]:
        start += 1
    return " ".join(words[start:end]).strip(" ,.?")


def _content_words(question: str) -> set[str]:
    return {t for t in tokens(question) if t.isalpha() and t not in STOPWORDS | _GRAMMAR}


_PARTITIVE = frozenset(
    """
    shipment delivery order supply stock lot batch sample quantity amount load unit pack
    package bottle drum can jar bag box case carton pallet tank tote cylinder container
    kilogram kg gram liter litre gallon pound lb ton tonne ounce piece portion part kind
    type sort grade form solution dilution suspension dispersion splash spill drop dose leak
    release fire use
    """.split()  # noqa: SIM905
)
"""English nouns of quantity, container, kind and form: "<noun> of X" asks about X ("an
aqueous solution of X")."""


def _of_compound(question: str, a: QuestionAnalysis, scope: ScopeView) -> str | None:
    """A name "<noun> of <word>" whose one word linked several of the question's
    documents but that no document's name holds whole ("sugar of lead" linked the lead
    salts; "milk of magnesia" a sheet that prints it does; "the behaviour of methyl
    chloroformate" asks about a name of its own): the name the question gives, or
    ``None``. The noun is no word of asking, of quantity or container (``a
    shipment of X``), of the ontology's labels or of a linked name ("the flash point of
    acetone", "a solution of sodium hydroxide" named so)."""
    toks = tokens(question)
    linked = {t for m in a.subjects for t in m.matched}
    if len({m.doc_id for m in a.subjects}) < 2:  # a name that links one document is its own
        return None
    known = _ontology_words(scope.ontology) | _property_words(scope.ontology) | _GRAMMAR
    for i in range(1, len(toks) - 1):
        head = toks[i - 1]
        if toks[i] != "of" or not head.isalpha() or head in STOPWORDS or head in known:
            continue
        if head in _PARTITIVE or head.rstrip("s") in _PARTITIVE:
            continue  # "a shipment of X", "two drums of X": X itself
        tail: list[str] = []
        for t in toks[i + 1 :]:
            if t not in linked:
                break
            tail.append(t)
        index = scope.subjects
        if len(tail) != 1 or head in linked:  # "behaviour of methyl chloroformate": its own
            continue
        if not set(index.naming([head])) & set(index.naming(tail)):
            return " ".join([head, "of", *tail])
    return None


def _subject_words(scope: ScopeView) -> frozenset[str]:
    return (scope.catalog or scope.subjects).tokens() | scope.subjects.tokens()


def _ontology_words(ontology: Ontology) -> frozenset[str]:
    """Words of the ontology's class labels ("chemical", "hazard", "supplier").

    Property labels count through property matching only: a word that is merely part of
    a longer label ("life" of "shelf life", "cup" of "closed cup") names nothing.
    """
    labels = [lab for c in ontology.classes() for lab in (c.label, *c.alt_labels)]
    return _label_words(tuple(labels))


def _property_words(ontology: Ontology) -> frozenset[str]:
    """Every word of every property label: a name made of them is no unknown product."""
    return _label_words(tuple(lab for p in ontology.properties() for lab in p.labels))


@lru_cache(maxsize=8)
def _label_words(labels: tuple[str, ...]) -> frozenset[str]:
    bare = [re.sub(r"\([^)]*\)", " ", lab) for lab in labels]  # "(closed cup)" qualifies
    words = {t for lab in bare for t in tokens(lab) if t.isalpha() and t not in STOPWORDS}
    return frozenset(words | {t[:-1] for t in words if t.endswith("s")})


def _join(names: Sequence[str]) -> str:
    return names[0] if len(names) == 1 else ", ".join(names[:-1]) + " and " + names[-1]
