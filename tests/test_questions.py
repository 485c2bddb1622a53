"""What a question asks for, read off its wording."""

import pytest

from qa_service.questions import (
    answer_kind, asked_details, asked_of_each, asks_cause, asks_figures, defined_thing, is_plural, sub_questions,
)
from qa_service.records import AnswerKind


@pytest.mark.parametrize("question,plural", [
    ("Which papers quantize LLM weights?", True),
    ("What work studies KV cache eviction?", True),
    ("Any method for that?", True),
    ("I need calibrated clusters. Any method for that?", True),
    ("Is there any work on LLM routers?", True),
    ("Is there work on choosing which LLM to send a query to?", True),
    ("Does any paper study model merging?", True),
    ("Describe how CoMAS lets agents improve without any external reward.", False),  # a determiner, not a request for papers
    ("What is RouterArena?", False),
    ("Quels articles portent sur la parole ?", True),  # the other accepted languages ask for several papers too
    ("哪些论文研究语音识别？", True),
    ("音声認識を扱っている論文はどれですか？", True),
    ("Qu'est-ce que Zorblax ?", False),
    ("Is there research on LLM agents that improve themselves?", True),  # whether the literature has such work
    ("Are there benchmarks that test LLM routers?", True),
    ("What benchmarks test LLM agents on search, and how many tasks do they have?", True),  # things of a kind that do
    ("What benchmarks does CAST use?", False),  # one paper's benchmarks
    ("Give me the benchmarks proposed for evaluating LLM agents and how many tasks each contains.", True),
    ("List the methods that quantize LLM weights.", True),
    ("List the benchmarks CAST uses.", False),
    ("What datasets was Tequila evaluated on?", False),
    ("Are there limitations?", False),
    ("anything on machine unlearning? like checking whether it worked", True),  # whatever the set has on a topic
    ("What's out there on LLM routing?", True),
    ("¿Hay algo sobre el desaprendizaje de LLMs?", True),
    ("Gibt es etwas über Modellzusammenführung?", True),
    ("Does CoMAS need anything beyond the agents' own talk?", False),  # "anything" not asking for papers on a topic
    ("By how much does Zorblax beat prior state-of-the-art methods?", False),  # works it is measured against
    ("Which papers beat existing methods on routing?", True),
    ("What other papers work on routing?", True),
    ("Which of these abstracts connect neural models with brain recordings?", True),  # abstracts are papers too
    ("What is the abstract of CAST about?", False),
    ("is there anything in here connecting ML with brain recordings? eeg, fmri, whatever", True),  # whatever the set holds
    ("Has anyone applied imitation learning to end-to-end driving?", True),  # whether any work did it
    ("Does CAST have anyone to compare against?", False),  # "anyone" not opening the question
    ("모델 병합을 활용하는 논문은 어떤 것들이 있나요?", True),  # "papers ... which ones are there"
    ("논문들은 무엇을 제안하나요?", True),  # "the papers": a plural noun
    # a body of work on a topic, not a paper's name
    ("Give me an overview of the work on LLM quantization.", True),
    ("Summarize the research on sycophancy.", True),
    ("Show me everything about process reward models.", True),
    ("What's been done on adversarial attacks against vision models?", True),
    ("What does this collection have on machine unlearning?", True),
    ("What are the different ways people prune LLMs here?", True),
    ("Tell me about work on code generation with LLMs.", True),
    ("Give an overview of Tequila.", False),
    ("Tell me everything about RouterArena", False),
    ("What does the work on ELEPHANT find?", False),
    ("How does Tequila work?", False),
    # things of a kind the literature has, and whoever works on a topic
    ("What techniques are used to detect hallucinations?", True),
    ("What strategies have been proposed to reduce over-refusal?", True),
    ("What solutions exist for LLM routing?", True),
    ("What kinds of benchmarks exist for LLM agents?", True),
    ("Which ones deal with watermarking?", True),
    ("How do researchers evaluate machine unlearning?", True),
    ("What are people doing about reward hacking?", True),
    ("What models does Go-Browse fine-tune?", False),
    ("How do people use Tequila?", False),
])
def test_a_question_about_several_papers_is_told_by_its_wording(question, plural):
    assert is_plural(question) is plural


