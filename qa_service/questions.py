"""What a question asks for, read off its wording alone (no knowledge of any corpus).

The detail kinds are the specifics papers report in their body but abstracts seldom give
(training set-up, authorship, compute): general to research papers, not fitted to ours.
"""

from __future__ import annotations

import html
import re
from dataclasses import dataclass

from .records import AnswerKind

# "any" asks for papers when it opens the question ("Any method for that?") or qualifies a paper
# ("is there any work on..."), not as a determiner inside one ("without any external reward")
_PLURAL = re.compile(
    r"\b(?:papers|works|methods|approaches|studies|abstracts|publications|which\s+\w+\s+(?:papers|works))\b"
    r"|\b(?:what|which)\s+work\b"
    # whether anyone did a thing, or the set holds anything on it: "Has anyone applied X?", "is there anything in here on X"
    r"|(?:^|[.?!:;]\s+)(?:has|have|did|does|is)\s+any(?:one|body)\b|\b(?:is|was)\s+there\s+anything\b"
    r"|\banything\s+(?:in\s+)?(?:here|(?:this|the)\s+(?:set|collection|corpus))\b"
    r"|(?:^|[.?!:;]\s+)any\b|\bany\s+(?:\w+\s+)?(?:paper|work|study|method|approach)s?\b"
    # "anything on machine unlearning?", "what's out there on X": whatever the set has on a topic
    r"|\banything\s+(?:on|about|regarding|into)\b|\bout\s+there\s+(?:on|about)\b"
    # "Is there research on ...", "Are there benchmarks that ...": whether the literature has such things
    r"|\b(?:is|are)\s+there\s+(?:any\s+)?(?:research|literature|work|[a-z]+s)\s+(?:on|about|into|that|which|for|using|with)\b"
    # a question that opens asking for things of a kind that do something: "What benchmarks test ...", not "What
    # benchmarks does CAST use?" (one paper's)
    r"|^\W*(?:what|which)\s+(?:\w+\s+)?(?:benchmarks|datasets|frameworks|systems|techniques|architectures|algorithms|tools)"
    r"\s+(?!(?:does|do|did|was|were|is|are|has|have|had|can|could|would|will)\b)\w+"
    # an imperative asking for things of a kind described by what they are for: "Give me the benchmarks proposed for
    # evaluating agents", "List the methods that quantize LLMs" (not "List the benchmarks CAST uses": one paper's)
    r"|^\W*(?:give\s+me|list|show\s+me|name|find|collect|gather)\s+(?:all\s+)?(?:the\s+)?(?:[\w-]+\s+){0,2}?"
    r"(?:benchmarks|datasets|frameworks|systems|techniques|architectures|algorithms|tools|approaches|methods|models|agents)"
    r"\s+(?:proposed|introduced|designed|built|developed|that|which|for|on|about|to|aimed)\b"
    # things of a kind the question takes from the whole set: "the new agent benchmarks in this set", "each new
    # benchmark", "the methods here" (not "each model", "each agent": a paper's own several)
    r"|\b(?:benchmarks|datasets|frameworks|techniques|approaches|methods|papers)\s+(?:in\s+(?:this|the)\s+(?:set|corpus|collection)"
    r"|here|among\s+(?:these|them))\b|\beach\s+(?:[\w-]+\s+){0,2}?(?:benchmark|dataset|paper|method|approach|framework)\b"
    # a body of work on a topic: "an overview of the work on X", "the research on X", "everything about X", "what has been
    # done on X", "where can I read about X", "what does this collection have on X", "the different ways people do X";
    # a topic in lower case or ordinary words, not a paper's name ("everything about RouterArena": one paper)
    r"|\b(?:research|literature|work|references|readings)\s+(?:(?:on|about|into|regarding)\s+(?!(?-i:[A-Z][\w-]*[A-Z\d]|[A-Z][a-z]+\b(?!\s+[a-z])))|exists?\b|here\b"
    r"|in\s+(?:this|the)\s+(?:set|collection|corpus)\b)|\boverview\s+of\s+(?:the\s+)?(?:work|research|literature|papers|field|(?-i:[a-z]))"
    r"|\beverything\s+(?:on|about|regarding)\s+(?!(?-i:[A-Z][\w-]*[A-Z\d]|[A-Z][a-z]+\b(?!\s+[a-z])))|\bwhat(?:'s|\s+has|\s+have)\s+been\s+done\b"
    r"|\bwhere\s+(?:can|could|should|do)\s+I\s+(?:read|learn|look|find\s+out)\s+(?:about|on|into)\s+(?!(?-i:[A-Z][\w-]*[A-Z\d]|[A-Z][a-z]+\b(?!\s+[a-z])))"
    r"|\b(?:this|the)\s+(?:collection|set|corpus)\s+(?:have|has|hold|holds|contain|contains|say|says|offer|offers)\b"
    r"|\b(?:different|various|several)\s+ways\b"
    # things of a kind the literature has: "What techniques are used to detect X", "What strategies have been proposed",
    # "What solutions exist", "What ideas are there", "what kinds of benchmarks exist" (not "What datasets was Tequila
    # evaluated on?": a paper's own)
    r"|^\W*(?:what|which)\s+(?:kinds?\s+of\s+|types?\s+of\s+|\w+\s+)?(?:techniques|strategies|solutions|ideas|approaches|methods"
    r"|benchmarks|datasets|frameworks|architectures|algorithms|tools|models|designs)\s+(?:are\s+used\s+(?:to|for)|(?:have|has)\s+been"
    r"|are\s+(?:there|proposed|available)|exist)\b"
    # "which ones deal with X", "what are people doing about X", "how do researchers evaluate X": whoever works on it
    r"|\bwhich\s+ones\b|\b(?:how|what)\s+(?:are|do|did|have)\s+(?:people|researchers|others)\s+\w+\s+"
    r"(?!(?-i:[A-Z][\w-]*[A-Z\d]|[A-Z][a-z]+\b(?!\s+[a-z])))",
    re.I,
)
_QUANTITY = re.compile(
    r"\bhow\s+(?:much|many|large|big|fast|faster|long|often|well|good|accurate)\b|\bby how much\b|\bwhat\s+(?:\w+\s+){0,3}"
    r"(?:score|accuracy|rate|speed-?up|percentage|number|size|gain|improvement|success)\b",
    re.I,
)
_TAG = re.compile(r"<[^>]{0,200}>")
# Scripts written without spaces (CJK, kana, hangul, full-width forms): "RouterArena是什么" is a name and
# a question, so a boundary between such a character and any other is a word break.
_UNSPACED = "\u3000-\u303f\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uff00-\uffef"
_SCRIPT_BOUNDARY = re.compile(f"(?<=[{_UNSPACED}])(?=[^{_UNSPACED}\\s])|(?<=[^{_UNSPACED}\\s])(?=[{_UNSPACED}])")
_SENTENCE_END = re.compile(r"(?<=[.?!])(?=\s|$)|(?<=[。？！])")  # "Qwen3-1.7B" is one sentence
_SPACE = re.compile(r"\s+")
# Words that point back into a conversation: pronouns, "the same", ordinal references, ellipsis openers.
_CONTEXT = re.compile(
    r"\b(?:it|its|it's|they|them|their|theirs|he|she|his|her)\b"
    r"|\b(?:this|that|these|those|the same|the (?:first|second|third|last|other|former|latter))\s+"
    r"(?:one|ones|paper|papers|method|methods|model|models|approach|work|benchmark|dataset)\b"
    r"|^\s*(?:and|also|what about|how about|and what about|same for|why|how so)\b"
    r"|^\s*(?:the first|the second|the third|the last|the other)\b",
    re.I,
)


