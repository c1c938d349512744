"""Entity linking: which documents' products a question names (fuzzy, IDF-weighted)."""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Callable, Container, Iterable, Sequence
from dataclasses import dataclass

from hybrid_rag.text import STOPWORDS, in_row, tokens

__all__ = ["HEAD_SHARE", "SubjectIndex", "SubjectMatch", "spelled_as", "without_names"]

HEAD_SHARE = 0.4
"""The least share of a name's weight its first words must carry to name it alone."""


@dataclass(frozen=True, slots=True)
class SubjectMatch:
    """A document whose product the question names: the label that matched and how well."""

    doc_id: str
    label: str
    coverage: float
    matched: frozenset[str]


@dataclass(frozen=True, slots=True)
class _Label:
    doc_id: str
    label: str
    toks: frozenset[str]
    order: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class _Lookup:
    """Where to look in an index's labels (built once per index, on first use): a
    question is matched against the labels that hold one of its words, not all of them.
    Lists hold label positions in index order."""

    by_token: dict[str, list[int]]  # a name word -> the labels holding it
    by_first: dict[str, list[int]]  # a name's first word -> the labels opening with it
    by_singular: dict[str, list[int]]  # a word as a singular -> the labels holding it
    by_doc: dict[str, list[int]]  # a document -> its labels
    own: list[bool]  # whether a label is its document's first (its own name)
    singular: list[tuple[str, ...]]  # each label's words as singulars, in order
    weight: list[float]  # each label's IDF weight (its words)
    sources: dict[str, list[int]]  # a word as a singular -> the sources' names holding it
    source_words: list[tuple[str, ...]]  # each source name's words as singulars


def spelled_as(want: tuple[str, ...], vocabulary: Container[str]) -> tuple[str, ...]:
    """``want`` as the names spell it: a word none has, split into two words that each
    some name has ("exxonmobil" -> "exxon", "mobil"), and two words in a row none has
    apart, joined when one has them joined ("lab", "alley" -> "laballey")."""
    out: list[str] = []
    i = 0
    while i < len(want):
        w = want[i]
        joined = w + want[i + 1] if i + 1 < len(want) else ""
        if joined and joined in vocabulary and not (w in vocabulary and want[i + 1] in vocabulary):
            out.append(joined)
            i += 2
            continue
        if w not in vocabulary and len(w) >= 6:
            split = next(
                (
                    (w[:k], w[k:])
                    for k in range(3, len(w) - 2)
                    if w[:k] in vocabulary and w[k:] in vocabulary
                ),
                None,
            )
            out += split or (w,)
        else:
            out.append(w)
        i += 1
    return tuple(out)


def _lookup(labels: Sequence[_Label], sources: Sequence[_Label], idf: dict[str, float]) -> _Lookup:
    by_token: dict[str, list[int]] = {}
    by_first: dict[str, list[int]] = {}
    by_singular: dict[str, list[int]] = {}
    by_doc: dict[str, list[int]] = {}
    singular = [tuple(map(_singular, lab.order)) for lab in labels]
    for i, lab in enumerate(labels):
        for t in lab.toks:
            by_token.setdefault(t, []).append(i)
        for t in dict.fromkeys(singular[i]):
            by_singular.setdefault(t, []).append(i)
        if lab.order:
            by_first.setdefault(lab.order[0], []).append(i)
        by_doc.setdefault(lab.doc_id, []).append(i)
    firsts = {ids[0] for ids in by_doc.values()}
    source_words = [tuple(map(_singular, s.order)) for s in sources]
    by_source: dict[str, list[int]] = {}
    for i, words in enumerate(source_words):
        for t in dict.fromkeys(words):
            by_source.setdefault(t, []).append(i)
    return _Lookup(
        by_token=by_token,
        by_first=by_first,
        by_singular=by_singular,
        by_doc=by_doc,
        own=[i in firsts for i in range(len(labels))],
        singular=singular,
        weight=[sum(idf[t] for t in lab.toks) for lab in labels],
        sources=by_source,
        source_words=source_words,
    )


