"""Settings: defaults here < the package's default.toml < QA_CONFIG (or --config) < environment (QA_*).

The default file is found beside the installed package (the wheel ships it as
qa_service/default.toml) or in the source checkout's config/, wherever the command runs.
"""

from __future__ import annotations

import dataclasses
import os
import re
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Mapping
from urllib.parse import urlsplit

from .errors import ConfigError


def _s(default: Any, description: str) -> Any:
    return field(default=default, metadata={"description": description})


@dataclass(frozen=True)
class Settings:
    """Every setting the service reads, each with what it is for."""

    data_dir: str = _s("./data", "Folder of the embedded ChromaDB and the BM25 index.")
    seeds_dir: str = _s("", "Corpus that `qa-service ingest` (and so `make run`) reads when given no paths; empty: the 57 seed abstracts shipped with the package.")
    chroma_url: str = _s("", "URL of a Chroma server (chroma run); empty uses the embedded store in data_dir.")
    collection: str = _s("iclr2026", "The default corpus: its name, and the prefix of its Chroma collections (other corpora are named by `ingest --corpus`).")
    embedding: str = _s("minilm-int8", "Embedding model: 'minilm-int8' (offline, bundled) or 'openai'.")
    openai_embedding_model: str = _s("text-embedding-3-small", "Model used when embedding = 'openai'.")
    embedding_batch_size: int = _s(4, "Chunks embedded per onnxruntime call (length-sorted); small batches pad least and measured fastest.")
    writer_wait: float = _s(60.0, "Seconds a second writer (ingest, check --repair) waits for the one writing the data dir before it gives up with exit code 75; 0 refuses at once. An unchanged re-ingest of 20,000 papers holds the lock about 25 s.")
    writer_lease: float = _s(30.0, "With a Chroma server: seconds without a heartbeat after which a waiting writer takes over the writer lock in Chroma from a holder presumed dead (killed, or cut off); the holder beats every third of it. A killed ingest delays the next by this long.")
    ingest_batch_papers: int = _s(64, "Papers embedded and written per step of an ingest (the unit an interrupted ingest resumes from).")
    embedding_threads: int = _s(0, "onnxruntime intra-op threads; 0 lets onnxruntime choose.")
    query_cache_size: int = _s(1024, "Query embeddings kept in memory (LRU).")
    tokenizer_encoding: str = _s("cl100k_base", "tiktoken encoding for token counts (bundled offline).")
    chunk_sentences: int = _s(3, "Sentences per chunk.")
    chunk_max_tokens: int = _s(180, "Upper bound of a chunk in tiktoken tokens (MiniLM's window is 256 word pieces).")
    retrieval_k: int = _s(5, "Papers returned by default.")
    max_k: int = _s(50, "Largest k a request may ask for.")
    candidate_chunks: int = _s(60, "Chunks fetched from each of the dense and BM25 sides before fusion.")
    rrf_k: int = _s(60, "Reciprocal-rank-fusion constant.")
    dense_floor: float = _s(0.40, "Dense cosine above which a paper is relevant on its own.")
    weak_dense_floor: float = _s(0.30, "Dense cosine below which a paper is never relevant.")
    lexical_floor: float = _s(0.5, "Share of the question's rare-term weight a paper must contain when its cosine is between the floors.")
    respell_zipf: float = _s(2.0, "For that share, a question word no abstract uses that English uses less than this (wordfreq Zipf) may be a typo, counted as the corpus's nearest term within the typo budget (\"refusl\"); a word of another language (\"surmonter\", \"sans\") is left out, any other (\"federated\", \"retrosynthesis\") still counts against the paper. 0 turns both off.")
    sentence_floor: float = _s(0.5, "A paper none of whose chunks clears the bar is still relevant when one of its sentences is this close to the question (MiniLM cosine): a chunk dilutes a one-sentence match. Tuning split: the highest value that refuses no more unanswerable questions than without it.")
    unknown_name_dense: float = _s(0.5, "A question about a name no abstract mentions is still answered when an abstract matches it this closely (cosine): the name was noise.")
    cognate_min_stem: int = _s(6, "A word of a Spanish, Portuguese, French or German question whose stem (in its language) has at least this many letters is looked up among the corpus's English stems as a cognate within an edit (\"cuantiz\" -> quantiz); a five-letter stem an edit away is as often a false friend as a cognate, so it must be the corpus's stem as it stands (\"navigateur\": navig). 0 turns cognates off.")
    cognate_letters_per_edit: int = _s(6, "A cognate may differ from the corpus's stem by one edit per this many letters of the shorter (\"cuantiz\" -> quantiz); a stem shorter than this must match exactly.")
    cognate_suffix_letters: int = _s(4, "A word with no cognate of its stem's length may be one with a derivational suffix of its own of at most this many letters, its start matched as a whole stem is (\"Kalibrierung\": kalibrier -> calibr and -ier; \"observabilidad\": observabil -> observ). Tuning files: one German list question answered, nothing lower. 0 turns it off.")
    cognate_common_zipf: float = _s(5.0, "A word the question's own language uses at least this often (wordfreq Zipf) is a function or asking word (\"sobre\", \"welche\") and is never looked up as a cognate.")
    chinese_min_chars: int = _s(2, "A Chinese word of a question (or a Japanese kanji compound) of at least this many characters is read with its English CC-CEDICT sense when the corpus's words say it (\"奖励\" -> reward), the senses given after the question as asked; one character has a dozen senses. 0 turns the Chinese gloss off.")
    katakana_min_chars: int = _s(2, "A katakana word of a Japanese question (a loanword: \"キャリブレーション\" -> calibration) of at least this many characters is read with its English JMdict sense when the corpus's words say it, by the Chinese gloss's rules (`chinese_senses`, `chinese_sense_words`); Japanese writes a field's borrowed terms so. 0 turns the katakana gloss off.")
    english_reading: bool = _s(True, "Retrieval's dense side and the offline model's choice of sentences embed a question in another language as its English words alone (its glossed terms, its names, the words English uses as often, its words with no English term: \"quantization LLMs\" for \"¿Qué trabajos estudian la cuantización de LLMs?\"), not the question with the terms beside its words; MiniLM was trained on English and places the mixed text far from the abstracts. false: the mixed text, as BM25 and the judge read it.")
    chinese_senses: int = _s(2, "A Chinese word is read as the first of its first this many CC-CEDICT senses (the dictionary's commonest first) that the corpus's words say (\"过程\": course of events, process -> process); a later sense is as often another field's (\"会话\": conversation, dialog, session).")
    chinese_sense_words: int = _s(3, "A CC-CEDICT sense of more words than this is a definition (\"to converse in a non-native language\"), not a term, and is never a gloss.")
    abbreviation_share: float = _s(0.1, "A question's abbreviation is searched in its other form too (mixture-of-experts and MoE) when at most this share of the papers use it: one most abstracts use (LLM) would add only common words. 0 turns it off.")
    count_window: int = _s(4, "A count is given when a number stands at most this many words before the counted thing (\"10 state-of-the-art search systems\"): further off, the number counts something else.")
    count_unspoken: bool = _s(True, "A count asked of a thing the paper's abstract never speaks of, even a typo away (\"how many A100 GPU hours\", \"how many nearest neighbours k\"), is said not to be reported, as a count of a thing it speaks of without a number is. Tuning split: of the count questions whose thing the gold abstract never names, 6 are near misses and the 2 answerable ones are typos (\"questons\"). false: left unjudged, as the question may call the thing by another word.")
    caps_name_zipf: float = _s(5.0, "An all-capital word of four letters or more is a name (COCO, GLUE, MATH) unless the general language uses it this often (Zipf; ONLY, NOT, SYSTEM are emphasis).")
    common_name_zipf: float = _s(3.0, "A name-shaped word no abstract mentions refuses a question as not_in_corpus only when the general language seldom uses it (wordfreq Zipf below this): GUI, Android or CPU are things in the world, LUMEN-PRM a made-up name. 3 is a word seen about once per million words.")
    world_name_zipf: float = _s(1.0, "A name no abstract mentions that the general language uses at least this often (wordfreq Zipf; 1, once per 100 million words, is the least it lists) is a thing of the world, not made up: where it only sets the scene (\"in cooperative MARL\"), an abstract that matches the question closely still answers it.")
    core_share: float = _s(0.34, "The question's core is this share of its content terms, the rarest (idf) first: a neighbouring topic shares the common terms, not the rare ones.")
    core_terms_max: int = _s(3, "At most this many terms make the question's core.")
    core_sentence_floor: float = _s(0.4, "A question whose whole core no retrieved paper holds (text, title, keywords) is off-topic unless one of their sentences is this close to it (MiniLM cosine). Every answerable tuning question clears it (lowest 0.75); held-out and fresh paraphrases reach down to 0.36 (one fresh question is refused at 0.4), neighbouring topics written for the seeds sit at 0.39-0.57: the cosine separates them only in part.")
    other_language_zipf: float = _s(4.5, "A word is a common word of another accepted language (es, pt, fr, de) at this wordfreq Zipf or above (4.5, once per 30,000 words: \"sur\", \"wie\", \"usan\", \"artículos\"); no sentence of 449 English abstracts of four fields has two such words.")
    other_language_margin: float = _s(1.5, "Such a word counts for that language only when English uses it this much less (Zipf; 1.5 is about 30 times less often): \"total\" and \"video\" are English words too.")
    other_language_words: int = _s(2, "A question with this many such words of one language is in that language, and its words no abstract uses are not its core (the abstracts are English); one (\"Lake Como\") is a name.")
    unseen_kind_zipf: float = _s(5.0, "A core word no abstract uses, right before a word some abstract uses, names a kind of that thing the corpus lacks (\"jailbreak attacks\", \"quantum error-correcting codes\") only when the language uses it less often than this (wordfreq Zipf; 5 is once per 10,000 words): \"much\", \"deal\", \"anyone\" are how a question is put.")
    function_word_zipf: float = _s(6.0, "The thing such a word qualifies is a word the language uses less often than this (Zipf; 6 is once per 1,000 words): \"like\", \"whether\", \"about\" are function words, no thing.")
    unseen_kind_dense: float = _s(0.0, "A question asking for such an unseen kind is still answered when a retrieved abstract matches it this closely (chunk cosine): the word was a paraphrase; 0 turns the test off, the default: at 0.47 (between the tuning files' answerable 0.51-0.62 and refused topics 0.41-0.44) it refused none of the blind fresh5's 12 off-topic questions and 1 of its 70 answerable ones.")
    unseen_kind_sentence: float = _s(0.6, "A question asking for such an unseen kind is also answered when one retrieved sentence is this close to it (MiniLM cosine): a one-sentence paraphrase. The neighbouring topics it refuses reach 0.54. A question whose core is split between papers (`core_term_gap`) is answered too when a sentence is this close (fifth pass: one answerable question of the tuning files more answered, one neighbour more answered).")
    core_pull: float = _s(0.03, "A question whose core no retrieved paper holds is off-topic when taking the core words none of them holds out of the question brings it this much closer (MiniLM cosine, best sentence of the papers the answer would come from): the word pulls the question away from what the papers say (\"speech\" in \"quantizing speech recognition models\"), where a paraphrase's word pulls it towards them. 2 (two cosines never differ more) turns it off.")
    core_pull_moves: float = _s(0.15, "The core-pull test weighs only words that carry this much of the question's meaning: the question without them is at most 1 minus this close to itself (MiniLM cosine). A turn of phrase (\"lucky fixes\", \"which knob matters\") moves the question little, and its absence from the abstracts says nothing of the topic.")
    core_term_gap: float = _s(0.27, "A question whose core is split is also off-topic when each paper the answer would come from lacks a term another retrieved paper holds and is this much less close to the term than the question is (MiniLM cosine, the term to the paper's best sentence vs to the question): \"diffusion\" asked of a paper on watermarking text. At 0.27 it refuses 6 more of fresh3's 12 neighbouring topics and no answerable question of the four tuning files (they reach 0.25, the topics it refuses 0.29-0.47), but 1 of the 30 held-out answerable questions: six answers of unrelated sentences weigh more than one wrong refusal. 2 (two cosines never differ more) turns it off.")
    name_max_papers: int = _s(3, "A name-shaped word found in more papers than this names a shared thing (a model, a benchmark), not one paper.")
    name_typo_min_length: int = _s(5, "Shortest word (normalised) matched to a name within one edit: shorter words collide with other names.")
    name_typo_two_edits_length: int = _s(9, "Words at least this long may be two edits from a name (RoutrArena, NewtonBnech).")
    max_question_words: int = _s(200, "Words of a question examined for names: bounds the work a long question can cause.")
    max_typo_lookups: int = _s(16, "Words of a question matched to names within the typo budget, and words of a question in another language matched to the corpus's stems as cognates; each is a scan of every name in the corpus (of its stems of about the word's length), so this bounds a question's work (the most any question in the four question files needs is 11).")
    plural_k: int = _s(8, "Papers retrieved for a question about several papers ('which papers...'): multi-paper recall@5 is 0.8, @10 0.9.")
    sentence_cache_size: int = _s(20000, "Sentence vectors kept in memory (LRU, ~1.5 KB each) for choosing answer sentences by meaning.")
    sentence_vectors: str = _s("alone", "How the ingest keeps each abstract sentence's vector, so that answers embed only the question: \"alone\" embeds each new sentence on its own (a second, shorter run of MiniLM), \"pooled\" mean-pools the chunk run's token embeddings inside each sentence (no second run; measured to pick sentences a little worse, and it moves the cosines sentence_floor and core_sentence_floor were tuned on), \"off\" keeps none.")
    roles_cache_size: int = _s(4096, "Abstracts whose sentence roles (background, problem, method, result, availability) and analysed terms the offline model and the answerability judge keep in memory: the same abstracts come back question after question.")
    answer_semantic_weight: float = _s(0.6, "Weight of MiniLM cosine against rare-term overlap when the offline model picks sentences (tuning split).")
    answer_number_bonus: float = _s(0.15, "Added to a sentence with a number when the question asks how much/many.")
    answer_rank_decay: float = _s(0.9, "Per-rank discount of a source's sentences: retrieval's order is evidence too.")
    answer_multi_share: float = _s(0.5, "A paper joins a multi-paper answer when its best sentence scores this share of the best paper's (tuning split: 0.6 -> 0.5 lifts gold recall 0.72 -> 0.82 for precision 0.82 -> 0.71; a missed paper costs a lister more than one they dismiss by its quote).")
    answer_second_share: float = _s(0.8, "A one-paper answer adds its second sentence when it scores this share of the first.")
    answer_max_papers: int = _s(8, "Most papers quoted in one multi-paper answer.")
    answer_kin_meaning: float = _s(0.7, "A paper below answer_multi_share still joins a multi-paper answer when its best sentence is this share of the closest sentence's MiniLM cosine, and holds answer_kin_words of the most rare-term weight any sentence holds: rank discounts sink a paper on the topic that retrieval put fifth (the eight tuning files: multi gold cited up 0.00-0.06 on each, precision down 0.00-0.03).")
    answer_kin_words: float = _s(0.6, "See answer_kin_meaning: the share of the best sentence's rare-term weight (the question's words) a low-ranked paper's best sentence must hold to join a list.")
    answer_list_words: float = _s(0.2, "A paper joins a multi-paper answer only when one of its sentences holds more than this share of the rare-term weight (the question's words) the best sentence of any paper holds (none is asked of a question no sentence shares a word with, as one in another script): a paper that shares no word of the question is retrieval's noise (sixth pass, the ten tuning files: precision 0.742 -> 0.753 of the lists answered, gold cited 0.888 -> 0.881).")
    answer_list_own_share: float = _s(0.5, "A listed paper whose best sentence only sets the scene (background: the field, what is known) also gives its best sentence of its own work (problem, method or result) when that scores at least this share of the best: a scene-setting sentence says what field a paper is in, not what it does (eleventh pass, the tuning files: multi fact recall up on six, down on none).")
    answer_per_named: int = _s(2, "Sentences from each paper a question names when it asks no list and no comparison by its wording (\"Which is faster, CAST or SERE?\"): each paper is answered, and two papers' answer stays about as long as one paper's.")
    answer_figure_words: float = _s(0.5, "A figured result sentence holding this share of the question's rare-term weight that the best figured one holds gives an asked figure too, so a results answer gives every one (\"the gFID numbers\": each gFID): half, since the best one also holds the paper's setting words (ImageNet) the others leave implicit.")
    max_abstract_chars: int = _s(20000, "Longest abstract ingest accepts (longer refuses the file, naming the paper; refused, not cut, since a cut abstract would be served as the paper's): OpenReview caps abstracts at 5,000 characters, and one of 1 MB took 141 s and 493 MB to ingest.")
    max_question_chars: int = _s(2000, "Longest question accepted (HTTP 413 beyond).")
    max_body_bytes: int = _s(65536, "Largest HTTP request body (HTTP 413 beyond).")
    max_history_turns: int = _s(20, "Most earlier turns accepted in `history` (and earlier messages on /v1).")
    max_history_chars: int = _s(4000, "Longest content of one earlier turn (HTTP 413 beyond); on /v1 the longest content (or text part) of any message.")
    max_filter_chars: int = _s(200, "Longest ?q= filter of /api/papers, and longest metadata filter value (HTTP 400 beyond): they match ids, labels, titles, venues and names, none near this long.")
    max_filter_values: int = _s(20, "Most values one metadata filter field may list (HTTP 400 beyond): a filter names a few years, venues or authors, and each is a clause of the store's query.")
    max_page_papers: int = _s(1000, "Most papers one /api/papers page holds (?limit=, 1 to this; a ?cursor= without a limit pages by this): at 15,000 papers the whole list was 1.55 MB and 0.85 s a call.")
    metadata_list_max: int = _s(20, "Most papers an answer from metadata ('Which papers by ...?') names and cites one by one; it counts the rest.")
    filter_cache_size: int = _s(256, "Filters whose matching paper ids are kept per corpus version (LRU): the page sends the same few filters again and again.")
    filter_exact_chunks: int = _s(8000, "A filter that leaves at most this many chunks of a corpus is searched exactly in memory, over its chunks' vectors read once per corpus version and filter (2,600 chunks: 97 ms to read, then 0.1 ms a search, against 14-29 ms for Chroma's `ids` filter); more go to Chroma.")
    filter_vector_cache_chunks: int = _s(32000, "Chunk vectors kept for filters' exact searches, per worker (least recently used first out): 32,000 are 49 MB, several filters of `filter_exact_chunks` each.")
    filter_overfetch_share: float = _s(0.1, "A filter that leaves at least this share of a corpus's chunks searches the nearest chunks unfiltered and keeps its own: Chroma's `ids` filter cost 14-29 ms whatever the list at 20,000 papers, 960 unfiltered results 10 ms, so with 80 chunks asked this bounds the over-fetch near 1,200.")
    filter_overfetch: float = _s(1.5, "How many more nearest chunks than the filter's share needs on average are fetched (1/share x n x this); fewer allowed ones among them than asked falls back to the `ids` filter, so the result is the same.")
    max_context_tokens: int = _s(3000, "Token budget of the prompt sent to the model, answer room included.")
    answer_tokens: int = _s(512, "Tokens reserved for the model's answer.")
    model: str = _s("", "Chat model name; empty means the offline extractive model unless an API key is set.")
    default_openai_model: str = _s("gpt-4o-mini", "Model used when an API key is set and `model` is empty.")
    openai_base_url: str = _s("", "OpenAI-compatible endpoint (vLLM, Ollama, llama.cpp); empty is OpenAI's.")
    openai_api_key: str = _s("", "API key; prefer the OPENAI_API_KEY environment variable.")
    model_timeout: float = _s(20.0, "Seconds one model attempt may take; never more than what is left of model_deadline.")
    model_deadline: float = _s(30.0, "One deadline for a whole model call, retries and backoff included (HTTP 504 after it): a hung model server costs a user this long, not attempts x timeout.")
    model_concurrency: int = _s(2, "Model calls one process runs at once: a hung model server holds this many request threads, never all of serve's, so /healthz, search and the page keep answering.")
    model_queue_wait: float = _s(2.0, "Seconds a question waits for a free model slot before a 503 with Retry-After.")
    model_retries: int = _s(2, "Retries on 429/5xx/connection errors, with backoff, while model_deadline allows.")
    support_threshold: float = _s(0.72, "Share of a claim's idf-weighted words its quote must hold (with its figures, names and polarity) for a check mark: below it, a paraphrase is 'unverified' (0.75 -> 0.72 on the five labelled sets read: check-mark recall up 0.015-0.06 on each, precision within -0.008..+0.005; the figure, name and polarity checks now catch what a lower share lets in).")
    support_elsewhere_credit: float = _s(0.5, "Credit for a claim's word found in the cited abstract but not in the quote: a paraphrase may draw on two sentences, but the quote must carry most of it.")
    figure_hedge_share: float = _s(0.05, "How far a hedged figure ('roughly 41%', 'nearly 50%') may be from the quoted one, as a share of it; an unhedged one may differ only by its own rounding.")
    prior_work_weight: float = _s(0.5, "How much an abstract's sentence about earlier work ('Existing methods ...', 'On the other hand ...') counts when choosing the quote for a claim about the paper itself: it describes what the paper is not.")
    contradict_share: float = _s(0.5, "Share of a claim's words a quote must hold before its other figure or opposite direction counts as a contradiction, not as another topic.")
    word_form_prefix: int = _s(5, "Two word stems that share their first this many letters, one starting the other, are one word's forms ('speed'/'speedup', 'infer'/'inference'); shorter stems must match whole.")
    quote_candidates: int = _s(3, "Candidate quotes per source that MiniLM re-ranks by meaning after word overlap: as many as the check before it embedded, so it costs no more.")
    quote_figure_weight: float = _s(0.2, "When picking the quote, a sentence holding one of the claim's figures ranks as if it held this share more of the claim's words.")
    quote_meaning_weight: float = _s(0.5, "Weight of MiniLM's cosine beside word overlap when re-ranking the candidate quotes (the same half as the check before it).")
    comparison_reach: int = _s(4, "Words on each side of a comparison word ('X outperforms Y') read as its two sides when checking that the claim has them the same way round as the quote.")
    substitution_frame: int = _s(2, "Tokens a claim and its quote must share just before the words each ends on for those to stand in the same place ('only when the model is confident' / '... uncertain'): a word the abstract lacks there is a detail it does not state.")
    detail_idf: float = _s(2.0, "A claim word at least this rare (idf over the corpus's chunks) that its cited abstract never uses, in any form, counts toward detail_words.")
    detail_words: int = _s(2, "This many such rare words absent from the cited abstract make the claim unverified however much else the quote holds: a paraphrase swaps a word, an invented detail ('on robotic control tasks') brings new ones.")
    detail_zipf: float = _s(4.5, "Such a word counts toward detail_words only when the language at large uses it less than this (wordfreq Zipf; 4.5 is about once per 30,000 words): \"keep\", \"need\", \"contain\" are rare in a corpus of abstracts and are how a paraphrase is put, not a detail. On the labelled sets it lifted supported recall (0.697 -> 0.720, 0.569 -> 0.583) and ticked no wrong sentence more.")
    comparative_zipf: float = _s(3.0, "A claim's -est word is a superlative the quote must say too when its -er form is at least this common in English (wordfreq Zipf): largest/larger, easiest/easier, not interest/interer or honest/honer.")
    role_window: int = _s(3, "Content words apart (words rarer than role_common_zipf) that still bind a doer to its act ('a teacher agent generates'): a claim that has two doers trade their acts against the quote is a contradiction.")
    role_common_zipf: float = _s(5.6, "A word at least this common in English (wordfreq Zipf) is a function word ('then', 'which', 'also') when reading who does what: it binds nothing.")
    name_label_words: int = _s(3, "A source label of at most this many words, each capitalised when there are several, is a name (RouterArena, Generative Adversarial Reasoner) whose words a claim need not find in the quote; a longer one, or a phrase of the abstract in its lower case ('Cache hit rate'), is a description drawn from the abstract ('Hybrid optimizer that combines first-order and zeroth-order updates'), and its words are claims to check.")
    substitution_zipf: float = _s(3.6, "A claim word standing inside a sentence where the quote, aligned with it on substitution_frame tokens each side, has other words is another thing ('task-level procedural knowledge' / 'declarative') when both are rarer than this in English (wordfreq Zipf): two terms; a commoner one is a way of saying ('drafts' / 'writes').")
    denied_words: int = _s(3, "A sentence that denies with a verb's 'not' ('does not improve its ability to distinguish toxic prompts') what its quote states unnegated is contradicted when this many words the denial governs are in the quote: fewer, and the denial may be of something else the quote leaves unsaid ('does not change the weights' against 'keeps the weights').")
    only_added_share: float = _s(0.5, "Share of the words after a quote's 'not only X but also' that a claim saying 'only X' must hold for the 'only' to restrict nothing the quote adds ('described only as doing X, along with Y'); fewer, and the claim drops what the quote adds: a contradiction.")
    references: str = _s("full", "How a /v1/chat/completions text answer ends, unless the request's `references` says: full (per cited source its label, title, year, venue, URL and the quoted sentences, which text clients such as llm and LangChain keep), labels ([n] label (paper id) only) or none.")
    api_key: str = _s("", "When set, /api/* requires 'Authorization: Bearer <key>' (the page asks for it once).")
    rate_limit: str = _s("300 per minute", "Per-client budget shared by all /api/* and /v1/* routes (flask-limiter syntax): the page needs a few requests a minute, a script may send 5 a second; empty turns it off.")
    answer_rate_limit: str = _s("30 per minute", "Per-client budget shared by /api/ask, /api/ask/stream and /v1/chat/completions, on top of rate_limit: each answer is a model call (tokens, or ~11 ms CPU offline) and a person asks a few a minute; empty turns it off.")
    rate_limit_storage: str = _s("memory://", "Where rate-limit counters live: memory:// per process, or redis://host:port for several.")
    proxy_hops: int = _s(0, "Reverse proxies of yours in front of `serve` (one nginx: 1; a load balancer then nginx: 2), for the client address that rate limits count by. 0: X-Forwarded-For is ignored, the address is the connecting one. N: the N-th address from the right of X-Forwarded-For (werkzeug's ProxyFix), the one your outermost proxy saw; entries a client wrote itself sit further left. More than you run lets a client choose its address, fewer gives all clients one.")
    cors_origins: str = _s("", "Comma-separated origins allowed to call the API from a browser; empty allows none.")
    log_json: bool = _s(False, "Write one JSON object per log line (with the request id) instead of plain text.")
    host: str = _s("127.0.0.1", "Address `serve` binds to.")
    port: int = _s(8000, "Port `serve` listens on.")
    threads: int = _s(32, "Request threads per `serve` worker (--threads overrides): a client stalled mid-request holds one for up to client_timeout, so dozens leave room for others; answering is CPU-bound, more add no throughput.")
    client_timeout: float = _s(10.0, "Seconds a client may stay silent mid-request (headers or body) or leave our reply unread before `serve` closes its connection (a JSON 408 once the body has started).")
    request_timeout: float = _s(30.0, "Seconds a client has to send a whole request, head and body, from its first byte (a new connection: from its accept). serve reads heads without a thread, so a client trickling its headers costs a connection, never a thread; a trickling body holds one thread this long at most (then a JSON 408).")
    max_request_line: int = _s(4094, "Longest HTTP request line (method, URL with query, version) `serve` accepts, in bytes; longer is a JSON 414. Our longest URL is a paper id or a short ?q= filter; gunicorn caps it at 8190.")
    max_header_bytes: int = _s(8190, "Largest HTTP header line `serve` accepts, in bytes (gunicorn's default; at most 100 headers); larger is a JSON 431.")

    @property
    def data_path(self) -> Path:
        return Path(self.data_dir)

    @property
    def seeds_path(self) -> Path:
        """The corpus `ingest` reads by default: seeds_dir, else the seed files shipped with the package."""
        if self.seeds_dir:
            return Path(self.seeds_dir)
        return _shipped("seeds", lambda path: path.is_dir()) or Path("seeds")

    def replace(self, **changes: Any) -> "Settings":
        return dataclasses.replace(self, **changes)


