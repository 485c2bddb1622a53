"""The plain types that cross module boundaries, defined once, at the bottom of the house.

This module imports nothing from the package: everything else may import it. A result
travels as these objects; it becomes a dict only at the HTTP edge (`to_dict`) and back
into an object only in the client (`from_dict`).
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import asdict, dataclass, field, replace
from enum import Enum
from typing import Any, NamedTuple, Protocol, Sequence

#: The one refusal sentence: in the prompt, in the code that recognises it, in the tests.
REFUSAL = "The abstracts in the corpus do not answer this question."
#: The answer when the request's metadata filters leave no paper: not the same as a corpus that does not answer.
NO_MATCH = "No paper matches these filters."

CHUNK_SEPARATOR = "#"


def chunk_id(paper_id: str, position: int) -> str:
    """The stable id of a paper's chunk: `<paper id>#<position>`."""
    return f"{paper_id}{CHUNK_SEPARATOR}{position}"


def paper_of(chunk: str) -> str:
    """The paper id a chunk id belongs to."""
    return chunk.rsplit(CHUNK_SEPARATOR, 1)[0]


# -- the corpus ---------------------------------------------------------------------------


@dataclass
class Paper:
    """One abstract: raw as given, cleaned for embedding, search and display."""

    id: str
    abstract: str
    text: str
    title: str = ""
    label: str = ""
    source: str = ""
    authors: list[str] = field(default_factory=list)
    year: int | None = None
    venue: str = ""
    url: str = ""
    keywords: list[str] = field(default_factory=list)

    @property
    def content_hash(self) -> str:
        """Changes whenever anything we show about the paper changes (not where it was read from)."""
        payload = json.dumps({k: v for k, v in asdict(self).items() if k != "source"}, sort_keys=True, ensure_ascii=False)
        return hashlib.sha256(payload.encode("utf-8")).hexdigest()[:16]

    def to_dict(self) -> dict:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict) -> "Paper":
        """A paper as /api/papers/<id> sends it; a listing's entry (id, label, title, year) gives one without text."""
        year = data.get("year")
        return cls(
            id=str(data["id"]), abstract=str(data.get("abstract") or ""), text=str(data.get("text") or ""),
            title=str(data.get("title") or ""), label=str(data.get("label") or data["id"]), source=str(data.get("source") or ""),
            authors=[str(a) for a in data.get("authors") or []], year=int(year) if year else None,
            venue=str(data.get("venue") or ""), url=str(data.get("url") or ""), keywords=[str(k) for k in data.get("keywords") or []],
        )


@dataclass(frozen=True)
class Chunk:
    """A span of one paper's cleaned text: text == paper.text[start:end]."""

    paper_id: str
    position: int
    start: int
    end: int
    text: str
    tokens: int

    @property
    def id(self) -> str:
        return chunk_id(self.paper_id, self.position)


class StoredHashes(NamedTuple):
    """What the store records per paper, to tell what an ingest must redo."""

    content_hash: str = ""
    embed_hash: str = ""
    n_chunks: int = 0


@dataclass(frozen=True)
class WriterStatus:
    """Who holds the writer lock now (for /metrics): nobody, or a holder since a Unix time."""

    held: bool = False
    holder: str = ""
    since: float | None = None


@dataclass(frozen=True)
class LexicalLoad:
    """A BM25 index made ready for a corpus version: from the local cache, from Chroma, or rebuilt."""

    version: str
    source: str  # "cache", "chroma", "rebuilt"
    seconds: float
    chunks: int


# -- retrieval ----------------------------------------------------------------------------


@dataclass
class Evidence:
    chunk_id: str
    text: str
    start: int
    end: int

    def to_dict(self) -> dict:
        return {"text": self.text, "start": self.start, "end": self.end}


