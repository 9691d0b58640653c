"""DuckDB: the adapter (`adapter`) and what the dialect lacks or spells its own way (`dialect`)."""
