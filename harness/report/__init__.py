"""The HTML conformance report."""
