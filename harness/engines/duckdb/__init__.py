"""duckdb: its adapter, its dialect and what else only it needs."""