def _among(index: dict[str, list[int]], words: Iterable[str]) -> list[int]:
    """The positions listed under any of ``words``, in index order."""
    return sorted({i for w in words for i in index.get(w, ())})


class SubjectIndex:
    """The names of each document's subject, matched against questions.

    A label matches when the question contains most of its IDF weight (``min_coverage``).
    Among matches, one whose matched tokens are all explained by better matches is dropped,
    so "Acetone, HPLC Grade" does not also pull in every sheet whose alias is "Acetone",
    while "Hydrogen Peroxide 25% ..." and "Hydrogen Peroxide 34% ..." both stay; so is one
    whose matched tokens another match holds and more (the question names that one).
    """

    def __init__(self, entries: Iterable[tuple[str, Sequence[str]]], *, min_coverage: float = 0.65):
        self._labels = _labelled(
            (doc, label) for doc, labels in entries for label in dict.fromkeys(labels)
        )
        self._min = min_coverage
        self._sources: list[_Label] = []
        df = Counter(t for doc in _by_doc(self._labels).values() for t in doc)
        n = max(1, len(_by_doc(self._labels)))
        self._idf = {t: math.log(1 + n / c) for t, c in df.items()}
        self._built: _Lookup | None = None

    def _look(self) -> _Lookup:
        """The index's look-up tables (built on first use; an index is not changed
        after: ``restricted``, ``with_sources`` and ``with_names`` make new ones)."""
        built = self._built
        if built is None:
            built = self._built = _lookup(self._labels, self._sources, self._idf)
        return built

    def restricted(self, doc_ids: Iterable[str]) -> SubjectIndex:
        """The same index seeing only ``doc_ids`` (IDF weights kept from the full index)."""
        keep = set(doc_ids)
        if keep.issuperset(self._look().by_doc) and all(s.doc_id in keep for s in self._sources):
            return self  # the whole index: its look-up tables are kept
        out = SubjectIndex((), min_coverage=self._min)
        out._labels = [lab for lab in self._labels if lab.doc_id in keep]
        out._sources = [lab for lab in self._sources if lab.doc_id in keep]
        out._idf = self._idf
        return out

    def with_sources(self, names: Iterable[tuple[str, str]]) -> SubjectIndex:
        """The same index with the names of each document's source (its maker, supplier
        or issuer), as ``(doc_id, name)`` pairs: they call a set of documents ("Libman
        products": ``supplied``) but link no document to a question."""
        out = SubjectIndex((), min_coverage=self._min)
        out._labels, out._idf = self._labels, self._idf
        out._sources = [*self._sources, *_labelled(names)]
        return out

    def with_names(self, names: Iterable[tuple[str, str]]) -> SubjectIndex:
        """The same index with more names: ``(doc_id, name)`` pairs (IDF weights kept)."""
        out = SubjectIndex((), min_coverage=self._min)
        extra = _labelled(names)
        out._labels, out._sources = [*self._labels, *extra], self._sources
        out._idf = {**{t: self._idf.get(t, 1.0) for e in extra for t in e.toks}, **self._idf}
        return out

    def __len__(self) -> int:
        return len(self._look().by_doc)

    def doc_ids(self) -> list[str]:
        """The documents this index sees, in insertion order."""
        return list(self._look().by_doc)

    def label_of(self, doc_id: str) -> str | None:
        """The first (preferred) product name of a document, or ``None``."""
        ids = self._look().by_doc.get(doc_id)
        return self._labels[ids[0]].label if ids else None

    def share(self, doc_id: str, toks: Iterable[str]) -> float:
        """The largest share of one of the document's names' weight that ``toks`` carry
        (IDF-weighted, as coverage): 1.0 when they hold a whole name."""
        said = set(toks)
        look = self._look()
        best = 0.0
        for i in look.by_doc.get(doc_id, ()):
            if total := look.weight[i]:
                lab = self._labels[i]
                best = max(best, sum(self._idf[t] for t in lab.toks & said) / total)
        return best

    def doc_tokens(self, doc_id: str) -> frozenset[str]:
        """Every token of every product name of one document."""
        ids = self._look().by_doc.get(doc_id, ())
        return frozenset(t for i in ids for t in self._labels[i].toks)

    def tokens(self) -> frozenset[str]:
        """Every token of every product name this index sees."""
        return frozenset(self._look().by_token)

    def naming(self, words: Sequence[str]) -> list[str]:
        """Documents one of whose names holds ``words`` in a row, plurals as singulars (a
        name many documents share: "zinc" of "Zinc Oxide" and "Zinc Chloride 1M
        Solution"), in index order. An alias in index form ("Sulfuric acid, aluminum
        salt": the parent's name, a comma, what it is) names no member of the parent's
        set; the document's own (first) name always may."""
        want = tuple(_singular(w) for w in words if w not in STOPWORDS)
        if not want:
            return []
        look = self._look()
        want = spelled_as(want, look.by_singular)  # "ExxonMobil" / "Exxon Mobil"
        found: dict[str, None] = {}
        for i in look.by_singular.get(want[0], ()):
            lab = self._labels[i]
            if lab.doc_id in found or (not look.own[i] and "," in lab.label):
                continue
            if in_row(look.singular[i], want):
                found[lab.doc_id] = None
        return list(found)

    def shortest_names(self, words: Sequence[str]) -> dict[str, str]:
        """``{doc_id: its shortest name that holds words in a row}`` for the documents
        ``naming`` finds: what each is called by that name ("Sodium Chloride", "Sodium
        Hydroxide" for "sodium")."""
        want = tuple(_singular(w) for w in words if w not in STOPWORDS)
        found = set(self.naming(words))
        out: dict[str, str] = {}
        for lab in self._labels:
            holds = lab.doc_id in found and in_row(tuple(map(_singular, lab.order)), want)
            if holds and (lab.doc_id not in out or len(lab.label) < len(out[lab.doc_id])):
                out[lab.doc_id] = lab.label
        return out

    def supplied(self, words: Sequence[str]) -> list[str]:
        """Documents whose source's name (``with_sources``) holds ``words`` in a row,
        plurals as singulars, in index order."""
        want = tuple(_singular(w) for w in words if w not in STOPWORDS)
        if not want:
            return []
        look = self._look()
        want = spelled_as(want, look.sources)
        found = (
            self._sources[i].doc_id
            for i in look.sources.get(want[0], ())
            if in_row(look.source_words[i], want)
        )
        return list(dict.fromkeys(found))

    def link(self, question: str) -> list[SubjectMatch]:
        """Documents whose product the question names, best first."""
        q = set(tokens(question))
        q |= {t[:-1] for t in q if t.endswith("%")} | {
            n + "%" for n in _BARE_NUMBER.findall(question)
        }
        q |= {_singular(t) for t in q}  # "Hexanes" names the sheet whose alias is "Hexane"
        best: dict[str, tuple[float, float, _Label, frozenset[str]]] = {}
        look = self._look()
        for i in _among(look.by_token, q):
            lab = self._labels[i]
            matched = lab.toks & q
            if not matched or (_wordless(matched) and not _wordless(lab.toks)):
                continue  # a bare number ("2 + 2") names no "2-Propanone"
            total = look.weight[i]
            got = sum(self._idf[t] for t in matched)
            cov = round(got / total, 6) if total else 0.0  # sums over sets: order varies
            key = (cov, got)
            if cov >= self._min and (lab.doc_id not in best or key > best[lab.doc_id][:2]):
                best[lab.doc_id] = (cov, got, lab, frozenset(matched))
        named: dict[str, frozenset[str]] = {}  # every question word any name of a doc holds
        for doc in best:
            named[doc] = frozenset(t for i in look.by_doc[doc] for t in self._labels[i].toks & q)
        ranked = sorted(
            ((c, g, lab, named[lab.doc_id]) for c, g, lab, _m in best.values()),
            key=lambda v: (-v[0], -v[1], v[2].doc_id),
        )
        chosen = _select(ranked, self.label_of)
        explained = {t for m in chosen for t in m.matched}
        have = {m.doc_id for m in chosen}
        found = chosen + [
            m
            for m in self._by_head(question)
            if m.doc_id not in have and not m.matched <= explained
        ]
        return self._without_scattered(question, found)

    def _without_scattered(self, question: str, found: list[SubjectMatch]) -> list[SubjectMatch]:
        """Drop a match whose words the question says apart, each inside another named
        product ("Methyl alcohol" from "Methyl Ethyl Ketone, or Diacetone Alcohol")."""
        toks = tokens(question)
        out: list[SubjectMatch] = []
        for m in found:
            others = {t for o in found if o is not m for t in o.matched}
            if len(m.matched) > 1 and m.matched <= others:
                own = self.doc_tokens(m.doc_id)
                if not any(m.matched <= run for run in _runs(toks, own)):
                    continue
            out.append(m)
        return out

    def _by_head(self, question: str) -> list[SubjectMatch]:
        """Products named by the head of their name only ("Guaiacol" for "Guaiacol, USP
        Grade", "Lead Nitrate" for "Lead Nitrate Crystal ACS Grade"), added to those whose
        name reaches ``min_coverage`` when their words are not already explained by them.

        The question must hold the name's first words in a row, carrying at least
        ``HEAD_SHARE`` of its weight, with no name-like word of its own right before
        or after them: "Lead Acetate" names no "Lead Nitrate ...", "Sulfuric Acid 70%" no
        "Sulfuric Acid 96%".
        """
        words = _words(question)
        toks = [t for t, _namey in words]
        found: dict[str, tuple[float, _Label, frozenset[str], int]] = {}
        for n in _among(self._look().by_first, toks):
            lab = self._labels[n]
            total = sum(self._idf[t] for t in lab.order)
            for i in range(len(toks)):
                k = 0
                while k < len(lab.order) and i + k < len(toks) and toks[i + k] == lab.order[k]:
                    k += 1
                if not k or not total or (_wordless(lab.order[:k]) and not _wordless(lab.toks)):
                    continue
                got = sum(self._idf[t] for t in lab.order[:k]) / total
                if got < HEAD_SHARE or _foreign(words, i - 1, lab) or _foreign(words, i + k, lab):
                    continue
                if got > found.get(lab.doc_id, (0.0,))[0]:
                    found[lab.doc_id] = (got, lab, frozenset(lab.order[:k]), i)
        # per place in the question, the products named by the most words in a row (the
        # two "Ammonium Hydroxide ..." sheets for "ammonium hydroxide", not "Ammonium
        # Chloride", whose one word is a larger share of its shorter name)
        top: dict[int, int] = {}
        for _g, _lab, m, i in found.values():
            top[i] = max(len(m), top.get(i, 0))
        return [
            SubjectMatch(doc, lab.label, round(g, 4), m)
            for doc, (g, lab, m, i) in sorted(found.items(), key=lambda kv: (kv[1][3], kv[0]))
            if len(m) == top[i]
        ]