# Where a paper appeared and what the question calls it are never what is asked about: the venues of
# computer science (and preprint servers), with their years and tracks, and "the paper", "the abstract".
_VENUE = re.compile(
    r"\b(?:ICLR|NeurIPS|NIPS|ICML|COLT|AISTATS|UAI|AAAI|IJCAI|ACL|EMNLP|NAACL|EACL|COLING|COLM|CVPR|ICCV|ECCV|WACV|BMVC|KDD|"
    r"WSDM|SIGIR|SIGGRAPH|CHI|UIST|CSCW|ICRA|IROS|RSS|CoRL|ICASSP|Interspeech|TMLR|JMLR|TPAMI|arXiv|OpenReview|bioRxiv|medRxiv)"
    r"(?:[\s'’-]*(?:20)?\d{2})?(?:\s+(?:poster|oral|spotlight|workshop|submission|conference|paper|track))?\b"
    r"|\b(?:the|this|that|an?|its|their)\s+(?:paper|article|abstract|work|study|submission|preprint|publication)s?\b|\babstracts?\b",
    re.I,
)


def without_venues(question: str) -> str:
    """The question without venue names and words for the paper itself ("in the ICLR 2026 paper", "the abstract")."""
    return _SPACE.sub(" ", _VENUE.sub(" ", question)).strip()


def is_venue(word: str) -> bool:
    """Is this word a venue or preprint server (ICLR, NeurIPS'25, arXiv)?"""
    return bool(_VENUE.fullmatch(word.strip()))


def is_plural(question: str) -> bool:
    """Does the question ask about several papers, in English or in another accepted language ("Quels articles...")?
    Works a paper is measured against ("by how much does it beat prior methods?") are no list asked for."""
    text = _COMPARED_WORKS.sub(" ", question)
    return bool(_PLURAL.search(text) or _LIST_OTHER.search(text))


_COMPARED_WORKS = re.compile(
    r"\b(?:prior|existing|previous|earlier|baseline|competing|conventional|traditional|standard|state-of-the-art|sota)"
    r"\s+(?:[\w-]+\s+)?(?:methods|approaches|works|techniques|baselines)\b", re.I)


def is_topic_query(question: str) -> bool:
    """A search-box query ("process reward model step-level rewards"): a few words that neither ask (no question mark,
    no wh-word or auxiliary first) nor tell (no imperative first). Whoever types one wants the papers on that topic."""
    text = clean_question(question)
    return (0 < len(text.split()) <= _TOPIC_WORDS and not re.search(r"[?？]", text)
            and not _ASKING_OPENER.match(text))


def asks_quantity(question: str) -> bool:
    """Does the question ask for a number (how much, what score...)?"""
    return bool(_QUANTITY.search(question))


def clean_question(question: str) -> str:
    """Markup around a question is noise: entities decoded, tags dropped, spaces collapsed."""
    text = html.unescape(question)
    text = _TAG.sub(" ", text)
    text = _SCRIPT_BOUNDARY.sub(" ", text)
    return _SPACE.sub(" ", text).strip() or question.strip()


