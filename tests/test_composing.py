"""The offline answer for each kind of question, on papers written for the test (not the seeds)."""

from qa_service.answering.extractive import ExtractiveModel, ExtractiveTuning
from qa_service.records import Passage, Source

ZORBLAX = (
    "Large language models are slow to decode long outputs. However, autoregressive decoding leaves most of the accelerator idle, "
    "which makes serving costly. We propose Zorblax, a decoding scheme that drafts several tokens with a small model and verifies "
    "them in one pass. Zorblax groups the drafts into a tree and prunes branches whose probability is tiny. On three chat "
    "benchmarks, Zorblax achieves a 2.7× speedup over standard decoding with identical outputs. On long documents, Zorblax fails "
    "to help, reaching only 1.1× because most drafts are rejected. Code is available at https://github.com/zorblax/zorblax."
)
QUUX = (
    "Retrieval-augmented generation depends on the quality of retrieved passages. We introduce Quux, a reranker that scores "
    "passages with a small cross-encoder distilled from a large model. Quux improves answer accuracy by 4.2 points on open-domain "
    "QA while cutting reranking latency by 60%."
)
GLIMMER = "Graphene ribbons conduct heat anisotropically. We measure their thermal conductivity with Raman thermometry."


def source(n: int, pid: str, label: str, text: str) -> Source:
    return Source(n, pid, label, text, [Passage(0, len(text), text)])


SOURCES = [source(1, "p:1", "Zorblax", ZORBLAX), source(2, "p:2", "Quux", QUUX), source(3, "p:3", "Glimmer", GLIMMER)]
MODEL = ExtractiveModel()


def ask(question: str, about: tuple[str, ...] = ("p:1",)) -> str:
    return MODEL.answer(question, SOURCES, about=about)


def answer_of(label: str, text: str, question: str) -> str:
    """The answer from one paper written for the test, the question about it."""
    return MODEL.answer(question, [source(1, "p:one", label, text)], about=("p:one",))


def test_definition_is_the_introducing_sentence_then_the_main_result():
    answer = ask("What is Zorblax?")
    assert answer.startswith("We propose Zorblax, a decoding scheme") and "2.7× speedup" in answer


def test_a_summary_asked_of_a_paper_is_what_it_is_then_its_main_result():
    for question in ("Tell me about Zorblax.", "Give me a quick summary of Zorblax", "Explain Zorblax in two sentences."):
        answer = ask(question)
        assert answer.startswith("We propose Zorblax, a decoding scheme") and "2.7× speedup" in answer, question


def test_mechanism_is_the_method_sentences():
    answer = ask("How does Zorblax work?")
    assert "drafts several tokens" in answer and "groups the drafts into a tree" in answer and "2.7×" not in answer


def test_problem_is_the_gap_the_paper_starts_from():
    answer = ask("What problem does Zorblax solve?")
    assert "However, autoregressive decoding leaves most of the accelerator idle" in answer and "2.7×" not in answer
    assert answer.index("autoregressive decoding leaves") < answer.index("We propose Zorblax")


def test_results_carry_the_figures_in_any_language_and_for_keywords():
    for question in ("Give me the numbers for Zorblax.", "Zorblax speedup", "¿Cuánto acelera Zorblax la decodificación?",
                     "Zorblax の高速化はどのくらいですか？"):
        answer = ask(question)
        assert "2.7×" in answer, question
        assert "We propose Zorblax" not in answer, question


def test_limitations_are_the_failures():
    assert ask("What are the limitations of Zorblax?").startswith("On long documents, Zorblax fails to help")


def test_yes_no_opens_with_the_deciding_sentence():
    assert ask("Does Zorblax keep the outputs identical?").startswith("On three chat benchmarks, Zorblax achieves")


def test_comparison_gives_each_paper_a_method_and_a_result_sentence():
    answer = ask("How do Zorblax and Quux differ?", about=("p:1", "p:2"))
    assert "We propose Zorblax" in answer and "2.7× speedup" in answer
    assert "We introduce Quux" in answer and "4.2 points" in answer and "[3]" not in answer


