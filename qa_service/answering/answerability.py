"""Can the retrieved evidence answer the question? One decision, one place, one typed reason.

Every model path (offline extractive or an OpenAI-compatible model) goes through it
before the model is asked. The reasons:
- off_topic: no retrieved paper clears the relevance bar, and none has a single sentence
  close in meaning to the question (a chunk dilutes a one-sentence match); or the question's
  core (its rarest content terms and named things) is in no retrieved paper and either no sentence is
  close in meaning or (with `core_term_gap` set) each paper the answer would come from leaves unspoken
  a term of the question another retrieved paper holds: a neighbouring topic is not this one; or the core words no
  retrieved paper holds pull the question away from them (taken out, the rest is closer to their sentences: "speech
  recognition" in "quantizing speech recognition models"); or a core word no abstract uses says which kind of a thing
  the abstracts have is meant ("jailbreak attacks") and no abstract matches the question closely;
- not_in_corpus: the question is about a name-shaped thing no abstract mentions (however close an abstract is,
  unless the name is only given in passing), also when it names things some abstract mentions but calls no paper by
  its own name ("What accuracy does FlashMath report on GSM8K?": GSM8K is in an abstract, FlashMath in none); such a
  question (things named, no paper) gets the off-topic core test too ("fraud detection on A100 GPUs");
- detail_missing: the question is about a paper (named, or the one retrieval is sure of)
  and asks a kind of detail (a learning rate, the authors, a score on another benchmark)
  that its abstract does not state, with nothing close to give instead.
A benchmark or model the question names that the paper's abstract does not mention, where the
abstract reports something close, is answered with that, the absence stated (`Verdict.absent`).
Generic words missing from an abstract never refuse: only a missing *kind* of detail does.
Titles and keywords are evidence as the text is; venue names ("the ICLR paper") are never asked. A term the question
quotes ("O que é a 'grouping loss'?") that an abstract holds word for word makes it relevant, in any language.
"""

from __future__ import annotations

import re
from dataclasses import replace
from functools import lru_cache
from typing import Callable, Sequence

from .absence import either
from .evidence import (
    ASKING_WORDS, UNSEEN, core_terms, corpus_words, has_core, in_other_language, mentions, reports_close, spaced_language, unseen_kinds,
    without_words, words_meeting,
)
from .specifics import unnamed_kinds, unreported
from rapidfuzz.distance import OSA
from wordfreq import zipf_frequency

from ..config import Settings
from ..corpus.abbreviations import normal
from ..corpus.labels import HYPHEN, is_name_like, named_things
from ..corpus.names import joined_name, name_key, own_keys, typo_budget
from ..corpus.roles import states_number
from ..store.lexical import content_terms
from ..questions import (
    AUTHORS, answer_kind, asked_details, asking_part, asks_figures, asks_number, figures_in, is_plural, is_topic_query, is_venue,
    sub_questions, without_venues,
)
from ..records import AnswerKind, PaperHit, RefusalReason, Retrieval, Verdict


