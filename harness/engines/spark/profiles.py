"""Spark's profiles: settings that steer it onto other joins, window buffers and code paths.

Each description says what the profile was measured to change (Spark 4.3.0);
`tests/test_profiles.py` checks each one. The spec syntax and how profiles
combine: `harness.engines.profiles`.
"""

from __future__ import annotations

from harness.engines.profiles import DEFAULT, Profile, ProfileTable, config_options

_NO_AQE = {"spark.sql.adaptive.enabled": "false"}

PROFILES: ProfileTable = {
    DEFAULT: Profile("Spark's own settings: AQE on; tables under 10 MB are broadcast in joins"),
    "aqe-off": Profile(
        "adaptive query execution off: the plan is fixed before running "
        "(no AdaptiveSparkPlan, no runtime join conversion or partition coalescing)",
        config_options(_NO_AQE),
    ),
    "broadcast-join": Profile(
        "equi-joins as BroadcastHashJoin for tables up to 1 GB (AQE off, so the plan "
        "cannot change at runtime); FULL joins stay SortMergeJoin",
        config_options({**_NO_AQE, "spark.sql.autoBroadcastJoinThreshold": "1g"}),
    ),
    "sort-merge-join": Profile(
        "equi-joins as SortMergeJoin: no broadcast (also none chosen by AQE at "
        "runtime), sort-merge preferred, AQE's shuffled-hash conversion off",
        config_options({
            "spark.sql.autoBroadcastJoinThreshold": "-1",
            "spark.sql.adaptive.autoBroadcastJoinThreshold": "-1",
            "spark.sql.join.preferSortMergeJoin": "true",
            "spark.sql.adaptive.maxShuffledHashJoinLocalMapThreshold": "0",
        }),
    ),
    "shuffle-hash-join": Profile(
        "equi-joins as ShuffledHashJoin: no broadcast, and AQE turns each "
        "SortMergeJoin whose shuffle partitions fit 1 GB into a shuffled hash join "
        "(the planner's own switch, forceApplyShuffledHashJoin, is not a runtime conf)",
        config_options({
            "spark.sql.autoBroadcastJoinThreshold": "-1",
            "spark.sql.adaptive.autoBroadcastJoinThreshold": "-1",
            "spark.sql.adaptive.maxShuffledHashJoinLocalMapThreshold": "1g",
        }),
    ),
    "window-spill": Profile(
        "the window operator's row buffer spills to disk after every row. Small "
        "partitions only: each spill file holds ~2 MB of reader buffers per frame "
        "iterator (SPARK-22987), so a partition of ~100 rows (~40 with several "
        "frames) exhausts the 1 GB driver heap and the JVM dies",
        config_options({
            "spark.sql.windowExec.buffer.in.memory.threshold": "1",
            "spark.sql.windowExec.buffer.spill.threshold": "1",
        }),
    ),
    "window-buffer": Profile(
        "the window operator's row buffer moves from its in-memory array to the "
        "sorter-backed store after one row, without spilling (safe at any size)",
        config_options({"spark.sql.windowExec.buffer.in.memory.threshold": "1"}),
    ),
    "shuffle-partitions=8": Profile(
        "eight shuffle partitions instead of the harness's two, AQE off so that none "
        "are coalesced: window partitions hashed across eight tasks",
        config_options({**_NO_AQE, "spark.sql.shuffle.partitions": "8"}),
    ),
    "codegen-off": Profile(
        "interpreted execution: no whole-stage code generation and no generated "
        "expression code (factoryMode NO_CODEGEN, 0 classes compiled per query)",
        config_options({
            "spark.sql.codegen.wholeStage": "false",
            "spark.sql.codegen.factoryMode": "NO_CODEGEN",
        }),
    ),
}
