"""`python -m harness` is `window-harness`."""

import sys

from harness.cli import main

sys.exit(main())
