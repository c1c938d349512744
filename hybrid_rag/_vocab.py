"""The graph layout every store holds and every query reads (internal, shared constants).

A document's named graph holds its subject (typed with the ontology's subject class),
the subject's parts, and one ``hr:Fact`` node per value, e.g. under an ontology ``ex:``::

    <subject> a ex:Order ; rdfs:label "Order 4711" ; skos:altLabel "4711" ;
              ex:total "€ 1.250,00" .                                  # direct triple
    <fact>    a hr:Fact ; hr:subject <subject> ; hr:property ex:total ;
              hr:value "€ 1.250,00" ; hr:status "stated" ;
              hr:number 1250.0 ; hr:unit "EUR" ;                       # typed values only
              hr:object <entity> ;                                    # object properties only
              hr:doc "order-4711" ; hr:page 1 ; hr:chunk "order-4711#p1c0" ;
              hr:quote "Total € 1.250,00" ;
              hr:term "1.250,00" , "1" , "250" , "00" .          # hybrid_rag._terms
    <subject> hr:termIndex "1" .                                       # the graph has them
    <subject-part-1> a ex:OrderLine ; rdfs:label "Widget" .            # a repeated part
    <subject> ex:line <subject-part-1> .

The direct triples make the graph usable with plain SPARQL; the ``hr:Fact`` node carries
provenance and the typed value so templates can compare values across documents.
"""

from __future__ import annotations

__all__ = ["DATA", "DATE_UNIT", "DOC_GRAPH", "HR", "RDFS_LABEL", "RDF_TYPE", "SKOS_ALT", "XSD"]

HR = "http://hybrid-rag.org/ns#"
DATA = "http://hybrid-rag.org/id/"
DOC_GRAPH = "urn:hybrid-rag:doc:"
RDF_TYPE = "http://www.w3.org/1999/02/22-rdf-syntax-ns#type"
RDFS_LABEL = "http://www.w3.org/2000/01/rdf-schema#label"
SKOS_ALT = "http://www.w3.org/2004/02/skos/core#altLabel"
XSD = "http://www.w3.org/2001/XMLSchema#"
DATE_UNIT = "date"
"""The ``hr:unit`` of a date's ``hr:number`` (days since 1970-01-01)."""
