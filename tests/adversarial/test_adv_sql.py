"""Every SQL fragment built from a value in ``stores/hana`` is checked or bound.

Audit (issue 12): table and index names go through ``quote_ident`` (only
``[A-Za-z_][A-Za-z0-9_]*``), ``TOP``/dimension/HNSW numbers through ``int`` and range
checks, the vector type and its ``TO_*_VECTOR`` function are picked from two constants,
doc ids, texts, vectors and model names are bound parameters. ``VECTOR_EMBEDDING``'s
text type is written as a keyword, so ``embed_sync`` accepts only its two values.
"""

from __future__ import annotations

import pytest

from hybrid_rag.errors import ConfigurationError, InputError
from hybrid_rag.stores.hana import HanaConnectionPool, HanaInternalEmbedder, HanaVectorStore
from hybrid_rag.stores.hana._connection import qualified, quote_ident
from hybrid_rag.testing.hana_doubles import FAKE_SETTINGS, FakeHdbcli

INJECTED_KINDS = [
    "QUERY') , ('x",
    "DOCUMENT'; DROP TABLE CHUNKS; --",
    "query",
    "",
    "QUERY ",
    None,
    1,
]


@pytest.mark.parametrize("kind", INJECTED_KINDS)
def test_embed_sync_kind_is_checked_before_any_sql(kind: object) -> None:
    driver = FakeHdbcli()
    embedder = HanaInternalEmbedder(pool=HanaConnectionPool(FAKE_SETTINGS, driver=driver))
    with pytest.raises(InputError, match="kind"):
        embedder.embed_sync(["acetone"], kind)  # type: ignore[arg-type]
    assert driver.database.statements("VECTOR_EMBEDDING") == []


@pytest.mark.parametrize(
    "name", ['CHUNKS"; DROP TABLE X; --', "a b", "1abc", "", "x" * 200, "Ä", 'a"b']
)
def test_identifiers_are_checked(name: str) -> None:
    with pytest.raises(ConfigurationError):
        quote_ident(name)
    with pytest.raises(ConfigurationError):
        qualified("SCHEMA", name)
    pool = HanaConnectionPool(FAKE_SETTINGS, driver=FakeHdbcli())
    with pytest.raises(ConfigurationError):
        HanaVectorStore(pool=pool, table=name)