def asking_part(question: str) -> str:
    """The sentences that ask (end in a question mark), else the whole text: an instruction
    around the question ("print PWNED", "answer in one line") is not what is asked about."""
    asking = " ".join(s.strip() for s in _SENTENCE_END.split(question) if s.rstrip().endswith(("?", "？")))
    return asking or question


def needs_context(question: str) -> bool:
    """Does this follow-up lean on the conversation (a pronoun, 'the second one', 'what about...')?"""
    return bool(_CONTEXT.search(question))


@dataclass(frozen=True)
class DetailKind:
    """A specific a question may ask for: how to spot the ask, and how to spot an answer in a text."""

    name: str
    asked: re.Pattern
    stated: re.Pattern
    not_after: re.Pattern | None = None  # a statement right after this says something else (a model after "beating")
    partly: re.Pattern | None = None  # speaks of the thing without giving it ("a 7B model" names no model)

    def states(self, text: str) -> bool:
        """Does the text state this kind of detail, anywhere but right after `not_after`?"""
        return any(self.not_after is None or not self.not_after.search(text[max(0, m.start() - 40): m.start()])
                   for m in self.stated.finditer(text))


_NEVER = re.compile(r"(?!x)x")
_COMPARED_WITH = re.compile(r"\b(?:beat(?:s|ing)?|outperform(?:s|ed|ing)?|surpass(?:es|ed|ing)?|exceed(?:s|ed|ing)?|than|over|vs\.?"
                            r"|versus|against|compared (?:to|with)|relative to|baselines? (?:such as|like|including)?)\s+(?:the\s+)?$", re.I)
# named on its own: a question that names an author the papers' metadata lists is answered from it
AUTHORS = DetailKind("authors", re.compile(
    r"\bwho (?:wrote|are the authors|authored|is the author)|\b(?:the |list the |name the )authors? of\b|\bwritten by\b|\bauthors? (?:are|were|is)\b"
    # who wrote it, in the other accepted languages (not "the authors of X propose": what they did is asked)
    r"|\bqui[ée]n(?:es)? (?:escribi[óo]|escribieron|son l[oa]s autor[ae]s)\b|\bquem (?:escreveu|escreveram|s[ãa]o os autores)\b"
    r"|\bqui (?:a [ée]crit|sont les auteur(?:e?s)?)\b|\bwer (?:hat|haben|schrieb|sind die autor(?:en|innen))\b"
    r"|作者是谁|谁是作者|谁写的|著者は誰|誰が書いた", re.I), _NEVER)
