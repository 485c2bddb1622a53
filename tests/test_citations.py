import pytest

from qa_service.answering.citations import CitationChecker, is_refusal, parse_numbers
from qa_service.store.embeddings import MiniLMEmbedding
from qa_service.answering.prompting import REFUSAL, Source

TEQUILA = (
    "Ternary weight quantization constrains weights to -1, 0, 1. "
    "We propose Tequila, a trapping-free quantization method. "
    "On ARC it achieves a 3.0× inference speedup."
)
ROUTER = "We introduce RouterArena, the first open platform to compare LLM routers. It ships a leaderboard."
SOURCES = [Source(1, "p:1", "Tequila", TEQUILA), Source(2, "p:2", "RouterArena", ROUTER)]


@pytest.fixture(scope="module")
def checker():
    return CitationChecker(lambda term: 1.0, MiniLMEmbedding(), threshold=0.5)


@pytest.mark.parametrize("marker,numbers", [("1", [1]), ("1, 3", [1, 3]), ("2-4", [2, 3, 4]), ("2–3,5", [2, 3, 5]), ("3, 3", [3])])
def test_parse_marker_forms(marker, numbers):
    assert parse_numbers(marker) == numbers


def test_exact_quote_is_supported_with_offsets(checker):
    result = checker.check("We propose Tequila, a trapping-free quantization method [1].", SOURCES)
    (citation,) = result.citations
    assert citation.supported and citation.paper_id == "p:1" and citation.label == "Tequila"
    assert TEQUILA[citation.start : citation.end] == citation.quote == "We propose Tequila, a trapping-free quantization method."
    assert result.grounded and not result.warnings


def test_paraphrase_is_supported_and_quotes_the_best_sentence(checker):
    result = checker.check("Tequila speeds up inference by 3.0× on ARC [1].", SOURCES)
    (citation,) = result.citations
    assert citation.supported and citation.quote == "On ARC it achieves a 3.0× inference speedup."


def test_wrong_source_and_invented_number_are_unsupported(checker):
    wrong = checker.check("Tequila is a trapping-free quantization method [2].", SOURCES)
    assert not wrong.citations[0].supported and not wrong.grounded
    invented = checker.check("Tequila gives a 7.5× inference speedup on ARC [1].", SOURCES)
    assert not invented.citations[0].supported and not invented.grounded


def test_unknown_numbers_removed_and_uncited_sentences_flagged(checker):
    result = checker.check("We introduce RouterArena, the first open platform to compare LLM routers [2, 7]. Routers are great.", SOURCES)
    assert result.answer == "We introduce RouterArena, the first open platform to compare LLM routers [2]. Routers are great."
    assert any("[7] does not match any source" in w for w in result.warnings)
    assert any("sentence 2 has no citation" in w for w in result.warnings)
    assert not result.grounded


def test_ranges_cite_every_source_in_them(checker):
    result = checker.check("We introduce RouterArena, the first open platform to compare LLM routers [1-2].", SOURCES)
    assert [(c.n, c.supported) for c in result.citations] == [(1, False), (2, True)]
    assert result.grounded  # one supported citation per sentence is enough


def test_refusal_is_grounded_without_citations(checker):
    assert is_refusal(REFUSAL) and is_refusal(REFUSAL.rstrip(".") + " [1].")
    result = checker.check(REFUSAL, SOURCES)
    assert result.refused and result.grounded and result.citations == []


def test_answer_with_no_citation_at_all_is_not_grounded(checker):
    result = checker.check("Tequila is a quantization method.", SOURCES)
    assert not result.grounded and result.citations == []


def test_every_sentence_of_the_answer_comes_back_with_its_place_and_verdict():
    """answer[start:end] is each unit as returned; a quote backs the first, nothing backs the second."""
    from qa_service.records import SentenceKind, SentenceVerdict

    text = "Alpha reaches 91% accuracy on the test set. Alpha is trained on cooking recipes."
    source = Source(1, "p:1", "Alpha", text.split(" Alpha is")[0] + " It uses a new loss.")
    checked = CitationChecker(lambda term: 1.0).check(f"{text.split('. ')[0]} [1]. Bananas are yellow.", [source])
    first, second = checked.sentences
    for unit in checked.sentences:
        assert checked.answer[unit.start : unit.end] == unit.text
    assert (first.kind, first.verdict, first.cites) == (SentenceKind.CLAIM, SentenceVerdict.SUPPORTED, [1])
    assert first.quotes[0].quote == "Alpha reaches 91% accuracy on the test set."
    assert second.verdict is SentenceVerdict.UNCITED and not checked.grounded


def test_a_refusal_is_the_service_speaking_not_a_claim():
    from qa_service.records import REFUSAL, SentenceKind, SentenceVerdict

    checked = CitationChecker(lambda term: 1.0).check(REFUSAL, [])
    [unit] = checked.sentences
    assert (unit.kind, unit.verdict, unit.text) == (SentenceKind.SERVICE, SentenceVerdict.NOT_CHECKED, REFUSAL)


# a paper written for these tests: its claims in other words, one thing turned each time
FLOCK = ("We study flocking in simulated starlings. We find a strong positive correlation between neighbour count and "
         "alignment. Our controller accelerates convergence of the flock and needs no central coordinator. "
         "It lowers collisions by 15-46% across three wind settings.")
HIVE = "We present HiveNet, a model of bee foraging. HiveNet is validated on the BeeTrack and PollenSet benchmarks."
FIELD = [Source(1, "f:1", "Flocking", FLOCK), Source(2, "f:2", "HiveNet", HIVE)]


@pytest.mark.parametrize("wrong", [
    "The study finds a strong negative correlation between neighbour count and alignment [1].",  # an antonym the quote lacks
    "The controller slows convergence of the flock [1].",  # slows / accelerates
])
def test_an_antonym_of_the_quote_s_word_is_a_contradiction(checker, wrong):
    (unit,) = [u for u in checker.check(wrong, FIELD).sentences if u.cites]
    assert unit.verdict.value == "contradicted", unit.reason


def test_the_same_claim_in_the_quote_s_own_words_stays_supported(checker):
    (unit,) = [u for u in checker.check("The study finds a strong positive correlation between neighbour count and alignment [1].",
                                        FIELD).sentences if u.cites]
    assert unit.verdict.value == "supported", unit.reason


