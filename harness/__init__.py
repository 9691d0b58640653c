"""window-harness: differential correctness and conformance testing of SQL window functions."""

__version__ = "0.1.0"
