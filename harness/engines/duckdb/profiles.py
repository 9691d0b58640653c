"""DuckDB's profiles: thread count and a small memory limit.

Each description says what the profile was measured to change (DuckDB 2.0);
`tests/test_profiles.py` checks each one. The spec syntax and how profiles
combine: `harness.engines.profiles`.
"""

from __future__ import annotations

import tempfile
from pathlib import Path

from harness.engines.profiles import DEFAULT, Profile, ProfileTable, config_options

# DuckDB spills to `.tmp` under the working directory by default; keep its
# spill files out of whatever directory the harness was started in.
_SPILL_DIR = str(Path(tempfile.gettempdir()) / "window-harness-duckdb-spill")

PROFILES: ProfileTable = {
    DEFAULT: Profile("DuckDB's own settings: one thread per CPU, 80% of RAM"),
    "threads=1": Profile("one thread: no parallel window partitions or sort merges",
                         config_options({"threads": "1"})),
    "threads=4": Profile("four threads, however many CPUs there are",
                         config_options({"threads": "4"})),
    "small-memory": Profile(
        "a 64 MB memory limit (spilling to the system temp directory); a query "
        "that needs more fails, by design",
        config_options({"memory_limit": "64MB", "temp_directory": _SPILL_DIR}),
        tolerated_errors=("Out of Memory Error",),
    ),
}
