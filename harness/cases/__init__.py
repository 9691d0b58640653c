"""Cases: load and validate case files, write them back, and say what a case
exercises (features, the grid's coverage, the report's axes).
"""
