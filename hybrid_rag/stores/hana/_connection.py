"""HANA settings (env, ``.env``, Cloud Foundry ``VCAP_SERVICES``) and a per-thread pool.

hdbcli connections are not thread-safe (``threadsafety = 1``), so the pool hands every
thread its own connection, opened lazily on first use and reused by that thread only.
A connection idle for longer than ``idle_check_s`` is checked with ``isconnected()``
before reuse and reopened when the server dropped it; a connection-level error makes
the pool drop the connection and retry the operation once on a fresh one. Connections
of threads that have ended are closed the next time a connection is opened.
"""

from __future__ import annotations

import importlib
import json
import logging
import os
import re
import threading
import time
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

from pydantic import SecretStr

from hybrid_rag.errors import ConfigurationError, StoreError
from hybrid_rag.stores._closing import Closing

__all__ = [
    "HanaConnectionPool",
    "HanaSettings",
    "engine_message",
    "load_hdbcli",
    "merged_env",
    "pool_for",
    "qualified",
    "quote_ident",
    "read_dotenv",
]

log = logging.getLogger("hybrid_rag.hana")

T = TypeVar("T")

_INSTALL = 'SAP HANA support needs hdbcli: pip install "hybrid-rag[hana]"'
# hdbcli error codes that mean "this connection is gone" (reopen and retry once)
_CONNECTION_LOST = frozenset({-10709, -10807, -10108, -10821, -10810, 139})
_HANA_LABELS = ("hana", "hana-cloud", "hanatrial", "hana-db")


def load_hdbcli() -> Any:
    """The ``hdbcli.dbapi`` module, or ImportError naming the extra to install."""
    try:
        return importlib.import_module("hdbcli.dbapi")
    except ImportError as exc:
        raise ImportError(_INSTALL) from exc


def engine_message(exc: BaseException) -> str:
    """The engine's error text without hdbcli's trailing connection details."""
    text = getattr(exc, "errortext", None) or str(exc)
    return str(text).split("; Server Connection")[0].strip()


@dataclass(frozen=True, slots=True)
class HanaSettings:
    """Connection settings of a SAP HANA Cloud database.

    The password is a ``pydantic.SecretStr`` and never appears in ``repr`` or logs.

    Args:
        host: SQL endpoint host name.
        user: Database user.
        password: Its password.
        port: SQL port (443 on HANA Cloud).
        schema: Schema for the library's tables (``None``: the user's default schema).
        encrypt: TLS on (required by HANA Cloud).
        validate_cert: Verify the server certificate.
        certificate: PEM trust store (from a service binding), or ``None`` for the
            system store.
        connect_timeout_ms: Timeout of opening a connection.
    """

    host: str
    user: str
    password: SecretStr = field(repr=False)
    port: int = 443
    schema: str | None = None
    encrypt: bool = True
    validate_cert: bool = True
    certificate: str | None = field(default=None, repr=False)
    connect_timeout_ms: int = 15_000

    def __post_init__(self) -> None:
        if not self.host or not self.user:
            raise ConfigurationError("HANA settings need a host and a user")
        if not 0 < self.port < 65536:
            raise ConfigurationError(f"invalid HANA port {self.port}")
        if self.schema is not None and not re.fullmatch(
            r"[A-Za-z_][A-Za-z0-9_]{0,126}", self.schema
        ):
            raise ConfigurationError(f"invalid HANA schema name {self.schema!r}")

    @classmethod
    def from_env(
        cls,
        env: Mapping[str, str] | None = None,
        *,
        dotenv_path: str | os.PathLike[str] | None = ".env",
    ) -> HanaSettings | None:
        """Settings from variables, a ``.env`` file or a ``VCAP_SERVICES`` binding.

        Variables ``HANA_HOST``, ``HANA_PORT``, ``HANA_USER``, ``HANA_PASSWORD``,
        ``HANA_SCHEMA``, ``HANA_ENCRYPT``, ``HANA_VALIDATE_CERT`` win over the ``.env``
        file (read only when ``env`` is ``None``), which wins over a Cloud Foundry
        ``hana`` binding in ``VCAP_SERVICES``.

        Args:
            env: Variables to read instead of ``os.environ`` (and then no ``.env``).
            dotenv_path: The ``.env`` file; ``None`` skips it.

        Returns:
            The settings, or ``None`` when no HANA host is configured anywhere.

        Raises:
            ConfigurationError: A host is set but the user or password is missing, a
                number does not parse, or ``VCAP_SERVICES`` is not JSON.
        """
        values = merged_env(env, dotenv_path)
        found = _from_vars(values) or _from_vcap(values.get("VCAP_SERVICES"))
        if found is None:
            return None
        missing = [k for k in ("host", "user", "password") if not found.get(k)]
        if missing:
            names = ", ".join("HANA_" + k.upper() for k in missing)
            raise ConfigurationError(f"HANA host is set but {names} missing")
        return cls._build(found)

    @classmethod
    def _build(cls, found: Mapping[str, Any]) -> HanaSettings:
        try:
            return cls(
                host=str(found["host"]),
                user=str(found["user"]),
                password=SecretStr(str(found["password"])),
                port=int(found.get("port") or 443),
                schema=found.get("schema") or None,
                encrypt=_flag(found.get("encrypt"), True),
                validate_cert=_flag(found.get("validate_cert"), True),
                certificate=found.get("certificate") or None,
            )
        except ValueError as exc:
            raise ConfigurationError(f"invalid HANA setting: {exc}") from None

    def connect_kwargs(self) -> dict[str, Any]:
        """Keyword arguments for ``hdbcli.dbapi.connect`` (contains the password)."""
        kwargs: dict[str, Any] = {
            "address": self.host,
            "port": self.port,
            "user": self.user,
            "password": self.password.get_secret_value(),
            "encrypt": self.encrypt,
            "sslValidateCertificate": self.validate_cert,
            "connectTimeout": self.connect_timeout_ms,
            "vectoroutputtype": "memoryview",
        }
        if self.schema:
            kwargs["currentSchema"] = self.schema
        if self.certificate:
            kwargs["sslTrustStore"] = self.certificate
        return kwargs