@pytest.mark.parametrize("question,kind", [
    ("What is Zorblax?", AnswerKind.DEFINITION),
    ("Qu'est-ce que Zorblax ?", AnswerKind.DEFINITION),
    ("Zorblax とは何ですか？", AnswerKind.DEFINITION),
    ("How does Zorblax route queries between experts?", AnswerKind.MECHANISM),
    ("Wie funktioniert Zorblax?", AnswerKind.MECHANISM),
    ("What problem does Zorblax solve?", AnswerKind.PROBLEM),
    ("¿Por qué falla el muestreo aleatorio?", AnswerKind.PROBLEM),
    ("Give me the numbers for Zorblax on the held-out set.", AnswerKind.RESULTS),
    ("Summarize the results of Zorblax", AnswerKind.RESULTS),
    ("Zorblax speedup", AnswerKind.RESULTS),
    ("What did Zorblax show about models refining their own answers?", AnswerKind.RESULTS),  # what a study found
    ("What are the main findings of Zorblax?", AnswerKind.RESULTS),
    ("What does Zorblax do?", AnswerKind.OVERVIEW),
    ("What new kind of head did Zorblax find?", AnswerKind.OVERVIEW),  # a thing found, not findings
    ("¿Cuánto mejora Zorblax la precisión?", AnswerKind.RESULTS),
    ("Quanto mais rápido é o Zorblax?", AnswerKind.RESULTS),
    ("Zorblax の推論速度はどのくらい向上しますか？", AnswerKind.RESULTS),
    ("Zorblax 的加速比是多少？", AnswerKind.RESULTS),
    ("How do Zorblax and Quux differ?", AnswerKind.COMPARISON),
    ("Compare Zorblax with Quux", AnswerKind.COMPARISON),
    ("Zorblax vs Quux: how do these two approaches differ?", AnswerKind.COMPARISON),  # plural words, a pair compared
    ("Zorblax und Quux: worin unterscheiden sich beide Ansätze?", AnswerKind.COMPARISON),
    ("Which papers are better than Zorblax?", AnswerKind.LIST),  # a comparison cue, no pair: the papers are asked
    ("Quais artigos comparam o desempenho dos modelos?", AnswerKind.LIST),  # "dos" is "of the", not "two"
    ("What are the limitations of Zorblax?", AnswerKind.LIMITATIONS),
    ("Quelles sont les faiblesses de Zorblax ?", AnswerKind.LIMITATIONS),
    ("Which papers study speech?", AnswerKind.LIST),
    ("Welche Arbeiten untersuchen Sprache?", AnswerKind.LIST),
    ("Does Zorblax need labelled data?", AnswerKind.YES_NO),
    ("Is there a model that forecasts EEG signals?", AnswerKind.YES_NO),
    ("Zorblax", AnswerKind.OVERVIEW),
    ("Tell me about Zorblax.", AnswerKind.DEFINITION),  # a summary: what it is, then its main result
    ("Give me a quick summary of Zorblax", AnswerKind.DEFINITION), ("Explain Zorblax in two sentences.", AnswerKind.DEFINITION),
    ("Résume Zorblax.", AnswerKind.DEFINITION),
    ("Explain how Zorblax drafts tokens.", AnswerKind.MECHANISM),
    ("Summarize what Zorblax found about long documents.", AnswerKind.OVERVIEW),  # a question of its own
])
def test_the_kind_of_answer_asked_is_read_off_the_wording(question, kind):
    """Wh-words, function words of the other accepted languages, units and quantity words: no corpus word."""
    assert answer_kind(question) is kind