@dataclass
class PaperHit:
    """One retrieved paper: its fused score, the signals behind it and its best chunks."""

    paper_id: str
    label: str
    score: float
    dense: float
    lexical: float
    coverage: float
    named: bool = False
    evidence: list[Evidence] = field(default_factory=list)
    text: str = ""
    relevant: bool = True
    corpus: str = ""  # the named corpus it came from: paper ids are unique across corpora
    authors: list[str] = field(default_factory=list)  # from the paper's metadata, for the source fence
    title: str = ""  # from the paper's metadata: evidence of what it is about, as its text is
    keywords: list[str] = field(default_factory=list)

    def to_dict(self) -> dict:
        return {
            "paper_id": self.paper_id,
            "label": self.label,
            "corpus": self.corpus,
            "score": round(self.score, 4),
            "relevant": self.relevant,
            "named": self.named,
            "evidence": [e.to_dict() for e in self.evidence],
        }


@dataclass(frozen=True)
class NameMatch:
    """A word of the question resolved to a paper's name, exactly or within the typo budget."""

    typed: str
    name: str
    paper_ids: tuple[str, ...]
    exact: bool

    def to_dict(self) -> dict:
        return {"typed": self.typed, "name": self.name, "paper_ids": list(self.paper_ids), "exact": self.exact}


@dataclass(frozen=True)
class Reading:
    """A question as the service reads it: `text` for BM25, the judge and the offline model's word tests (a question in
    another language with its words' English terms beside them); `meaning`, when there is one, its English words alone,
    what retrieval's dense side and the offline model's choice of sentences embed in its place. `embedded`: what they embed.
    The judge's closeness reads the text: on the meaning it answered more neighbouring topics and no more answerable ones."""

    text: str
    meaning: str = ""

    @property
    def embedded(self) -> str:
        return self.meaning or self.text


@dataclass
class Retrieval:
    """What retrieval found for a question: ranked hits, the names it resolved, and names it could not."""

    question: str
    hits: list[PaperHit] = field(default_factory=list)
    names: list[NameMatch] = field(default_factory=list)
    unknown_names: list[str] = field(default_factory=list)
    authors: list[NameMatch] = field(default_factory=list)  # authors the question names, from the papers' metadata
    meaning: str = ""  # what the dense side embedded for the question, when not the question (Reading.meaning)

    @property
    def named_ids(self) -> list[str]:
        return list(dict.fromkeys(pid for match in self.names for pid in match.paper_ids))

    @property
    def authored_ids(self) -> list[str]:
        """The papers of the authors the question names."""
        return list(dict.fromkeys(pid for match in self.authors for pid in match.paper_ids))

    @property
    def suggestions(self) -> list[str]:
        """'Did you mean RouterArena?': names matched only within the typo budget."""
        return list(dict.fromkeys(m.name for m in self.names if not m.exact))


# -- prompting ----------------------------------------------------------------------------


@dataclass
class Passage:
    start: int
    end: int
    text: str


@dataclass
class Source:
    """A numbered source: one paper and the sentences of it that fit the budget."""

    n: int
    paper_id: str
    label: str
    paper_text: str
    passages: list[Passage] = field(default_factory=list)
    corpus: str = ""
    authors: list[str] = field(default_factory=list)

    @property
    def text(self) -> str:
        """Passages in abstract order, with an ellipsis where sentences were left out."""
        parts: list[str] = []
        last_end = 0
        for passage in sorted(self.passages, key=lambda p: p.start):
            if parts and passage.start > last_end + 1:
                parts.append("…")
            parts.append(passage.text)
            last_end = passage.end
        return " ".join(parts)

    def to_ref(self) -> "SourceRef":
        return SourceRef(self.n, self.paper_id, self.label, self.corpus)


@dataclass(frozen=True)
class SourceRef:
    """A source as the answer lists it: number, paper id, label, and the corpus that holds it."""

    n: int
    paper_id: str
    label: str
    corpus: str = ""

    def to_dict(self) -> dict:
        return {"n": self.n, "paper_id": self.paper_id, "label": self.label, "corpus": self.corpus}

    @classmethod
    def from_dict(cls, data: dict) -> "SourceRef":
        return cls(int(data["n"]), str(data["paper_id"]), str(data["label"]), str(data.get("corpus", "")))