class AnswerabilityJudge:
    """Decides, from the question and what retrieval found, whether to answer and about which papers."""

    def __init__(self, settings: Settings, closeness: Callable[[str, Sequence[str]], list[float]] | None = None,
                 idf: Callable[[str], float] | None = None, similarity: Callable[[str, str], float] | None = None):
        """`closeness(question, texts)`: each text's best sentence cosine to the question; None
        when embeddings are not local (a paid API per question is too dear for a second look).
        `idf`: a term's rarity in the corpus, to find the question's core (None: every term counts alike).
        `similarity(a, b)`: the cosine of two whole texts (None: the core-pull test is off)."""
        self.settings = settings
        self.closeness = closeness
        self.similarity = similarity
        self.idf = idf or (lambda term: 1.0)
        self._terms = lru_cache(maxsize=settings.roles_cache_size)(content_terms)  # the same abstracts come back
        # a question's language is asked up to three times per question
        self._foreign = lru_cache(maxsize=settings.query_cache_size)(lambda asking: in_other_language(asking, settings))
        # ... and which spaced one it is, twice (the proper names it writes, the things it names)
        self._language = lru_cache(maxsize=settings.query_cache_size)(lambda asking: spaced_language(asking, settings))

    def decide(self, question: str, found: Retrieval) -> Verdict:
        asking = without_venues(asking_part(question))
        named = [h for h in found.hits if h.named]
        called = self._by_label(named, asking, found) if named else []  # the papers it calls by their own names
        # "EEG emotion recognition, which papers?": EEG is named, emotion nowhere; "SeedPrints and ENS both ...": the two
        # papers it calls by name split its core between them, as a comparison does
        topical = named and is_plural(question) and len(called) < 2 and not self._foreign(asking)
        off = self._off_core(question, asking, found.hits, named) if topical else None
        if off is not None:
            return Verdict.no(RefusalReason.OFF_TOPIC, off)
        unknown = self._unknown(asking, found)
        one = named and not is_plural(question) and not found.authors
        compared = self._compared_only(called, asking, found, unknown) if one and called else []
        if compared:  # "What does ReflexionGym report compared to Go-Browse?": Go-Browse is what the paper asked about is compared with
            return Verdict.no(RefusalReason.NOT_IN_CORPUS, ", ".join(compared))
        if one and not called:
            # no paper is called by its name or its authors', only things they mention: "What does the FlashAttention-3 paper
            # report about H100 utilization?" asks of a paper no abstract names (a name after "on", "for", "against" is a thing
            # asked of it)
            subject = [n for n in unknown if _asked_about(n, asking)]
            if subject:
                return Verdict.no(RefusalReason.NOT_IN_CORPUS, ", ".join(subject))
            off = None if self._foreign(asking) else self._off_core(question, asking, found.hits, named)
            if off is not None:  # "sleep staging from single-channel EEG": EEG is named, sleep staging nowhere
                return Verdict.no(RefusalReason.OFF_TOPIC, off)
        if named:
            # a one-paper question that calls papers by their labels is about those; the other names it matched (a benchmark
            # another abstract mentions) are things asked about them, not papers
            papers = named if is_plural(asking) else called or named
            verdict = self._about(asking, papers, found, unknown, named=True)
            each = verdict.answerable and not is_plural(asking) and len(called) > 1  # "TRM and K²-Agent": each answered
            return replace(verdict, called=True) if each else verdict
        relevant = ([h for h in found.hits if h.relevant] or _labelled(asking, found.hits) or self._titled(asking, found.hits)
                    or self._close(question, found.hits)
                    or (self._holding(asking, found.hits) if is_plural(question) else []) or _quoting(asking, found.hits))
        sure = any(h.dense >= self.settings.unknown_name_dense for h in found.hits)
        subject = [n for n in unknown if not self._in_passing(n, asking[: asking.find(n)])]
        cored = [n for n in subject if content_terms(n) & self._core(asking)]  # "benchmarks for text-to-SQL": its core
        if unknown and (subject or not sure) and not (is_plural(question) and relevant and not cored):
            # the dense rescue is for a name given in passing ("...like Foo"): a name asked about is the question
            return Verdict.no(RefusalReason.NOT_IN_CORPUS, ", ".join(subject or unknown))
        held = self._holding(asking, found.hits) if relevant and is_topic_query(question) and not is_plural(question) else None
        if held is not None and len(held) > 1:  # "process reward model step-level rewards": each paper holding the whole
            return Verdict.yes([h.paper_id for h in held], every=True)  # topic, first-ranked first (never off-core: held)
        # the papers holding the whole core, found once: the off-core test and a list's papers both read them
        holding = (held if held is not None else self._holding(asking, found.hits)) if relevant else []
        off = self._off_core(question, asking, found.hits, relevant, holding) if relevant else ""
        if off is not None:
            return Verdict.no(RefusalReason.OFF_TOPIC, off)
        topic = held is not None  # a search-box query naming no paper: whoever types one wants the papers on that topic
        if not is_plural(question) and not topic:
            return self._about(asking, relevant[:1], found, unknown, named=False)
        # several papers: the model weighs every retrieved one (the bar cut gold papers on the tuning split), and those
        # whose title or keywords carry the question's core are always among them, as are those retrieval marked relevant
        # whose text holds the whole core ("Which papers make use of model merging?": each that merges models, however its
        # best sentence scores against the best paper's)
        listed = self._titled(asking, found.hits) + [h for h in holding if h.relevant]
        return Verdict.yes(list(dict.fromkeys(h.paper_id for h in listed)), several=topic)

    def _unknown(self, asking: str, found: Retrieval) -> list[str]:
        """Name-shaped words of the asking part that no abstract mentions and the general language seldom
        uses ("GUI agents for Android" names no paper); a venue is never one."""
        shaped = [n for n in found.unknown_names if n in asking and not is_venue(n)
                  and _language_zipf(n) < self.settings.common_name_zipf]
        return shaped + [n for n in self._proper_unknown(asking) if n not in shaped]

    def _proper_unknown(self, asking: str) -> list[str]:
        """A capitalised word past a sentence's first that no abstract uses, where only a paper or a method stands: the
        subject of the question's verb ("What does Medusa propose?") or before "paper", "method" ("What does the Medusa
        paper propose?"): a proper name, however common the word. A place or a thing of the world stands elsewhere too
        ("the capital of France" is no paper), so it is refused as off-topic, as before."""
        return self._unseen_proper(asking, _called_a_paper)

    def _compared_unknown(self, asking: str) -> list[str]:
        """A capitalised word no abstract uses that the question compares the paper with ("CAST vs Medusa", "faster than
        Medusa"): a method, however common the word, and one the abstract cannot report a comparison with."""
        return self._unseen_proper(asking, lambda w, bare: bool(_COMPARED.search(bare[: bare.find(w)])))

    def _example_unknown(self, asking: str) -> list[str]:
        """A capitalised word no abstract uses that the question gives as an instance of its topic ("speech recognition
        models like Whisper", "Medusa-style heads"): a corpus that had the topic would most likely name it, so with the
        question's core held by no paper, the topic is a neighbour of the corpus's, not one of them. An acronym before
        "-style" names a family of methods the question borrows an idea from ("GAN-style": adversarial), not an instance."""
        akin = [m.group(1) for m in _AKIN.finditer(asking) if _CAPITALISED.fullmatch(m.group(1)) and self._unused(m.group(1))]
        listed = self._unseen_proper(asking, lambda w, bare: bool(_INSTANCE_BEFORE.search(bare[: bare.find(w)])))
        return list(dict.fromkeys(akin + listed))

    def _unseen_proper(self, asking: str, placed: Callable[[str, str], bool]) -> list[str]:
        """The capitalised words past a sentence's first that no abstract uses and that stand where `placed(word, question)`
        says, read in the question with its possessives taken off ("How do Medusa's heads draft?": Medusa, the subject)."""
        bare = _POSSESSIVE.sub("", asking)
        return [w for w in sorted(_proper_words(bare, self._language(asking))) if not is_venue(w) and placed(w, bare) and self._unused(w)]

    def _unused(self, word: str) -> bool:
        """No abstract uses any term of the word (each is as rare as a term never seen)."""
        unseen = self.idf(UNSEEN)
        return all(self.idf(t) >= unseen for t in content_terms(word))

    def _typed_lower(self, asking: str) -> list[str]:
        """Names typed in lower case, as a keyword query types them ("wikitext2", "movielens-1m", "gpt2"): letters the language
        seldom uses, joined to a digit. A figure ("3-bit", "60%") starts with its digit, so is never one."""
        common = self.settings.common_name_zipf
        typed = []
        for token in (m.group(0).rstrip(".-") for m in _LOWER_TOKEN.finditer(asking)):
            letters = _LEADING_LETTERS.match(token)
            if letters and any(c.isdigit() for c in token) and _language_zipf(letters.group(0)) < common:
                typed.append(token)  # gpt2, qwen2.5-7b, movielens-1m
        return typed

    def _in_passing(self, name: str, before: str) -> bool:
        """A name given as an example ("... like Foo"), or a thing of the world that sets the scene ("in cooperative
        MARL"): not what the question asks about, so an abstract close to the question still answers it."""
        worldly = _language_zipf(name) >= self.settings.world_name_zipf
        return bool(_EXAMPLE.search(before) or (worldly and _SETTING.search(before)))

    def _by_label(self, named: list[PaperHit], asking: str, found: Retrieval) -> list[PaperHit]:
        """The papers the question calls by their own names, typed wrong too ("AEtn" for AEnt, never a word of the language:
        "fast" is no CAST); the others were named for a thing they mention (EEG, MMLU)."""
        labels = {name_key(m.typed) for m in found.names} | {name_key(m.name) for m in found.names}
        # a word of the language is what was typed ("How fast is...": fast, not CAST misspelt), as the name resolver has it
        words = {name_key(w) for w in _NAME_WORD.findall(asking) if zipf_frequency(w.lower(), "en") < self.settings.respell_zipf}
        # a name the abstract introduces as its own ("we develop GMamba", the GSSM paper's module) calls it too
        introduced = {h.paper_id for m in found.names for h in named if h.paper_id in m.paper_ids and _own_name(h.text, m.name)}
        return [h for h in named if own_keys(h.label) & labels or h.paper_id in introduced
                or any(self._misspelt(w, own_keys(h.label)) for w in words)]

    def _compared_only(self, called: list[PaperHit], asking: str, found: Retrieval, unknown: list[str]) -> list[str]:
        """The unknown names where the question puts the paper it asks about, when every paper it calls by name (`called`)
        is only what that paper is compared with ("... compared to Go-Browse", "... than CAST"): the paper asked about is
        not in the corpus. Empty otherwise ("Did GPT-5 come out on top in NewtonBench?" asks of NewtonBench)."""
        own = set().union(*(own_keys(h.label) for h in called))
        typed = [m.typed for m in found.names if own & {name_key(m.typed), name_key(m.name)} and m.typed in asking]
        if not typed or not all(_COMPARED.search(asking[: asking.find(t)]) for t in typed):
            return []
        return [n for n in unknown if _asked_about(n, asking)]

    def _things(self, asking: str, papers: list[PaperHit], found: Retrieval, unknown: list[str]) -> list[str]:
        """The benchmarks, datasets, models and hardware the question names, other than the papers themselves: not a
        Title-Case compound of the language ("Inferenz-Framework"), nor a misspelling of the paper's own name ("DIVR")."""
        own = set().union(*(own_keys(h.label) for h in papers))
        things = [m.typed for m in found.names if name_key(m.name) not in own and name_key(m.typed) not in own]
        things += [t for t in unknown if _CODED.search(t)]
        things += self._shaped(asking, own, found)
        things += self._compared_unknown(asking)
        things += self._typed_lower(asking)
        things += self._options(asking, papers)
        # "How did LLaVA-style models score on MMEVOKE?": models like LLaVA; an abstract that never names LLaVA has no
        # result on them (no name of its own: "GPTQ-style" asked of the GPTQ paper is that paper)
        things += [m.group(1) for m in _AKIN.finditer(asking) if is_name_like(m.group(1)) and name_key(m.group(1)) not in own]
        return list(dict.fromkeys(t for t in things if t in asking and not is_venue(t) and not self._misspelt(t, own)))

    def _options(self, asking: str, papers: list[PaperHit]) -> list[str]:
        """The choices a question offers ("which 7B model did it fine-tune, qwen or llama?"), when they are words the
        language seldom uses (names, typed in lower case) and the abstract mentions none of them: neither is its answer."""
        found = _OPTIONS.search(asking)
        if found is None:
            return []
        options = [o for o in found.group(1, 2) if _language_zipf(o) < self.settings.common_name_zipf and not is_venue(o)]
        if len(options) < 2 or any(self._mentions(h, o) for h in papers for o in options):
            return []
        return options

    def _setting(self, asking: str, papers: list[PaperHit]) -> list[str]:
        """A setting a yes/no question asks the paper's method to carry over to ("Does it also work against backdoors in
        diffusion models?", "Has it been tested on vision transformers?") whose every word, each one some abstract of the
        corpus uses, the paper's abstract lacks: it does not speak of that setting at all."""
        found = _CARRIED.search(asking)
        if found is None or answer_kind(asking) is not AnswerKind.YES_NO:
            return []
        whole = found.group("setting").strip()
        own = {t for h in papers for t in content_terms(h.label)}
        unseen = self.idf(UNSEEN)
        # the whole setting, or its last part ("backdoors in diffusion models": diffusion models)
        for phrase in dict.fromkeys([whole, re.split(r"\s+(?:in|on|for|of|with|from)\s+", whole)[-1]]):
            terms = content_terms(phrase) - ASKING_WORDS - own
            if not terms or any(self.idf(t) >= unseen for t in terms):
                continue  # a word no abstract uses: the question may call the setting by its own word
            if not any(has_core({t}, _evidence(h), self.settings, self._terms) for h in papers for t in terms):
                return [re.sub(r"^(?:the|a|an)\s+", "", phrase, flags=re.I)]
        return []

    def _misspelt(self, thing: str, own: set[str]) -> bool:
        """A thing one edit from the paper's own name (two for a long one) is that name, typed wrong."""
        key = name_key(thing)
        budget = max(1, typo_budget(len(key), self.settings))  # the paper's own name is one target: a short one may slip too
        return any(OSA.distance(key, label, score_cutoff=budget) <= budget for label in own)

    def _shaped(self, asking: str, own: set[str], found: Retrieval) -> list[str]:
        """Name-shaped words the name book does not hold ("GPT-5" where GPT-4.1 is known, "CHB-MIT"): named all the
        same, unless they are a typo of a name found, hold a paper's own name ("RLP-Arbeit"), are a common word
        (SYSTEM) or are Title-Case compounds of the language ("Inferenz-Framework")."""
        known = own | {name_key(m.typed) for m in found.names} | {name_key(m.name) for m in found.names}
        shaped = []
        proper = _proper_words(asking, self._language(asking))
        for written in sorted(named_things(asking) | proper):
            word = next(iter(joined_name(written)), written)  # "WSD-Ansatz" names WSD
            parts = [name_key(part) for part in HYPHEN.split(word)]
            if name_key(word) in known or any(part in own for part in parts) or not (_CODED.search(word) or word in proper):
                continue
            if len(parts) == 1 and " " not in word and zipf_frequency(word, "en") >= self._common_bar(word, asking):
                continue  # a common word; a hyphened one (MS-COCO) is read by wordfreq as its parts, so never is, and a run of
                # capitalised words (Natural Questions) is a name whatever its words
            shaped.append(word)
        return shaped

    def _common_bar(self, word: str, asking: str) -> float:
        """How common a word must be to be no name: an all-capital one (COCO) in a question not written in capitals
        is typed as a name unless it is one of the language's commonest words (emphasis: ONLY, NOT)."""
        capital = word.isupper() and len(word) >= 4 and not asking.isupper()
        return self.settings.caps_name_zipf if capital else self.settings.common_name_zipf

    def _mentions(self, hit: PaperHit, thing: str) -> bool:
        """The paper's evidence names the thing, in any spelling, or a long thing within the typo budget ("ImageNett":
        a short one, MS-COCO, is one edit from too many words), or each name a hyphened description joins
        ("GPTQ-as-Babai": GPTQ and Babai; not one with a digit, "GPT-5", where the whole is the name)."""
        evidence, key = _evidence(hit), name_key(thing)
        if mentions(evidence, thing):
            return True
        parts = [part for part in HYPHEN.split(thing) if part and not (part.islower() and len(part) <= 3)]  # "as", "of"
        if len(parts) > 1 and not any(ch.isdigit() for ch in thing) and all(mentions(evidence, part) for part in parts):
            return True
        return len(key) >= self.settings.name_typo_two_edits_length and has_core({key}, evidence, self.settings, self._terms)

    def _core(self, asking: str) -> set[str]:
        """The question's rarest content terms; of a question in another language, only those some abstract uses."""
        s = self.settings
        return core_terms(asking, self.idf, s.core_share, s.core_terms_max, seen_only=self._foreign(asking),
                          function_zipf=s.function_word_zipf)

    def _titled(self, asking: str, hits: list[PaperHit]) -> list[PaperHit]:
        """Papers whose title or keywords carry the question's core: what a paper is about, as its authors say."""
        core = self._core(asking)
        return [h for h in hits if core and has_core(core, f"{h.title} {' '.join(h.keywords)}", self.settings, self._terms)]

    def _holding(self, asking: str, hits: list[PaperHit]) -> list[PaperHit]:
        """Papers whose text holds the question's whole core: for a question asking for papers ("interpretability papers
        in this set"), each is one of them however loosely the question's wording matches its sentences. A question of
        alternatives ("brain recordings or comparisons with brain activity") is held by a paper holding either's core."""
        held: list[PaperHit] = []
        for part in dict.fromkeys([asking, *_ALTERNATIVE.split(asking)]):
            core = self._core(part)
            held += [h for h in hits if core and h not in held
                     and all(has_core({t}, _evidence(h), self.settings, self._terms) for t in core)]
        return held

    def _close(self, question: str, hits: list[PaperHit]) -> list[PaperHit]:
        """Papers with one sentence close in meaning to the question, closest first; asked only when
        no paper cleared retrieval's bar, so most questions never pay for it."""
        if self.closeness is None or not hits:
            return []
        scores = self.closeness(question, [h.text for h in hits])
        close = sorted((s, i) for i, s in enumerate(scores) if s >= self.settings.sentence_floor)
        return [hits[i] for _, i in sorted(close, key=lambda pair: (-pair[0], pair[1]))]

    def _off_core(self, question: str, asking: str, hits: list[PaperHit], relevant: list[PaperHit],
                  held: list[PaperHit] | None = None) -> str | None:
        """No retrieved paper (text, title, keywords) holds the question's whole core, and either no sentence of
        theirs is close in meaning or the papers the answer would come from leave a term of it unspoken: the
        question is on a neighbouring topic the corpus does not have. `held`: the papers holding the whole core, when
        the caller has them already. None: on topic; else what the papers do not speak of, where it is known ("")."""
        core = self._core(asking)
        if not core or self.closeness is None:
            return None
        if self._holding(asking, hits) if held is None else held:
            return None  # one paper holds the whole core
        examples = self._example_unknown(asking)
        if examples:  # "speech recognition models such as Whisper": neither the topic nor its instance is here
            rest = _AKIN.sub(lambda m: "" if m.group(1) in examples else m.group(0), asking)  # "Medusa-style" goes whole
            if not self._holding(without_words(rest, {t for e in examples for t in content_terms(e)}), hits):
                return either(examples)
        near = dict(zip([h.paper_id for h in hits], self.closeness(question, [h.text for h in hits])))
        closest = max(near.values(), default=0.0)
        if closest < self.settings.core_sentence_floor:
            return ""
        pulled = self._pulled_away(question, core, hits, relevant, max((near[h.paper_id] for h in relevant), default=0.0))
        if pulled is not None:
            return pulled
        if closest < self.settings.unseen_kind_sentence and self._unseen_kind(asking, core, hits):
            return ""
        if closest >= self.settings.unseen_kind_sentence:
            return None  # one sentence says it as a paraphrase would ("missingness bias" where the abstract says "feature importance")
        return "" if self.settings.core_term_gap < COSINE_GAP_OFF and self._unspoken(question, asking, hits, relevant) else None

    def _pulled_away(self, question: str, core: set[str], hits: list[PaperHit], papers: list[PaperHit], before: float) -> str | None:
        """The core words no retrieved paper holds pull the question away from the papers the answer would come from: without
        them it is closer to their sentences by more than `core_pull` ("quantizing speech recognition models" is nearer a paper
        on quantizing LLMs without "speech recognition"); a paraphrase's own word pulls it towards them instead. `before`:
        the question's closeness to those papers, already measured. Those words, as the question writes them, or None."""
        assert self.closeness is not None
        s = self.settings
        if s.core_pull >= COSINE_GAP_OFF or not papers or self.similarity is None:
            return None
        unheld = {t for t in core if not any(has_core({t}, _evidence(h), s, self._terms) for h in hits)}
        if not unheld:
            return None
        rest = without_words(question, unheld)
        if not content_terms(rest) or 1.0 - self.similarity(question, rest) < s.core_pull_moves:
            return None  # what is left out carries little of the question's meaning: a turn of phrase ("lucky fixes")
        if max(self.closeness(rest, [h.text for h in papers])) - before <= s.core_pull:
            return None
        return either(words_meeting(question, unheld))

    def _unseen_kind(self, asking: str, core: set[str], hits: list[PaperHit]) -> bool:
        """The question asks for a kind of a thing the abstracts have, in a word none of them uses ("jailbreak attacks",
        "quantum error-correcting codes"), and no abstract matches it as closely as a paraphrase would."""
        s = self.settings
        if self._foreign(asking) or any(h.dense >= s.unseen_kind_dense for h in hits):
            return False
        kinds = unseen_kinds(asking, core, self.idf, s.unseen_kind_zipf, s.function_word_zipf)
        return any(not any(has_core(content_terms(k), _evidence(h), s, self._terms) for h in hits) for k in kinds)

    def _unspoken(self, question: str, asking: str, hits: list[PaperHit], papers: list[PaperHit]) -> bool:
        """The question's terms are split among the retrieved papers: each paper the answer would come from lacks a
        term another retrieved paper holds, and none of its sentences comes as close (MiniLM) to the term as the
        question does, by more than `core_term_gap` ("diffusion" asked of a paper on watermarking text)."""
        assert self.closeness is not None
        words = corpus_words(asking, self.idf)
        held = {h.paper_id: {t for t in words if has_core({t}, _evidence(h), self.settings, self._terms)} for h in hits}
        found = set().union(*held.values())
        lacking = [sorted(found - held.get(h.paper_id, found)) for h in papers]
        if not papers or not all(lacking):
            return False  # a paper holds every term the others hold
        terms = sorted({t for missing in lacking for t in missing})
        to_question = dict(zip(terms, self.closeness(question, [words[t] for t in terms])))
        to_paper = {t: self.closeness(words[t], [h.text for h in papers]) for t in terms}
        gap = self.settings.core_term_gap
        return all(any(to_question[t] - to_paper[t][i] > gap for t in missing) for i, missing in enumerate(lacking))

    def _about(self, asking: str, papers: list[PaperHit], found: Retrieval, unknown: list[str], named: bool) -> Verdict:
        """The question (its asking part) is about these papers: does any of their abstracts state the kind of detail asked?
        `unknown`: the names in it no abstract mentions (`_unknown`)."""
        ids = [h.paper_id for h in papers]
        partly = []
        for kind in asked_details(asking):
            if kind is AUTHORS and (found.authors or all(h.authors for h in papers)):
                continue  # who wrote what is in the papers' metadata: it named them, or it lists each paper's authors
            if any(kind.states(h.text) for h in papers):
                continue
            if not (kind.partly and any(kind.partly.search(h.text) for h in papers)):
                return Verdict.no(RefusalReason.DETAIL_MISSING, kind.name, ids)
            partly.append(f"the {kind.name}")  # "a 7B parameter language model": what it says of the model is given
        every = bool(found.authors) and not found.names
        if is_plural(asking):  # "which papers by X" covers X's papers
            return Verdict.yes(ids, every=every)
        # "How many routers does it rank?", "which model came out best?": what the abstract speaks of and never gives
        missing = partly + unreported(asking, [h.text for h in papers], [h.label for h in papers], self.settings.count_window,
                                       self.settings.count_unspoken)
        if named and asks_number(asking) and not missing and not any(states_number(h.text) for h in papers):
            if not all(asks_number(ask) for ask in sub_questions(asking)):  # "How fast is it? What does it rely on?"
                return Verdict.yes(ids, every, (), ["the figure asked for"])  # the other question is answered, the absence said
            return Verdict.no(RefusalReason.DETAIL_MISSING, "figure asked for", ids)  # no number to give at all
        # "How does Tequila do on MMLU?": a benchmark, model or figure the paper's abstract never mentions
        absent = [t for t in self._things(asking, papers, found, unknown) + figures_in(asking)
                  if not any(self._mentions(h, t) for h in papers) and (named or not _FIELD_ACRONYM.fullmatch(t))]
        absent += self._setting(asking, papers) if not absent else []
        if absent and answer_kind(asking) is AnswerKind.COMPARISON:
            # "How do DIRECTER and Attribution-Guided Decoding differ?": a thing compared that another retrieved paper
            # introduces as its own is that paper, called by its name rather than its label (a benchmark it only uses is not)
            more = [h for h in found.hits if h not in papers and any(_introduces(h.text, t) for t in absent)]
            if more:
                ids += [h.paper_id for h in more if h.paper_id not in ids]
                absent = [t for t in absent if not any(_introduces(h.text, t) for h in more)]
        if absent or missing:
            if not any(reports_close(h.text, asks_figures(asking)) for h in papers):
                said = ([f"results on {', '.join(absent)}"] if absent else []) + missing
                return Verdict.no(RefusalReason.DETAIL_MISSING, ", ".join(said), ids)
            return Verdict.yes(ids, every, absent, missing)
        if named and answer_kind(asking) is AnswerKind.RESULTS and not any(states_number(h.text) for h in papers):
            # "What Recall@10 does it achieve?": figures asked where the abstract gives none; what it reports is given, the
            # absence said (a results question the abstract answers in words is no refusal)
            return Verdict.yes(ids, every, (), ["the figure asked for"])
        # "Which six QA datasets does it use?" where the abstract says "on six QA datasets": what it says of them is
        # given, the names said absent (never a refusal: the abstract does speak of the thing)
        unnamed = unnamed_kinds(asking, [h.text for h in papers], [h.label for h in papers])
        if unnamed:
            return Verdict.yes(ids, every, (), unnamed)
        # a one-paper question is answered from the paper retrieval ranked first
        return Verdict.yes(ids, every=every)