@pytest.mark.parametrize("question,figures", [
    ("Zorblax speedup", True), ("Zorblax 3x?", True), ("Wie viele Aufgaben hat Zorblax?", True),
    ("How can Zorblax cut latency?", False), ("How does Zorblax work?", False),
    ("Quais são as taxas médias de sucesso do Zorblax?", True), ("¿Cuáles son las mejoras de Zorblax?", True),
    # how far a thing goes, in each accepted language
    ("To what extent does Zorblax speed up decoding?", True), ("By what margin does Zorblax beat Quux?", True),
    ("À quel point Zorblax accélère-t-il le décodage ?", True), ("Em que medida o Zorblax acelera a decodificação?", True),
    ("Inwieweit beschleunigt Zorblax die Dekodierung?", True), ("¿Hasta qué punto acelera Zorblax la decodificación?", True),
    ("How does Zorblax compare with Quux in accuracy?", True),  # a measure compared
    ("How is Zorblax different from Quux?", False), ("How does Zorblax decide how strongly to steer?", False),
])
def test_a_quantity_word_or_unit_asks_for_figures(question, figures):
    assert asks_figures(question) is figures


@pytest.mark.parametrize("question,parts", [
    ("How many tasks does Zorblax have and what is its best success rate?", 2),
    ("¿Cuántas preguntas tiene Zorblax y cuál es la tasa de éxito del mejor sistema?", 2),
    ("Combien de tâches comporte Zorblax, et quel est le meilleur score ?", 2),
    ("Wie viele Aufgaben hat Zorblax und wie gut ist das beste Modell?", 2),
    ("Quantas tarefas tem o Zorblax e qual é a melhor taxa?", 2),
    ("¿Qué tasa de éxito logra Zorblax en tareas largas y cortas?", 1),  # "y" joining two things is one question
    ("How much faster is Zorblax, and by how much does it beat prior methods?", 2),  # "and by how much"
])
def test_two_questions_joined_by_and_are_two_in_any_accepted_language(question, parts):
    assert len(sub_questions(question)) == parts


@pytest.mark.parametrize("question,details", [
    ("In the paper on cost-aware speculative decoding that accounts for GPU type and batch size, what speedups are reported?", []),
    ("For the decoding paper, what batch size did they use?", ["batch size"]),
    ("Which GPUs did Zorblax run on?", ["hardware or compute"]),
])
def test_a_lead_in_naming_the_paper_asks_no_detail(question, details):
    """What the lead-in describes the paper by says which paper is meant; the question proper says what is asked."""
    from qa_service.questions import asked_details
    assert [kind.name for kind in asked_details(question)] == details


@pytest.mark.parametrize("question,topic", [
    ("process reward model step-level rewards", True),  # a search-box query
    ("KV cache eviction", True),
    ("What is CAST?", False),
    ("Summarize the unlearning papers", False),  # an imperative tells
    ("¿Qué es CAST?", False),
    ("how does it work", False),  # asks, without its question mark
    ("the papers here that quantize weights and also report their speedups on big GPUs", False),  # a sentence
])
def test_a_search_box_query_is_a_few_words_that_neither_ask_nor_tell(question, topic):
    from qa_service.questions import is_topic_query

    assert is_topic_query(question) is topic


@pytest.mark.parametrize("question,asked", [
    ("How does Zorblax tell which seed a language model came from?", []),  # "a model" is another thing: the seed is asked
    ("Which base model did Zorblax fine-tune?", ["model used"]),
    ("Which of the models did best on Quux?", ["model used"]),
])
def test_which_model_is_asked_only_when_the_model_is_what_which_asks_about(question, asked):
    assert [kind.name for kind in asked_details(question)] == asked


@pytest.mark.parametrize("question,asked", [
    ("¿Qué tasa de aprendizaje usa X?", ["learning rate"]),
    ("Qual é o tamanho do lote usado pelo X?", ["batch size"]),
    ("Quel optimiseur utilise X ?", ["optimizer"]),
    ("Wie viele Epochen wurde X trainiert?", ["number of epochs"]),
    ("X 用了多少GPU？", ["hardware or compute"]),  # no word boundary between a CJK character and "GPU"
    ("X のハイパーパラメータは？", ["hyperparameters"]),
    ("¿Quiénes son los autores de X?", ["authors"]),
    ("X の著者は誰ですか？", ["authors"]),
    ("¿Qué proponen los autores de X?", []),  # what the authors did is asked, not who they are
    ("Was schlagen die Autoren von X vor?", []),
])
def test_a_training_detail_is_asked_in_each_accepted_language(question, asked):
    assert [kind.name for kind in asked_details(question)] == asked


