"""A campaign killed with SIGKILL in the middle of its first reduction.

Run as `python tests/killing_campaign.py OUT SEED CASES`: the fuzz campaign
`fuzz --engines reference,duckdb~tie-value --seed SEED --cases CASES --reduce-seconds 10 --out OUT`
would run, except that the faulty DuckDB here kills its own process (kill -9,
no clean-up of any kind) on the first query it gets once a new finding is on
disk. The finding's line is written just before its reduction starts, so that
query is the reduction's first: the kill lands inside it, every time.
"""

from __future__ import annotations

import json
import os
import signal
import sys
from pathlib import Path

from harness.campaign.loop import CampaignConfig, run_campaign
from harness.engines.registry import get_engine
from harness.results.store import FINDINGS

FAULTY = "duckdb~tie-value"


def main(out: Path, seed: int, cases: int) -> None:
    base = type(get_engine(FAULTY))

    class KilledInReduction(base):  # type: ignore[misc, valid-type]
        def run(self, tables, sql):
            if _new_finding(out / FINDINGS):
                os.kill(os.getpid(), signal.SIGKILL)
            return super().run(tables, sql)

    config = CampaignConfig(seed=seed, engines=("reference", FAULTY), out=out, cases=cases, reduce_seconds=10.0)
    run_campaign(config, engines=[get_engine("reference"), KilledInReduction()])
    sys.exit("the campaign ended without a reduction to kill")


def _new_finding(path: Path) -> bool:
    if not path.exists():
        return False
    lines = [json.loads(t) for t in path.read_text().splitlines() if t.strip()]
    return any(line.get("new") and line.get("classification") != "metamorphic" for line in lines)


if __name__ == "__main__":
    main(Path(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3]))
