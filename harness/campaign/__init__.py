"""Fuzzing campaigns: the loop, batching siblings into one query, steering
towards uncovered cells, and the campaign as a Spark job.
"""