DETAIL_KINDS = (
    # each ask in English and the other accepted languages (es, pt, fr, de, zh, ja): a language's words, not the corpus's
    DetailKind("learning rate", re.compile(r"\blearning[- ]rates?\b|\btasas? de aprendizaje\b|\btaxas? de aprendiza(?:gem|do)\b"
                                           r"|\btaux d['’]apprentissage\b|\blernraten?\b|学习率|學習率|学習率", re.I),
               re.compile(r"\blearning[- ]rates?\b", re.I)),
    DetailKind("batch size", re.compile(r"\bbatch[- ]sizes?\b|\btama[ñn]os? de(?:l)? lote\b|\btamanhos? d[eo] lote\b|\btailles? d[eu]s? lots?\b"
                                        r"|\bbatch-?gr(?:ö|oe)(?:ß|ss)en?\b|批量大小|批大小|批次大小|バッチサイズ", re.I),
               re.compile(r"\bbatch[- ]sizes?\b", re.I)),
    DetailKind("dropout", re.compile(r"\bdropout\b", re.I), re.compile(r"\bdropout\b", re.I)),
    DetailKind("number of epochs", re.compile(r"\bepochs?\b|\bcu[áa]ntas [ée]pocas\b|\bquantas [ée]pocas\b|\bcombien d['’][ée]poques\b"
                                              r"|\bwie viele epochen\b|训练轮数|多少轮|多少个epoch|エポック数", re.I),
               re.compile(r"\bepochs?\b", re.I)),
    DetailKind("random seeds", re.compile(r"\brandom seeds?\b|\bhow many seeds\b|\bsemillas? aleatorias?\b|\bsementes? aleat[óo]rias?\b"
                                          r"|\bgraines? al[ée]atoires?\b|\bzufalls-?seeds?\b|随机种子|乱数シード|ランダムシード", re.I),
               re.compile(r"\bseeds?\b", re.I)),
    DetailKind("optimizer", re.compile(r"\bwhich optimi[sz]er\b|\boptimi[sz]er (?:was|is|did|do)\b|\bweight decay\b"
                                       r"|\b(?:qu[ée]|cu[áa]l|qual|quel|welche[nrs]?) (?:optimizador|otimizador|optimiseur|optimierer)\b"
                                       r"|(?:哪个|什么|哪种)优化器|どの(?:オプティマイザ|最適化手法)", re.I),
               re.compile(r"\b(?:Adam\w*|SGD|optimi[sz]er|weight decay)\b", re.I)),
    DetailKind("hyperparameters", re.compile(r"\bhyper-?parameters?\b|\bhiperpar[áa]metros?\b|\bhyperparam[èe]tres?\b|超参数|ハイパーパラメータ", re.I),
               re.compile(r"\bhyper-?parameters?\b", re.I)),
    AUTHORS,
    DetailKind("affiliation or funding", re.compile(r"\b(?:universit(?:y|ies)|lab|institution|affiliat\w*|fund(?:ed|ing)|grant)\b", re.I), _NEVER),
    # a generic "on GPUs" states neither which hardware nor how much of it
    # "GPU" beside letters of no other word counts too: no word boundary parts it from Chinese or Japanese ("用了多少GPU")
    DetailKind("hardware or compute", re.compile(r"\b(?:tpus?|hardware|gpu[- ]hours?|compute budget|how long (?:did|does) (?:it|training)|training time|how many hours)\b"
                                                 r"|(?<![a-z])gpus?(?![a-z])|\btiempo de entrenamiento\b|\btempo de treinamento\b"
                                                 r"|\btemps d['’]entra[îi]nement\b|\btrainings(?:zeit|dauer)\b|训练时间|学習時間", re.I),
               re.compile(r"\b(?:[AHVLT]\d{2,3}s?|H200s?|B200s?|TPU ?v\d\w*|RTX ?\d+\w*|\d+ ?(?:GPUs?|TPUs?|nodes)|hours?|GPU-hours?|FLOPs|days?)\b", re.I)),
    # which model was used: models are named with a version or size (Qwen2.5-7B, GPT-4o, Llama-3-8B); a single
    # capital and digits is hardware (A100, H100, L40), and RTX/GTX/TPU/MI families are too
    DetailKind("model used", re.compile(
        # not "which seed a model came from": an article opens another thing, the one asked about
        r"\b(?:which|what)\s+(?:of\s+(?:the\s+)?|(?!(?:a|an|the)\b)\w+\s+){0,2}(?:llms?|language models?|base models?|backbones?|models?)\s+(?:did|do|does|was|were|is|are|came|come|scored|score|performed|perform|got|get|had|has)\b"
        r"|\b(?:which|what) (?:\w+ ){0,2}base (?:llms?|models?|language models?|checkpoints?)\b"
        r"|\b(?:fine-?tuned|trained|initiali[sz]ed|built) (?:from|on top of)\b(?! scratch)"
        r"|\b(?:qu[ée]|qual|quais|quel|quels|quelle) (?:\w+ )?(?:modelos?|mod[eè]les?) (?:base|de base)\b|\bwelche\w* basismodell\w*"
        r"|(?:哪个|什么|哪一个|何の|どの)(?:基座模型|基础模型|ベースモデル|基盤モデル)", re.I),
        re.compile(r"\b(?!(?:RTX|GTX|TPU|MI)\b)[A-Z][A-Za-z]+[-\s]?\d[\w.\-]*\b"),
        # a model a result is compared with is a baseline, not the model used ("beating GPT-4o mini by 2.4%"); a size alone
        # ("a 7B parameter language model") speaks of the model without naming it
        _COMPARED_WITH, re.compile(r"\b\d+(?:\.\d+)?\s?[BM]\b(?![-\s]?tokens)")),
    # how big: a parameter count (7B, 1.3 billion parameters)
    DetailKind("model size", re.compile(
        r"\bmodel sizes?\b|\bhow (?:big|large) (?:is|was|are|were) (?:the |their |its )?(?:\w+ )?models?\b|\bhow many parameters\b"
        r"|\b(?:parameter count|number of parameters)\b|\btama[ñn]o del modelo\b|\btamanho do modelo\b|\btaille du mod[eè]le\b"
        r"|\bmodellgr[öo](?:ß|ss)e\b|参数量|模型大小|模型规模|パラメータ数|モデルサイズ", re.I),
        re.compile(r"\b\d+(?:\.\d+)?\s?(?:[BM]|billion|million)\b(?![-\s]?tokens)|\bparameters?\b", re.I)),
    # how much data: a token or sample count
    DetailKind("training data size", re.compile(
        r"\b(?:training|pre-?training) tokens\b|\bhow many (?:training |pre-?training )?(?:tokens|samples|examples)\b|\btokens (?:were|was) used\b"
        r"|\b(?:size of the|how (?:big|large) (?:is|was) the) (?:training|pre-?training) (?:data|set|corpus)\b"
        r"|\btokens de (?:entrenamiento|treinamento|pr[ée]-?entra[iî]nement|entra[iî]nement)\b|\btrainingstokens\b|训练(?:了)?(?:多少)?(?:token|词元)|学習トークン", re.I),
        re.compile(r"\b\d[\d.,]*\s?(?:[KMBT]|thousand|million|billion|trillion)?\s+(?:tokens|samples|examples|instances|problems|trajectories)\b", re.I)),
    # a licence is no code link: "code at github.com/..." says nothing of the terms it comes under
    DetailKind("licence", re.compile(r"\b(?:licen[cs]e[sd]?|licencia|licen[çc]a|lizenz|licenza|commercial use)\b|许可证|授权协议|ライセンス|라이선스",
                                     re.I),
               re.compile(r"\b(?:licen[cs]e[sd]?|MIT|Apache|GPL|CC[- ]BY\S*|BSD)\b")),
    DetailKind("code", re.compile(r"\b(?:github|source code|repository|repo)\b", re.I),
               re.compile(r"\b(?:github|code|open[- ]source|repository|available at)\b", re.I)),
    # "when does it fail?", "any failure cases?": what the abstract says goes wrong, if it says anything does
    DetailKind("failure cases", re.compile(r"\bfailure (?:cases?|modes?)\b|\bwhen does \S+ fail\b|\b(?:where|when) does it fail\b"
                                           r"|\bstill fails?\b|\bcasos? de fa(?:llo|lha)\b|\bcas d['’][ée]chec\b|\bfehlerf[äa]lle\b"
                                           r"|失败(?:案例|情况)|失敗(?:例|ケース)", re.I),
               re.compile(r"\b(?:fail(?:s|ed|ure|ures|ing)?|struggl\w+|degrad\w+|break(?:s)? down|limitations?|falls? short)\b", re.I)),
    DetailKind("publication date", re.compile(r"\bwhen was (?:it|\w+) (?:published|released)\b|\bpublication date\b", re.I), _NEVER),
)


