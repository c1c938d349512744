"""Contract test suites every store implementation must pass (needs pytest).

Subclass in a test module and provide the store fixture::

    class TestMyGraphStore(GraphStoreContract):
        @pytest.fixture
        def graph_store(self): return MyGraphStore(...)
"""

from hybrid_rag.testing._flow_contracts import ExtractorContract, QuestionRouterContract
from hybrid_rag.testing._graph_contract import GraphStoreContract
from hybrid_rag.testing._vector_contract import VectorStoreContract

__all__ = [
    "ExtractorContract",
    "GraphStoreContract",
    "QuestionRouterContract",
    "VectorStoreContract",
]