def test_list_gives_one_sentence_per_paper_most_relevant_first():
    answer = ask("Which papers speed up decoding or the reranking of passages?", about=())
    assert answer.count("[1]") == 1 and answer.count("[2]") == 1 and "[3]" not in answer
    assert answer.startswith("- **Quux**: We introduce Quux")  # it matches more of the question than source 1: the most relevant first
    assert "\n- **Zorblax**: We propose Zorblax" in answer  # each paper's contribution sentence, in an item of its own


def test_an_answer_from_several_papers_is_a_list_naming_each_paper_once():
    """A run of quotes does not say which paper is which: one item per paper, its label in bold, its sentences together."""
    for question, about in (("Which papers speed up decoding or the reranking of passages, and by how much?", ()),
                            ("How do Zorblax and Quux differ?", ("p:1", "p:2"))):
        lines = ask(question, about=about).split("\n")
        assert len(lines) == 2, lines
        assert sorted(line.split("**")[1] for line in lines) == ["Quux", "Zorblax"]
        for line in lines:
            label = line.split("**")[1]
            assert line.startswith(f"- **{label}**: ") and line.count(f"[{1 if label == 'Zorblax' else 2}]") == line.count("[")


def test_a_label_that_cannot_be_an_item_label_is_left_out_and_the_item_stays():
    """A label with a figure in it ("3x faster") or Markdown's marks would be read as a claim, or break the bold."""
    odd = [source(1, "p:1", "2 drafts are better than one", ZORBLAX), source(2, "p:2", "Quux_v2", QUUX)]
    answer = MODEL.answer("Which papers speed up decoding or the reranking of passages?", odd, about=())
    lines = answer.split("\n")
    assert len(lines) == 2 and all(line.startswith("- ") and "**" not in line for line in lines), answer


def test_one_paper_s_answer_stays_prose():
    assert "\n" not in ask("How does Zorblax work?") and not ask("How does Zorblax work?").startswith("- ")


def test_a_list_that_asks_figures_gives_each_paper_s_figures_too():
    """Each paper's most relevant sentence, and when that gives no figure, the paper's sentence that does."""
    answer = ask("Which papers speed up decoding or the reranking of passages, and by how much?", about=())
    assert "2.7× speedup" in answer and ("4.2 points" in answer or "60%" in answer), answer
    assert "[3]" not in answer


SEABIRD = (
    "Surveys of seabird colonies are slow and disturb the birds. We release Seabird, a benchmark of drone images of nesting "
    "colonies. The benchmark holds 1200 annotated images from 14 colonies on three coasts. We evaluate nine detection "
    "networks on it. The best network counts nests within 4.5% of manual surveys, while most stay above 20% error."
)
BIRDS = [source(1, "b:1", "Seabird", SEABIRD)]


def test_each_figure_a_two_part_question_asks_for_is_given():
    """Two asks, two figures: a plain count (1200 images) answers "how many", though it is no percentage or ratio."""
    for question in ("How many images are in Seabird? And what error does the best network reach?",
                     "how many imags does Seabird have and what is the best network's error?"):  # a typo, one sentence
        answer = MODEL.answer(question, BIRDS, about=("b:1",))
        assert "1200 annotated images" in answer and "4.5%" in answer, answer


def test_a_count_question_in_another_script_gets_the_count():
    answer = MODEL.answer("Seabird 有多少张图像？最好的网络误差是多少？", BIRDS, about=("b:1",))
    assert "4.5%" in answer and "1200" in answer, answer


def test_within_one_paper_the_sentence_with_the_asked_thing_wins_over_the_one_with_the_papers_name():
    """The paper's own name is in the A100 sentence; what tells the answering sentence is H200."""
    kestrel = ("We present a kernel compiler for attention. The Kestrel compiler runs 3.1x faster than cuBLAS on A100 GPUs. "
               "On H200 GPUs the gain is 2.4x.")
    answer = MODEL.answer("What speedup does the Kestrel compiler reach on H200?", [source(1, "k:1", "Kestrel Compiler", kestrel)], about=("k:1",))
    assert "2.4x" in answer
