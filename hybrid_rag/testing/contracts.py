"""Contract test suites every seam implementation must pass (needs pytest).

Subclass in a test module and provide the one fixture the suite names::

    class TestMyGraphStore(GraphStoreContract):
        @pytest.fixture
        def graph_store(self): return MyGraphStore(...)

    class TestMyVectorStore(VectorStoreContract):   # fixture ``vector_store`` (uses ``dim``)
    class TestMyCatalog(CatalogContract):           # fixture ``catalog``
    class TestMyEmbedder(EmbedderContract):         # fixture ``embedder``
    class TestMyExtractor(ExtractorContract):       # fixture ``extractor``
    class TestMyRouter(QuestionRouterContract):     # fixture ``router``
    class TestMyOntology(OntologyContract):         # fixture ``ontology``
    class TestMyLLM(LLMProviderContract):           # fixture ``make_llm`` (replies -> LLM)

Every rule a suite checks is written in the protocol's docstring
(``hybrid_rag.protocols``), so a store written from the docstrings passes.
"""

from hybrid_rag.testing._catalog_contract import CatalogContract
from hybrid_rag.testing._embedder_contract import EmbedderContract
from hybrid_rag.testing._flow_contracts import ExtractorContract, QuestionRouterContract
from hybrid_rag.testing._graph_contract import GraphStoreContract
from hybrid_rag.testing._llm_contract import FAIL, LLMProviderContract, MakeLLM
from hybrid_rag.testing._ontology_contract import OntologyContract
from hybrid_rag.testing._vector_contract import VectorStoreContract

__all__ = [
    "FAIL",
    "CatalogContract",
    "EmbedderContract",
    "ExtractorContract",
    "GraphStoreContract",
    "LLMProviderContract",
    "MakeLLM",
    "OntologyContract",
    "QuestionRouterContract",
    "VectorStoreContract",
]