_INTRODUCING = r"\b(?:we\s+)?(?:propose|proposes|introduce|introduces|present|presents|call|dub)\b[^.]{0,40}?"


def _introduces(text: str, thing: str) -> bool:
    """Does the abstract introduce the thing as its own ("we introduce Attribution-Guided Decoding (AGD)")?"""
    return bool(text) and re.search(_INTRODUCING + re.escape(thing), text, re.I) is not None


# a name the abstract gives its own work: right after the verb that introduces it ("we develop GMamba, a ...")
_OWN_NAME = r"\b(?:we\s+)(?:propose|introduce|present|develop|build|design|call|dub|name)\W+(?:(?:the|a|an|our)\s+)?"


# ... the whole name: what follows it is punctuation or a word that starts describing it ("Low-Rank" is only the start of
# "we propose Low-Rank Sparse Attention (Lorsa)")
_NAME_ENDS = r"(?=\s*[,(;:.]|\s+(?:a|an|which|that|to|for|as)\b)"


def _labelled(asking: str, hits: list[PaperHit]) -> list[PaperHit]:
    """Papers whose label of several words the question writes ("... rompere la Reversal Curse ..."): it calls them by the
    name the service gives them, in whatever language it is asked. A label cut short ("…") is no name to write."""
    words = f" {normal(asking)} "
    return [h for h in hits if " " in h.label.strip() and not h.label.endswith("…") and f" {normal(h.label)} " in words]