# -- citations ----------------------------------------------------------------------------


@dataclass
class Citation:
    n: int
    paper_id: str
    label: str
    quote: str
    start: int
    end: int
    score: float
    supported: bool
    sentence: int
    corpus: str = ""

    def to_dict(self) -> dict:
        return {k: (round(v, 3) if isinstance(v, float) else v) for k, v in self.__dict__.items()}

    @classmethod
    def from_dict(cls, data: dict) -> "Citation":
        return cls(
            int(data["n"]), str(data["paper_id"]), str(data["label"]), str(data["quote"]), int(data["start"]),
            int(data["end"]), float(data["score"]), bool(data["supported"]), int(data.get("sentence", 0)),
            str(data.get("corpus", "")),
        )


class IssueKind(str, Enum):
    """What the citation check found wrong with one sentence or marker."""

    UNCITED = "uncited"  # a sentence with no citation
    UNSUPPORTED = "unsupported"  # its sources do not back it
    UNKNOWN_SOURCE = "unknown_source"  # a marker that names no source


@dataclass(frozen=True)
class CitationIssue:
    """One finding of the citation check; `message` is its wording for people."""

    kind: IssueKind
    sentence: int | None
    detail: str

    @property
    def message(self) -> str:
        if self.kind is IssueKind.UNCITED:
            return f"sentence {(self.sentence or 0) + 1} has no citation: {self.detail}"
        if self.kind is IssueKind.UNSUPPORTED:
            return f"sentence {(self.sentence or 0) + 1} is not supported by its sources {self.detail}"
        return f"citation [{self.detail}] does not match any source and was removed"

    def to_dict(self) -> dict:
        return {"kind": self.kind.value, "sentence": self.sentence, "detail": self.detail}

    @classmethod
    def from_dict(cls, data: dict) -> "CitationIssue":
        sentence = data.get("sentence")
        return cls(IssueKind(data["kind"]), None if sentence is None else int(sentence), str(data.get("detail", "")))


class SentenceKind(str, Enum):
    """What a unit of the answer is: a claim to check, the service speaking, or the answer's structure."""

    CLAIM = "claim"  # states something about the papers: checked against the sources it cites
    SERVICE = "service"  # the service's own sentence ("The abstract of X does not report ..."): cites nothing, is no quote
    STRUCTURE = "structure"  # a heading, a lead-in ending in ":", a table header, filler: nothing to check


class SentenceVerdict(str, Enum):
    """The check of one sentence, in the states a reader can act on."""

    SUPPORTED = "supported"  # the cited quotes state it
    CONTRADICTED = "contradicted"  # a cited quote states otherwise (another figure, the opposite polarity, another paper)
    UNVERIFIED = "unverified"  # cited, but the check cannot confirm it
    UNCITED = "uncited"  # a claim with no citation
    NOT_CHECKED = "not_checked"  # the service's own sentences and the answer's structure


@dataclass
class AnswerSentence:
    """One unit of the answer text with its verdict: `answer[start:end]` is the unit as written."""

    start: int
    end: int
    text: str
    kind: SentenceKind = SentenceKind.CLAIM
    verdict: SentenceVerdict = SentenceVerdict.UNVERIFIED
    cites: list[int] = field(default_factory=list)  # the source numbers it cites
    quotes: list[Citation] = field(default_factory=list)  # the best quote of each cited source
    reason: str = ""  # one short line a reader understands

    def shifted(self, by: int) -> "AnswerSentence":
        """The same unit after `by` characters were put before it in the answer."""
        return replace(self, start=self.start + by, end=self.end + by)

    def to_dict(self) -> dict:
        return {
            "start": self.start, "end": self.end, "text": self.text, "kind": self.kind.value,
            "verdict": self.verdict.value, "cites": list(self.cites), "quotes": [q.to_dict() for q in self.quotes],
            "reason": self.reason,
        }

    @classmethod
    def from_dict(cls, data: dict) -> "AnswerSentence":
        return cls(
            int(data["start"]), int(data["end"]), str(data.get("text", "")), SentenceKind(data.get("kind", "claim")),
            SentenceVerdict(data.get("verdict", "unverified")), [int(n) for n in data.get("cites", [])],
            [Citation.from_dict(q) for q in data.get("quotes", [])], str(data.get("reason", "")),
        )