def test_a_question_naming_two_papers_answers_from_both_whatever_its_kind():
    """"Which is faster, Zorblax or Quux?" asks for results, not a comparison by its wording: both papers' figures all the same."""
    answer = ask("Which is faster, Zorblax or Quux?", about=("p:1", "p:2"))
    assert "[1]" in answer and "[2]" in answer and "[3]" not in answer, answer
    assert "2.7× speedup" in answer and "60%" in answer, answer
    answer = ask("What problem do Zorblax and Quux address?", about=("p:1", "p:2"))
    assert "autoregressive decoding leaves" in answer and "depends on the quality of retrieved passages" in answer, answer


def test_papers_a_question_does_not_call_by_name_are_not_each_answered():
    """"What is open-domain QA?" may be about every paper that mentions it; it calls none, so one paper answers, as before."""
    answer = ask("What is open-domain QA?", about=("p:1", "p:2"))
    assert ("[1]" in answer) != ("[2]" in answer), answer



def test_a_question_asking_the_same_of_each_paper_it_describes_answers_each():
    """"How do the draft-tree decoder and the distilled reranker each ...?" calls neither by its label, but asks of each
    of the two papers the judge found: both answer, each with its own sentences; "both" asks so too."""
    for question in ("How do the draft-tree decoder and the distilled reranker each cut serving cost?",
                     "What do the draft-tree decoder and the distilled reranker both propose?"):
        answer = ask(question, about=("p:1", "p:2"))
        assert "[1]" in answer and "[2]" in answer and "[3]" not in answer, answer

def test_a_list_keeps_a_paper_on_the_topic_that_retrieval_ranked_low():
    """Rank discounts alone would drop the third paper (a quarter of the first's score here); it holds as much of the
    question's rare words as the first, so it is as much on the topic; the unrelated second paper stays out."""
    from qa_service.answering.extractive import ExtractiveTuning
    flake = "We measure the thermal conductivity of graphene flakes with a suspended bridge and find it falls with flake width."
    sources = [source(1, "g:1", "Glimmer", GLIMMER), source(2, "p:2", "Quux", QUUX), source(3, "g:3", "Flake", flake)]
    model = ExtractiveModel(ExtractiveTuning(rank_decay=0.5))
    answer = model.answer("Which papers measure the thermal conductivity of graphene?", sources)
    assert "[1]" in answer and "suspended bridge" in answer and "Quux" not in answer and "reranker" not in answer


def test_each_question_of_a_two_question_one_gets_its_own_sentence():
    """The sentence that answers the second question shares every word of the first too: the first still gets the one
    that answers it, in English and in another language joined by its "and"."""
    bench = ("Instructed editing is common. Benchbar comprises 545 problems in twelve languages. We evaluate 40 models and "
             "observe that Benchbar is a hard set of problems where only 3 models score over 60%.")
    sources = [source(1, "b:1", "Benchbar", bench)]
    for question in ("How many problems are in Benchbar and how many models score above 60%?",
                     "¿Cuántos problemas tiene Benchbar y cuántos modelos superan el 60%?"):
        answer = MODEL.answer(question, sources, about=("b:1",))
        assert "545 problems" in answer and "only 3 models score over 60%" in answer, question


def test_results_give_every_figure_of_the_asked_measure():
    """"The error numbers": each sentence that gives an error rate, not only the best-scoring one."""
    text = ("Decoders for noisy channels are slow. We propose Wibble, a learned decoder. On the surface channel, Wibble cuts "
            "the error rate from 3.1% to 1.9% at distance five. On larger codes, it reaches an error rate of 0.8% on the same channel "
            "with only 2M parameters. Wibble runs at 40 kHz.")
    answer = MODEL.answer("Give me the error rate numbers Wibble reports on the surface channel.",
                          [source(1, "w:1", "Wibble", text)], about=("w:1",))
    assert "from 3.1% to 1.9%" in answer and "0.8%" in answer


def test_a_question_of_many_questions_is_answered_without_weighing_every_assignment():
    """Forty question marks would be 3**40 assignments of sentences to questions: only the first few are weighed."""
    answer = MODEL.answer("How fast is Zorblax? " * 40, SOURCES, about=("p:1",))
    assert "2.7×" in answer


