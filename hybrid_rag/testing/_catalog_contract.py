"""Contract tests every ``Catalog`` must pass.

Subclass ``CatalogContract`` in a test module and provide a ``catalog`` fixture that
yields a fresh, empty catalog::

    class TestMyCatalog(CatalogContract):
        @pytest.fixture
        def catalog(self, tmp_path):
            with MyCatalog(tmp_path / "catalog.db") as catalog:
                yield catalog

Only protocol methods are used, so any catalog (embedded, HANA, your own) can run it.
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime, timedelta, timezone
from typing import Any

import pytest

from hybrid_rag.errors import InputError, InvalidDocIdError
from hybrid_rag.models import DocumentInfo
from hybrid_rag.protocols import Catalog

__all__ = ["CatalogContract", "make_info"]

_T0 = datetime(2025, 3, 1, 12, 30, 15, 123000, tzinfo=UTC)
_BAD_IDS = ["", "a b", "a/b", "x" * 129, ".", "..", "ü"]


def make_info(doc_id: str, content_hash: str = "0" * 64, **fields: Any) -> DocumentInfo:
    """A catalog entry for ``doc_id`` with plausible values; ``fields`` override them."""
    values: dict[str, Any] = {
        "doc_id": doc_id,
        "source": f"/data/sds/{doc_id}.pdf",
        "content_hash": content_hash,
        "pages": 3,
        "chunks": 12,
        "triples": 40,
        "created_at": _T0,
        "updated_at": _T0 + timedelta(minutes=5),
    }
    values.update(fields)
    return DocumentInfo(**values)


class CatalogContract:
    """Behaviour every Catalog must show. Needs a ``catalog`` fixture."""

    def test_is_a_catalog(self, catalog: Catalog) -> None:
        assert isinstance(catalog, Catalog)

    def test_empty(self, catalog: Catalog) -> None:
        assert catalog.list() == []
        assert catalog.get("a") is None
        assert catalog.delete("a") is False

    def test_put_then_get_round_trips_every_field(self, catalog: Catalog) -> None:
        info = make_info(
            "acetone-2024.v1_x",
            "f" * 64,
            source="C:\\SDS\\Acétone 漢字 'quoted' \"double\".pdf",
            pages=1,
            chunks=0,
            triples=0,
            title="Acetone — Safety Data Sheet",
            aliases=["2-propanone", "dimethyl ketone"],
            created_at=datetime(2024, 1, 2, 3, 4, 5, tzinfo=timezone(timedelta(hours=2))),
        )
        catalog.put(info)
        assert catalog.get(info.doc_id) == info
        assert catalog.list() == [info]

    def test_none_and_empty_fields_round_trip(self, catalog: Catalog) -> None:
        info = make_info("a", title=None, aliases=[])
        catalog.put(info)
        got = catalog.get("a")
        assert got == info
        assert got is not None and got.title is None and got.aliases == []

    def test_put_replaces_same_id(self, catalog: Catalog) -> None:
        catalog.put(make_info("a", "1" * 64))
        catalog.put(make_info("b"))
        newer = make_info("a", "2" * 64, pages=9, title="v2", updated_at=_T0 + timedelta(days=1))
        catalog.put(newer)
        assert catalog.get("a") == newer
        assert [i.doc_id for i in catalog.list()] == ["a", "b"]
        assert catalog.get("b") == make_info("b")

    def test_list_ordered_by_doc_id(self, catalog: Catalog) -> None:
        for doc in ("c", "b-2", "a", "b", "a.1", "B"):
            catalog.put(make_info(doc))
        assert [i.doc_id for i in catalog.list()] == ["B", "a", "a.1", "b", "b-2", "c"]

    def test_delete(self, catalog: Catalog) -> None:
        catalog.put(make_info("a"))
        catalog.put(make_info("b"))
        assert catalog.delete("a") is True
        assert catalog.get("a") is None
        assert catalog.delete("a") is False
        assert catalog.list() == [make_info("b")]

    def test_put_after_delete(self, catalog: Catalog) -> None:
        catalog.put(make_info("a", "1" * 64))
        catalog.delete("a")
        catalog.put(make_info("a", "2" * 64))
        assert [i.content_hash for i in catalog.list()] == ["2" * 64]

    # -- bad input ---------------------------------------------------------------------

    @pytest.mark.parametrize("bad", _BAD_IDS)
    def test_put_invalid_doc_id_rejected(self, catalog: Catalog, bad: str) -> None:
        catalog.put(make_info("keep"))
        with pytest.raises(InvalidDocIdError):
            catalog.put(make_info(bad))
        assert catalog.list() == [make_info("keep")]

    @pytest.mark.parametrize("bad", [None, {"doc_id": "a"}, "a", 42])
    def test_put_non_document_info_rejected(self, catalog: Catalog, bad: Any) -> None:
        with pytest.raises(InputError):
            catalog.put(bad)
        assert catalog.list() == []

    @pytest.mark.parametrize("bad", [*_BAD_IDS, None, 7, ["a"]])
    def test_get_and_delete_invalid_doc_id_rejected(self, catalog: Catalog, bad: Any) -> None:
        catalog.put(make_info("a"))
        with pytest.raises(InvalidDocIdError):
            catalog.get(bad)
        with pytest.raises(InvalidDocIdError):
            catalog.delete(bad)
        assert catalog.list() == [make_info("a")]

    # -- threads and lifecycle ---------------------------------------------------------

    def test_concurrent_puts_and_reads(self, catalog: Catalog) -> None:
        def work(i: int) -> DocumentInfo | None:
            doc = f"d{i:02d}"
            catalog.put(make_info(doc, pages=i + 1))
            catalog.list()
            return catalog.get(doc)

        with ThreadPoolExecutor(max_workers=6) as pool:
            got = list(pool.map(work, range(24)))
        assert got == [make_info(f"d{i:02d}", pages=i + 1) for i in range(24)]
        assert [i.doc_id for i in catalog.list()] == [f"d{i:02d}" for i in range(24)]

    def test_close_is_idempotent(self, catalog: Catalog) -> None:
        catalog.put(make_info("a"))
        catalog.close()
        catalog.close()