def _select(
    ranked: list[tuple[float, float, _Label, frozenset[str]]],
    title: Callable[[str], str | None],
) -> list[SubjectMatch]:
    """The matches to keep, best first; one named by a one-word alias (a formula,
    "IPA") is labelled with the document's preferred name, which the answer shows."""
    chosen: list[SubjectMatch] = []
    explained: set[str] = set()
    for cov, _got, lab, matched in ranked:
        ties = any(m.matched == matched and m.coverage == cov for m in chosen)
        if chosen and matched <= explained and not ties:
            continue
        label = lab.label if len(lab.toks) > 1 else title(lab.doc_id) or lab.label
        chosen.append(SubjectMatch(lab.doc_id, label, round(cov, 4), matched))
        explained |= matched
    # a match whose words another chosen match names too, and more ("Sulfuric Acid ...
    # Solution, Reagent Grade" of "Sulfuric Acid 70% Solution, Reagent Grade"), is that one
    return [m for m in chosen if not any(m.matched < o.matched for o in chosen)]


_BREAKS = ";:()[]\"'\u2018\u2019\u201c\u201d"  # punctuation between two names
_GAP = ("", False)  # stands for such punctuation: no name runs across it


def _words(question: str) -> list[tuple[str, bool]]:
    """The question's tokens in order, each with whether its word looks like a name
    (capitalised, or with a digit) and does not open the question; punctuation that
    separates names ("Lead Nitrate; Guaiacol", "(LD50): Guaiacol") is a gap."""
    out: list[tuple[str, bool]] = []
    for n, word in enumerate(question.split()):
        core = word.strip(_BREAKS)
        namey = n > 0 and (core[:1].isupper() or any(c.isdigit() for c in core))
        if word[:1] in _BREAKS:
            out.append(_GAP)
        out += [(t, namey and t not in STOPWORDS) for t in tokens(core)]
        if word.rstrip("?!.,")[-1:] in _BREAKS:
            out.append(_GAP)
    return out


