"""What each sentence of an abstract does: background, problem, method, result, availability.

Read off general properties of scientific abstracts, in any field: where the sentence sits, whether it
carries figures and units, contribution verbs ("we propose"), comparative and outcome verbs
("outperforms", "reduces ... by"), gap markers ("however", "remains challenging"), and links or
release wording. No word of any one corpus: the rules are tested on abstracts of biology, physics
and HCI as well as machine learning.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass
from enum import Enum
from pathlib import Path

from . import textclean
from .textclean import sentence_spans


class Role(str, Enum):
    """The part a sentence plays in its abstract."""

    BACKGROUND = "background"  # the field and what is known
    PROBLEM = "problem"  # the gap, the difficulty, what fails today
    METHOD = "method"  # what the authors propose, build or do
    RESULT = "result"  # what they found or measured
    AVAILABILITY = "availability"  # where the code or data is


@dataclass(frozen=True)
class RoledSentence:
    """One sentence of an abstract: `text[start:end]`, its role, and what the composer needs to know of it."""

    start: int
    end: int
    role: Role
    figures: bool = False  # states a figure: a count, a percentage, a ratio, a number with a unit (not a year or a name's digit)
    negative: bool = False  # reports a failure, a weakness or a low score

    @property
    def code(self) -> int:
        """Role, figures and negative in one small int (what the ingest stores per sentence)."""
        return _ROLES.index(self.role) | self.figures << 3 | self.negative << 4

    @staticmethod
    def from_code(start: int, end: int, code: int) -> RoledSentence:
        """The sentence `code` describes; a code no version wrote raises ValueError."""
        if code & 7 >= len(_ROLES) or code >> 5:
            raise ValueError(f"no sentence role has the code {code}")
        return RoledSentence(start, end, _ROLES[code & 7], bool(code & 8), bool(code & 16))


_ROLES = tuple(Role)  # a role's code is its place here: append new roles, never reorder


def _rules_version() -> str:
    """A fingerprint of the rules (this module and the sentence splitter): roles stored under another are derived anew."""
    digest = hashlib.blake2b(digest_size=8)
    for module in (__file__, textclean.__file__):
        digest.update(Path(module).read_bytes())
    return digest.hexdigest()


RULES_VERSION = _rules_version()


# a figure: a percentage, a ratio, a decimal, a number with a unit or next to a comparison; not a year, a
# citation or a digit inside a name (GPT-4, H100, Qwen2.5-7B)
_FIGURE = re.compile(
    r"(?<![\w.\-])(?:\d+(?:[.,]\d+)*(?:[-–]\d+(?:[.,]\d+)*)?\s*(?:%|×|x\b|‰|-?fold\b|times\b|pp\b|percentage points?\b|points?\b|dB\b|°\s?C?)"
    r"|\d+\.\d+|[×x]\s?\d+(?:\.\d+)?|\d[\d,.]*\s+(?:more|less|fewer|higher|lower|faster|slower)\b)|(?:\bby|\bthan|≈|~|±)\s+\d[\d,.]*",
    re.I,
)
# "we <verb>" opening a sentence: what the authors did (a method), unless the verb reports a finding
_WE = re.compile(r"^(?:\w+(?: \w+){0,3},\s+)?(?:here,?\s+)?we\s+(?:\w+ly\s+)?(\w+)", re.I)
_FINDING_VERB = re.compile(r"^(?:find|found|show|showed|shown|observe|observed|demonstrate|demonstrated|reveal|revealed|achieve|achieved|"
                           r"obtain|obtained|set|reach|reached|confirm|confirmed|establish|established|prove|proved|discover|discovered)$", re.I)
_LINK = re.compile(r"https?://|www\.|github|gitlab|zenodo|huggingface|\b(?:is|are|will be)\s+open[- ]sourced?\b|\b(?:code|data|dataset|datasets|models?|software|"
                   r"implementation|benchmark|tool|toolkit|package)\b[^.]{0,60}\b(?:is|are|will be)\s+(?:publicly\s+|freely\s+|made\s+)?"
                   r"(?:available|released|public)|\bavailable (?:at|online|on|from)\b|\bwe (?:release|open-source|make\b[^.]{0,40}available)", re.I)
_CONTRIBUTION = re.compile(
    r"\b(?:we|this (?:paper|work|study|article|letter)|here,? we|our (?:approach|method|framework|model|system|design|study|work))\s+"
    r"(?:\w+ly\s+)?(?:propose|introduce|present|develop|design|describe|build|construct|formulate|derive|devise|create|report|"
    r"investigate|study|examine|explore|analy[sz]e|use|employ|combine|leverage|apply|adopt|frame|cast|model|simulate|measure|"
    r"conduct|perform|train|fine-tune|implement|extend|generali[sz]e|reformulate|identify|collected?|recruited?|interviewed|"
    r"surveyed|ran|carried out|address|tackle|establish|prove|provide|offer|contribute)\w*\b"
    r"|\b(?:to (?:address|tackle|bridge|overcome|solve|fill) (?:this|these|the)\b|in this (?:paper|work|study)|our key (?:idea|insight)"
    r"|the key idea|consists of|comprises|is built on|is based on|works by)\b",
    re.I,
)
_OUTCOME = re.compile(
    r"\b(?:outperform\w*|surpass\w*|exceed\w*|beat\w*|achiev\w+|attain\w*|reach\w*|improv\w+|boost\w*|reduc\w+|increas\w+|"
    r"decreas\w+|lower\w*|rais\w+|speed\w* up|yield\w*|obtain\w*|result(?:s|ed)? in|state[- ]of[- ]the[- ]art|sota|"
    r"associated with|correlat\w+|persist\w*|(?:is|are|was|were) (?:observed|detected|found)|"
    r"(?:experiments?|results?|evaluations?|analys[ie]s|simulations?|measurements?|findings|we find|we found|we observe\w*|"
    r"we show|we demonstrate|demonstrat(?:e|es|ed|ing)\b|reveal\w*|show(?:s|ed|n)? that|suggest\w* that|indicat\w+ that|confirm\w*))\b",
    re.I,
)
_GAP = re.compile(
    r"\b(?:however|but|yet|although|despite|nevertheless|unfortunately|remain(?:s|ed)? (?:\w+ )?(?:challenging|difficult|unclear|"
    r"unknown|open|elusive|limited|poorly)|challeng\w+|difficult\w*|limit(?:ed|ation|ations|s)|lack\w*|suffer\w*|fail\w*|struggl\w*|"
    r"bottleneck\w*|costly|expensive|prohibitive|unclear|unknown|poorly understood|little is known|gap|problem\w*|issue\w*|"
    r"hinder\w*|hamper\w*|impractical|inefficien\w+|insufficient\w*|drawback\w*|vulnerab\w+|prone to|not known|debated|"
    r"controversial|rarely|seldom|scarce|slow|hard to|little (?:more )?than|overhead|open question|remains? to be)\b",
    re.I,
)
_NEGATIVE = re.compile(
    r"\b(?:fail\w*|struggl\w*|only\s+(?:\w+\s+){0,3}\d|at most\s+\d|below|worse|poor\w*|degrad\w+|drop\w*|collaps\w+|"
    r"cannot|can't|unable|limitation\w*|weakness\w*|remains? (?:far|well) (?:below|behind)|lag\w* behind|fall\w* short|still "
    r"(?:\w+\s+){0,2}(?:low|far|poor|limited|lag\w*|struggl\w*|challenging|difficult)|even the best|no better than|"
    r"not (?:always|reliably|robust\w*|sufficient\w*|scal\w*|generali[sz]\w*)|"
    # a low score said as such: "the best performer reaching just 7%", "success rates near 0%"
    r"(?:just|merely|barely)\s+(?:\w+\s+){0,2}\d|near(?:ly)?\s+(?:0|zero)|close to (?:0|zero))\b",
    re.I,
)
# a sentence that goes on to detail the one before: "Specifically, ...", "More concretely, ...", "To this end, ..."
_ELABORATES = re.compile(r"^\W*(?:(?:more\s+)?(?:specifically|concretely)|in\s+(?:particular|detail)|namely|that\s+is"
                         r"|to\s+(?:this\s+end|do\s+so|do\s+this|achieve\s+this))\b", re.I)
_YEAR = re.compile(r"\b(?:19|20)\d{2}\b")
# a pointer into the paper ("Figure 1", "Table 3", "Sec. 4", "Eq. (2)") or a link is no figure it reports
_POINTER = re.compile(
    r"\b(?:fig(?:ure)?s?|tables?|sec(?:tion)?s?|eqs?|equations?|appendix|appendices|theorems?|lemmas?|algorithms?|chapters?)"
    r"\.?\s*\(?\d+[a-z]?\)?|https?://\S+|www\.\S+",
    re.I,
)
# an enumeration "(1)" or "(ii)" is no figure; a range "2-5x" and a size "10K" are
_NUMBER = re.compile(r"(?<![\w.\-@/(])\d[\d,.]*(?:[-–]\d[\d,.]*)?(?:%|×|x\b|[kKMB]\b)?(?![\w\-/)])|[×x]\d")


def has_figures(sentence: str) -> bool:
    """A measured figure (a percentage, a ratio, a decimal, a unit): what makes a sentence a result."""
    return bool(_FIGURE.search(_unpointed(sentence)))


def states_number(sentence: str) -> bool:
    """Any number on its own, counts included ("324 tasks"), not a year or a name's digit (GPT-4, H100)."""
    return bool(_NUMBER.search(_unpointed(sentence)))


