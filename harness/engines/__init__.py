"""Engines: the adapter contract (`base`), the one registry, profiles, workers and
isolation for engines run in other processes, the deliberately faulty engines, and
one package per engine holding its adapter and its dialect.
"""
