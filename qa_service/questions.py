"""What a question asks for, read off its wording (no corpus knowledge)."""

from __future__ import annotations

import re

_PLURAL = re.compile(r"\b(?:papers|works|methods|approaches|studies|which\s+\w+\s+(?:papers|works))\b|\bany\b", re.I)


def is_plural(question: str) -> bool:
    """Does the question ask about several papers?"""
    return bool(_PLURAL.search(question))
