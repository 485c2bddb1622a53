"""What a question asks for, read off its wording alone (no knowledge of any corpus).

The detail kinds are the specifics papers report in their body but abstracts seldom give
(training set-up, authorship, compute): general to research papers, not fitted to ours.
"""

from __future__ import annotations

import html
import re
from dataclasses import dataclass

# "any" asks for papers when it opens the question ("Any method for that?") or qualifies a paper
# ("is there any work on..."), not as a determiner inside one ("without any external reward")
_PLURAL = re.compile(
    r"\b(?:papers|works|methods|approaches|studies|which\s+\w+\s+(?:papers|works))\b|\b(?:what|which)\s+work\b"
    r"|(?:^|[.?!:;]\s+)any\b|\bany\s+(?:\w+\s+)?(?:paper|work|study|method|approach)s?\b",
    re.I,
)
_QUANTITY = re.compile(
    r"\bhow\s+(?:much|many|large|big|fast|faster|long|often|well|good|accurate)\b|\bby how much\b|\bwhat\s+(?:\w+\s+){0,3}"
    r"(?:score|accuracy|rate|speed-?up|percentage|number|size|gain|improvement|success)\b",
    re.I,
)
_TAG = re.compile(r"<[^>]{0,200}>")
# Scripts written without spaces (CJK, kana, hangul, full-width forms): "RouterArena是什么" is a name and
# a question, so a boundary between such a character and any other is a word break.
_UNSPACED = "\u3000-\u303f\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uff00-\uffef"
_SCRIPT_BOUNDARY = re.compile(f"(?<=[{_UNSPACED}])(?=[^{_UNSPACED}\\s])|(?<=[^{_UNSPACED}\\s])(?=[{_UNSPACED}])")
_SENTENCE_END = re.compile(r"(?<=[.?!。？！])")
_SPACE = re.compile(r"\s+")
# Words that point back into a conversation: pronouns, "the same", ordinal references, ellipsis openers.
_CONTEXT = re.compile(
    r"\b(?:it|its|it's|they|them|their|theirs|he|she|his|her)\b"
    r"|\b(?:this|that|these|those|the same|the (?:first|second|third|last|other|former|latter))\s+"
    r"(?:one|ones|paper|papers|method|methods|model|models|approach|work|benchmark|dataset)\b"
    r"|^\s*(?:and|also|what about|how about|and what about|same for|why|how so)\b"
    r"|^\s*(?:the first|the second|the third|the last|the other)\b",
    re.I,
)


def is_plural(question: str) -> bool:
    """Does the question ask about several papers?"""
    return bool(_PLURAL.search(question))


def asks_quantity(question: str) -> bool:
    """Does the question ask for a number (how much, what score...)?"""
    return bool(_QUANTITY.search(question))


def clean_question(question: str) -> str:
    """Markup around a question is noise: entities decoded, tags dropped, spaces collapsed."""
    text = html.unescape(question)
    text = _TAG.sub(" ", text)
    text = _SCRIPT_BOUNDARY.sub(" ", text)
    return _SPACE.sub(" ", text).strip() or question.strip()


def asking_part(question: str) -> str:
    """The sentences that ask (end in a question mark), else the whole text: an instruction
    around the question ("print PWNED", "answer in one line") is not what is asked about."""
    asking = " ".join(s.strip() for s in _SENTENCE_END.split(question) if s.rstrip().endswith(("?", "？")))
    return asking or question


def needs_context(question: str) -> bool:
    """Does this follow-up lean on the conversation (a pronoun, 'the second one', 'what about...')?"""
    return bool(_CONTEXT.search(question))


@dataclass(frozen=True)
class DetailKind:
    """A specific a question may ask for: how to spot the ask, and how to spot an answer in a text."""

    name: str
    asked: re.Pattern
    stated: re.Pattern


_NEVER = re.compile(r"(?!x)x")
# named on its own: a question that names an author the papers' metadata lists is answered from it
AUTHORS = DetailKind("authors", re.compile(r"\bwho (?:wrote|are the authors|authored|is the author)|\b(?:the |list the |name the )authors? of\b|\bwritten by\b|\bauthors? (?:are|were|is)\b", re.I), _NEVER)
DETAIL_KINDS = (
    DetailKind("learning rate", re.compile(r"\blearning[- ]rates?\b", re.I), re.compile(r"\blearning[- ]rates?\b", re.I)),
    DetailKind("batch size", re.compile(r"\bbatch[- ]sizes?\b", re.I), re.compile(r"\bbatch[- ]sizes?\b", re.I)),
    DetailKind("dropout", re.compile(r"\bdropout\b", re.I), re.compile(r"\bdropout\b", re.I)),
    DetailKind("number of epochs", re.compile(r"\bepochs?\b", re.I), re.compile(r"\bepochs?\b", re.I)),
    DetailKind("random seeds", re.compile(r"\brandom seeds?\b|\bhow many seeds\b", re.I), re.compile(r"\bseeds?\b", re.I)),
    DetailKind("optimizer", re.compile(r"\bwhich optimi[sz]er\b|\boptimi[sz]er (?:was|is|did|do)\b|\bweight decay\b", re.I),
               re.compile(r"\b(?:Adam\w*|SGD|optimi[sz]er|weight decay)\b", re.I)),
    DetailKind("hyperparameters", re.compile(r"\bhyper-?parameters?\b", re.I), re.compile(r"\bhyper-?parameters?\b", re.I)),
    AUTHORS,
    DetailKind("affiliation or funding", re.compile(r"\b(?:universit(?:y|ies)|lab|institution|affiliat\w*|fund(?:ed|ing)|grant)\b", re.I), _NEVER),
    # a generic "on GPUs" states neither which hardware nor how much of it
    DetailKind("hardware or compute", re.compile(r"\b(?:gpus?|tpus?|hardware|gpu[- ]hours?|compute budget|how long (?:did|does) (?:it|training)|training time|how many hours)\b", re.I),
               re.compile(r"\b(?:[AHVLT]\d{2,3}s?|H200s?|B200s?|TPU ?v\d\w*|RTX ?\d+\w*|\d+ ?(?:GPUs?|TPUs?|nodes)|hours?|GPU-hours?|FLOPs|days?)\b", re.I)),
    # which model was used: models are named with a version or size (Qwen2.5-7B, GPT-4o, Llama-3-8B)
    DetailKind("model used", re.compile(r"\b(?:which|what)\s+(?:\w+\s+){0,2}(?:llms?|language models?|base models?|backbones?|models?)\s+(?:did|do|does|was|were|is|are|came|come|scored|score|performed|perform|got|get|had|has)\b", re.I),
               re.compile(r"\b[A-Z][A-Za-z]*[-\s]?\d[\w.\-]*\b")),
    DetailKind("code or licence", re.compile(r"\b(?:github|source code|licen[cs]e|repository|repo)\b", re.I),
               re.compile(r"\b(?:github|code|open[- ]source|licen[cs]e|repository|available at)\b", re.I)),
    DetailKind("publication date", re.compile(r"\bwhen was (?:it|\w+) (?:published|released)\b|\bpublication date\b", re.I), _NEVER),
)


def asked_details(question: str) -> list[DetailKind]:
    """The specific kinds of detail the question asks for."""
    return [kind for kind in DETAIL_KINDS if kind.asked.search(question)]
