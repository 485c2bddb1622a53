"""The references that end a /v1 text answer: clients such as llm and LangChain keep only the text, so
what a reader needs to check a citation (the source, where it appeared, its link and the quoted
sentences) must be in it.

`full`: per cited source its label and paper id, then title, venue and year when known, its URL when
known, and each sentence quoted from it; `labels`: `[n] label (paper id)` only; `none`: nothing.
"""

from __future__ import annotations

from typing import Mapping

from ..records import Answer, Citation, Paper

HEADING = "\n\nSources:\n"
UNCONFIRMED = " (the check could not confirm that this backs the answer)"


def cited(answer: Answer) -> dict[int, list[Citation]]:
    """The citations of each source number, in the order the answer cites them."""
    by_number: dict[int, list[Citation]] = {}
    for citation in answer.citations:
        by_number.setdefault(citation.n, []).append(citation)
    return dict(sorted(by_number.items()))


def label_line(first: Citation, several_corpora: bool) -> str:
    """`[n] label (paper id)`, naming the corpus too when the answer read several."""
    where = f", {first.corpus}" if several_corpora and first.corpus else ""
    return f"[{first.n}] {first.label} ({first.paper_id}{where})"


def details(paper: Paper | None, label: str) -> list[str]:
    """The title (when the label is not it), venue and year, then the URL: each only when known."""
    if paper is None:
        return []
    facts = [paper.title] if paper.title and paper.title != label else []
    facts += [paper.venue] if paper.venue else []
    if paper.year and str(paper.year) not in paper.venue:  # "ICLR 2026" says its year already
        facts.append(str(paper.year))
    lines = [", ".join(facts)] if facts else []
    return lines + ([paper.url] if paper.url else [])


def quotes(citations: list[Citation]) -> list[str]:
    """Each sentence quoted from the source once, in quotation marks, flagged when the check did not confirm it."""
    seen: dict[str, bool] = {}
    for citation in citations:
        seen[citation.quote] = seen.get(citation.quote, False) or citation.supported
    return [f'"{quote}"' + ("" if supported else UNCONFIRMED) for quote, supported in seen.items() if quote]


def references_block(answer: Answer, style: str, papers: Mapping[str, Paper]) -> str:
    """The block that follows the answer text, in the chosen style; empty when nothing is cited or style is none."""
    by_number = cited(answer)
    if not by_number or style == "none":
        return ""
    several = len(answer.corpora) > 1
    if style == "labels":
        return HEADING + "\n".join(label_line(c[0], several) for c in by_number.values())
    entries = []
    for citations in by_number.values():
        first = citations[0]
        lines = [*details(papers.get(first.paper_id), first.label), *quotes(citations)]
        entries.append("\n".join([label_line(first, several), *("    " + line for line in lines)]))
    return HEADING + "\n\n".join(entries)