@dataclass
class CheckedAnswer:
    answer: str
    citations: list[Citation] = field(default_factory=list)
    issues: list[CitationIssue] = field(default_factory=list)
    grounded: bool = False
    refused: bool = False
    sentences: list[AnswerSentence] = field(default_factory=list)
    declined: bool = False  # the model itself wrote that the sources do not answer, in its own words

    @property
    def warnings(self) -> list[str]:
        return [issue.message for issue in self.issues]


# -- answerability ------------------------------------------------------------------------


class AnswerKind(str, Enum):
    """Which kind of answer a question wants, read off its wording (any accepted language, keyword queries too)."""

    DEFINITION = "definition"  # "what is X": the sentence that introduces X, then its main result
    MECHANISM = "mechanism"  # "how does X work": the method sentences
    PROBLEM = "problem"  # "why", "what problem": the problem or motivation sentences
    RESULTS = "results"  # "how well", "the numbers", a quantity word or a unit: the sentences with the figures
    COMPARISON = "comparison"  # "how do X and Y differ": per paper, one method and one result sentence
    LIMITATIONS = "limitations"  # weaknesses, failures, low scores
    LIST = "list"  # "which papers...": one contribution sentence per paper
    YES_NO = "yes_no"  # "does X ...?": the deciding sentence first
    OVERVIEW = "overview"  # anything else ("Summarize X", a bare name): the best sentences


class RefusalReason(str, Enum):
    """Why a question was not answered: each has its own plain-words explanation."""

    OFF_TOPIC = "off_topic"
    NOT_IN_CORPUS = "not_in_corpus"
    DETAIL_MISSING = "detail_missing"
    NOT_STATED = "not_stated"
    NO_MATCH = "no_match"  # the request's metadata filters leave no paper: nothing was searched
    MODEL_DECLINED = "model_declined"  # the model wrote, in its own words, that the sources do not answer

    @property
    def explanation(self) -> str:
        return _EXPLANATIONS[self]

    def explain(self, detail: str = "", about: Sequence[str] = ()) -> str:
        """The reason in plain words, naming what was missing where we know it."""
        if self is RefusalReason.DETAIL_MISSING and detail and about:
            article = "" if detail.startswith(("the ", "which ")) else "the "
            return f"The abstract of {', '.join(about)} does not state {article}{detail}."
        if self is RefusalReason.OFF_TOPIC and detail:
            return f"{self.explanation} None of the abstracts closest to the question speaks of {detail}."
        if self is RefusalReason.NOT_IN_CORPUS and detail:
            return f"No abstract in the corpus mentions {detail}."
        if self is RefusalReason.NO_MATCH and detail:
            return f"No paper matches these filters ({detail})."
        return self.explanation


_EXPLANATIONS = {
    RefusalReason.OFF_TOPIC: "No paper in the corpus is about this.",
    RefusalReason.NOT_IN_CORPUS: "The paper or method the question names is not in the corpus.",
    RefusalReason.DETAIL_MISSING: "The paper the question is about does not state this detail in its abstract.",
    RefusalReason.NOT_STATED: "The abstracts that were found do not state the answer.",
    RefusalReason.NO_MATCH: "No paper matches these filters.",
    RefusalReason.MODEL_DECLINED: "The model read the sources that were found and said they do not answer this.",
}


