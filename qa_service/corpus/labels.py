"""Readable labels for papers without titles: the method or benchmark an abstract names."""

from __future__ import annotations

import math
import re
from collections import Counter, defaultdict
from collections.abc import Callable
from typing import Iterable

from bm25s.stopwords import STOPWORDS_EN_PLUS

from ..records import Paper
from .textclean import clean_text

# a hyphen may be typeset as U+2010 or the non-breaking U+2011 ("MMLU‑Pro"): the same name
HYPHEN = re.compile(r"[-\u2010\u2011]")  # a hyphen as names are typeset: ASCII, U+2010, non-breaking U+2011
# a full stop between digits is part of a version (GPT-4.1, Qwen2.5-7B): one name, not "GPT-4" and "1"
VERSION_DOT = r"(?<=\d)\.(?=\d)"
_TOKEN = re.compile(rf"[A-Za-z0-9](?:[A-Za-z0-9²³⁰¹⁴-⁹\-\u2010\u2011]|{VERSION_DOT})*[A-Za-z0-9²³⁰¹⁴-⁹]|[A-Z]")
_BOLD_RAW = re.compile(r"\*\*([^*]{2,40})\*\*|\\textbf\{([^{}]{2,40})\}|\\emph\{([^{}]{2,40})\}")
_INTRO = re.compile(
    r"\b(?:we|this (?:paper|work))\s+(?:first\s+|further\s+)?(?:propose|introduce|present|develop|design)s?\b",
    re.IGNORECASE,
)
_PHRASE_STOP = re.compile(r",|;|:|\.\s|\(|—")
_FURTHER = re.compile(r"\b(?:further|also)\s+\w+$", re.IGNORECASE)  # "we further develop": a later contribution, not the paper's
# a key phrase: two or three words within one clause, neither end a function word ("cache hit rate", "Reversal Curse")
_CLAUSE = re.compile(r"[,;:()\[\]—!?\"“”]|\.(?:\s|$)")
_PHRASE_WORD = re.compile(r"[A-Za-z][A-Za-z0-9²\-'’]*")
_FUNCTION_WORDS = frozenset(STOPWORDS_EN_PLUS)
KEY_PHRASE_MIN_USES = 2  # said once, a phrase is a passing mention; said again, it is what the abstract is about
KEY_PHRASE_LONGER = 0.25  # a three-word phrase outweighs its two-word part used as often: it says more
_BORROWED = re.compile(r"\b(?:existing|prior|previous|representative|baselines?|extends|such as|like|over|than)\b", re.I)
_TITLE_PHRASE = re.compile(r"^(?:(?:[A-Z][\w²-]*|of|for|and|with|via|to)\s){1,5}[A-Z][\w²-]*")
_LEADING = re.compile(r"^(?:a|an|the|our|new|novel|simple|general|first|unified)\s+", re.IGNORECASE)
# names so widely used they name no one paper: the field's common things (a benchmark, a model family)...
COMMON_NAMED = frozenset({"LLaMA", "ImageNet", "GPT-4o"})
# ...and its generic terms, which are no named thing at all
_GENERIC = COMMON_NAMED | {
    "LLM", "LLMs", "LMs", "GPU", "GPUs", "CNN", "CNNs", "RL", "AI", "SOTA", "API", "APIs",
    "NLP", "PhD", "MoE", "CoT", "LMM", "LMMs", "VLM", "VLMs", "MLLM", "MLLMs",
    "DNN", "DNNs", "ViT", "ViTs",
}


def is_name_like(token: str) -> bool:
    """RouterArena, RLP, reAR, K²-Agent, CUDA-L1: shapes that names of methods take."""
    if token in _GENERIC or len(token) < 3 or not any(c.isalpha() for c in token):
        return False
    if any(part.isalpha() and part.islower() and len(part) > 2 for part in HYPHEN.split(token)[1:]):
        return False  # VMP-protected, LLM-based: a qualifier, not a name
    inner_upper = any(c.isupper() for c in token[1:])
    has_digit = any(c.isdigit() or c in "²³" for c in token)
    return inner_upper or (has_digit and token[0].isupper())


_QUESTION_WORD = re.compile(rf"(?:[\w²³\-\u2010\u2011]|{VERSION_DOT})+")


def question_names(question: str) -> set[str]:
    """Words of a question that may name a paper: name-shaped (GPTQ), or capitalised mid-sentence (Tequila)."""
    tokens = _QUESTION_WORD.findall(question)
    return {t for i, t in enumerate(tokens) if is_name_like(t) or (i > 0 and t[:1].isupper() and len(t) > 3)}


def name_candidates(text: str) -> set[str]:
    return {t for t in _TOKEN.findall(text) if is_name_like(t)}


def named_things(text: str) -> set[str]:
    """The things a text names: name-shaped words, and the field's common named things (ImageNet), which name
    no paper but are asked about ("What does GMamba get on ImageNet?")."""
    return name_candidates(text) | {t for t in _TOKEN.findall(text) if t in COMMON_NAMED}


def _bold_terms(raw: str) -> list[str]:
    terms = []
    for groups in _BOLD_RAW.findall(raw):
        term = clean_text(next(g for g in groups if g)).strip(" .,:")
        if len(term) >= 3 and " " not in term and any(c.isupper() for c in term):
            terms.append(term)
    return terms


Rarity = Callable[[str], float]  # a lower-case word's inverse document frequency in the corpus