def test_the_far_end_of_a_range_is_a_figure_checked_too(checker):
    wrong = checker.check("It lowers collisions by 15-64% across three wind settings [1].", FIELD)
    right = checker.check("It lowers collisions by 15-46% across three wind settings [1].", FIELD)
    assert [u.verdict.value for u in wrong.sentences if u.cites] != ["supported"]
    assert [u.verdict.value for u in right.sentences if u.cites] == ["supported"]


def test_a_sentence_that_speaks_for_both_sources_needs_each_of_them(checker):
    both = checker.check("Both works are validated on the BeeTrack and PollenSet benchmarks [1][2].", FIELD)
    assert [u.verdict.value for u in both.sentences if u.cites] != ["supported"] and not both.grounded
    one = checker.check("HiveNet is validated on the BeeTrack and PollenSet benchmarks [2].", FIELD)
    assert [u.verdict.value for u in one.sentences if u.cites] == ["supported"]


# another paper written for these tests: a negated list, and two figures each tied to its own noun
LOOM = ("We present Loom, a scheduler for LLM serving. Loom needs no extra training data, labelled traces, or manual tuning. "
        "It gives up to 4.2× lower latency and a 31.5% increase in throughput over the best baseline.")
LOOMS = [Source(1, "l:1", "Loom", LOOM)]


def verdict_of(checker, sentence: str, sources=LOOMS) -> str:
    (unit,) = [u for u in checker.check(sentence, sources).sentences if u.cites]
    return unit.verdict.value


def test_a_negation_governs_every_item_of_the_list_it_opens(checker):
    assert verdict_of(checker, "Loom needs labelled traces [1].") == "contradicted"  # the list's second item
    assert verdict_of(checker, "Loom needs no labelled traces [1].") == "supported"
    assert verdict_of(checker, "Loom needs no extra training data or labelled traces [1].") == "supported"  # "no X or Y" too


def test_a_figure_given_for_the_thing_another_figure_of_the_quote_is_for_is_a_contradiction(checker):
    assert verdict_of(checker, "Loom gives a 31.5% reduction in latency [1].") == "contradicted"  # 31.5% is throughput's
    assert verdict_of(checker, "Loom gives a 31.5% increase in throughput [1].") == "supported"


def test_a_clause_joined_to_a_stated_claim_needs_a_sentence_of_its_own(checker):
    stated = "Loom needs no extra training data or labelled traces"
    assert verdict_of(checker, f"{stated}, and it runs on phones [1].") == "unverified"  # the quote carries 6 of its 8 words
    assert verdict_of(checker, f"{stated} and it runs on phones [1].") == "unverified"  # "and" before a new subject, no comma
    assert verdict_of(checker, f"{stated}, and it is a scheduler for LLM serving [1].") == "supported"  # another sentence says it


DUNE = ("We introduce DuneNet for sand dune forecasting. DuneNet outperforms WindGAN on the Sahara benchmark, "
        "while WindGAN is faster to train.")
DUNES = [Source(1, "d:1", "DuneNet", DUNE)]


def test_the_two_sides_of_a_comparison_swapped_are_a_contradiction(checker):
    assert verdict_of(checker, "WindGAN outperforms DuneNet on the Sahara benchmark [1].", DUNES) == "contradicted"
    assert verdict_of(checker, "DuneNet outperforms WindGAN on the Sahara benchmark [1].", DUNES) == "supported"
    assert verdict_of(checker, "WindGAN is outperformed by DuneNet on the Sahara benchmark [1].", DUNES) == "supported"


TIDE = [Source(1, "t:1", "Tide", "We present Tide, a router that escalates a query to the large model only when the small model is uncertain.")]


def test_the_word_a_claim_ends_on_where_the_quote_ends_on_another_is_not_confirmed(checker):
    assert verdict_of(checker, "Tide escalates a query to the large model only when the small model is confident [1].", TIDE) == "unverified"
    assert verdict_of(checker, "Tide sends a query to the large model only when the small model is uncertain [1].", TIDE) == "supported"


def test_two_rare_words_the_abstract_never_uses_are_a_detail_it_does_not_state():
    rare = CitationChecker(lambda term: 3.0, threshold=0.5)  # every word rare enough to count
    assert verdict_of(rare, "Loom is a scheduler for LLM serving on edge phones [1].") == "unverified"  # 3 of its 5 words held
    assert verdict_of(rare, "Loom is a scheduler for LLM serving [1].") == "supported"


STORM = [Source(1, "s:1", "Storm", "We present Storm, a federated learner. Its accuracy degrades sharply as the number of clients grows.")]


def test_a_thing_said_to_hold_steady_where_the_quote_says_it_changes_is_a_contradiction(checker):
    assert verdict_of(checker, "Storm's accuracy remains stable as the number of clients grows [1].", STORM) == "contradicted"
    assert verdict_of(checker, "Storm's accuracy degrades as the number of clients grows [1].", STORM) == "supported"


def test_a_rare_word_a_preposition_takes_that_the_abstract_never_uses_is_a_detail_it_does_not_state():
    rare = CitationChecker(lambda term: 3.0, threshold=0.5)
    assert verdict_of(rare, "Loom is a scheduler for LLM serving in healthcare [1].") == "unverified"  # one new word, after "in"
    assert verdict_of(rare, "Loom is a scheduler that speeds up LLM serving [1].") == "supported"  # one new word, a verb


def test_each_stretch_of_a_sentence_is_checked_against_the_source_its_own_marker_names(checker):
    hive, flock = "HiveNet is validated on the BeeTrack and PollenSet benchmarks", "the controller needs no central coordinator"
    assert verdict_of(checker, f"{hive} [2], while {flock} [1].", FIELD) == "supported"
    assert verdict_of(checker, f"{hive} [1], while {flock} [2].", FIELD) == "contradicted"  # each marker on the other's stretch


GRID = [Source(1, "g:1", "Grid", "We present Grid, a weather model. Grid reaches 71.2% accuracy on the Alps set and 64.5% on the Andes set.")]


def test_a_table_row_s_figure_is_tied_to_the_row_s_own_cells(checker):
    table = "| Set | Accuracy |\n|---|---|\n| Andes set | {} [1] |"
    assert verdict_of(checker, table.format("71.2%"), GRID) == "contradicted"  # the Alps set's figure
    assert verdict_of(checker, table.format("64.5%"), GRID) == "supported"