@dataclass(frozen=True)
class Verdict:
    """Can the retrieved evidence answer the question? If not, why not, in one typed reason."""

    answerable: bool
    reason: RefusalReason | None = None
    detail: str = ""
    about: tuple[str, ...] = ()  # paper ids the question is about (named, or the top-ranked one for a one-paper question); empty: any retrieved. A list question cites these and may cite others
    every: bool = False  # the answer covers each paper in `about`, not the best of them: "which papers by X" lists X's papers
    absent: tuple[str, ...] = ()  # things the question names (a benchmark, a model) that the abstracts in `about` do not mention
    missing: tuple[str, ...] = ()  # specifics asked that they speak of and do not give ("the number of routers")
    several: bool = False  # a search-box query naming no paper ("uncertainty quantification LLM QA"): the papers on it, as a list
    called: bool = False  # the question calls each paper in `about` by its own name ("TRM and K²-Agent"): each is answered

    @classmethod
    def yes(cls, about: Sequence[str] = (), every: bool = False, absent: Sequence[str] = (), missing: Sequence[str] = (),
            several: bool = False) -> "Verdict":
        return cls(True, None, "", tuple(about), every, tuple(absent), tuple(missing), several)

    @classmethod
    def no(cls, reason: RefusalReason, detail: str = "", about: Sequence[str] = ()) -> "Verdict":
        return cls(False, reason, detail, tuple(about))


# -- models ---------------------------------------------------------------------------------


@dataclass
class Usage:
    prompt_tokens: int = 0
    completion_tokens: int = 0

    def to_dict(self) -> dict:
        return {"prompt_tokens": self.prompt_tokens, "completion_tokens": self.completion_tokens}

    @classmethod
    def from_dict(cls, data: dict) -> "Usage":
        return cls(int(data.get("prompt_tokens", 0)), int(data.get("completion_tokens", 0)))


class CorpusView(Protocol):
    """What an answerer may learn about the corpus: term rarity, (optionally) embeddings, and the sentence roles the ingest kept."""

    def idf(self, term: str) -> float: ...

    def embed(self, texts: list[str]) -> Sequence[Any] | None: ...

    def expanded(self, question: str) -> list[tuple[str, str]]:
        """(as the question writes it, its other form) for each abbreviation it uses, as the abstracts define them."""
        ...

    def roles(self, text: str) -> Sequence[Any] | None:
        """The abstract's sentences with their roles (corpus/roles.RoledSentence) as stored at ingest; None: derive them."""
        ...


@dataclass
class ModelRequest:
    """What every model gets: the chat messages, and the same sources as structured data.

    `task` is "answer" or "rewrite" (make a follow-up standalone); `corpus` is what a model
    that reads the sources itself (the extractive one) may use: it travels with the request,
    so the answerer never needs to know which model it holds."""

    messages: list[dict]
    question: str
    sources: list[Source]
    max_tokens: int = 512
    task: str = "answer"
    history: list["Turn"] = field(default_factory=list)
    corpus: CorpusView | None = None
    about: tuple[str, ...] = ()
    instructions: str = ""  # the caller's own (a /v1 system message): about form, under the prompt's rules
    every: bool = False  # cover each paper in `about` (an author's papers), not only the best of them
    several: bool = False  # the question asks for the papers on a topic though its wording names none ("a search-box query")
    called: bool = False  # the question calls each paper in `about` by its own name: each is answered
    meaning: str = ""  # what MiniLM reads for `question`, when not the question itself (Reading.meaning)


@dataclass
class Completion:
    text: str
    usage: Usage = field(default_factory=Usage)