KELPBENCH = (
    "Kelp forests are mapped by hand. We introduce KelpBench, a new benchmark for mapping kelp from satellite images. We "
    "benchmark over 12 segmentation systems of every size on KelpBench. Its data are 860 labelled scenes drawn from 40 regions."
)
REEFSET = (
    "Coral reef surveys lack shared data. We introduce ReefSet, a new benchmark for mapping reefs from underwater video. "
    "ReefSet contains 2,300 annotated clips from 11 reef sites, and we compare 7 tracking models on it."
)
BENCHES = [source(1, "k:1", "KelpBench", KELPBENCH), source(2, "r:1", "ReefSet", REEFSET)]


def test_a_count_asked_of_one_paper_is_the_sentence_counting_that_thing():
    """"Number of scenes": the sentence counting scenes, not the one with another number ("over 12 systems")."""
    answer = MODEL.answer("What is the size of the KelpBench benchmark (number of scenes)?", BENCHES[:1], about=("k:1",))
    assert "860 labelled scenes" in answer, answer


def test_a_list_asking_a_count_gives_each_paper_s_sentence_counting_it():
    """"Give me the sizes of the benchmarks in this set (number of scenes/clips)": a list, each paper's count of the
    asked things, whichever of the names the question gives it counts them by."""
    answer = MODEL.answer("Give me the sizes of the new benchmarks in this set (number of scenes/clips).", BENCHES)
    assert "860 labelled scenes" in answer and "2,300 annotated clips" in answer, answer
    answer = MODEL.answer("Give me the size of each new benchmark: how many scenes or clips?", BENCHES)
    assert "860 labelled scenes" in answer and "2,300 annotated clips" in answer, answer


DUNESEARCH = (
    "Agents are asked to collect many facts at once. We introduce DuneSearch, a benchmark of 150 wide collection tasks. "
    "Most agent systems reach success rates near 0%, with the best one reaching just 6%. Human annotators reach 95%."
)


def test_a_question_where_a_method_falls_short_gets_the_low_scores():
    """"Where do they fall short?", "how badly": a limitations question; a low score said as such is a failure."""
    dune = [source(1, "d:1", "DuneSearch", DUNESEARCH)]
    for question in ("Where do agents fall short on DuneSearch?", "How badly do agents do on DuneSearch?"):
        answer = MODEL.answer(question, dune, about=("d:1",))
        assert "near 0%" in answer and "Human annotators" not in answer, (question, answer)


SPRIG = (
    "Draft trees ignore the hardware they run on. We introduce Sprig, a draft tree that weighs the cost of each branch on "
    "the GPU at hand. Across five tasks Sprig decodes up to 3.4 times faster than standard decoding. Moreover, it beats "
    "earlier draft trees by 4% to 11%. Code will be released."
)


def test_a_figured_result_the_abstract_goes_on_from_comes_with_it():
    """"How much faster is Sprig than normal decoding and than earlier trees?": the "Moreover, ..." figure too."""
    sprig = [source(1, "s:1", "Sprig", SPRIG)]
    answer = MODEL.answer("how fast is Sprig vs normal decoding", sprig, about=("s:1",))
    assert "3.4 times faster" in answer and "4% to 11%" in answer, answer


def test_a_list_leaves_out_a_paper_that_shares_no_word_of_the_question():
    """Scored close by meaning alone, a paper none of whose sentences holds a word of the question is retrieval's noise;
    a paper holding some is listed. A question no sentence shares a word with (another script) keeps its ranked papers."""
    from qa_service.answering.composing import Candidate
    from qa_service.corpus.roles import Role
    from qa_service.records import AnswerKind

    def cand(n: int, text: str, score: float, meaning: float, words: float) -> list[Candidate]:
        return [Candidate(source(n, f"c:{n}", f"Paper{n}", text), 0, len(text), text, score, Role.METHOD, meaning=meaning, words=words)]

    per_source = [cand(1, "We draft tokens to speed up decoding.", 0.8, 0.7, 0.9), cand(2, "Serving engines cache states.", 0.5, 0.65, 0.0),
                  cand(3, "Decoding drafts are verified in one pass.", 0.45, 0.5, 0.4)]
    chosen = MODEL._compose("Which papers speed up decoding?", AnswerKind.LIST, False, per_source, (), False, True)
    assert [c.source.n for c in chosen] == [1, 3]
    foreign = [[c for c in cands for c in [Candidate(c.source, c.start, c.end, c.text, c.score, c.role, meaning=c.meaning)]]
               for cands in per_source]  # no sentence shares a word: the words test asks nothing
    chosen = MODEL._compose("哪些论文加速解码？", AnswerKind.LIST, False, foreign, (), False, True)
    assert [c.source.n for c in chosen] == [1, 2, 3]
    # the first-ranked paper is always listed, whatever it shares: a list is never empty
    lone = [cand(1, "Serving engines cache states.", 0.8, 0.7, 0.0), cand(2, "We draft tokens.", 0.3, 0.3, 0.5)]
    assert [c.source.n for c in MODEL._compose("Which papers speed up decoding?", AnswerKind.LIST, False, lone, (), False, True)] == [1]