def test_a_superlative_the_quote_does_not_say_is_an_overclaim(checker):
    from qa_service.answering.polarity import superlatives

    assert verdict_of(checker, "Loom is the fastest scheduler for LLM serving [1].") == "unverified"
    assert verdict_of(checker, "Loom is a scheduler for LLM serving [1].") == "supported"
    assert superlatives(["the", "largest", "interest", "honest", "easiest", "manifest", "best"], 3.0) == {"largest", "easiest", "best"}


DUET = [Source(1, "u:1", "Duet", "We present Duet, an agent pair. In Duet, a planner writes the plan and a critic checks it against the task.")]


def test_two_words_of_the_quote_in_each_other_s_place_are_a_contradiction(checker):
    assert verdict_of(checker, "In Duet, a critic drafts the plan and a planner checks it against the task [1].", DUET) == "contradicted"
    assert verdict_of(checker, "In Duet, a planner drafts the plan and a critic checks it against the task [1].", DUET) == "supported"


def test_a_metric_named_with_its_cut_off_is_a_named_thing(checker):
    coder = [Source(1, "c:1", "Coder", "We present Coder, a code model. Coder reaches 41.5% Pass@1 on HumanEval.")]
    assert verdict_of(checker, "Coder scores 41.5% Pass@10 on HumanEval [1].", coder) == "unverified"
    assert verdict_of(checker, "Coder scores 41.5% Pass@1 on HumanEval [1].", coder) == "supported"


def test_avoiding_a_thing_denies_it_and_a_word_used_on_both_sides_of_a_negation_is_not_denied(checker):
    sere = [Source(1, "e:1", "Sere", "We present Sere, a sparse model server. Sere avoids static expert pruning, skipping experts per batch.")]
    assert verdict_of(checker, "Sere relies on static expert pruning [1].", sere) == "contradicted"
    bench = [Source(1, "b:1", "Benchy", "We present Benchy, a benchmark of instructed code editing.")]
    assert verdict_of(checker, "Benchy evaluates code editing rather than code generation [1].", bench) != "contradicted"


def test_two_figures_swapped_between_their_things_are_a_contradiction_but_two_listed_together_are_not(checker):
    orbit = [Source(1, "o:1", "Orbit", "We present Orbit. Orbit gains +3.5% on MATH, +2.9% on HumanEval, and +5.5% on MMLU-Pro. "
                                       "Frontier models such as Alpha and Beta reach modest baseline scores of 31.1 and 23.4, respectively.")]
    assert verdict_of(checker, "Orbit gains +3.5% on MATH, +5.5% on HumanEval and +2.9% on MMLU-Pro [1].", orbit) == "contradicted"
    assert verdict_of(checker, "Alpha and Beta score 31.1 and 23.4 at baseline [1].", orbit) == "supported"


def test_two_items_of_a_list_in_another_order_are_no_swap(checker):
    hive = "HiveNet is validated on the PollenSet and BeeTrack benchmarks [2]."  # the abstract lists BeeTrack first
    assert verdict_of(checker, hive, FIELD) == "supported"


def test_an_intensifier_the_quote_gives_no_size_for_is_an_overclaim(checker):
    assert verdict_of(checker, "Storm's accuracy degrades dramatically as the number of clients grows [1].", STORM) == "supported"  # "sharply"
    assert verdict_of(checker, "DuneNet dramatically outperforms WindGAN on the Sahara benchmark [1].", DUNES) == "unverified"
    assert verdict_of(checker, "Loom gives a dramatically higher 31.5% increase in throughput [1].") == "supported"  # a measure is a size


def test_a_sentence_for_both_sources_needs_each_whole_even_with_a_marker_after_each_name(checker):
    both = "Both the Flocking study [1] and HiveNet [2] are validated on the BeeTrack and PollenSet benchmarks."
    assert verdict_of(checker, both, FIELD) != "supported"


def test_a_marker_after_the_subject_of_a_one_source_sentence_keeps_the_sentence_whole(checker):
    from qa_service.answering.segments import pieces

    assert pieces("DuneNet [1] outperforms WindGAN on the Sahara benchmark.") == []
    assert [n for _, n in pieces("A does x [1], while B does y [2].")] == [[1], [2]]


def test_each_of_a_paper_s_own_things_does_not_speak_for_every_source(checker):
    two = ("The controller accelerates convergence of each flock [1], while HiveNet is validated on the BeeTrack and "
           "PollenSet benchmarks [2].")
    assert verdict_of(checker, two, FIELD) == "supported"


def test_a_bold_line_on_its_own_is_a_heading_not_an_uncited_claim(checker):
    answer = "**Key findings**\nThe controller lowers collisions by 15-46% across three wind settings [1].\n\n__Results:__\n\n**In short:** it helps [1]."
    result = checker.check(answer, FIELD)
    units = {u.text: u for u in result.sentences}
    assert units["**Key findings**"].kind.value == "structure" and units["__Results:__"].kind.value == "structure"
    # a bold lead before a sentence is the model's label for it, a unit of its own; the sentence after it is the claim
    assert units["**In short:**"].kind.value == "structure" and units["it helps [1]."].kind.value == "claim"
    assert not any("no citation" in w for w in result.warnings) and result.answer == answer



def test_a_list_item_s_bold_label_with_a_name_s_digits_is_structure_and_a_figure_label_is_checked(checker):
    """The offline model's lists open each item with the paper's label ("- **CUDA-L1**: ..."): a digit inside a name is
    the label's; one opening a word ("**3x faster.**") is a figure, checked with the sentence it heads."""
    vexa = [Source(1, "v:1", "Vexa-L1", "We present Vexa-L1, a code obfuscation model. Vexa-L1 achieves 26.95% Pass@1 on "
                                       "CodeSet compared to 22.58% for Orion.")]
    answer = ("- **Vexa-L1**: Vexa-L1 achieves 26.95% Pass@1 on CodeSet compared to 22.58% for Orion [1].\n"
              "- **3x faster.** Vexa-L1 achieves 26.95% Pass@1 on CodeSet [1].")
    units = {u.text: u for u in checker.check(answer, vexa).sentences}
    assert units["- **Vexa-L1**:"].kind.value == "structure"
    assert units["Vexa-L1 achieves 26.95% Pass@1 on CodeSet compared to 22.58% for Orion [1]."].verdict.value == "supported"
    assert "- **3x faster.**" not in units and any(text.startswith("- **3x faster.**") for text in units)