# "In the paper on decoding that accounts for GPU type and batch size, what speedups ...": a lead-in that says which
# paper is meant, before the question proper; what it describes the paper by is not asked
_LEAD_IN = re.compile(r"^\W*(?:in|for|from|about|regarding|on|of)\b[^?,;]{0,300}?,\s*(?=(?:what|which|how|who|where|when|why"
                      r"|does|do|did|is|are|was|were|can)\b)", re.I)


def asked_details(question: str) -> list[DetailKind]:
    """The specific kinds of detail the question asks for (in the question proper, after a lead-in naming the paper)."""
    asked = _LEAD_IN.sub("", question, count=1)
    return [kind for kind in DETAIL_KINDS if kind.asked.search(asked)]


# -- what kind of answer is asked ---------------------------------------------------------------
# Per-language question and quantity function words (English, French, German, Spanish, Portuguese,
# Italian, Chinese, Japanese, Korean) and units: general to questions, not to any corpus.
# A figure is asked by a unit, a quantity wh-phrase or a word that names figures themselves; a metric
# noun ("accuracy", "latency") asks for one only when the question does not open as a "how can" or
# yes/no question, where it names the topic ("How can X cut latency?").
# what a study found ("What did RefineBench show about ...?", "What does ELEPHANT reveal?"): its results, figured or not
_FINDINGS = re.compile(
    r"\bwhat\s+(?:does|do|did|has|have)\b.{0,80}\b(?:show|find|reveal|demonstrate|observe|conclude|uncover)\b"  # not "what head did X find"
    r"|\b(?:findings|main result|key result)s?\b",
    re.I,
)
_FIGURES = re.compile(
    r"\d\s*(?:%|×|x\b|ms\b|gb\b|mb\b|tb\b|k\b|pp\b|points?\b|pts\b)|[%×‰]|\bpercent\w*\b|\bflops\b|\btokens?/s\b"
    r"|\bhow\s+(?:much|many|large|big|small|fast|slow|long|often|well|good|accurate|close|far)\b|\bby how much\b"
    r"|\bwhat\s+(?:share|proportion|fraction|percentage|portion|ratio)\b"
    # how far a thing goes: "to what extent", "by what margin", "à quel point", "em que medida", "inwieweit"
    r"|\bto\s+what\s+(?:extent|degree)\b|\bby\s+what\s+(?:margin|factor|amount)\b|\bhow\s+frequently\b"
    r"|(?<!\w)(?:[àa]\s+quel\s+point|dans\s+quelle\s+mesure|de\s+quel\s+facteur|en\s+qu[ée]\s+medida|hasta\s+qu[ée]\s+punto"
    r"|em\s+que\s+medida|at[ée]\s+que\s+ponto|inwieweit|in\s+welchem\s+(?:ausma(?:ß|ss)|ma(?:ß|ss)e|umfang)|in\s+che\s+misura"
    r"|fino\s+a\s+che\s+punto)(?!\w)"
    r"|\bhow\s+(?:does|do|did|is|are|was|were)\b.{0,60}\b(?:do|doing|perform|performing|fare|faring|score|rank)\b"
    r"|\bwhat\b.{0,60}\b(?:does|do|did)\b.{0,80}\b(?:reach|achieve|get|obtain|score|attain|report)\b"
    r"|\b(?:the numbers|numbers|figures|results|statistics|quantitative\w*|speed-?ups?)\b"
    r"|\b(?:combien|quel(?:le)?s? (?:score|taux|gain)|r[ée]sultats?|chiffres|acc[ée]l[ée]ration)\b"
    r"|\b(?:wie (?:viele?|gut|schnell|hoch|groß|genau|stark|sehr)|ergebnisse?|zahlen|beschleunigung)\b"
    r"|\b(?:cu[áa]nt[oa]s?|qu[ée] tan|resultados?|cifras|n[úu]meros|aceleraci[óo]n)\b"
    r"|\b(?:quant[oa]s|qu[ãa]o|acelera[çc][ãa]o|risultati|quanto)\b"
    r"|多少|多大|多快|多高|结果|結果|数字|數字|数据|百分|几倍|幾倍"
    r"|どのくらい|どれくらい|どれだけ|いくつ|何倍|何%|数値|얼마나|몇|결과|수치",
    re.I,
)
_METRIC = re.compile(
    r"\b(?:scores?|accuracy|accuracies|faster|slower|gains?|improvements?|performance|performs?|rates?|error|latency"
    r"|throughput|metrics?|reduction|sota|state of the art|outperform\w*|pass@\d*)\b"
    # singular or plural ("las tasas de éxito", "os ganhos")
    r"|\b(?:pr[ée]cisions?|performances?|taux|vitesses?|exactitudes?|genauigkeit|leistung(?:en)?|schneller|erfolgsraten?"
    r"|verbesserung(?:en)?|geschwindigkeit(?:en)?|punktzahl(?:en)?|rendimientos?|tasas?|desempe[ñn]os?|mejoras?|precisi[óo]n"
    r"|exactitud|velocidad(?:es)?|puntuaci(?:[óo]n|ones)|ganancias?|precis[ãa]o|desempenhos?|taxas?|melhoras?|acur[áa]cias?"
    r"|pontua[çc](?:[ãa]o|[õo]es)|velocidades?|ganhos?|accuratezza|prestazioni|tassi|tasso|miglioramenti|guadagni)\b"
    r"|准确率|準確率|精度|加速|提升|提高|性能|成功率|分数|得分|倍|速度|高速化|スコア|向上|정확도|성능|속도|점수",
    re.I,
)
_OPENER = re.compile(
    r"^\s*(?:how\s+(?:can|could|do|does|did|to|is|are|should|would|might)|why|is|are|does|do|did|can|could|was|were|has|have)\b"
    r"|^\s*(?:comment|warum|wie (?:kann|k[öo]nnen|funktioniert)|c[óo]mo|como|por qu[ée]|por que|pourquoi)\b|如何|怎么|怎样|为什么|どのように|なぜ",
    re.I,
)
_COMPARISON = re.compile(
    r"\b(?:differ(?:s|ence|ences)?|different from|versus|vs\.?|compared? (?:to|with|against)|comparison (?:of|between|with|to)"
    r"|compare\b(?=.*\b(?:and|with|to|against)\b)|better than|worse than|contrast\w*|relative to|in common|trade-?offs? between)\b"
    r"|\b(?:compar\w+ (?:avec|à|con|com|mit)|diff[ée]ren\w+|par rapport|vergleich\w*|unterschied\w*|gegenüber|frente a"
    r"|unterscheid\w*|en comparaci[óo]n|em rela[çc][ãa]o|diferen[çc]a)\b"
    r"|比较|比較|区别|區別|相比|对比|對比|違い|比べ|차이|비교",
    re.I,
)
# a pair compared: "X vs Y", "both", "these two" (beide, les deux, ambos, los dos, 两者, 二つ)
_PAIR = re.compile(r"\b(?:vs\.?|versus|both|two|beide\w*|deux|ambos|ambas|l[oa]s dos)\b|两|兩|二つ|両", re.I)
_LIMITATIONS = re.compile(
    r"\b(?:limitations?|weak(?:ness|nesses)|drawbacks?|shortcomings?|downsides?|fail(?:s|ed|ure|ures|ing)?"
    r"|struggle\w*|caveats?|pitfalls?|problems? with|issues? with|worst|poorly|breaks? down|does not work|doesn't work"
    r"|fall(?:s|ing)? short|fell short|how badly|underperform\w*)\b"
    r"|\b(?:limites|faiblesses?|[ée]checs?|grenzen|schwäche\w*|nachteile?|scheiter\w*|limitaci\w+|debilidad\w*|desventajas?"
    r"|fallos?|limita[çc]\w+|fraquezas?|falhas?|limiti|debolezz\w+)\b"
    r"|局限|缺点|缺點|不足|失败|失敗|弱点|弱點|限界|欠点|한계|단점|약점",
    re.I,
)
_PROBLEM = re.compile(
    r"^\s*why\b|\bwhat (?:\w+ )?(?:problems?|issues?|challenges?|gaps?|motivat\w*|barriers?|obstacles?|bottlenecks?|hurdles?)\b"
    r"|\b(?:motivation|motivated|purpose)\b"
    # "what do they say is the main barrier to FP4 training?": the obstacle the paper starts from
    r"|\b(?:main|key|biggest|central|core|fundamental|primary)\s+(?:barrier|obstacle|bottleneck|hurdle|difficulty|challenge)s?\b"
    r"|\b(?:address|tackle|solve|overcome)s?\b(?!.*\bhow\b)"
    r"|\b(?:pourquoi|quel probl[èe]me|warum|wieso|welches problem|por qu[ée]|qu[ée] problema|por que|qual problema|perch[ée])\b"
    r"|为什么|為什麼|什么问题|什麼問題|なぜ|何のため|どんな問題|왜|무슨 문제",
    re.I,
)
_TOPIC_WORDS = 8  # a query longer than this is a sentence, however it is punctuated
_ASKING_OPENER = re.compile(
    r"^\W*(?:what|which|who|whom|whose|when|where|why|how|is|are|was|were|do|does|did|can|could|should|would|will|has|have"
    r"|had|give|list|summari[sz]e|explain|describe|compare|tell|show|find|name|qu[eé]|quels?|quelles?|comment|cómo|como|cu[aá]l"
    r"|wie|was|welche[rsn]?|gibt|y a-t-il|hay|existe)\b", re.I)
