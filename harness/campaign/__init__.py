"""Fuzzing campaigns: the loop, engine isolation, findings, reduction, replay and export."""
