"""File checksums, kept at the bottom of the house so every module that verifies a file may import them.

This module imports nothing from the package.
"""

from __future__ import annotations

import hashlib
from pathlib import Path


def file_sha256(path: Path) -> str:
    """The file's sha256 in hex, read in 1 MiB blocks so a large file never sits whole in memory."""
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()