# Fourth round: things bound otherwise than the quote binds them, and correct paraphrases the check used to cross.
VAULT = [Source(1, "v:1", "Vexa", (
    "We present Vexa, a code obfuscation model. Vexa achieves 26.95% Pass@1 on CodeSet compared to 22.58% for Orion. "
    "It runs across GPUs, achieving average speedups of ×3.85 (median ×1.32) on H100, ×2.51 (median ×1.18) on RTX 3090, "
    "and ×2.38 (median ×1.34) on H20. Vexa demonstrates ×2.77 over Torch Compile, ×2.88 over Torch Compile with reduce "
    "overhead, and ×2.81 over CUDA Graph implementations. In the refinement setting, frontier models such as Gemini 2.5 Pro "
    "and GPT-4.1 achieve modest scores of 31.1 and 23.4, respectively. Vexa outperforms the WSD schedule, achieving "
    "improvements of +3.5% on MATH, +2.9% on HumanEval, and +5.5% on MMLU-Pro."))]


def test_a_figure_is_checked_for_the_named_thing_the_quote_gives_it_for(checker):
    assert verdict_of(checker, "On CodeSet, Orion reaches 26.95% Pass@1, compared with 22.58% for Vexa [1].", VAULT) == "contradicted"
    assert verdict_of(checker, "On CodeSet, Vexa reaches 26.95% Pass@1, compared with 22.58% for Orion [1].", VAULT) == "supported"
    assert verdict_of(checker, "| RTX 3090 [1] | ×2.38 | ×1.18 |", VAULT) == "contradicted"  # the H20's average in the row
    assert verdict_of(checker, "| RTX 3090 [1] | ×2.51 | ×1.18 |", VAULT) == "supported"


def test_two_lists_mapped_in_order_bind_each_figure_to_its_name(checker):
    assert verdict_of(checker, "In refinement, GPT-4.1 scores 31.1 while Gemini 2.5 Pro scores 23.4 [1].", VAULT) == "contradicted"
    assert verdict_of(checker, "In refinement, Gemini 2.5 Pro scores 31.1 while GPT-4.1 scores 23.4 [1].", VAULT) == "supported"


def test_the_figure_of_a_narrower_case_is_not_the_figure_of_the_thing_itself(checker):
    assert verdict_of(checker, "It achieves ×2.88 over Torch Compile [1].", VAULT) == "contradicted"
    assert verdict_of(checker, "It achieves ×2.77 over Torch Compile [1].", VAULT) == "supported"
    # a table row says in its cells what "over" says in the quote: the row's thing is Torch Compile itself
    assert verdict_of(checker, "| Torch Compile [1] | ×2.88 |", VAULT) == "contradicted"
    assert verdict_of(checker, "| Torch Compile [1] | ×2.77 |", VAULT) == "supported"
    assert verdict_of(checker, "| Torch Compile with reduce overhead [1] | ×2.88 |", VAULT) == "supported"


def test_the_words_that_open_a_list_of_figures_belong_to_each_of_them(checker):
    assert verdict_of(checker, "Vexa's +5.5% improvement over WSD [1].", VAULT) == "supported"  # the list opens "improvements of"


ROLES = [Source(1, "r:1", "Tutor", (
    "We propose Tutor, a benchmarking protocol. Within this protocol, a teacher agent generates candidate problems, an "
    "orchestrator agent verifies their validity, and a student agent attempts to solve the validated problems. We show its capability of achieving higher backdoor divergence "
    "than Wagner on two-layer networks. We also introduce Accidental Correction Rate (ACR) to separate inadvertent corrections "
    "from intended misclassifications, complementing the traditional Attack Success Rate (ASR). We further show that social "
    "sycophancy is rewarded in preference datasets. The residual error originates not only from the preceding layer but also "
    "from the weights within each layer."))]


@pytest.mark.parametrize("wrong", [
    "A related protocol has a student agent generate candidate problems that a teacher agent then solves [1].",  # acts traded
    "On two-layer networks, Wagner achieves higher backdoor divergence than Tutor [1].",  # the sides of "than" swapped
    "Tutor introduces Attack Success Rate (ASR) to separate inadvertent corrections from intended misclassifications [1].",
    "Tutor finds that social sycophancy is penalized in preference datasets [1].",  # rewarded / penalized
    "The residual error originates only from the preceding layer [1].",  # "not only ... but also"
])
def test_a_claim_that_binds_the_quote_s_words_otherwise_is_a_contradiction(checker, wrong):
    assert verdict_of(checker, wrong, ROLES) == "contradicted"


def test_the_same_roles_in_other_words_stay_supported(checker):
    assert verdict_of(checker, "In Tutor, a teacher agent generates candidate problems, and a student agent solves them [1].",
                      ROLES) == "supported"
    assert verdict_of(checker, "Tutor introduces Accidental Correction Rate (ACR) to separate inadvertent corrections from "
                               "intended misclassifications [1].", ROLES) == "supported"


CONTRASTS = [Source(1, "c:1", "Probe", (
    "We present Probe, a benchmark. We elevate the evaluation from static function fitting to interactive model discovery, "
    "requiring agents to probe simulated systems. Most models fail to consistently improve across iterations (Alpha gains "
    "only +1.8%). Probe has problems that require the model to understand highlighted code and cursor position in addition "
    "to the user instruction. We design quantization methods that avoid clipping, and outperform the original GPTQ. While "
    "iterative attacks are limited by multistep gradient updates for each input, generative attacks produce adversarial "
    "examples in a single forward pass. Conventional methods typically model dynamics through discretizing time with "
    "recurrent architecture, which necessarily results in compounded cumulative prediction errors. We identify the core issue "
    "as deadzone trapping: a large number of weights are trapped at the deadzone boundary."))]


@pytest.mark.parametrize("right", [
    "Rather than static function fitting, agents must probe simulated systems [1].",  # "from X to Y" leaves X behind
    "Across iterations, Alpha gains only +1.8% [1].",  # the negation ends before "across iterations"
    "Probe's problems require understanding highlighted code and cursor position, not just the instruction [1].",
    "The authors design clipping-free quantization methods that outperform the original GPTQ [1].",  # -free: without
    "Generative attacks produce adversarial examples in a single forward pass, avoiding multistep gradient updates [1].",
    "Probe identifies deadzone trapping as the core issue: many weights get stuck at the deadzone boundary because they "
    "receive only noisy, less informative gradients [1].",  # "less" is of the gradients, which the quote never mentions
])
def test_a_correct_paraphrase_of_a_negation_or_contrast_is_not_crossed(checker, right):
    assert verdict_of(checker, right, CONTRASTS) != "contradicted"