# Variables people already have set for OpenAI-compatible tools, besides QA_*.
_ALIASES = {"OPENAI_API_KEY": "openai_api_key", "OPENAI_BASE_URL": "openai_base_url"}


# A scheme, then everything up to a space, a quote or an angle bracket: URLs as messages and logs show them.
_URL = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*://[^\s\"'<>]*")


def redact_url(url: str) -> str:
    """A URL fit to show callers and logs: no userinfo, no query values, no fragment.

    OPENAI_BASE_URL, QA_CHROMA_URL and redis:// limiter storage may carry a password
    (http://user:pass@host) or a key in the query (?api-key=...); the host and path stay, to debug by.
    """
    scheme, sep, rest = url.partition("://")
    if not sep:
        scheme, rest = "", url
    cut = min((i for i in (rest.find("?"), rest.find("#")) if i >= 0), default=len(rest))
    where, tail = rest[:cut], rest[cut:]
    if "@" in where:  # the last '@' before the query, so that an unencoded '/' in a password is hidden too
        where = "***@" + where.rpartition("@")[2]
    query, hashmark, _ = tail.partition("#")
    if query.startswith("?"):
        query = "?" + "&".join(_hide_value(part) for part in query[1:].split("&"))
    return scheme + sep + where + query + ("#***" if hashmark else "")