BRINDLE = (
    "Web agents need realistic training data. We propose Brindle, a method that collects web agent trajectories by "
    "exploring sites as a graph. Brindle achieves efficient exploration by reusing visited states across episodes. "
    "A 7B model trained on the collected data reaches a 31.4% success rate on WebShop, ahead of larger models."
)


def test_a_comparison_asking_figures_gives_each_paper_s_figured_result_not_a_named_one_without_figures():
    sources = [source(1, "p:1", "Zorblax", ZORBLAX), source(2, "p:4", "Brindle", BRINDLE)]
    answer = MODEL.answer("Zorblax vs Brindle: what speedup or success rate does each report?", sources, about=("p:1", "p:4"))
    assert "2.7× speedup" in answer and "31.4% success rate" in answer
    assert "We propose Brindle" in answer  # each paper still gets its method sentence


def test_a_pair_compared_in_plural_words_gets_each_paper_s_method_and_result_and_no_third_paper():
    answer = ask("Zorblax vs Quux: how do these two approaches differ?", about=("p:1", "p:2"))
    assert "We propose Zorblax" in answer and "2.7× speedup" in answer
    assert "We introduce Quux" in answer and "4.2 points" in answer and "[3]" not in answer


FERRULE = (
    "Batched decoding activates many experts in mixture-of-experts models. We present Ferrule, a routing method for "
    "efficient batched decoding. Ferrule reduces the number of active experts by re-routing tokens onto shared experts "
    "chosen per batch. On three reasoning benchmarks, Ferrule achieves a 1.8× speedup with no loss in accuracy."
)


def test_a_mechanism_is_how_the_method_works_not_only_the_sentence_introducing_it():
    """The means clause ("by re-routing tokens") says how, though the sentence reads as a result; the sentence that
    introduces the method says only what it is."""
    answer = answer_of("Ferrule", FERRULE, "How does Ferrule cut down the number of active experts?")
    assert "by re-routing tokens onto shared experts" in answer and "1.8×" not in answer
    answer = answer_of("Ferrule", FERRULE, "How does Ferrule make batched decoding efficient?")
    assert answer.startswith("We present Ferrule") and "by re-routing tokens" in answer  # what it is, then how


HOBNAIL = (
    "Explanation methods often give unreliable importance scores. The cause is leakage drift, a distortion that arises "
    "when models are probed with masked inputs they never saw in training. We introduce Hobnail, a post-hoc method that "
    "corrects it by fine-tuning a linear head on a frozen model. Hobnail cuts the distortion by 40% on six datasets."
)


def test_a_definition_of_a_thing_other_than_the_paper_is_the_sentence_that_says_what_it_is():
    answer = answer_of("Hobnail", HOBNAIL, "What is leakage drift in feature attribution?")
    assert answer.startswith("The cause is leakage drift, a distortion") and "We introduce Hobnail" in answer
    answer = answer_of("Hobnail", HOBNAIL, "What is Hobnail?")  # the paper itself: its introducing sentence
    assert answer.startswith("We introduce Hobnail")


def test_what_a_term_means_is_its_definition_not_its_figures():
    # "error", "distortion" are measures, but a question asking what a term means wants the sentence saying what it is
    for question in ("What do the authors mean by 'leakage drift'?", "What does 'leakage drift' mean?",
                     "What is meant by leakage drift here?"):
        answer = answer_of("Hobnail", HOBNAIL, question)
        assert answer.startswith("The cause is leakage drift, a distortion"), question