def _foreign(words: list[tuple[str, bool]], i: int, lab: _Label) -> bool:
    """Whether the word at ``i`` is a name word ``lab`` does not have."""
    return 0 <= i < len(words) and words[i][1] and words[i][0] not in lab.toks


def _singular(token: str) -> str:
    """A plural word's singular ("hexanes" -> "hexane"); other words unchanged."""
    if len(token) > 4 and token.isalpha() and token.endswith("s") and not token.endswith("ss"):
        return token[:-1]
    return token


def _runs(toks: Sequence[str], own: frozenset[str]) -> list[frozenset[str]]:
    """The name words of ``own`` each uninterrupted run of the question's tokens holds."""
    runs: list[frozenset[str]] = []
    run: set[str] = set()
    for t in [*toks, ""]:
        said = {v for v in (t, _singular(t), t + "%", t.rstrip("%")) if v in own} if t else set()
        if said:
            run |= said
        elif run:
            runs.append(frozenset(run))
            run = set()
    return runs


_BARE_NUMBER = re.compile(r"(?<![\w:.])(\d+(?:\.\d+)?)(?![\w:.%])")  # "3" of "3 %"; not "1:1"


def _wordless(toks: Iterable[str]) -> bool:
    """Whether no token has a letter (numbers only: "2", "1369")."""
    return not any(c.isalpha() for t in toks for c in t)