def _flag(value: Any, default: bool) -> bool:
    if value is None or value == "":
        return default
    if isinstance(value, bool):
        return value
    text = str(value).strip().lower()
    if text in ("1", "true", "yes", "on"):
        return True
    if text in ("0", "false", "no", "off"):
        return False
    raise ValueError(f"not a boolean: {value!r}")


def merged_env(
    env: Mapping[str, str] | None, dotenv_path: str | os.PathLike[str] | None
) -> dict[str, str]:
    """``env`` as a dict; or ``.env`` file values overridden by ``os.environ``."""
    if env is not None:
        return dict(env)
    merged = read_dotenv(dotenv_path) if dotenv_path is not None else {}
    merged.update(os.environ)
    return merged


def read_dotenv(path: str | os.PathLike[str]) -> dict[str, str]:
    """Variables of a ``.env`` file, read with python-dotenv; a missing file gives none."""
    from dotenv import dotenv_values

    file = Path(path)
    if not file.is_file():
        return {}
    return {k: v for k, v in dotenv_values(file).items() if v is not None}


def _from_vars(values: Mapping[str, str]) -> dict[str, Any] | None:
    if not values.get("HANA_HOST"):
        return None
    return {
        "host": values.get("HANA_HOST"),
        "port": values.get("HANA_PORT"),
        "user": values.get("HANA_USER"),
        "password": values.get("HANA_PASSWORD"),
        "schema": values.get("HANA_SCHEMA"),
        "encrypt": values.get("HANA_ENCRYPT"),
        "validate_cert": values.get("HANA_VALIDATE_CERT"),
    }


def _from_vcap(raw: str | None) -> dict[str, Any] | None:
    """Credentials of the first HANA binding in ``VCAP_SERVICES``."""
    if not raw:
        return None
    try:
        services = json.loads(raw)
    except ValueError:
        raise ConfigurationError("VCAP_SERVICES is not valid JSON") from None
    if not isinstance(services, dict):
        return None
    for label, bindings in services.items():
        for binding in bindings if isinstance(bindings, list) else []:
            if not isinstance(binding, dict):
                continue
            tags = [str(t).lower() for t in binding.get("tags", [])]
            if label.lower() in _HANA_LABELS or "hana" in tags:
                creds = binding.get("credentials") or {}
                return {
                    "host": creds.get("host"),
                    "port": creds.get("port"),
                    "user": creds.get("user") or creds.get("username"),
                    "password": creds.get("password"),
                    "schema": creds.get("schema"),
                    "certificate": creds.get("certificate"),
                }
    return None


# -- pool --------------------------------------------------------------------------------


@dataclass(slots=True)
class _Slot:
    conn: Any
    thread: threading.Thread
    last_used: float


def pool_for(
    settings: HanaSettings | None, pool: HanaConnectionPool | None, *, owner: str
) -> HanaConnectionPool:
    """The pool a HANA component uses: the one given, or a new one for ``settings``."""
    if pool is not None:
        return pool
    if settings is None:
        raise ConfigurationError(f"{owner} needs settings or a pool")
    return HanaConnectionPool(settings)


