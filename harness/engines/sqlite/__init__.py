"""SQLite, through Python's sqlite3: the adapter (`adapter`) and its dialect (`dialect`)."""
