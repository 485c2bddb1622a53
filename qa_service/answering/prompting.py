"""Templates from prompts/, numbered sources, and the token budget."""

from __future__ import annotations

import functools
import html
import re
import unicodedata
from dataclasses import dataclass
from pathlib import Path
from string import Template
from typing import Callable, Sequence

from ..errors import ConfigError
from ..records import REFUSAL, PaperHit, Passage, Source, Turn
from ..corpus.textclean import sentence_spans

# Matched on the text's skeleton (see _skeleton): a fence tag, or a chat template's special token, which an
# OpenAI-compatible server (vLLM, llama.cpp) may read as a token of its own when it comes in a message.
_FENCE_OR_TOKEN = re.compile(
    r"<\s*/?\s*source\b"  # our fence
    r"|<\|[^|<>\n]{1,64}\|>"  # <|im_start|>, <|eot_id|>, <|endoftext|>, DeepSeek's fullwidth <｜...｜> folded
    r"|</?s>|\[/?inst\]|<</?sys>>|</?(?:start_of_turn|end_of_turn|bos|eos)>",  # Llama 2, Mistral, Gemma
    re.IGNORECASE)
# Letters of other scripts drawn like Latin ones (Unicode's confusables: Cyrillic, Greek, Armenian, small
# capitals), folded so that "</ѕоurсе>" is the tag it shows; NFKC already folds fullwidth forms (＜／ｓｏｕｒｃｅ＞).
_LATIN_LOOKALIKES = str.maketrans("асеһіјорѕухԁԛԝгսυοραικνꜱᴄᴏᴜʀᴇ", "acehijopsyxdqwruuopaikvscoure")
_DEFUSED = {"<": "‹", "[": "⟦"}  # how the first character of a match is shown instead
_OPENER = re.compile("[<\\[\ufe47\ufe64\uff1c\uff3b]")  # every character NFKC folds to '<' or '[' (a scan of all of Unicode)
_WINDOW = 100  # characters after an opener that can belong to one match (a special token is at most 68)


def _skeleton(text: str) -> str:
    """The text as it looks: each character folded by NFKC and _LATIN_LOOKALIKES, invisible format marks
    (zero-width spaces, joiners, bidi controls) dropped."""
    if text.isascii():  # nothing to fold
        return text.lower()
    folded = []
    for char in text:
        if unicodedata.category(char) != "Cf":
            nfkc = unicodedata.normalize("NFKC", char)
            folded.append((nfkc if len(nfkc) == 1 else char).lower().translate(_LATIN_LOOKALIKES))
    return "".join(folded)


def prompts_dir() -> Path:
    """prompts/ inside the installed package (wheel) or beside it (source checkout)."""
    package = Path(__file__).resolve().parent.parent  # qa_service/
    for candidate in (package / "prompts", package.parent / "prompts"):
        if (candidate / "system.md").is_file():
            return candidate
    raise ConfigError("the prompt templates (prompts/system.md) are missing; reinstall the package")


@functools.lru_cache(maxsize=4)
def load_templates(folder: Path | None = None) -> dict[str, Template]:
    folder = folder or prompts_dir()
    names = ("system", "user", "source", "rewrite", "instructions")
    return {name: Template((folder / f"{name}.md").read_text(encoding="utf-8")) for name in names}


def rewrite_messages(question: str, history: Sequence[Turn], max_chars: int = 4000) -> list[dict]:
    """Messages asking a model to make a follow-up question standalone."""
    conversation = "\n".join(f"{turn.role}: {turn.content}" for turn in history)[-max_chars:]
    text = load_templates()["rewrite"].substitute(conversation=defuse(conversation), question=defuse(question))
    return [{"role": "user", "content": text}]


def defuse(text: str) -> str:
    """Abstracts (and questions) cannot close or open a source fence, or speak a chat template's special
    tokens, in any look-alike spelling: the first character of each becomes one that shows the same."""
    chars: list[str] | None = None
    for opener in _OPENER.finditer(text):  # a match starts at one of these: look only there, a window at a time
        at = opener.start()
        if _FENCE_OR_TOKEN.match(_skeleton(text[at:at + _WINDOW])):
            chars = chars or list(text)
            chars[at] = _DEFUSED[unicodedata.normalize("NFKC", text[at])]
    return "".join(chars) if chars else text


