"""The vocabulary every stage shares: the query model, logical types, the function
table, dialect and semantics profiles, error-conformance kinds and the one error
hierarchy. Imports nothing else of the project.
"""