def _own_name(text: str, name: str) -> bool:
    """Does the abstract introduce `name` as its own work, not only mention it?"""
    return re.search(_OWN_NAME + re.escape(name) + _NAME_ENDS, text, re.I) is not None


def _language_zipf(name: str) -> float:
    """How often English at large uses the name, as one word (Math-Shepherd: not two words wordfreq knows)."""
    return zipf_frequency(HYPHEN.sub("", name), "en")


# what a method is asked to carry over to: "does it (also) work against X", "has it been tested on X"
_CARRIED = re.compile(r"\b(?:work|works|apply|applies|transfer|transfers|generali[sz]es?|extend|extends|hold|holds|tested|evaluated"
                      r"|applied|validated)\s+(?:also\s+|as\s+well\s+)?(?:to|on|for|against|in|with|beyond)\s+"
                      r"(?P<setting>(?:[\w-]+\s+){0,5}?[\w-]+)\s*(?:\s(?:too|as\s+well|also))?\s*(?:[?？.,;]|$)", re.I)
_AKIN = re.compile(r"(?<![\w-])([A-Za-z][\w.]*)-(?:style|like|based|inspired|type)\b", re.I)  # "LLaVA-style": akin to LLaVA
# the choices a question ends on: "…, qwen or llama?"
_OPTIONS = re.compile(r"[,:(]\s*(?:either\s+)?([A-Za-z][\w.-]{2,})\s+or\s+([A-Za-z][\w.-]{2,})\s*\)?\s*[?？]?\s*$", re.I)
_ALTERNATIVE = re.compile(r"\s+(?:or|ou|o|oder|oppure)\s+", re.I)  # "X or Y" (ou, o, oder, oppure): either is asked about

