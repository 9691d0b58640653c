"""Judging an answer: instrument the query, run it on engines, compare each answer
with the reference (or a metamorphic partner) and give one typed verdict.
"""
