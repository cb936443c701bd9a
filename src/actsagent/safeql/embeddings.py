"""Text embeddings for schema names and stored values, with one model per process and a disk cache.

Loading the ONNX model costs about a second, so it is shared through a cached loader; vectors are
cached on disk (a SQLite file per model under ``home_dir()``, or ``$ACTSAGENT_EMBED_CACHE``) so a catalog is
embedded once per machine: processes that need the same texts at once take turns (a file lock), so the second
reads what the first embedded. A cached vector is used only when it has the model's size and unit length.
"""

from __future__ import annotations

import fcntl
import hashlib
import logging
import os
import re
import socket
import sqlite3
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from difflib import SequenceMatcher
from functools import lru_cache
from pathlib import Path

import numpy as np

from actsagent.config import default_model_path, home_dir

MODEL_NAME = "sentence-transformers/all-MiniLM-L6-v2"
CACHE_DIR_VAR = "ACTSAGENT_EMBED_CACHE"
HUB_PROBE_TIMEOUT_S = 3.0
HINT = (
    "set ACTSAGENT_EMBED_MODEL_PATH to a local copy of all-MiniLM-L6-v2 (a folder with model.onnx and tokenizer.json)"
)
log = logging.getLogger("actsagent.safeql")
_MODELS: dict[str | None, object | None] = {}
_MODELS_LOCK = threading.Lock()


def _load_model(model_path: str | None):
    """The model, loaded once per path and process, or None (said once) when it cannot be had quickly.

    Air-gapped sites are common: an explicit path is used as it is, else the local model cache is tried,
    and a download is attempted only when the hub answers within seconds. Without the model, SafeQL ranks
    names by their spelling alone (``lexical_distance``).
    """
    with _MODELS_LOCK:
        if model_path not in _MODELS:
            model, problem = _open_model(model_path)
            if model is None:
                log.warning("%s: SafeQL matches names by spelling only; %s", problem, HINT)
            _MODELS[model_path] = model
        return _MODELS[model_path]


def _open_model(model_path: str | None) -> tuple[object | None, str]:
    if model_path and not (Path(model_path) / "model.onnx").is_file():
        return None, f"no embedding model at {model_path}"
    try:
        from fastembed import TextEmbedding
        from loguru import logger  # fastembed's logger
    except ImportError as e:
        return None, f"the embedding library is not installed ({e})"
    logger.disable("fastembed")  # its cache misses and retries are ours to report, in one line
    try:
        if model_path:
            return TextEmbedding(model_name=MODEL_NAME, specific_model_path=model_path), ""
        try:
            return TextEmbedding(model_name=MODEL_NAME, local_files_only=True), ""
        except Exception:  # not in the local cache
            pass
        if not _hub_reachable():
            return None, f"the embedding model {MODEL_NAME} is not on this machine and the model hub is unreachable"
        return TextEmbedding(model_name=MODEL_NAME), ""
    except Exception as e:  # fastembed raises ValueError/OSError/onnxruntime errors alike
        return None, f"cannot load the embedding model {MODEL_NAME} from {model_path or 'the model hub'} ({e})"
    finally:
        logger.enable("fastembed")


def _hub_reachable() -> bool:
    """Whether the model hub accepts a connection within seconds (an offline resolver may hang for long)."""
    from urllib.parse import urlsplit

    if os.environ.get("HF_HUB_OFFLINE", "").strip().upper() in {"1", "TRUE", "YES", "ON"}:
        return False
    from huggingface_hub import constants

    url = urlsplit(constants.ENDPOINT)
    if not url.hostname:
        return False
    ok: list[bool] = []

    def probe() -> None:
        try:
            socket.create_connection(
                (url.hostname, url.port or (443 if url.scheme == "https" else 80)), timeout=HUB_PROBE_TIMEOUT_S
            ).close()
            ok.append(True)
        except OSError:
            pass

    t = threading.Thread(target=probe, daemon=True, name="hub-probe")
    t.start()
    t.join(HUB_PROBE_TIMEOUT_S)
    return bool(ok)


def _model_stamp(model_path: str | None) -> str:
    """The model file's size and modification time: a replaced model gets a cache of its own."""
    try:
        st = (Path(model_path) / "model.onnx").stat() if model_path else None
    except OSError:
        return ""
    return f"{st.st_size}:{st.st_mtime_ns}" if st else ""


def humanize(name: str) -> str:
    """``countryInfo``/``country_info`` -> ``country info``: the model embeds words, not identifiers."""
    s = re.sub(r"([a-z0-9])([A-Z])", r"\1 \2", name)
    s = re.sub(r"[_\-.]+", " ", s)
    return re.sub(r"\s+", " ", s).strip().lower() or name