COSINE_GAP_OFF = 2.0  # two cosines never differ by more: a core_term_gap this high turns the term test off

# a name given as an instance of what is asked: "models like Whisper", "such as Whisper or Canary", "Medusa-style heads"
_INSTANCE_WORDS = r"like|such as|e\.g\.?|including|for (?:example|instance)"
_INSTANCE_BEFORE = re.compile(rf"\b(?:{_INSTANCE_WORDS})\W+(?:\S+\W+(?:or|and)\W+)?$", re.I)
# a name given as an example or a point of comparison, not the thing asked about
_EXAMPLE = re.compile(rf"\b(?:{_INSTANCE_WORDS}|i\.e\.?|vs\.?|versus|than|"
                      r"compared (?:to|with)|other than|besides|beyond|instead of)\W+(?:\S+\W+){0,3}$", re.I)
# a name after these is a thing asked of the paper ("on the TUH EEG corpus", "against ViT-B/16"), or the figure asked for
# ("what MSE does it get"), not the paper asked about
_THING_BEFORE = re.compile(r"\b(?:like|such as|e\.g\.?|including|than|in|on|for|under|within|across|with|from|against|over|versus|vs"
                           r"|compared (?:to|with))\W+(?:\S+\W+){0,2}$|\b(?:what|which)\W+$", re.I)