def _unpointed(sentence: str) -> str:
    """The sentence without years, pointers into the paper and links: what is left of its numbers is reported."""
    return _POINTER.sub(" ", _YEAR.sub(" ", sentence))


def role_of(sentence: str, position: int, count: int, previous: Role | None) -> Role:
    """The role of one sentence, from its cues first and its place second (an uncued sentence continues
    its predecessor's role, except that the opening ones set the scene)."""
    if _LINK.search(sentence):
        return Role.AVAILABILITY
    late = previous is not None and previous not in (Role.BACKGROUND, Role.PROBLEM)
    contribution, outcome, figures = bool(_CONTRIBUTION.search(sentence)), bool(_OUTCOME.search(sentence)), has_figures(sentence)
    we = _WE.match(sentence)
    if we:  # the authors speak: what they did, or what they found (a finding verb, or a measured change)
        return Role.RESULT if _FINDING_VERB.match(we.group(1)) or (figures and outcome) else Role.METHOD
    if previous is Role.METHOD and not figures and _ELABORATES.match(sentence):
        return Role.METHOD  # "More concretely, the reward measures the increase in ...": the method in detail, no finding
    if figures and (outcome or position > 0) or outcome and not contribution and late:
        return Role.RESULT
    if contribution:
        return Role.METHOD
    if _GAP.search(sentence) and not late:
        return Role.PROBLEM
    if previous is None or (previous in (Role.BACKGROUND, Role.PROBLEM) and position <= max(1, count // 3)):
        return Role.BACKGROUND
    if outcome:
        return Role.RESULT
    return previous if previous is not Role.AVAILABILITY else Role.RESULT


def roled_sentence(sentence: str, start: int, end: int, role: Role) -> RoledSentence:
    return RoledSentence(start, end, role, states_number(sentence), bool(_NEGATIVE.search(sentence)))


def sentence_roles(text: str) -> list[RoledSentence]:
    """Every sentence of an abstract with its role, in order."""
    spans = sentence_spans(text) or ([(0, len(text))] if text.strip() else [])
    roled: list[RoledSentence] = []
    previous: Role | None = None
    for position, (start, end) in enumerate(spans):
        sentence = text[start:end]
        role = role_of(sentence, position, len(spans), previous)
        roled.append(roled_sentence(sentence, start, end, role))
        previous = role
    return roled