def test_what_a_claim_says_its_paper_avoids_may_be_what_the_quote_says_earlier_work_has(checker):
    brainy = [Source(1, "q:1", "Brainy", "We present Brainy, an ODE model of EEG. Conventional methods typically model dynamics "
                                         "through discretizing time with recurrent architecture, which necessarily results in "
                                         "compounded cumulative prediction errors.")]
    claim = "This avoids the compounded cumulative prediction errors of discretizing time with recurrent architectures [1]."
    assert verdict_of(checker, claim, brainy) != "contradicted"


def test_the_words_after_a_figure_that_run_into_the_next_one_are_the_next_one_s(checker):
    kern = [Source(1, "k:1", "Kern", "We present Kern, a kernel optimiser. Trained on the A100, it delivers an average speedup of "
                                     "×3.12 with a median speedup of ×1.42 across all 250 kernels of a benchmark.")]
    assert verdict_of(checker, "Kern gives an average speedup of ×1.42, with a median of ×3.12 [1].",
                      kern) == "contradicted"
    assert verdict_of(checker, "Kern gives an average speedup of ×3.12, with a median of ×1.42 [1].",
                      kern) == "supported"


def test_a_name_the_abstract_gives_elsewhere_must_be_in_the_quote_that_carries_the_claim(checker):
    nimbus = [Source(1, "n:1", "Nimbus", "We present Nimbus, a cloud model. Nimbus is trained on the ERA5 archive. "
                                         "Nimbus forecasts rainfall over the Sahel region with a diffusion decoder.")]
    assert verdict_of(checker, "Nimbus forecasts rainfall over the ERA5 region with a diffusion decoder [1].", nimbus) == "unverified"
    assert verdict_of(checker, "Nimbus forecasts rainfall over the Sahel region with a diffusion decoder [1].", nimbus) == "supported"


def test_a_compound_the_quote_gives_another_first_part_is_another_thing(checker):
    sift = [Source(1, "s:1", "Sift", "We present Sift, an unlearning method. It combines first-order and zeroth-order "
                                     "updates to keep unlearning robust.")]
    assert verdict_of(checker, "Sift combines first-order and second-order updates to keep unlearning robust [1].", sift) != "supported"
    assert verdict_of(checker, "Sift combines first-order and zeroth-order updates to keep unlearning robust [1].", sift) == "supported"


def test_the_words_of_a_label_that_describes_the_paper_are_claims_to_check(checker):
    label = "Hybrid optimizer that combines first-order and zeroth-order updates"
    hybrid = [Source(1, "h:1", label, "Unlearning is fragile. We show the grade of the optimizer, ranging from zeroth-order to "
                                      "first-order to second-order, is tied to robustness. We propose a hybrid optimizer that "
                                      "combines first-order and zeroth-order updates.")]
    assert verdict_of(checker, "The proposed hybrid optimizer combines first-order and second-order updates [1].", hybrid) != "supported"
    assert verdict_of(checker, "The proposed hybrid optimizer combines first-order and zeroth-order updates [1].", hybrid) == "supported"


def test_two_names_in_each_other_s_place_are_a_contradiction(checker):
    oscar = [Source(1, "o:2", "Oscar", "Retrieval costs grow with context. We propose Oscar, a query-dependent online soft "
                                       "compression method for RAG.")]
    assert verdict_of(checker, "RAG is a query-dependent online soft compression method for Oscar [1].", oscar) == "contradicted"
    assert verdict_of(checker, "Oscar is a query-dependent online soft compression method for RAG [1].", oscar) == "supported"


def test_instead_and_rather_deny_only_with_of_and_than(checker):
    skip = [Source(1, "k:1", "Skipper", "We present Skipper, a mixture-of-experts decoder. Skipper avoids static expert "
                                        "pruning, instead enabling dynamic expert skipping at decoding time.")]
    said = "Rather than static pruning, Skipper skips experts dynamically at decoding time [1]."
    assert verdict_of(checker, said, skip) != "contradicted"
    assert verdict_of(checker, "Skipper does not skip experts dynamically at decoding time [1].", skip) == "contradicted"


def test_a_word_inside_a_hyphenated_compound_is_affirmed_there(checker):
    gate = [Source(1, "g:1", "Gatekeeper", "We propose Gatekeeper, a trapping-free method that revives deadzone-trapped "
                                           "weights as biases.")]
    assert verdict_of(checker, "Gatekeeper revives weights trapped in the deadzone as biases [1].", gate) != "contradicted"


def test_only_against_not_only_is_a_contradiction_unless_the_claim_gives_the_rest(checker):
    duo = [Source(1, "d:1", "Duo", "Our model Duo not only achieves competitive clustering accuracy on many datasets but "
                                   "also exhibits excellent calibration error.")]
    both = "Duo is described only as achieving competitive clustering accuracy on many datasets, with excellent calibration error [1]."
    assert verdict_of(checker, both, duo) != "contradicted"
    assert verdict_of(checker, "Duo only achieves competitive clustering accuracy on many datasets [1].", duo) == "contradicted"


def test_a_figure_two_figures_of_the_quote_share_words_with_is_not_crossed(checker):
    mesh = [Source(1, "m:1", "Mesh", "We present Mesh, a serving cache. Mesh shows gains of up to 6.92× in cache hit rate, "
                                     "11.96× reduction in latency, and 77.4% increase in throughput.")]
    # each of 6.92× and 11.96× stands beside words of the sentence the other lacks: not clear which it is for
    assert verdict_of(checker, "Gains of up to 11.96× in cache hit rate reduction [1].", mesh) == "unverified"
    # 11.96× holds every word 6.92× does, and more: the figure for that thing
    assert verdict_of(checker, "Mesh reports a 6.92× reduction in latency [1].", mesh) == "contradicted"


def test_a_name_said_of_a_whole_sentence_does_not_bind_it_to_one_figure(checker):
    low = [Source(1, "l:1", "Lowbit", "On Llama-3 8B, Lowbit yields a 0.4% loss gap and a 0.1% accuracy drop relative to BF16.")]
    assert verdict_of(checker, "On Llama-3 8B, Lowbit shows a 0.4% loss gap relative to BF16 [1].", low) != "contradicted"