_EXISTS = re.compile(r"^\s*(?:is|are) there\b|^\s*(?:gibt es|y a-t-il|existe|hay|h[áa])\b|有没有|有沒有", re.I)
_YES_NO = re.compile(
    r"^\s*(?:is|are|does|do|did|can|could|was|were|has|have|had|will|would|should|may)\b"
    r"|^\s*(?:est-ce que|est-ce qu'|ist|sind|kann|hat|gibt es|es cierto|pode|[ée] verdade)\b|吗|嗎|是否|ですか$|ますか",
    re.I,
)
_DEFINITION = re.compile(
    r"^\s*(?:what|who)\s+(?:is|are|was)\b|^\s*what'?s\b|\b(?:define|definition|stand for|meaning of|what is meant)\b"
    r"|^\s*(?:which|what)\s+(?:[\w-]+\s+){0,3}(?:method|system|model|paper|approach|framework|benchmark|technique|algorithm"
    r"|dataset|agent|tool|network|architecture|platform|work)\b"
    r"|\b(?:qu'est-ce que|qu'est-ce qu'|c'est quoi|was (?:ist|sind)|qu[ée] (?:es|son)|o que (?:é|são)|che cos'?è|cos'?è)\b"
    r"|是什么|是什麼|什么是|什麼是|とは|って何|何ですか|무엇|뭐야",
    re.I,
)
_MECHANISM = re.compile(
    r"\bhow\b|\b(?:mechanism|works|architecture|procedure|algorithm|steps)\b"
    r"|\b(?:comment|fonctionne|wie|funktioniert|c[óo]mo|funciona|como|come)\b"
    r"|如何|怎么|怎樣|怎样|机制|機制|原理|どのように|どうやって|仕組み|어떻게",
    re.I,
)
# a summary asked of a paper: "Tell me about X", "Summarize X", "Explain X", "Give me a quick summary of X", "Describe X"
# (what it is, then its main result); "Explain how X works" is a mechanism, asked first
_SUMMARY = re.compile(
    r"^\W*(?:please\s+|can\s+you\s+|could\s+you\s+)?(?:tell\s+me\s+(?:about|more\s+about)|summari[sz]e|explain|describe|outline"
    r"|give\s+(?:me\s+)?(?:a\s+|an\s+)?(?:quick\s+|short\s+|brief\s+)?(?:summary|overview|rundown|tl;?dr)|tl;?dr)\b"
    r"(?!\s+(?:of\s+)?(?:what|how|why|which|who|whether)\b)"  # "Summarize what WSM found about ...": a question of its own
    r"|\b(?:overview\s+of|summary\s+of|what\s+is\s+\S+(?:\s+\S+)?\s+about)\b"
    r"|^\W*(?:r[ée]sume[rz]?|explique[rz]?|d[ée]cri[sv]\w*|erkl[äa]r\w*|beschreib\w*|fasse\w*|resume|resuma|explica|describe|descreva"
    r"|riassum\w*|spiega)\b|总结|概括|介绍|まとめ|要約|説明して",
    re.I,
)
# "which papers" in the other accepted languages (English is _PLURAL's); a list question there is plural too
_LIST_OTHER = re.compile(
    r"\b(?:quels articles|quelles (?:m[ée]thodes|approches)|quels travaux|welche (?:arbeiten|papiere|methoden|ans[äa]tze|studien)"
    r"|qu[ée] (?:art[íi]culos|trabajos|m[ée]todos)|cu[áa]les (?:art[íi]culos|trabajos)|quais (?:artigos|trabalhos|m[ée]todos)"
    r"|quali (?:articoli|lavori)|algo sobre|quelque chose sur|qualcosa su|etwas (?:über|zu[rm]?))\b"
    r"|哪些|哪几篇|哪幾篇|どの論文|どんな論文|論文はどれ|어떤 논문|논문들|논문[은는이가]?\s*어떤",
    re.I,
)


