"""PostgreSQL: the psycopg adapter (`adapter`), a throwaway local server (`local`) and its dialect (`dialect`)."""