def test_a_rare_word_in_the_place_of_another_inside_the_sentence_is_another_thing(checker):
    kappa = [Source(1, "k:2", "Kappa", "We present Kappa, an agent. Its planner runs a reflect loop to refine task-level "
                                       "declarative knowledge through self-evolution, and it can transform a weak model into "
                                       "a strong coder.")]
    said = "Kappa's planner runs a reflect loop to refine task-level procedural knowledge through self-evolution [1]."
    assert verdict_of(checker, said, kappa) == "unverified"
    assert verdict_of(checker, said.replace("procedural", "declarative"), kappa) == "supported"
    assert verdict_of(checker, "Kappa can turn a weak model into a strong coder [1].", kappa) == "supported"  # a common word


def test_a_figure_another_sentence_gives_another_measure_for_beside_more_of_its_words_is_unverified(checker):
    rise = [Source(1, "r:2", "Rise", "We present Rise, a pretraining objective. On the small model, Rise lifts the overall "
                                     "average by 19%. On the large model it lifts the science reasoning average by 23%.")]
    assert verdict_of(checker, "On the small model, Rise lifts its science reasoning average by 19% [1].", rise) == "unverified"
    assert verdict_of(checker, "Rise lifts the overall average by 19% [1].", rise) == "supported"


def test_the_thing_a_sentence_ends_on_qualified_otherwise_is_another_kind_of_it(checker):
    rear = [Source(1, "e:1", "Rear", "We present Rear, an image generator. On ImageNet it reaches a gFID of 1.86 using a "
                                     "standard rasterization-based tokenizer. With advanced tokenizers it reaches 1.42.")]
    said = "On ImageNet it reaches a gFID of 1.86 using advanced tokenizers [1]."
    assert verdict_of(checker, said, rear) == "unverified"
    assert verdict_of(checker, "On ImageNet it reaches a gFID of 1.86 using a rasterization-based tokenizer [1].", rear) == "supported"


LATTIX = [Source(1, "l:1", "Lattix", "We show that Lattix, run back to front, is the nearest plane algorithm on a lattice "
                                     "defined by the Hessian matrix of the layer's inputs. Its weight updates stay exact.")]
SQUEEZE = [Source(1, "q:1", "Squeeze", "On one hand, hard pruning methods cut the retrieved passages on the fly. On the "
                                       "other hand, soft methods run a costly offline compression with a dedicated model. "
                                       "We introduce Squeeze, which compresses passages online into embeddings.")]
DIVA = [Source(1, "d:1", "Diva", "We propose Diva, a diversity reward for reasoning. Diva outperforms strong baselines, "
                                 "excelling in both Pass@1 and Pass@k evaluations.")]
GLOW = [Source(1, "g:1", "Glow", "We study Glow, a transfer attack. We quantify semantic stability as the standard "
                                 "deviation of foreground IoU between activation masks and foreground masks across blocks.")]


NEURAL = [Source(1, "n:1", "NC0", "We introduce NC0, a metric whose convergence to zero is a necessary condition for "
                                  "neural collapse (NC). NC cannot emerge under decoupled weight decay in adaptive optimizers.")]
SEEDS = [Source(1, "s:1", "Seedmark", "We show that untrained models exhibit reproducible token selection biases "
                                      "conditioned solely on their parameters at initialization.")]
SHIELD = [Source(1, "c:1", "Shield", "Our method achieves 26.95% Pass@1 on code generation compared to 22.58% for GPT-4o, "
                                     "and improves binary similarity detection Recall@1 by 10% over methods like jTrans.")]
VOXELS = [Source(1, "v:1", "Voxels", "The commonly used hidden states in LLMs are surprisingly suboptimal, with most "
                                     "voxels better explained by previously unexplored intermediate computations.")]
FIBRE = [Source(1, "f:1", "Fibre", "Fibre trains LLMs in FP4. It outperforms Nvidia's recently announced (yet to be publicly "
                                   "released) FP4 recipe as we implement it.")]


@pytest.mark.parametrize("sources,sentence,verdict", [
    # the claim's last thing qualified otherwise inside the quote by a term: another kind of it
    (LATTIX, "The lattice is defined by the layer's weight matrix [1].", "unverified"),
    (LATTIX, "The lattice is defined by the Hessian matrix of the layer's inputs [1].", "supported"),
    # likened to earlier work: what the quote says of that work is not said of the method
    (SQUEEZE, "It cuts the retrieved passages on the fly, as hard pruning methods do [1].", "unverified"),
    (SQUEEZE, "Like soft methods, it runs a costly offline compression with a dedicated model [1].", "unverified"),
    (SQUEEZE, "Hard pruning methods cut the retrieved passages on the fly [1].", "supported"),
    (SQUEEZE, "Squeeze compresses passages online into embeddings [1].", "supported"),
    # "Pass@1" and "Pass@k" share their stems: the denial of one is judged on the whole word
    (DIVA, "Diva excels on Pass@1 but not on Pass@k [1].", "contradicted"),
    (DIVA, "Diva excels on both Pass@1 and Pass@k [1].", "supported"),
    # another summary statistic of the same measure: another figure
    (GLOW, "Glow quantifies semantic stability as the mean foreground IoU between activation masks and foreground masks [1].",
     "unverified"),
    (GLOW, "Glow quantifies semantic stability as the standard deviation of foreground IoU between activation masks and "
           "foreground masks [1].", "supported"),
    # "yet to be X" says not X, as "instead of X" and "rather than X" do
    (FIBRE, "Fibre surpasses Nvidia's publicly released FP4 recipe [1].", "contradicted"),
    (FIBRE, "Fibre outperforms Nvidia's FP4 recipe, which is yet to be publicly released [1].", "supported"),
    # opposites of conditions and designs
    (NEURAL, "The authors introduce NC0, whose convergence to zero is a sufficient condition for NC [1].", "contradicted"),
    (NEURAL, "NC cannot emerge under coupled weight decay [1].", "contradicted"),
    (NEURAL, "NC0's convergence to zero is necessary for NC, and NC cannot emerge under decoupled weight decay [1].",
     "supported"),
    # one thing alone in the quote, two in the claim
    (SEEDS, "Untrained models show token selection biases that depend on both their initialization and their training "
            "data [1].", "contradicted"),
    (SEEDS, "Untrained models show token selection biases that depend on their parameters at initialization alone [1].",
     "supported"),
    # a result sentence of the paper's own that compares with a baseline is about the paper, not earlier work
    (SHIELD, "It does not improve binary similarity detection Recall@1 by 10% over jTrans [1].", "contradicted"),
    (SHIELD, "It improves binary similarity detection Recall@1 by 10% over jTrans [1].", "supported"),
    # "better explained by A than by B" where the quote ranks B first
    (VOXELS, "Most voxels are better explained by the standard hidden states than by intermediate computations [1].",
     "contradicted"),
    (VOXELS, "Most voxels are better explained by intermediate computations than by the standard hidden states [1].",
     "supported"),
], ids=["requalified-inside", "requalified-inside-kept", "likened-as-do", "likened-like", "earlier-work-itself",
        "method-itself", "joined-denied", "joined-kept", "other-statistic", "same-statistic",
        "yet-to-be-affirmed", "yet-to-be-kept", "necessary-sufficient", "coupled-decoupled", "conditions-kept",
        "solely-against-both", "solely-kept", "own-result-denied", "own-result-kept", "agents-swapped", "agents-kept"])
