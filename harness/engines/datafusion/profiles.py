"""DataFusion's profiles: partitioning, batch size and a small memory pool.

Each description says what the profile was measured to change (DataFusion 55);
`tests/test_profiles.py` checks each one. The spec syntax and how profiles
combine: `harness.engines.profiles`.
"""

from __future__ import annotations

from harness.engines.profiles import DEFAULT, Profile, ProfileTable, config_options

PROFILES: ProfileTable = {
    DEFAULT: Profile("DataFusion's own settings: target_partitions = the CPU count, batch_size 8192"),
    # DataFusion repartitions only an input with more rows than batch_size
    # (measured: 400 rows stay in one partition at batch_size 8192, 30 rows
    # are hash-repartitioned at batch_size 1): for small tables, combine
    # these with batch_size=1, as DataFusion's own tests do.
    "partitions=1": Profile(
        "one partition: no RepartitionExec, every window partition in one stream",
        config_options({"datafusion.execution.target_partitions": "1"}),
    ),
    "partitions=2": Profile(
        "two partitions: window input hash-repartitioned by PARTITION BY "
        "(only inputs of more rows than batch_size)",
        config_options({"datafusion.execution.target_partitions": "2"}),
    ),
    "partitions=4": Profile(
        "four partitions: window input hash-repartitioned by PARTITION BY "
        "(only inputs of more rows than batch_size)",
        config_options({"datafusion.execution.target_partitions": "4"}),
    ),
    "batch_size=1": Profile(
        "one row per batch: the streaming window operator carries its state "
        "across a batch boundary at every row",
        config_options({"datafusion.execution.batch_size": "1"}),
    ),
    "batch_size=7": Profile(
        "batches of 7 rows: any input of more than 7 rows spans batches (and is "
        "repartitioned by the partitions profiles)",
        config_options({"datafusion.execution.batch_size": "7"}),
    ),
    "batch_size=100": Profile(
        "batches of 100 rows: an input of more than 100 rows spans batches (and is "
        "repartitioned by the partitions profiles)",
        config_options({"datafusion.execution.batch_size": "100"}),
    ),
    "small-memory": Profile(
        "a 4 MB fair spill pool (sorts reserve 256 KB to spill), so sorts spill "
        "from some ten thousand rows; a query that needs more fails, by design",
        config_options({"datafusion.execution.sort_spill_reservation_bytes": str(256 * 1024)},
                       memory_pool_bytes=4 * 1024 * 1024),
        tolerated_errors=("Resources exhausted",),
    ),
}