def word_rarity(texts: Iterable[str]) -> Rarity:
    """How rare each word is across the corpus (a smoothed idf), for the key phrase of a paper without a name."""
    frequency: Counter = Counter()
    count = 0
    for text in texts:
        frequency.update({w.lower() for w in _PHRASE_WORD.findall(text)})
        count += 1
    return lambda word: math.log((count + 1) / (frequency.get(word, 0) + 0.5))


def key_phrase(text: str, rarity: Rarity) -> str | None:
    """The phrase the abstract keeps coming back to, and that few other abstracts use: a topic label for a paper
    that coins no name and states no "we propose <thing>" ("Reversal Curse", "Adaptive smoothness")."""
    uses: Counter = Counter()
    written: dict[str, str] = {}
    for clause in _CLAUSE.split(text):
        words = _PHRASE_WORD.findall(clause)
        for n in (2, 3):
            for i in range(len(words) - n + 1):
                gram = words[i : i + n]
                low = [w.lower() for w in gram]
                if low[0] in _FUNCTION_WORDS or low[-1] in _FUNCTION_WORDS:
                    continue
                key = " ".join(low)
                uses[key] += 1
                written.setdefault(key, " ".join(gram))
    scored = []
    for key, count in uses.items():
        if count >= KEY_PHRASE_MIN_USES:
            words = key.split()
            scored.append((count * sum(map(rarity, words)) / len(words) * (1 + KEY_PHRASE_LONGER * (len(words) - 2)), key))
    if not scored:
        return None
    lowered = text.lower()
    best = max(scored, key=lambda sk: (sk[0], -lowered.find(sk[1])))[1]
    phrase = written[best]
    return phrase[0].upper() + phrase[1:]


def derive_label(paper: Paper, document_frequency: Counter, rarity: Rarity | None = None) -> str:
    """The best-scoring name unique to this paper, else a short phrase from the contribution, else the phrase the
    abstract keeps using."""
    text = paper.text
    scores: defaultdict[str, float] = defaultdict(float)  # half points: a Counter holds ints
    intro_spans = [m.end() for m in _INTRO.finditer(text)]
    for term in _bold_terms(paper.abstract):
        if document_frequency.get(term, 0) <= 1:
            scores[term] += 3
    tokens = _TOKEN.findall(text)
    for token in tokens:
        if is_name_like(token) and document_frequency.get(token, 0) <= 1:
            scores[token] += 0.5
    for token in list(scores):
        first = text.find(token)
        sentence = text[max(text.rfind(". ", 0, first), 0) : text.find(". ", first) % (len(text) + 1)]
        in_intro = any(token in text[start : start + 160] for start in intro_spans)
        if _BORROWED.search(sentence) and not in_intro:
            scores[token] -= 1.5  # named as prior work, not as this paper's contribution
    for start in intro_spans:
        window = text[start : start + 160]
        for token in name_candidates(window):
            if document_frequency.get(token, 0) <= 1:
                scores[token] += 2
        single = re.match(r"\s*(?:a\s+|an\s+|the\s+)?([A-Z][\w²\-]{2,20})(?=,|:| \(|\.)", window)
        if single and document_frequency.get(single.group(1), 0) <= 1:
            scores[single.group(1)] += 2.5  # "we propose Tequila, a ..."
        paren = re.search(r"\(([A-Z][A-Za-z0-9²\-]{2,15})\)", window)
        if paren and document_frequency.get(paren.group(1), 0) <= 1:
            name = paren.group(1)
            scores[name] += 2.5 + (0.5 * tokens.count(name) if not is_name_like(name) else 0)
    if scores:
        best, score = max(scores.items(), key=lambda kv: (kv[1], -text.find(kv[0])))
        if score >= 1.5:
            return best
    return _phrase_label(text, intro_spans, rarity)


def _phrase_label(text: str, intro_spans: list[int], rarity: Rarity | None) -> str:
    for start in intro_spans:
        if _FURTHER.search(text[max(0, start - 30) : start]):
            continue
        rest = text[start:].strip()
        rest = _LEADING.sub("", _LEADING.sub("", rest))
        titled = _TITLE_PHRASE.match(rest)
        if titled:
            return titled.group(0)
        words = _PHRASE_STOP.split(rest, maxsplit=1)[0].split()
        if len(words) >= 2:
            phrase = " ".join(words[:8]) + ("…" if len(words) > 8 else "")
            return phrase[0].upper() + phrase[1:]
    key = key_phrase(text, rarity) if rarity else None
    if key:
        return key
    words = text.split()
    return " ".join(words[:8]).rstrip(",.;:") + ("…" if len(words) > 8 else "")


def assign_labels(papers: Iterable[Paper]) -> None:
    """Label every paper: its title when it has one, else a derived name; labels are unique."""
    papers = list(papers)
    frequency: Counter = Counter()
    for paper in papers:
        frequency.update(name_candidates(paper.text))
        frequency.update(set(_bold_terms(paper.abstract)) - name_candidates(paper.text))
    untitled = [p for p in papers if not p.title]
    rarity = word_rarity(p.text for p in untitled) if untitled else None
    used: Counter = Counter()
    for paper in papers:
        paper.label = paper.title or derive_label(paper, frequency, rarity) or paper.id
        used[paper.label] += 1
    for paper in papers:
        if used[paper.label] > 1:
            paper.label = f"{paper.label} ({paper.id})"