def _hide_value(part: str) -> str:
    """'key=value' keeps its key; a bare 'value' (?SECRET) is hidden whole."""
    key, equals, _ = part.partition("=")
    return f"{key}=***" if equals else "***" if part else ""


def redact_urls(text: str) -> str:
    """Every URL in a free text (a log line, a traceback) shown through redact_url."""
    return _URL.sub(lambda m: redact_url(m.group(0)), text)


def describe() -> list[tuple[str, Any, str]]:
    """(name, default, description) of every setting, for docs and tests."""
    return [(f.name, f.default, f.metadata["description"]) for f in dataclasses.fields(Settings)]


def _coerce(name: str, kind: type, value: Any, source: str) -> Any:
    try:
        if kind is bool:
            return str(value).lower() in {"1", "true", "yes", "on"}
        if kind is int and not isinstance(value, bool):
            return int(value)
        if kind is float and not isinstance(value, bool):
            return float(value)
        if kind is str:
            return str(value)
    except (TypeError, ValueError):
        pass
    raise ConfigError(f"{source}: setting '{name}' must be {kind.__name__}, got {value!r}")


def _shipped(name: str, found: Callable[[Path], bool], checkout: str = "") -> Path | None:
    """A file or folder the wheel ships inside the package, else the source checkout's own."""
    here = Path(__file__).resolve().parent
    for candidate in (here / name, here.parent / (checkout or name)):
        if found(candidate):
            return candidate
    return None