def test_a_claim_reads_the_quote_as_english_does(checker, sources, sentence, verdict):
    """Each a way a claim made of its quote's own words says something else: the eighth and ninth rounds' checks."""
    assert verdict_of(checker, sentence, sources) == verdict


HALO = [Source(1, "h:1", "Halo", "Both theoretically and empirically, we demonstrate that contrastive tuning improves an "
                                 "LLM's capacity to tell truly harmful requests from harmless ones. Finally, we conduct 2,400 "
                                 "training runs across various datasets and optimizers, confirming our theory. Halo keeps the "
                                 "base weights frozen.")]
CACHET = [Source(1, "k:1", "Cachet", "Cachet achieves up to 6.92× higher cache hit rate and serves at least 3 models at once.")]
TIDEWAY = [Source(1, "t:1", "Tide", "Experiments show improvements of up to 4.31× in cache hit rate, 9.5× reduction in latency "
                                 "and +12.4 EM@1 with 18.6% lower latency, and 40.9% lower edge growth. Tide plans its route before "
                                 "exploiting the reward. Route tuning improves an LLM's capacity to tell truly harmful requests "
                                 "from harmless ones. Tide is the first open platform for comparing LLM routers.")]


@pytest.mark.parametrize("sources,sentence,verdict", [
    # "Does not improve X" where the quote says "improves X": the abstract's own words, turned by one "not".
    (HALO, "Contrastive tuning does not improve a model's ability to tell truly harmful requests from harmless ones [1].",
     "contradicted"),
    (HALO, "The theory is not confirmed by roughly 2,400 training runs across datasets and optimizers [1].", "contradicted"),
    (HALO, "Contrastive tuning improves a model's ability to tell truly harmful requests from harmless ones [1].", "supported"),
    (HALO, "The theory is confirmed by 2,400 training runs across datasets and optimizers [1].", "supported"),
    (HALO, "Contrastive tuning does not just improve a model's capacity to tell truly harmful requests from harmless ones [1].",
     "supported"),
    (HALO, "Halo's base weights are not updated [1].", "supported"),
    # "Up to 6.92×" is the best case: "at least 6.92×" is another claim, made of the same figure.
    (CACHET, "Cachet achieves at least 6.92× higher cache hit rate [1].", "unverified"),
    (CACHET, "Cachet serves up to 3 models at once [1].", "unverified"),
    (CACHET, "Cachet achieves up to 6.92x higher cache hit rate [1].", "supported"),
    (CACHET, "Cachet serves at least 3 models at once [1].", "supported"),
    (CACHET, "Cachet's cache hit rate is 6.92× higher [1].", "supported"),
    # The quote's own figure, said to go the other way for the same thing; a step put after what it comes before.
    (TIDEWAY, "Tide gives up to 4.31× lower cache hit rate [1].", "contradicted"),
    (TIDEWAY, "Tide makes latency 9.5× higher [1].", "contradicted"),
    (TIDEWAY, "Tide gives up to 4.31× higher cache hit rate [1].", "supported"),
    (TIDEWAY, "Tide improves EM@1 by 12.4 points [1].", "supported"),  # the "lower" beside it is the next figure's
    (TIDEWAY, "Tide plans its route after exploiting the reward [1].", "contradicted"),
    (TIDEWAY, "Tide plans its route before exploiting the reward [1].", "supported"),
    (TIDEWAY, "Tide gives roughly 41% higher edge growth [1].", "contradicted"),
    (TIDEWAY, "Tide reduces edge growth by about 41% [1].", "supported"),  # "growth" is what is measured, "reduces" the way
    (TIDEWAY, "It degrades a model's ability to tell truly harmful requests from harmless ones [1].", "contradicted"),
    (TIDEWAY, "It improves a model's ability to tell truly harmful requests from harmless ones [1].", "supported"),
    (TIDEWAY, "Tide is the last open platform for comparing LLM routers [1].", "contradicted"),
    (TIDEWAY, "Tide is the first open platform for comparing LLM routers [1].", "supported"),
], ids=["verb-denied", "passive-denied", "affirmed", "passive-affirmed", "not-just-adds", "denial-of-what-the-quote-leaves-unsaid",
        "most-as-least", "least-as-most", "most-kept", "least-kept", "unbounded",
        "rise-as-fall", "fall-as-rise", "rise-kept", "next-figure-s-word", "after-for-before", "order-kept",
        "beside-the-figure", "measured-noun", "verb-turned", "verb-kept", "last-for-first", "first-kept"])
def test_a_ticked_sentence_turned_false_in_its_quote_s_own_words_is_not_ticked(checker, sources, sentence, verdict):
    """The tenth round's checks, each a way bench/perturbations.py turned a ticked sentence false."""
    assert verdict_of(checker, sentence, sources) == verdict


def test_a_short_acronym_denied_is_a_thing_denied(checker):
    """"Without RL" denies RL as "without retraining" denies retraining: an acronym is short, not a function word."""
    comas = [Source(1, "c:1", "Comas", "Comas generates intrinsic rewards from discussion and optimizes each agent's policy via RL.")]
    assert verdict_of(checker, "Comas optimizes each agent's policy without RL [1].", comas) == "contradicted"
    assert verdict_of(checker, "Comas optimizes each agent's policy with RL [1].", comas) == "supported"