# ... and a name here is the paper asked about: opening the question, after "does", "of", "about" ("What does the Foo paper
# report", "Foo results on GSM8K")
_VERBS = r"does|did|do|is|was|are|were|has|have"  # the verbs a question puts its subject after
_SUBJECT_BEFORE = re.compile(rf"(?:^|\b(?:{_VERBS}|of|about)\W+)(?:the\W+)?$", re.I)


def _asked_about(name: str, asking: str) -> bool:
    """Is the name where a question puts the paper it asks about, not a thing it asks of that paper?"""
    before = asking[: asking.find(name)]
    return not _THING_BEFORE.search(before) and bool(_SUBJECT_BEFORE.search(before))


# what a thing is compared with: "... compared to Go-Browse", "better than CAST", "X vs Y"
_COMPARED = re.compile(r"\b(?:than|vs|versus|compared\s+(?:to|with)|relative\s+to|against)\W+(?:the\W+)?$", re.I)
_POSSESSIVE = re.compile(r"(?<=\w)['’]s\b")
# where a question puts the paper or method it asks about by a proper name: the subject of its verb, or before "paper"
_VERB_BEFORE = re.compile(rf"\b(?:{_VERBS})\W+(?:the\W+)?$", re.I)
_PAPER_AFTER = re.compile(r"^\W*(?:paper|method|model|approach|framework|system|technique|algorithm|architecture)s?\b", re.I)