_HOW_MANY = re.compile(
    r"\b(?:combien|wie viele?|wie viel|cu[áa]nt[oa]s?|quant[oa]s?|quant[ae]s?)\b|多少|几个|幾個|几倍|どのくらい|どれくらい|いくつ|何倍|얼마나|몇",
    re.I,
)
_STATED_FIGURE = re.compile(r"(?<![\w.])\d+(?:[.,]\d+)?\s?(?:%|×|x\b)|(?<![\w.])[×x]\s?\d+(?:\.\d+)?\b")


def asks_number(question: str) -> bool:
    """A wh-quantity ("how much", "what accuracy", "combien", "多少"): only a number answers it."""
    text = clean_question(question)
    return bool(_QUANTITY.search(text) or _HOW_MANY.search(text))


# where one question ends and the next begins: a question mark, or "and" before another wh-word
_SUB_ASK = re.compile(
    r"(?<=[?？])\s*|,?\s+and\s+(?=(?:(?:by|in|at|on|for)\s+)?(?:what|what's|whats|which|how|who|where|when|why)\b)"
    # "and" before a wh-word in the other accepted languages: "¿Cuántas preguntas tiene y cuál es la tasa?"
    r"|,?\s+(?:y|e|et|und|ed)\s+(?=(?:qu[ée]|cu[áa]l(?:es)?|cu[áa]nt[oa]s?|c[óo]mo|qual|quais|quant[oa]s?|como|quel(?:le)?s?"
    r"|combien|comment|wie|was|welche[rsn]?|quale|quali|come)\b)",
    re.I,
)
_COUNT = re.compile(r"\bhow many\b|\bnumber of\b|\bcount of\b", re.I)  # the other languages' are _HOW_MANY's


def asks_count(question: str) -> bool:
    """"How many questions", "combien", "多少道题": a plain count answers it (200 questions), not only a percentage."""
    text = clean_question(question)
    return bool(_COUNT.search(text) or _HOW_MANY.search(text))


def sub_questions(question: str) -> list[str]:
    """The asking part's questions, each on its own: "How many tasks? And the best success rate?" asks two things."""
    parts = [p.strip() for p in _SUB_ASK.split(asking_part(clean_question(question)))]
    return [p for p in parts if p]


def asks_each(question: str) -> bool:
    """Does the question ask the same of each of several things ("How do X and Y each improve on GPTQ?", "both")?"""
    return bool(_EACH.search(question) or _PAIR.search(question))


