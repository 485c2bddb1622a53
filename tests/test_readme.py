"""The README tells the truth: its example answer is what the service answers, and every link resolves."""

import json
import re
import unicodedata

from qa_service.web.app import create_app
from tests.conftest import ROOT

README = (ROOT / "README.md").read_text(encoding="utf-8")
VOLATILE = ("timings_ms",)  # and index.built_at: they change from run to run


def example() -> tuple[str, dict, dict]:
    """(route, request body, answer shown) of the README's first curl example."""
    curl = re.search(r"curl -s localhost:8000(/api/\w+) -H 'content-type: application/json' -d '(\{[^']*\})'", README)
    assert curl, "the README's example request is missing"
    block = README[curl.end():].split("```json\n", 1)[1].split("\n```", 1)[0]
    return curl.group(1), json.loads(curl.group(2)), json.loads(block)


def test_the_readme_example_is_what_the_service_answers(seed_settings, seed_index):
    """The README showed a quote at 361-474 that sits at 499-612, and usage 0 where tiktoken counts tokens."""
    route, body, shown = example()
    real = create_app(seed_settings, index=seed_index).test_client().post(route, json=body).get_json()
    for answer in (shown, real):
        for name in VOLATILE:
            answer.pop(name)
        answer["index"].pop("built_at")
    assert real == shown


def without_code(text: str) -> str:
    """Links in code blocks and inline code are examples, not links."""
    text = re.sub(r"^```.*?^```", "", text, flags=re.S | re.M)
    return re.sub(r"`[^`\n]*`", "", text)


def anchor(heading: str) -> str:
    """GitHub's anchor for a heading: lower case, punctuation dropped, spaces as hyphens."""
    text = unicodedata.normalize("NFKC", heading).strip().lower()
    return re.sub(r"[^\w\- ]", "", text).replace(" ", "-")


def links(text: str) -> list[str]:
    markdown = re.findall(r"\]\(([^)\s]+)(?:\s+\"[^\"]*\")?\)", text)
    html = re.findall(r"<(?:a|img)\b[^>]*?\b(?:href|src)=\"([^\"]+)\"", text)
    return markdown + html


def test_every_link_in_the_readme_resolves():
    text = without_code(README)
    anchors = {anchor(h) for h in re.findall(r"^#{1,6} (.+)$", without_code(README), flags=re.M)}
    found = links(text)
    assert any("#" in link for link in found) and any(not link.startswith("#") for link in found)  # the check checks something
    broken = []
    for link in found:
        if link.startswith(("http://", "https://", "mailto:")):
            continue  # outside the repository: not checked offline
        path, _, fragment = link.partition("#")
        if path and not (ROOT / path).exists():
            broken.append(link)
        elif fragment and (not path or path == "README.md") and fragment not in anchors:
            broken.append(link)
    assert not broken, f"links that resolve to nothing: {broken}"
    assert "FINDINGS.md" not in README  # not in the repository


def test_the_link_check_finds_a_broken_link():
    text = "See [the findings](FINDINGS.md), [a section](#no-such-section) and ![a picture](docs/screenshot.png).\n## A section\n"
    assert links(without_code(text)) == ["FINDINGS.md", "#no-such-section", "docs/screenshot.png"]
    assert anchor("Python API") == "python-api" and anchor("How it works: the corpus") == "how-it-works-the-corpus"
