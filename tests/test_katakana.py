"""A Japanese question's katakana words (loanwords) are read with the English senses of them that the corpus says
(JMdict, installed): "キャリブレーション" is calibration, which no kanji reader and no English model would see. Papers and
a dictionary written for the test (JMdict's own tables, as jamdict-data ships them), then the installed one end to end."""

import sqlite3

import pytest

from qa_service.records import RefusalReason
from qa_service.store.chinese import GlossRules
from qa_service.store.katakana import KatakanaGlossary, dictionary_path, has_katakana
from qa_service.store.lexical import content_terms, content_terms_each
from tests.conftest import answerer_over, ingested, write_seed_file

PAPERS = [
    "Confidence scores of language models are often miscalibrated. We propose BinWise, a calibration method that groups "
    "predictions by their features and estimates the grouping loss each group hides. BinWise halves the calibration error "
    "on five benchmarks.",
    "Robots lose their way in crowded halls. We propose WayFinder, a navigation policy trained with reinforcement learning "
    "that reaches 92% of goals in simulated offices.",
    "Several agents that talk can solve harder tasks than one. We present ChorusNet, a multi agent system whose agents "
    "vote on each step; it solves 18% more planning tasks than a single agent.",
]

# (headword, [senses, each a list of glosses]) in JMdict's order
ENTRIES = [
    ("キャリブレーション", [["calibration"]]),
    ("グルーピング", [["grouping"]]),
    ("ロス", [["loss"], ["waste"]]),
    ("エージェント", [["agent"]]),
    ("マルチ", [["multi-"], ["multiple"]]),
    ("システム", [["system"]]),
    ("ロボット", [["(mere) puppet"], ["robot"]]),
    ("ナビゲーション", [["navigational assistance for a motorist or sailor"]]),
    ("プロテイン", [["protein"]]),
    ("ア", [["ah"]]),
]


@pytest.fixture(scope="module")
def dictionary(tmp_path_factory):
    path = tmp_path_factory.mktemp("jmdict") / "jamdict.db"
    with sqlite3.connect(path) as db:
        db.executescript("CREATE TABLE Kana (ID INTEGER PRIMARY KEY, idseq INTEGER, text TEXT, nokanji BOOLEAN);"
                         "CREATE TABLE Sense (ID INTEGER PRIMARY KEY, idseq INTEGER);"
                         "CREATE TABLE SenseGloss (sid INTEGER, lang TEXT, gend TEXT, text TEXT);")
        for idseq, (word, senses) in enumerate(ENTRIES, start=1):
            db.execute("INSERT INTO Kana (idseq, text, nokanji) VALUES (?, ?, 0)", (idseq, word))
            for glosses in senses:
                sense = db.execute("INSERT INTO Sense (idseq) VALUES (?)", (idseq,)).lastrowid
                db.execute("INSERT INTO SenseGloss VALUES (?, 'ger', NULL, 'Eichung')", (sense,))  # another language's gloss
                db.executemany("INSERT INTO SenseGloss VALUES (?, 'eng', NULL, ?)", [(sense, g) for g in glosses])
    return path


@pytest.fixture(scope="module")
def glossary(dictionary):
    vocabulary = set().union(*(content_terms(text) for text in PAPERS))
    return KatakanaGlossary(vocabulary, content_terms_each, GlossRules(), dictionary)


def test_each_loanword_is_read_as_its_first_english_sense_the_corpus_says(glossary):
    """ロス: "loss", never "waste"; ロボット: "(mere) puppet" is no term of the corpus, its second sense "robot" is; the
    Kana, Sense and SenseGloss tables are read as JMdict's, English glosses only."""
    question = "LLMのキャリブレーション指標では捉えられないグルーピングロスをどう推定する？ロボットは？"
    assert glossary.gloss(question) == {"キャリブレーション": "calibration", "グルーピング": "grouping", "ロス": "loss",
                                        "ロボット": "robot"}


def test_a_compound_is_cut_into_the_dictionarys_longest_words(glossary):
    """"マルチエージェントシステム" is no headword: it is マルチ, エージェント and システム; "multi-" is read as "multi"."""
    assert glossary.cut("マルチエージェントシステム") == ["マルチ", "エージェント", "システム"]
    assert glossary.gloss("マルチエージェントシステムの論文") == {"マルチ": "multi", "エージェント": "agent", "システム": "system"}


def test_a_word_no_abstract_speaks_of_a_definition_or_one_character_is_never_a_gloss(glossary):
    """プロテイン (protein) is in no paper; ナビゲーション's sense is a definition of eight words; ア is one character
    (`katakana_min_chars`); the middle dot parts words."""
    assert glossary.gloss("プロテイン・ナビゲーション・ア") == {}


def test_the_dictionary_is_the_installed_one():
    """JMdict comes with the jamdict-data package, as an SQLite file: nothing is downloaded."""
    assert dictionary_path().is_file() and has_katakana("キャリブレーション") and not has_katakana("校正とは")
    installed = KatakanaGlossary({"calibr", "fine", "tune", "agent"}, content_terms_each)
    assert installed.gloss("ファインチューニングとエージェントとキャリブレーション") == {
        "ファインチューニング": "fine tuning", "エージェント": "agent", "キャリブレーション": "calibration"}


@pytest.fixture(scope="module")
def index(tmp_path_factory):
    folder = tmp_path_factory.mktemp("katakana")
    return ingested(folder / "data", write_seed_file(folder / "papers.txt", PAPERS))


def test_a_japanese_question_in_loanwords_finds_the_paper_they_mean(index):
    """Only the katakana say what is asked: with their gloss BinWise answers; without it the question is off topic."""
    question = "キャリブレーションのグルーピングロスを推定する論文は？"
    result = answerer_over(index).ask(question)
    assert result.refusal_reason is None and {c.label for c in result.citations} == {"BinWise"}
    assert result.question == question  # answered as asked: the gloss is only how it is read
    assert "calibration" in answerer_over(index).bridged(question)
    off = answerer_over(index, katakana_min_chars=0).ask(question)
    assert off.refusal_reason is RefusalReason.OFF_TOPIC


def test_the_first_question_of_a_process_in_japanese_is_glossed(index):
    """A process whose first question is Japanese (`qa-service ask`): the corpus's vocabulary is loaded for its gloss."""
    from qa_service.service import open_service
    fresh = open_service(index.settings.data_dir, index.settings)
    assert fresh.answerer.bridged("キャリブレーションの論文は？") == "キャリブレーションの論文は？ (calibration)"


def test_the_senses_follow_the_question_in_its_order_kanji_and_katakana_alike(index):
    """A question of katakana and kanji: the katakana by JMdict, the kanji by CC-CEDICT ("投票", vote), the senses in the
    question's order after it as asked."""
    assert answerer_over(index).bridged("エージェントの投票とは？") == "エージェントの投票とは？ (agent vote)"