def _called_a_paper(name: str, asking: str) -> bool:
    """Is the proper name where only a paper or method stands: the subject of the question's verb, or before "paper"?"""
    at = asking.find(name)
    before, after = asking[:at], asking[at + len(name):]
    return not _THING_BEFORE.search(before) and bool(_VERB_BEFORE.search(before) or _PAPER_AFTER.search(after))


_SETTING = re.compile(r"\b(?:in|on|for|under|within|across|with|from)\W+(?:\S+\W+){0,2}$", re.I)  # "in cooperative MARL"
# a digit, or a capital after a letter inside a part: GPT-5, TUH, CHB-MIT, Qwen3 (not "Inferenz-Framework")
_CODED = re.compile(r"\d|[A-Za-z][A-Z]")
# a field's abbreviation (kNN, MARL, RLHF): a question describing a paper uses one for what the abstract writes out, so
# it says nothing absent unless the question names the paper (then it is a thing asked of that paper)
_FIELD_ACRONYM = re.compile(r"(?=(?:[a-z]*[A-Z]){2})[A-Za-z]{2,5}s?")
_LOWER_TOKEN = re.compile(r"(?<![\w@.-])[a-z][a-z\d.-]*(?![\w@-])")  # one quantifier: linear on any input
_LEADING_LETTERS = re.compile(r"[a-z]{3,}")
_NAME_WORD = re.compile(r"[^\W_][\w.²-]{2,}")  # a word long enough to be a paper's name typed wrong
_SENTENCES = re.compile(r"(?:[^.?!;:]|[.:](?!\s|$))+")
# a capitalised word, and the capitalised words and version numbers that follow it: "Natural Questions", "Claude 3.5 Sonnet"
# a version is read whole: "Llama 3.1's" names no "Llama 3"
_CAPITALISED = re.compile(r"(?<![\w'’-])[A-Z][a-z]{3,}(?:\s+(?:\d+(?:\.\d+)*(?![.,]?\d)|[A-Z][a-z]+)(?![\w'’-]))*(?![\w'’-])")


