"""The CI gate: the corpus and a seeded fuzz budget, judged against the baseline.

`run.run_gate` runs everything and returns a `GateResult`; `judge` decides
what each verdict means for the gate (explained, a failure, stale, an A/B
difference); `junit` and `text` write it for CI systems and for people;
`command` is `window-harness gate`.
"""
