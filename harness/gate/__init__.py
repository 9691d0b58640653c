"""The CI gate: the corpus and a seeded fuzz budget, judged against the baseline.

`run.run_gate` runs everything and returns a `GateResult`; `judge` decides
what each verdict means for the gate (explained, a failure, stale, an A/B
difference); `junit` and `text` write it for CI systems and for people;
`command` is `window-harness gate`.
"""

# How long the gate reduces the fuzz part's A/B regressions: each at most
# AB_REDUCE_SECONDS, all of them together AB_REDUCE_TOTAL unless told
# (`GateConfig.ab_reduce_seconds`, `gate --ab-reduce-seconds`).
AB_REDUCE_SECONDS = 5.0
AB_REDUCE_TOTAL = 30.0
