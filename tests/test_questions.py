"""What a question asks for, read off its wording."""

import pytest

from qa_service.questions import is_plural


@pytest.mark.parametrize("question,plural", [
    ("Which papers quantize LLM weights?", True),
    ("What work studies KV cache eviction?", True),
    ("Any method for that?", True),
    ("I need calibrated clusters. Any method for that?", True),
    ("Is there any work on LLM routers?", True),
    ("Does any paper study model merging?", True),
    ("Describe how CoMAS lets agents improve without any external reward.", False),  # a determiner, not a request for papers
    ("What is RouterArena?", False),
])
def test_a_question_about_several_papers_is_told_by_its_wording(question, plural):
    assert is_plural(question) is plural