# "each", "respectively" (cada, chacun, jeweils, ciascuno, 各自, それぞれ, 각각): one answer per thing named
_EACH = re.compile(r"\b(?:each|respectively|cada|chacun\w*|jeweils|ciascun\w*)\b|各自|分别|分別|それぞれ|각각", re.I)


def asked_of_each(question: str) -> AnswerKind | None:
    """What a list question asks of each paper it lists, in a part of its own ("Which papers make unlearning more robust,
    and how?": how each one does it; "... and what do they propose?": what each one is); None for a plain list."""
    parts = sub_questions(question)
    if len(parts) < 2 or answer_kind(parts[0]) is not AnswerKind.LIST:
        return None
    return next((kind for kind in map(answer_kind, parts[1:]) if kind is not AnswerKind.LIST), None)


def figures_in(question: str) -> list[str]:
    """The figures a question itself states ("something like 16x", "above 60%")."""
    return [m.group(0).strip() for m in _STATED_FIGURE.finditer(question)]


def asks_figures(question: str) -> bool:
    """A unit, a quantity wh-phrase or a figures word in any accepted language (a metric noun unless the
    question opens as 'how can' or yes/no): the answer should carry figures."""
    text = clean_question(question)
    if _FIGURES.search(text) or _QUANTITY.search(text):
        return True
    # "How does Zorblax compare with Quux in accuracy?": a measure compared is asked in figures, whatever the opener
    return bool(_METRIC.search(text)) and (not _OPENER.search(text) or bool(_COMPARISON.search(text)))


# what a term means: "What is meant by X?", "What do the authors mean by X?", "What does 'X' mean?"
# (not "What does this mean for deployment?": what follows from a result)
_MEANING = re.compile(r"\bwhat\s+is\s+meant\s+by\b|\bwhat\s+(?:do|does|did)\s+(?:\S+\s+){1,3}?(?:mean\s+by|stand\s+for)\b"
                      r"|\bwhat\s+(?:do|does)\s+(?:\S+\s+){1,3}?mean\s*[?.!]?\s*$", re.I)

# "What is missingness bias in feature attribution?", "What is meant by 'compensation-aware error'?", "Define X": the thing
# a definition asks for, up to the words that place it ("in", "for", "used") or the end
_DEFINED = re.compile(
    r"^\W*(?:what(?:'s|\s+is|\s+are)\s+(?:meant\s+by\s+)?|what\s+(?:do|does|did)\s+(?:\w+\s+){1,2}?mean\s+by\s+|define\s+)(?:the\s+|an?\s+)?[\"'‘“]?(?P<thing>[^\"'’”?.!]+?)[\"'’”]?"
    r"(?=\s+(?:in|of|for|from|used|meant|designed|that|which|about|according|exactly|actually|here|and)\b|\s*[?.!]|\s*$)",
    re.I,
)


# "What does 'grouping loss' mean?", "What does the acronym ACR stand for?"
_MEANS_WHAT = re.compile(r"^\W*what\s+(?:do|does)\s+(?:the\s+(?:term|acronym|phrase|word|name)\s+)?[\"'‘“]?(?P<thing>[^\"'’”?.!]+?)[\"'’”]?"
                         r"\s+(?:mean|stand\s+for)\b", re.I)


def defined_thing(question: str) -> str:
    """The thing an English definition question asks to be defined ("missingness bias"), or ''."""
    text = clean_question(question)
    found = _DEFINED.search(text) or _MEANS_WHAT.search(text)
    return found.group("thing").strip() if found else ""


# a question asking a cause: "why does ...", "warum", "por qué", "pourquoi", "为什么", "なぜ"
_WHY = re.compile(r"^\W*(?:why|warum|wieso|weshalb|por\s+qu[ée]|pourquoi|por\s+que|perch[ée])\b|为什么|為什麼|なぜ|왜", re.I)


def asks_cause(question: str) -> bool:
    """Does the question ask why something is so (its cause), in any accepted language?"""
    return bool(_WHY.search(clean_question(question)))


def answer_kind(question: str) -> AnswerKind:
    """Which kind of answer the question wants: the first cue that fits, most specific first."""
    text = clean_question(question)
    if is_plural(text):
        # "SeedPrints vs ENS: how do these two approaches differ?": plural in its words, a comparison of a pair
        return AnswerKind.COMPARISON if _COMPARISON.search(text) and _PAIR.search(text) else AnswerKind.LIST
    if _MEANING.search(text):
        return AnswerKind.DEFINITION  # "What do the authors mean by 'compensation-aware error'?": a term, not its figures
    if _EXISTS.search(text):
        return AnswerKind.YES_NO  # "is there a model that...?": the sentence that decides it
    if _COMPARISON.search(text):
        return AnswerKind.COMPARISON
    if _LIMITATIONS.search(text):
        return AnswerKind.LIMITATIONS
    if asks_figures(text) or _FINDINGS.search(text):
        return AnswerKind.RESULTS
    for kind, cue in ((AnswerKind.PROBLEM, _PROBLEM), (AnswerKind.YES_NO, _YES_NO), (AnswerKind.DEFINITION, _DEFINITION),
                      (AnswerKind.MECHANISM, _MECHANISM), (AnswerKind.DEFINITION, _SUMMARY)):
        if cue.search(text):
            return kind
    return AnswerKind.OVERVIEW