def _proper_words(asking: str, language: str | None) -> set[str]:
    """Capitalised words past a sentence's first ("on Robomimic", "Claude 3.5 Sonnet"): a benchmark or a model is named so,
    when it has no name-shaped spelling; not in a language that capitalises its nouns (German: `language`), where each
    noun is so, nor a noun of it in a question of another."""
    if language in _NOUN_CAPITALISING:
        return set()
    words = set()
    for sentence in _SENTENCES.findall(asking):
        first = re.match(r"\W*\w+", sentence)
        words |= {m.group() for m in _CAPITALISED.finditer(sentence, first.end() if first else 0)}
    return {w for w in words if not any(zipf_frequency(w.lower(), language) > zipf_frequency(w.lower(), "en")
                                        for language in _NOUN_CAPITALISING)}


_NOUN_CAPITALISING = ("de",)  # the accepted language that writes every noun with a capital


# a term the question quotes, in any language's quotation marks: "O que é a 'grouping loss'?", "le « Reversal Curse »"
# (a straight quote only between non-letters: "don't" and "the models' outputs" quote nothing)
_QUOTED = re.compile(r"[‘“«「『„]\s?([^’”»」』“]{3,60}?)\s?[’”»」』“]|(?<!\w)[\"']([^\"']{3,60}?)[\"'](?!\w)")


def _quoting(asking: str, hits: list[PaperHit]) -> list[PaperHit]:
    """Papers whose abstract holds, word for word, each term of two words or more the question quotes: the question is
    about that term, whatever language it asks in (MiniLM cannot read the question; the quote it can match)."""
    quoted = [q.strip() for pair in _QUOTED.findall(asking) for q in pair if len(q.split()) >= 2]
    if not quoted:
        return []
    keys = [name_key(q) for q in quoted]
    return [h for h in hits if all(k and k in name_key(_evidence(h)) for k in keys)]


def _evidence(hit: PaperHit) -> str:
    """What a paper says it is about: its title, its keywords and its text."""
    return " ".join([hit.title, " ".join(hit.keywords), hit.text or " ".join(e.text for e in hit.evidence)])