def _attribute(value: str) -> str:
    """A fence attribute (id, label) escaped for its double quotes: it cannot end the attribute,
    close the tag or open another, whatever the corpus file said. An apostrophe stays readable."""
    return html.escape(value, quote=False).replace('"', "&quot;")


def _fence(template: Template, source: Source, text: str) -> str:
    """One source as the model sees it: escaped attributes around defused text (the authors, when the corpus has them)."""
    byline = f' authors="{_attribute(", ".join(source.authors))}"' if source.authors else ""
    return template.substitute(n=source.n, paper_id=_attribute(source.paper_id), label=_attribute(source.label), byline=byline,
                               text=defuse(text))


@dataclass
class Prompt:
    messages: list[dict]
    sources: list[Source]
    question: str
    prompt_tokens: int


def _sentence_order(hit: PaperHit) -> list[tuple[int, int]]:
    """Evidence sentences first (best chunk first), then the rest of the abstract in order."""
    spans = sentence_spans(hit.text)
    ranked: list[tuple[int, int]] = []
    for evidence in hit.evidence:
        ranked.extend(s for s in spans if evidence.start <= s[0] < evidence.end and s not in ranked)
    ranked.extend(s for s in spans if s not in ranked)
    return ranked


def build_prompt(
    question: str,
    hits: Sequence[PaperHit],
    count: Callable[[str], int],
    max_context_tokens: int,
    answer_tokens: int,
    history: Sequence[Turn] = (),
    instructions: str = "",
) -> Prompt:
    """Pack whole sentences, most relevant evidence first, into what the budget leaves.

    `instructions` are the caller's own (a /v1 system message): they follow the rules, which win."""
    templates = load_templates()
    system = templates["system"].substitute(refusal=REFUSAL)
    if instructions:
        system = system.rstrip("\n") + "\n" + templates["instructions"].substitute(instructions=defuse(instructions))
    frame = templates["user"].substitute(sources="", question=question, refusal=REFUSAL)
    history_tokens = sum(count(turn.content) + 4 for turn in history)
    budget = max_context_tokens - answer_tokens - count(system) - count(frame) - history_tokens
    sources = [Source(i + 1, h.paper_id, h.label, h.text, corpus=h.corpus, authors=h.authors) for i, h in enumerate(hits)]
    orders = [_sentence_order(h) for h in hits]
    fence_cost = [count(_fence(templates["source"], s, "")) for s in sources]
    used = 0
    added: list[Source] = []
    # Round one: each paper's best evidence sentence, in rank order; then everything else.
    queue = [(i, 0) for i in range(len(hits))] + [(i, j) for i in range(len(hits)) for j in range(1, len(orders[i]))]
    for i, j in queue:
        if j >= len(orders[i]):
            continue
        start, end = orders[i][j]
        cost = count(hits[i].text[start:end]) + 1 + (fence_cost[i] if not sources[i].passages else 0)
        if used + cost > budget:
            continue  # a whole sentence or nothing; a shorter one later may still fit
        sources[i].passages.append(Passage(start, end, hits[i].text[start:end]))
        added.append(sources[i])
        used += cost
    limit = max_context_tokens - answer_tokens
    while True:  # token counts of parts do not add up exactly: check the whole, drop the last if over
        messages, kept = _render(templates, system, question, sources, history)
        total = sum(count(m["content"]) + 4 for m in messages)
        if total <= limit or not added:
            break
        added.pop().passages.pop()
    return Prompt(messages, kept, question, total)


def _render(templates: dict, system: str, question: str, sources: list[Source], history: Sequence[Turn]) -> tuple[list[dict], list[Source]]:
    kept = [s for s in sources if s.passages]
    for n, source in enumerate(kept, start=1):
        source.n = n
    rendered = "\n\n".join(_fence(templates["source"], s, s.text).strip() for s in kept)
    user = templates["user"].substitute(sources=rendered, question=defuse(question), refusal=REFUSAL)
    return [{"role": "system", "content": system}, *(t.to_dict() for t in history), {"role": "user", "content": user}], kept