def default_config_path() -> Path | None:
    """The default settings file shipped with the package (wheel) or beside it (source checkout)."""
    return _shipped("default.toml", Path.is_file, "config/default.toml")


def _read_toml(path: Path, types: dict[str, type]) -> dict[str, Any]:
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise ConfigError(f"{path}: {exc}") from exc
    values = {}
    for name, value in data.items():
        if name not in types:
            raise ConfigError(f"{path}: unknown setting '{name}'")
        values[name] = _coerce(name, types[name], value, str(path))
    return values


def load_settings(
    config_file: str | Path | None = None,
    env: Mapping[str, str] | None = None,
    **overrides: Any,
) -> Settings:
    """Build settings from the TOML file, then the environment, then explicit overrides."""
    env = os.environ if env is None else env
    types = {f.name: type(f.default) for f in dataclasses.fields(Settings)}
    values: dict[str, Any] = {}
    chosen = config_file or env.get("QA_CONFIG")
    default = default_config_path()
    if default is not None:
        values.update(_read_toml(default, types))
    if chosen:
        path = Path(chosen)
        if not path.is_file():
            raise ConfigError(f"config file {path} does not exist")
        values.update(_read_toml(path, types))
    for var, name in _ALIASES.items():
        if env.get(var):
            values[name] = env[var]
    for name, kind in types.items():
        var = f"QA_{name.upper()}"
        if var in env:
            values[name] = _coerce(name, kind, env[var], var)
    values.update(overrides)
    settings = Settings(**values)
    check_values(settings)
    return settings


