"""Apache Spark: the PySpark adapter (`adapter`), Spark Connect (`connect`) and its dialect (`dialect`)."""