def test_the_main_barrier_asked_is_the_problem_the_paper_starts_from():
    answer = answer_of("Zorblax", ZORBLAX, "what do they say is the main barrier to fast decoding?")
    assert "autoregressive decoding leaves most of the accelerator idle" in answer and "2.7×" not in answer


ADZE = (
    "Entropy bonuses help exploration in robotic control. However, they give little gain when language models are "
    "trained with reinforcement learning. We argue that this stems from the huge response space. "
    "We propose Adze, an entropy bonus for language models that applies only to a small set of tokens. Adze improves math "
    "accuracy by 3 points."
)


def test_a_why_question_gets_the_sentence_that_gives_the_cause():
    answer = answer_of("Adze", ADZE, "Why does the entropy bonus give little gain for language models?")
    assert "stems from the huge response space" in answer


LOAMNET = (
    "Soil moisture probes drift over a growing season, and soil moisture readings from cheap probes are rarely trusted. "
    "We propose Loamnet, which recalibrates each probe against a shared satellite estimate every week. "
    "Across 40 farms, Loamnet halves the drift of the probes."
)
TILLR = (
    "Soil moisture maps from satellites are too coarse for a single field of soil. "
    "We introduce Tillr, a downscaling model that fuses radar backscatter with terrain slope. "
    "Tillr reaches a 0.04 error at 10 m resolution."
)
FIELDS = [source(1, "s:1", "Loamnet", LOAMNET), source(2, "s:2", "Tillr", TILLR)]


def test_a_list_asking_something_of_each_paper_gives_each_paper_s_answer_to_it():
    for question in ("Which papers deal with soil moisture, and what do they propose?",
                     "Which papers work on soil moisture, and how?"):
        answer = MODEL.answer(question, FIELDS, about=())
        assert "recalibrates each probe" in answer and "fuses radar backscatter" in answer, question
        # each paper's sentences together: its listed sentence, then its answer to the second part
        order = [answer.index(s) for s in ("probes drift", "recalibrates each probe", "maps from satellites", "fuses radar")]
        assert order == sorted(order), question
    plain = MODEL.answer("Which papers deal with soil moisture?", FIELDS, about=())
    assert plain.count("[1]") == 1 and plain.count("[2]") == 1  # a plain list: one sentence per paper


KILNWISE = (
    "Kiln drying of timber cracks boards when moisture leaves unevenly. We present Kilnwise, a schedule planner for drying "
    "timber. Kilnwise measures the moisture gradient with embedded pins and slows the fans when the gradient steepens. "
    "Across 300 boards, Kilnwise cuts cracking by half. Code is available at https://example.org/kilnwise."
)


def test_each_part_of_a_two_part_question_about_one_paper_is_answered():
    for question in ("What is Kilnwise, and how?", "What is Kilnwise, and how does it work?"):
        answer = answer_of("Kilnwise", KILNWISE, question)
        assert "We present Kilnwise" in answer and "slows the fans" in answer, question  # what it is, and how it works
        assert "example.org" not in answer, question  # a code link answers neither part


CORALMAP = (
    "Coral reefs shelter a quarter of marine species on coral reef habitats. "
    "We map reef bleaching from drone images with a segmentation network. It finds bleached coral with 91% precision."
)
REEFSOUND = (
    "Healthy reefs are loud, and reef sound carries far. We record reef soundscapes and classify coral reef health from "
    "the recordings. The classifier separates degraded from healthy reefs in 84% of sites."
)
REEFS = [source(1, "c:1", "CoralMap", CORALMAP), source(2, "c:2", "ReefSound", REEFSOUND)]


def test_a_listed_paper_whose_best_sentence_sets_the_scene_also_gives_its_own_work():
    answer = MODEL.answer("Which papers study coral reefs?", REEFS, about=())
    assert "We map reef bleaching" in answer  # what the paper does, not only the field it is in
    assert answer.index("Coral reefs shelter") < answer.index("We map reef bleaching")  # each paper's sentences together
    assert "We record reef soundscapes" in answer
    off = ExtractiveModel(ExtractiveTuning(list_own_share=10.0)).answer("Which papers study coral reefs?", REEFS, about=())
    assert "We map reef bleaching" not in off  # the setting answer_list_own_share: above any score, the scene alone