@pytest.mark.parametrize("question,thing", [
    ("What is missingness bias in feature attribution?", "missingness bias"),
    ("What is meant by 'compensation-aware error' in quantization?", "compensation-aware error"),
    ("Define grouping loss.", "grouping loss"),
    ("What is RouterArena meant for?", "RouterArena"),
    ("How does Zorblax work?", ""),
])
def test_a_definition_names_the_thing_it_asks_to_be_defined(question, thing):
    assert defined_thing(question) == thing


@pytest.mark.parametrize("question,cause", [
    ("Why does the entropy bonus fail?", True), ("Warum scheitert der Entropiebonus?", True),
    ("¿Por qué falla el bono de entropía?", True), ("为什么熵奖励没有用？", True),
    ("What problem does Zorblax solve?", False), ("How does Zorblax work?", False),
])
def test_a_cause_is_asked_by_why_in_any_accepted_language(question, cause):
    assert asks_cause(question) is cause


def test_a_list_question_s_second_part_says_what_it_asks_of_each_paper():
    assert asked_of_each("Which papers make LLM unlearning more robust, and how?") is AnswerKind.MECHANISM
    assert asked_of_each("Which papers deal with soil moisture, and what do they propose?") is AnswerKind.OVERVIEW
    assert asked_of_each("¿Qué artículos tratan la humedad del suelo y cómo la miden?") is AnswerKind.MECHANISM
    assert asked_of_each("Which papers deal with soil moisture?") is None  # a plain list
    assert asked_of_each("How does Loamnet work, and what does it report?") is None  # one paper, not a list


@pytest.mark.parametrize("question,kind,thing", [
    ("What do the authors mean by 'compensation-aware error' in GPTQ?", AnswerKind.DEFINITION, "compensation-aware error"),
    ("What does 'grouping loss' mean?", AnswerKind.DEFINITION, "grouping loss"),
    ("What does the acronym ACR stand for?", AnswerKind.DEFINITION, "ACR"),
    ("What is the main bottleneck of FP4 training?", AnswerKind.PROBLEM, ""),
    ("what do they say is the key obstacle to scaling?", AnswerKind.PROBLEM, ""),
    ("How much does it mean in practice?", AnswerKind.RESULTS, ""),
    ("What does this result mean for deployment?", AnswerKind.OVERVIEW, ""),  # what follows from it, not a term
])
def test_what_a_term_means_and_the_main_obstacle_are_their_own_kinds(question, kind, thing):
    assert answer_kind(question) is kind
    assert kind is not AnswerKind.DEFINITION or defined_thing(question) == thing


def test_a_licence_is_asked_apart_from_the_code_and_a_code_link_does_not_state_it():
    """"Under which licence?" (许可证, licencia) is not answered by "code is available at github.com/...", which does
    answer "is the code on GitHub?"; "when does it fail?" asks the failures the abstract reports, if any."""
    from qa_service.questions import asked_details
    link = "Code is available at https://github.com/x/y."
    for question in ("What licence is X released under?", "X 用的是什么开源许可证？", "¿Bajo qué licencia se publica X?"):
        (kind,) = asked_details(question)
        assert kind.name == "licence" and not kind.states(link) and kind.states("Released under the MIT license.")
    (code,) = asked_details("Is the X code on GitHub?")
    assert code.name == "code" and code.states(link)
    (failures,) = asked_details("when does X fail? any failure cases reported")
    assert failures.name == "failure cases" and not failures.states("X lifts accuracy by 4 points.")
    assert failures.states("X fails on long documents.")
