"""The graph layout every store holds and every query reads (internal, shared constants).

A document's named graph holds, for its product::

    <product> a msds:Product ; rdfs:label "Acetone, HPLC Grade" ; skos:altLabel "Acetone" ;
              msds:flashPoint "-20 °C / -4 °F (Closed cup)" .          # direct triple
    <fact>    a hr:Fact ; hr:subject <product> ; hr:property msds:flashPoint ;
              hr:value "-20 °C / -4 °F (Closed cup)" ; hr:status "stated" ;
              hr:number -20.0 ; hr:unit "°C" ;                        # quantities only
              hr:object <entity> ;                                    # object properties only
              hr:doc "acetone" ; hr:page 4 ; hr:chunk "acetone#p4c2" ;
              hr:quote "Flash Point -20 °C / -4 °F (Closed cup)" .

The direct triples make the graph usable with plain SPARQL; the ``hr:Fact`` node carries
provenance and the typed quantity so templates can compare values across documents.
"""

from __future__ import annotations

__all__ = ["DATA", "DOC_GRAPH", "HR", "RDFS_LABEL", "RDF_TYPE", "SKOS_ALT", "XSD"]

HR = "http://hybrid-rag.org/ns#"
DATA = "http://hybrid-rag.org/id/"
DOC_GRAPH = "urn:hybrid-rag:doc:"
RDF_TYPE = "http://www.w3.org/1999/02/22-rdf-syntax-ns#type"
RDFS_LABEL = "http://www.w3.org/2000/01/rdf-schema#label"
SKOS_ALT = "http://www.w3.org/2004/02/skos/core#altLabel"
XSD = "http://www.w3.org/2001/XMLSchema#"