def test_a_bold_line_with_its_source_s_marker_is_a_heading_not_a_claim(checker):
    answer = "**Tequila [1]**\nTequila is a trapping-free quantization method [1].\n\n**RouterArena** [2]\nIt ships a leaderboard [2]."
    units = {u.text: u for u in checker.check(answer, SOURCES).sentences}
    assert units["**Tequila [1]**"].kind.value == "structure" and units["**RouterArena** [2]"].kind.value == "structure"
    assert units["It ships a leaderboard [2]."].kind.value == "claim"


def test_amplified_against_reduced_and_minimal_against_substantial_are_opposites(checker):
    loss = [Source(1, "o:3", "Grouper", "We present Grouper, an estimator. The grouping loss decreases with model scale but is "
                                        "amplified by instruction tuning. Grouper runs with minimal quality loss.")]
    assert verdict_of(checker, "The grouping loss decreases with model scale and is reduced by instruction tuning [1].", loss) == "contradicted"
    assert verdict_of(checker, "Grouper runs with substantial quality loss [1].", loss) == "contradicted"
    assert verdict_of(checker, "Grouper runs with minimal quality loss [1].", loss) == "supported"


def test_common_words_a_paraphrase_puts_it_in_are_no_invented_detail():
    """With the corpus's rarity, words the abstract never uses make a claim unverified two at a time ("detail_words"):
    those the language at large uses often ("keep", "still") are how a paraphrase is put, rare ones a detail."""
    from qa_service.config import Settings

    idf = lambda term: 3.0  # noqa: E731 - every word rare in the corpus, as in a small one
    settings = Settings()
    plain = "Our controller accelerates convergence of the flock and needs no central coordinator, keeping it simple [1]."
    invented = "Our controller accelerates convergence of the flock and needs no central coordinator, using quadcopter lidar [1]."
    for detail_zipf, verdict in ((settings.detail_zipf, "supported"), (9.0, "unverified")):
        checker = CitationChecker.from_settings(idf, MiniLMEmbedding(), settings.replace(detail_zipf=detail_zipf))
        assert checker.check(plain, FIELD).sentences[0].verdict.value == verdict, detail_zipf
        assert checker.check(invented, FIELD).sentences[0].verdict.value == "unverified"


def test_a_word_inside_a_denied_phrase_is_not_denied_alone(checker):
    """"without requiring model retraining" denies retraining, not every use of "model"; "instead of the full-precision
    output" and "rather than the true output" deny the same output. The head of a denied phrase still clashes."""
    audit = [Source(1, "a:1", "Auditor", "Checking unlearning is hard. We propose Auditor, which tests whether model outputs on a "
                                         "subset are independent of the forget set, without requiring model retraining. Prior "
                                         "methods align the quantized output with the compensated output rather than the true "
                                         "output of the original model.")]
    said = "Auditor tests whether model outputs on a subset are independent of the forget set [1]."
    assert verdict_of(checker, said, audit) == "supported"
    said = "Prior methods align the quantized output with the compensated output instead of the original full output [1]."
    assert verdict_of(checker, said, audit) != "contradicted"
    assert verdict_of(checker, "Auditor requires model retraining [1].", audit) == "contradicted"


def test_a_direction_said_by_a_noun_is_a_direction(checker):
    """"an 11.96x reduction in latency" says latency goes down, as "11.96x lower latency" does."""
    cache = [Source(1, "c:1", "Cacher", "Serving is costly. We propose Cacher, a joint eviction and routing scheme. Experiments "
                                        "show improvements of up to 6.92× in cache hit rate, 11.96× reduction in latency, and "
                                        "a 77.4% increase in throughput.")]
    assert verdict_of(checker, "Cacher yields up to 6.92× higher cache hit rate and 11.96× lower latency [1].", cache) != "contradicted"
    assert verdict_of(checker, "Cacher yields 11.96× higher latency [1].", cache) == "contradicted"


def test_a_denied_hyphened_compound_is_two_words(checker):
    """"rather than with the full-precision model" denies full precision where the quote affirms it: reversed, contradicted."""
    calib = [Source(1, "q:1", "Calib", "Quantizers drift. We propose Calib, which aligns the quantized output of compensated "
                                       "weights with the original full-precision output.")]
    said = "Calib aligns the quantized output with the compensated output rather than with the full-precision model [1]."
    assert verdict_of(checker, said, calib) == "contradicted"


PAIR = [Source(1, "p:1", "Lawbench", "We introduce Lawbench, a benchmark of physics problems that a teacher model writes and "
                                     "revises until a solver checks them."),
        Source(2, "p:2", "NewtonBench", "NewtonBench is a benchmark of physics problems. It relies on counterfactual law "
                                        "shifts to keep its problems memorization-resistant.")]


@pytest.mark.parametrize("sentence,verdict", [
    # a simile over two sources says the thing of both: the likened source carrying it is not enough
    ("Like NewtonBench, it also relies on counterfactual law shifts to keep problems memorization-resistant [1][2].",
     "unverified"),
    ("NewtonBench relies on counterfactual law shifts to keep its problems memorization-resistant [1][2].", "supported"),
], ids=["likened-over-two", "one-source-of-two"])
def test_a_sentence_likening_one_cited_paper_to_another_is_checked_against_each(checker, sentence, verdict):
    assert verdict_of(checker, sentence, PAIR) == verdict


WEIR = [Source(1, "w:1", "Weir", (
    "Auditing a data deletion is hard: existing audits require retraining a reference model on the kept data. "
    "We present Weir, an audit that tests whether the outputs on the deleted records still depend on them, "
    "without requiring model retraining or auxiliary classifiers."))]


@pytest.mark.parametrize("claim", [
    "Weir requires neither model retraining nor auxiliary classifiers [1].",  # what "without requiring" denies
    "Weir needs no model retraining or auxiliary classifiers [1].",
])
def test_a_verb_denied_by_no_or_neither_is_what_without_denies(checker, claim):
    assert verdict_of(checker, claim, WEIR) != "contradicted"



@pytest.mark.parametrize("label,name", [
    ("RouterArena", True),
    ("Generative Adversarial Reasoner", True),
    ("Reversal Curse", True),
    ("Cache hit rate", False),  # a paper that coins no name is labelled by a phrase of its abstract: its words are claims
    ("Weight compensation", False),
    ("Hybrid optimizer that combines first-order and zeroth-order updates", False),
])
def test_a_label_is_a_name_only_when_written_as_one(label, name):
    from qa_service.answering.judging import _is_name

    assert _is_name(label, 3) is name