@dataclass(frozen=True)
class ChatRequest:
    """A /v1/chat/completions body once checked: every option in it is honoured, or it was refused."""

    question: str
    history: list["Turn"] = field(default_factory=list)
    instructions: str = ""  # the system and developer messages, in order
    stream: bool = False
    include_usage: bool = False  # stream_options.include_usage: a last chunk with the usage
    max_tokens: int | None = None  # the smaller of max_tokens and max_completion_tokens
    json_object: bool = False  # response_format json_object: the content is the answer as a JSON object
    corpus: str = ""  # the corpus the model id names (qa-service:<corpus>); empty: every corpus
    notes: tuple[str, ...] = ()  # options accepted without effect, each said in the reply's warnings
    references: str = "full"  # how the text answer lists its sources: full, labels or none
    schema: dict | None = None  # response_format json_schema: the JSON schema the content must follow
    tool: dict | None = None  # the one function tool to call with the answer: {name, parameters}


@dataclass(frozen=True)
class Turn:
    """One earlier turn of a conversation."""

    role: str
    content: str

    def to_dict(self) -> dict:
        return {"role": self.role, "content": self.content}


# -- answers --------------------------------------------------------------------------------


@dataclass
class Timings:
    retrieve: float = 0.0
    generate: float = 0.0
    total: float = 0.0

    def to_dict(self) -> dict:
        return {"retrieve": round(self.retrieve, 1), "generate": round(self.generate, 1), "total": round(self.total, 1)}

    @classmethod
    def from_dict(cls, data: dict) -> "Timings":
        return cls(float(data.get("retrieve", 0.0)), float(data.get("generate", 0.0)), float(data.get("total", 0.0)))


@dataclass(frozen=True)
class IndexStats:
    """One corpus version as stored: counted once per version (Index.stats), read by every route and metric."""

    papers: int = 0
    chunks: int = 0
    built_at: str | None = None
    embedding_model: str | None = None
    version: str | None = None
    generation: int = 0


@dataclass
class IndexInfo:
    papers: int = 0
    built_at: str | None = None
    embedding_model: str | None = None

    def to_dict(self) -> dict:
        return {"papers": self.papers, "built_at": self.built_at, "embedding_model": self.embedding_model}

    @classmethod
    def from_dict(cls, data: dict) -> "IndexInfo":
        return cls(int(data.get("papers", 0)), data.get("built_at"), data.get("embedding_model"))


@dataclass(frozen=True)
class ServiceInfo:
    """What answers and over which corpus (GET /api/info), for a client to show or to check limits by."""

    model: str | None
    auth_required: bool = False
    papers: int = 0
    chunks: int = 0
    built_at: str | None = None
    embedding_model: str | None = None
    limits: dict[str, int] = field(default_factory=dict)
    error: str = ""  # why there is no index to answer from, when there is none

    @classmethod
    def from_dict(cls, data: dict) -> "ServiceInfo":
        index = data.get("index") or {}
        return cls(
            data.get("model"), bool(data.get("auth_required")), int(index.get("papers") or 0), int(index.get("chunks") or 0),
            index.get("built_at"), index.get("embedding_model"), {str(k): int(v) for k, v in (data.get("limits") or {}).items()},
            str((data.get("error") or {}).get("message", "")),
        )