def _url_problem(url: str) -> str:
    """What is wrong with an http(s) URL ('' when nothing): a scheme, a host, a port in range."""
    try:
        parts = urlsplit(url)
        port = parts.port  # raises on a port out of range or not a number
    except ValueError as exc:
        return str(exc)
    if parts.scheme not in ("http", "https"):
        return "it must start with http:// or https://"
    if not parts.hostname:
        return "it names no host"
    return "" if port is None or port > 0 else "port 0 is no port"


# Counts and limits that mean nothing at 0 or below: each would refuse every request, or loop on nothing.
POSITIVE = ("max_abstract_chars", "max_k", "retrieval_k", "plural_k", "candidate_chunks", "chunk_sentences", "chunk_max_tokens", "ingest_batch_papers",
            "embedding_batch_size", "max_question_chars", "max_body_bytes", "max_page_papers", "max_filter_chars",
            "max_filter_values", "threads", "model_timeout", "model_deadline", "model_concurrency", "client_timeout",
            "request_timeout", "max_request_line", "max_header_bytes", "answer_per_named",
            "cognate_letters_per_edit")


# Chroma's rule for collection names (3-512 of these, starting and ending with a letter or digit), which the
# default corpus's collections (<collection>_chunks, <collection>_papers) must keep.
_COLLECTION = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,499}")


