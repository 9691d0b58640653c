"""Results directories (run, fuzz, gate): the one place they are written and read.
"""
