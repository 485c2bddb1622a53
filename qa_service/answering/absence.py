"""Saying what is absent: the service's own sentence before an answer whose paper lacks what was named.

"How does Zorblax do on MMLU?", answered from an abstract that never mentions MMLU, opens with
"The abstract of Zorblax does not report results on MMLU." and "What it does report:", then the
quotes. The sentence is put before the checked answer, after the citation check (it is no quote):
it is `kind: service`, `verdict: not_checked`, cites nothing, and `grounded` does not count it.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Sequence

from ..corpus.names import own_names
from ..questions import answer_kind, asks_figures, figures_in
from ..records import AnswerKind, AnswerSentence, CheckedAnswer, PaperHit, SentenceKind, SentenceVerdict, Verdict

ABSENCE_LEAD = "What it does report:"
ABSENCE_LEAD_SEVERAL = "What they do report:"


@dataclass(frozen=True)
class AbsenceNote:
    """The service's own sentence for what an answer's papers do not give, and the lead-in to the quotes after it."""

    text: str
    lead: str = ABSENCE_LEAD  # "What it does report:", or of several papers "What they do report:"

    def opening(self) -> str:
        """How the answer opens: the sentence, then the lead-in."""
        return f"{self.text} {self.lead}"


def absence_note(verdict: Verdict, hits: Sequence[PaperHit], question: str) -> AbsenceNote | None:
    """The service's own sentence for what the question names and the answering paper's abstract does not mention."""
    if not (verdict.absent or verdict.missing) or not verdict.about:
        return None
    labels = {h.paper_id: own_names(h.label)[-1] for h in hits}  # a titled paper by its name: "Ember", not its whole title
    names = [labels.get(pid, pid) for pid in verdict.about]
    lead = ABSENCE_LEAD_SEVERAL if len(names) > 1 else ABSENCE_LEAD
    return AbsenceNote(_sentence(verdict, names, question), lead)


def _sentence(verdict: Verdict, names: list[str], question: str) -> str:
    """What the papers (by name) do not mention or report, as the question asked it."""
    subject = f"The abstracts of {either(names, 'and')} do" if len(names) > 1 else f"The abstract of {names[0]} does"
    figures = set(figures_in(question))
    named = either([t for t in verdict.absent if t not in figures])
    stated = either([t for t in verdict.absent if t in figures])
    if verdict.missing:  # "the number of GPUs", "which one came out best": spoken of, never given
        missing = either(list(verdict.missing))
        if named:
            return f"{subject} not mention {named}, nor {'do they' if len(names) > 1 else 'does it'} report {missing}."
        return f"{subject} not report {missing}."
    if not named:  # "something like 16x": the figure the question offers is not the abstract's
        return f"{subject} not report {stated}."
    if asks_figures(question) or answer_kind(question) is AnswerKind.RESULTS:
        return f"{subject} not report results on {named}."
    return f"{subject} not mention {named}."


def either(items: list[str], word: str = "or") -> str:
    """A list as a negation reads it ("MMLU", "qwen or llama", "MMLU, GSM8K or HumanEval"), or, with "and", papers named
    together ("Ember and Tilde")."""
    return f" {word} ".join([", ".join(items[:-1]), items[-1]]) if len(items) > 1 else "".join(items)


def state_absence(checked: CheckedAnswer, note: AbsenceNote | None) -> CheckedAnswer:
    """The note and its lead-in before the checked answer, every unit, citation and issue shifted after them.
    A refusal, or nothing absent, is left as it is."""
    if note is None or checked.refused or not checked.citations:
        return checked
    lead = note.opening() + ("\n" if checked.answer.startswith("- ") else " ")  # a list opens on its own line
    text = note.text
    units = [AnswerSentence(0, len(text), text, SentenceKind.SERVICE, SentenceVerdict.NOT_CHECKED, reason="the service's own words"),
             AnswerSentence(len(text) + 1, len(lead) - 1, note.lead, SentenceKind.STRUCTURE, SentenceVerdict.NOT_CHECKED)]
    citations = [replace(c, sentence=c.sentence + len(units)) if c.sentence is not None else c for c in checked.citations]
    issues = [replace(i, sentence=i.sentence + len(units)) if i.sentence is not None else i for i in checked.issues]
    return replace(checked, answer=lead + checked.answer, citations=citations, issues=issues,
                   sentences=units + [s.shifted(len(lead)) for s in checked.sentences])