@dataclass
class Answer:
    """A cited answer, or a refusal with its reason: what every route returns."""

    answer: str
    citations: list[Citation] = field(default_factory=list)
    sources: list[SourceRef] = field(default_factory=list)
    grounded: bool = False
    insufficient_evidence: bool = False
    issues: list[CitationIssue] = field(default_factory=list)
    question: str = ""
    model: str = ""
    usage: Usage = field(default_factory=Usage)
    timings: Timings = field(default_factory=Timings)
    index: IndexInfo = field(default_factory=IndexInfo)
    refusal_reason: RefusalReason | None = None
    refusal_explanation: str = ""
    asked: str = ""  # the question as the user typed it, when `question` (what was searched) differs
    did_you_mean: list[str] = field(default_factory=list)
    truncated: bool = False  # cut at the caller's max_tokens; only /v1 asks for that, as finish_reason "length"
    corpora: list[str] = field(default_factory=list)  # the corpora searched
    filters: dict[str, list] = field(default_factory=dict)  # the metadata filters applied, as the request gave them
    sentences: list[AnswerSentence] = field(default_factory=list)  # every unit of `answer`, with its verdict
    asks: AnswerKind = AnswerKind.OVERVIEW  # which kind of answer the question wants

    @property
    def warnings(self) -> list[str]:
        return [issue.message for issue in self.issues]

    @property
    def uncited_sentences(self) -> int:
        return sum(1 for issue in self.issues if issue.kind is IssueKind.UNCITED)

    def to_dict(self) -> dict:
        return {
            "answer": self.answer,
            "citations": [c.to_dict() for c in self.citations],
            "sources": [s.to_dict() for s in self.sources],
            "grounded": self.grounded,
            "insufficient_evidence": self.insufficient_evidence,
            "refusal_reason": self.refusal_reason.value if self.refusal_reason else None,
            "refusal_explanation": (self.refusal_explanation or self.refusal_reason.explanation) if self.refusal_reason else None,
            "did_you_mean": self.did_you_mean,
            "warnings": self.warnings,
            "issues": [i.to_dict() for i in self.issues],
            "question": self.question,
            "asked": self.asked or self.question,
            "model": self.model,
            "usage": self.usage.to_dict(),
            "timings_ms": self.timings.to_dict(),
            "index": self.index.to_dict(),
            "corpora": self.corpora,
            "filters": self.filters,
            "sentences": [s.to_dict() for s in self.sentences],
            "asks": self.asks.value,
        }

    @classmethod
    def from_dict(cls, data: dict) -> "Answer":
        reason = data.get("refusal_reason")
        return cls(
            answer=str(data["answer"]),
            citations=[Citation.from_dict(c) for c in data.get("citations", [])],
            sources=[SourceRef.from_dict(s) for s in data.get("sources", [])],
            grounded=bool(data.get("grounded")),
            insufficient_evidence=bool(data.get("insufficient_evidence")),
            issues=[CitationIssue.from_dict(i) for i in data.get("issues", [])],
            question=str(data.get("question", "")),
            model=str(data.get("model", "")),
            usage=Usage.from_dict(data.get("usage", {})),
            timings=Timings.from_dict(data.get("timings_ms", {})),
            index=IndexInfo.from_dict(data.get("index", {})),
            refusal_reason=RefusalReason(reason) if reason else None,
            refusal_explanation=str(data.get("refusal_explanation") or ""),
            asked=str(data.get("asked", "")),
            did_you_mean=[str(n) for n in data.get("did_you_mean", [])],
            corpora=[str(c) for c in data.get("corpora", [])],
            filters={str(k): list(v) for k, v in (data.get("filters") or {}).items()},
            sentences=[AnswerSentence.from_dict(x) for x in data.get("sentences", [])],
            asks=AnswerKind(data.get("asks") or AnswerKind.OVERVIEW.value),
        )


# -- stream events --------------------------------------------------------------------------


@dataclass(frozen=True)
class Sources:
    """Retrieval is done and the model is asked: what was searched and the sources it reads,
    sent before the first word so a client can show them (and a proxy sees bytes) at once."""

    question: str
    sources: list[SourceRef]

    name = "sources"

    def payload(self) -> dict:
        return {"question": self.question, "sources": [s.to_dict() for s in self.sources]}


@dataclass(frozen=True)
class Delta:
    """A piece of answer text as the model writes it."""

    text: str

    name = "delta"

    def payload(self) -> dict:
        return {"text": self.text}


@dataclass(frozen=True)
class Final:
    """The complete, checked answer: always the last event of a successful stream."""

    answer: Answer

    name = "final"

    def payload(self) -> dict:
        return self.answer.to_dict()


StreamEvent = Sources | Delta | Final