class HanaConnectionPool(Closing):
    """Per-thread hdbcli connections: a connection is only ever used by one thread.

    Args:
        settings: Where to connect.
        driver: The DB-API module (``connect`` and ``Error``); default ``hdbcli.dbapi``,
            imported on first use. Tests pass a double from
            ``hybrid_rag.testing.hana_doubles``.
        idle_check_s: A connection idle longer than this is checked before reuse.
    """

    def __init__(
        self, settings: HanaSettings, *, driver: Any = None, idle_check_s: float = 60.0
    ) -> None:
        self.settings = settings
        self._driver = driver
        self._idle_check_s = idle_check_s
        self._local = threading.local()
        self._lock = threading.Lock()
        self._slots: list[_Slot] = []
        self._closed = False

    def __repr__(self) -> str:
        s = self.settings
        return f"HanaConnectionPool(host={s.host!r}, user={s.user!r}, open={len(self._slots)})"

    @property
    def driver(self) -> Any:
        """The DB-API module in use (loaded lazily)."""
        if self._driver is None:
            self._driver = load_hdbcli()
        return self._driver

    @property
    def error_types(self) -> tuple[type[BaseException], ...]:
        """Exception classes of the driver that mean a database error."""
        return (self.driver.Error,)

    def connection(self) -> Any:
        """The calling thread's connection (opened or reopened as needed)."""
        if self._closed:
            raise StoreError("HANA connection pool is closed")
        slot: _Slot | None = getattr(self._local, "slot", None)
        now = time.monotonic()
        if slot is not None and now - slot.last_used > self._idle_check_s and not _alive(slot):
            log.info("HANA connection went stale after idle time; reconnecting")
            self._discard(slot)
            slot = None
        if slot is None:
            slot = self._open()
        slot.last_used = now
        return slot.conn

    def run(self, fn: Callable[[Any], T]) -> T:
        """Call ``fn(connection)``; on a lost connection reopen and call it once more."""
        try:
            return fn(self.connection())
        except self.error_types as exc:
            if getattr(exc, "errorcode", None) not in _CONNECTION_LOST:
                raise
            log.warning("HANA connection lost (%s); retrying once", engine_message(exc))
        slot = getattr(self._local, "slot", None)
        if slot is not None:
            self._discard(slot)
        return fn(self.connection())

    @contextmanager
    def transaction(self, conn: Any) -> Iterator[Any]:
        """Autocommit off for the block: commit on success, roll back on error."""
        conn.setautocommit(False)
        try:
            yield conn
            conn.commit()
        except BaseException:
            try:
                conn.rollback()
            except self.error_types:
                log.warning("HANA rollback failed", exc_info=True)
            raise
        finally:
            conn.setautocommit(True)

    def _open(self) -> _Slot:
        try:
            conn = self.driver.connect(**self.settings.connect_kwargs())
        except self.error_types as exc:
            raise StoreError(
                f"cannot connect to HANA at {self.settings.host}: {engine_message(exc)}"
            ) from None
        slot = _Slot(conn, threading.current_thread(), time.monotonic())
        with self._lock:
            if self._closed:
                _close_quietly(conn)
                raise StoreError("HANA connection pool is closed")
            dead = [s for s in self._slots if not s.thread.is_alive()]
            self._slots = [s for s in self._slots if s.thread.is_alive()]
            self._slots.append(slot)
        for old in dead:
            _close_quietly(old.conn)
        self._local.slot = slot
        return slot

    def _discard(self, slot: _Slot) -> None:
        with self._lock:
            if slot in self._slots:
                self._slots.remove(slot)
        if getattr(self._local, "slot", None) is slot:
            self._local.slot = None
        _close_quietly(slot.conn)

    def open_connections(self) -> int:
        """How many connections are open (one per thread that used the pool)."""
        with self._lock:
            return len(self._slots)

    def close(self) -> None:
        """Close every connection; idempotent. Later use raises StoreError."""
        with self._lock:
            slots, self._slots, self._closed = self._slots, [], True
        for slot in slots:
            _close_quietly(slot.conn)


def _alive(slot: _Slot) -> bool:
    try:
        return bool(slot.conn.isconnected())
    except Exception:
        return False


def _close_quietly(conn: Any) -> None:
    try:
        conn.close()
    except Exception:
        log.debug("closing a HANA connection failed", exc_info=True)


def quote_ident(name: str) -> str:
    """A double-quoted SQL identifier; only ``[A-Za-z_][A-Za-z0-9_]*`` is accepted."""
    if not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]{0,126}", name):
        raise ConfigurationError(f"invalid SQL identifier {name!r}")
    return f'"{name}"'


def qualified(schema: str | None, table: str) -> str:
    """``"SCHEMA"."TABLE"`` (or just ``"TABLE"`` without a schema)."""
    return f"{quote_ident(schema)}.{quote_ident(table)}" if schema else quote_ident(table)