class Embedder:
    """Normalised sentence vectors; ``distance`` is the Euclidean distance of unit vectors (0..2).

    Without a model (``available`` is False) every embedding distance is the maximum, 2.0, so the
    callers' ``min(embedding, lexical)`` falls back to the character-level distance.
    """

    def __init__(self, model_path: str | None = None, cache_dir: Path | None = None) -> None:
        self.model_path = model_path if model_path is not None else default_model_path()
        key = hashlib.sha1(f"{MODEL_NAME}|{self.model_path}|{_model_stamp(self.model_path)}".encode()).hexdigest()[:12]
        env_dir = os.environ.get(CACHE_DIR_VAR)
        cache_dir = cache_dir or (Path(env_dir) if env_dir else home_dir() / "embeddings")
        cache_dir.mkdir(parents=True, exist_ok=True)
        self.cache_path = cache_dir / f"{key}.sqlite"
        self._turn_path = cache_dir / f"{key}.lock"
        self._mem: dict[str, np.ndarray] = {}
        self._lock = threading.Lock()
        self._db = sqlite3.connect(self.cache_path, check_same_thread=False, isolation_level=None, timeout=30)
        self._db.execute("PRAGMA journal_mode=WAL")
        self._db.execute("CREATE TABLE IF NOT EXISTS vec (text TEXT PRIMARY KEY, v BLOB)")
        self.dim = 384

    @property
    def model(self):
        return _load_model(self.model_path)

    @property
    def available(self) -> bool:
        return self.model is not None

    def embed(self, texts: list[str]) -> np.ndarray:
        """Vectors for ``texts`` (rows L2-normalised), from memory, the disk cache or the model."""
        if not self.available:  # placeholders, never cached: every distance is 2.0 without the model
            return np.zeros((len(texts), self.dim), dtype=np.float32)
        out: list[np.ndarray | None] = [self._mem.get(t) for t in texts]
        missing = sorted({t for t, v in zip(texts, out) if v is None})
        if missing:
            with self._lock:
                found = self._cached(missing)
                todo = [t for t in missing if t not in found]
                if todo:
                    with self._one_process_embeds():  # another process may be embedding the same texts
                        found.update(self._cached(todo))
                        todo = [t for t in todo if t not in found]
                        if todo:
                            found.update(self._embed_and_store(todo))
                self._mem.update(found)
            out = [self._mem[t] for t in texts]
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        return np.vstack(out)  # type: ignore[arg-type]

    def _cached(self, texts: list[str]) -> dict[str, np.ndarray]:
        """The disk cache's vectors for ``texts``; one of the wrong size, not finite or not of unit length (a
        damaged or foreign file) is left out, so it is embedded again and overwritten."""
        found: dict[str, np.ndarray] = {}
        for i in range(0, len(texts), 500):
            chunk = texts[i : i + 500]
            q = ",".join("?" * len(chunk))
            for t, blob in self._db.execute(f"SELECT text, v FROM vec WHERE text IN ({q})", chunk):
                if not isinstance(blob, bytes) or len(blob) != 4 * self.dim:
                    continue
                v = np.frombuffer(blob, dtype=np.float32)
                if np.isfinite(v).all() and abs(float(np.linalg.norm(v)) - 1.0) < 1e-3:
                    found[t] = v
        return found

    def _embed_and_store(self, texts: list[str]) -> dict[str, np.ndarray]:
        vecs = np.asarray(list(self.model.embed(texts, batch_size=256)), dtype=np.float32)
        vecs /= np.maximum(np.linalg.norm(vecs, axis=1, keepdims=True), 1e-9)
        self._db.execute("BEGIN IMMEDIATE")
        self._db.executemany(
            "INSERT OR REPLACE INTO vec VALUES (?, ?)", [(t, v.tobytes()) for t, v in zip(texts, vecs)]
        )
        self._db.execute("COMMIT")
        return dict(zip(texts, vecs))

    @contextmanager
    def _one_process_embeds(self) -> Iterator[None]:
        """An exclusive lock on the cache's lock file while embedding: a process starting at the same time waits,
        then reads the vectors instead of embedding them again (without the file, each embeds on its own)."""
        try:
            fd = os.open(self._turn_path, os.O_RDWR | os.O_CREAT, 0o600)
        except OSError:
            yield
            return
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
            yield
        finally:
            os.close(fd)  # closing releases the lock

    def one(self, text: str) -> np.ndarray:
        return self.embed([text])[0]

    def distance(self, a: str, b: str) -> float:
        if not self.available:
            return 2.0
        va, vb = self.embed([a, b])
        return float(np.linalg.norm(va - vb))

    def distances(self, text: str, vecs: np.ndarray) -> np.ndarray:
        """Distance of ``text`` to each row of ``vecs`` (vectors this embedder made)."""
        if not self.available:
            return np.full(len(vecs), 2.0)
        return np.linalg.norm(vecs - self.one(text), axis=1)


def lexical_distance(a: str, b: str) -> float:
    """Character-level distance on the same 0..2 scale as the embeddings.

    Small sentence models place abbreviations (``pop``/``population``) and case or spacing variants
    poorly, so token distance is the smaller of this and the embedding distance.
    """
    x, y = _squash(a), _squash(b)
    if not x or not y:
        return 2.0
    if x == y:
        return 0.05 if a != b else 0.0
    ratio = SequenceMatcher(None, x, y).ratio()
    short, long_ = (x, y) if len(x) <= len(y) else (y, x)
    if len(short) >= 2 and short[0] == long_[0] and _subsequence(short, long_):
        ratio = max(ratio, 0.6 + 0.3 * len(short) / len(long_))
    return 2.0 * (1.0 - ratio)


def _squash(s: str) -> str:
    return re.sub(r"[\s_\-.]+", "", s.lower())


def _subsequence(short: str, long_: str) -> bool:
    it = iter(long_)
    return all(ch in it for ch in short)


def shared_embedder(model_path: str | None = None) -> Embedder:
    """One embedder (and model) per model path per process; the default path is read from the environment."""
    return _shared_embedder(model_path if model_path is not None else default_model_path())


@lru_cache(maxsize=8)
def _shared_embedder(model_path: str | None) -> Embedder:
    return Embedder(model_path)