def _labelled(names: Iterable[tuple[str, str]]) -> list[_Label]:
    """``(doc_id, name)`` pairs as labels, names without words left out."""
    return [
        _Label(doc, name, toks, tuple(t for t in tokens(name) if t not in STOPWORDS))
        for doc, name in names
        if name and (toks := _label_tokens(name))
    ]


def _label_tokens(label: str) -> frozenset[str]:
    return frozenset(t for t in tokens(label) if t not in STOPWORDS)


def _by_doc(labels: list[_Label]) -> dict[str, set[str]]:
    out: dict[str, set[str]] = {}
    for lab in labels:
        out.setdefault(lab.doc_id, set()).update(lab.toks)
    return out


def without_names(
    question: str, subjects: Sequence[SubjectMatch], *, keep: frozenset[str] = frozenset()
) -> str:
    """The question with the linked subjects' names taken out: their words name no
    property, and a phrase split by a name ("How toxic is X if inhaled") closes up.
    Words in ``keep`` stay (a kind of document, "invoice", may open a property's label:
    "invoice number")."""
    named = {t for p in subjects for t in p.matched} - keep
    if not named:
        return question
    question = _BRACKET.sub(lambda m: " " if _identifies(m[1], named) else m[0], question)
    kept = [w for w in question.split() if not tokens(w) or not set(tokens(w)) <= named]
    return " ".join(kept)


_BRACKET = re.compile(r"\(([^()]{1,80})\)")


def _identifies(inner: str, named: set[str]) -> bool:
    """Whether a bracket gives a linked document's code ("(Alfa Aesar stock number
    10336)"): all its words then say which document, none what is asked of it."""
    return any(any(c.isdigit() for c in t) for t in set(tokens(inner)) & named)