def check_values(settings: Settings) -> None:
    """Settings a person can get wrong in a way every command would trip on, refused in one line that says what to write."""
    for name in POSITIVE:
        if getattr(settings, name) <= 0:
            raise ConfigError(f"{name} (QA_{name.upper()}) must be above 0, got {getattr(settings, name)!r}")
    if settings.retrieval_k > settings.max_k:
        raise ConfigError(f"retrieval_k (QA_RETRIEVAL_K) {settings.retrieval_k} is above max_k (QA_MAX_K) {settings.max_k}: "
                          f"the default would be refused as a request")
    if not 1 <= settings.port <= 65535:
        raise ConfigError(f"port (QA_PORT) must be a TCP port, 1 to 65535, got {settings.port}")
    for name, var, example in (("chroma_url", "QA_CHROMA_URL", "http://127.0.0.1:8001, as `chroma run` prints it"),
                               ("openai_base_url", "OPENAI_BASE_URL", "http://127.0.0.1:11434/v1")):
        value = getattr(settings, name)
        problem = _url_problem(value) if value else ""
        if problem:
            raise ConfigError(f"{name} ({var}) {redact_url(value)!r} is not a URL ({problem}): write one like {example}, or leave it empty")
    if not _COLLECTION.fullmatch(settings.collection):
        raise ConfigError(f"collection (QA_COLLECTION) {settings.collection[:60]!r} cannot name Chroma collections: use letters, "
                          f"digits, '.', '_' and '-', starting with a letter or digit (such as iclr2026)")
    if settings.data_path.exists() and not settings.data_path.is_dir():
        raise ConfigError(f"data_dir (QA_DATA_DIR) {settings.data_dir} is a file, not a folder: set QA_DATA_DIR to a folder "
                          f"(it is created if missing)")
