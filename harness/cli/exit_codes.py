"""Exit codes, for every command: 0 all verdicts pass, 1 some verdict does not,
2 bad input (a malformed case, an unknown engine, a bad option).

Their own module so the command modules and `main` share them without
importing each other.
"""

EXIT_PASS, EXIT_FAIL, EXIT_BAD_INPUT = 0, 1, 2
EXIT_INTERRUPTED = 130  # 128 + SIGINT, as a shell reports Ctrl-C
EXIT_BROKEN_PIPE = 141  # 128 + SIGPIPE: the reader of stdout went away (`| head`)
