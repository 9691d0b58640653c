"""Apache DataFusion: the adapter (`adapter`) and its dialect (`dialect`)."""
