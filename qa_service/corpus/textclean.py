"""Markup normalisation and sentence spans: the text we embed, search, quote and show."""

from __future__ import annotations

import re
import unicodedata

_SUPERSCRIPTS = str.maketrans("0123456789+-n", "⁰¹²³⁴⁵⁶⁷⁸⁹⁺⁻ⁿ")
_LATEX_SYMBOLS = {
    "times": "×", "leq": "≤", "geq": "≥", "le": "≤", "ge": "≥", "approx": "≈", "sim": "~",
    "pm": "±", "cdot": "·", "rightarrow": "→", "to": "→", "infty": "∞", "alpha": "α",
    "beta": "β", "gamma": "γ", "delta": "δ", "epsilon": "ε", "lambda": "λ", "mu": "μ",
    "sigma": "σ", "theta": "θ", "ell": "ℓ", "neq": "≠", "ldots": "…", "dots": "…",
}
_TEXT_COMMANDS = r"(?:textbf|textit|emph|texttt|textsc|textrm|text|mathrm|mathbf|mathit|mathcal|mathbb|underline|url|href|bm|boldsymbol|operatorname)"
_CMD_WITH_ARG = re.compile(r"\\" + _TEXT_COMMANDS + r"\s*\{([^{}]*)\}")
_TWO_ARGS = re.compile(r"\\(?:textcolor|colorbox|href)\s*\{[^{}]*\}\s*\{([^{}]*)\}")
_FONT_GROUP = re.compile(r"\{\\(?:bf|it|em|tt|rm|sc)\s+([^{}]*)\}")
_SUPERSCRIPT = re.compile(r"\^\{([0-9+\-n]+)\}|\^([0-9n])")
_SYMBOL = re.compile(r"\\([A-Za-z]+)")
_MATH = re.compile(r"\$([^$]{0,200})\$")
_BOLD = re.compile(r"(\*\*|__)(?=\S)(.+?)(?<=\S)\1")
_ITALIC_STAR = re.compile(r"(?<![\w*])\*(?=\S)([^*\n]+?)(?<=\S)\*(?![\w*])")
_ITALIC_UNDERSCORE = re.compile(r"(?<![\w_])_(?=\S)([^_\n]+?)(?<=\S)_(?![\w_])")
_CONTROL = re.compile(r"[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f\u200b-\u200f\u202a-\u202e\u2066-\u2069\ufeff]")

# Sentence ends: . ! ? followed by space and something that can start a sentence.
_SENTENCE_END = re.compile(r"(?<=[.!?])[\"'”’)\]]*\s+(?=[\"'“‘(\[]?[A-Z0-9$\\*_])")
_ABBREVIATIONS = ("e.g.", "i.e.", "et al.", "etc.", "vs.", "Fig.", "Eq.", "cf.", "approx.", "Sec.", "No.", "resp.")


_SURROGATE = re.compile("[\ud800-\udfff]")


def encodable(text: str) -> str:
    """Text with lone surrogates replaced by U+FFFD. A model's JSON reply may carry half of a
    surrogate pair; nothing downstream (tokenizer, JSON response) can encode it, and unlike a
    request's text, the reply cannot be sent back to be fixed."""
    try:
        text.encode("utf-8")
        return text
    except UnicodeEncodeError:
        return _SURROGATE.sub("\ufffd", text)


def _symbol(match: re.Match) -> str:
    return _LATEX_SYMBOLS.get(match.group(1), match.group(0))


def _until_stable(text: str, rounds: int, steps: tuple[tuple[re.Pattern, str], ...]) -> str:
    """The substitutions applied in turn until nothing changes, at most `rounds` times: nested markup unwraps
    from the inside out, one layer a round."""
    for _ in range(rounds):
        before = text
        for pattern, replacement in steps:
            text = pattern.sub(replacement, text)
        if text == before:
            break
    return text


def clean_text(raw: str) -> str:
    """Normalise LaTeX and markdown emphasis to plain readable text, one line."""
    text = unicodedata.normalize("NFC", raw)
    text = _CONTROL.sub("", text)
    text = _until_stable(text, 4, ((_TWO_ARGS, r"\1"), (_CMD_WITH_ARG, r"\1"), (_FONT_GROUP, r"\1")))
    text = _MATH.sub(lambda m: m.group(1), text)
    text = _SUPERSCRIPT.sub(lambda m: (m.group(1) or m.group(2)).translate(_SUPERSCRIPTS), text)
    text = _SYMBOL.sub(_symbol, text)
    text = text.replace("\\%", "%").replace("\\&", "&").replace("\\_", "_").replace("\\#", "#")
    text = text.replace("\\$", "$").replace("``", "“").replace("''", "”").replace("---", "—")
    text = re.sub(r"(?<=[\w,.;:)])~(?=[\w(])", " ", text)  # LaTeX non-breaking space; /~user in URLs stays
    text = _until_stable(text, 3, ((_BOLD, r"\2"), (_ITALIC_STAR, r"\1"), (_ITALIC_UNDERSCORE, r"\1")))
    text = re.sub(r"\*\*|(?<=\w)\*(?=\w)", "", text)  # bold letters inside words: **D**iversity
    text = text.replace("{", "").replace("}", "") if re.search(r"\\|\{", raw) else text
    text = re.sub(r"\s+", " ", text)
    text = re.sub(r" ([,.;:%)])", r"\1", text)
    return text.strip()


def sentence_spans(text: str) -> list[tuple[int, int]]:
    """(start, end) of each sentence, so that text[start:end] is the sentence exactly."""
    spans: list[tuple[int, int]] = []
    start = 0
    for match in _SENTENCE_END.finditer(text):
        end = match.start()
        # keep closing quotes/brackets with the sentence they close
        end += len(match.group(0)) - len(match.group(0).lstrip("\"'”’)]"))
        head = text[start:end]
        if head.endswith(_ABBREVIATIONS) or len(head.strip()) < 12:
            continue
        spans.append(_strip_span(text, start, end))
        start = match.end()
    if start < len(text) and text[start:].strip():
        spans.append(_strip_span(text, start, len(text)))
    return [s for s in spans if s[1] > s[0]]


def _strip_span(text: str, start: int, end: int) -> tuple[int, int]:
    while start < end and text[start].isspace():
        start += 1
    while end > start and text[end - 1].isspace():
        end -= 1
    return start, end
