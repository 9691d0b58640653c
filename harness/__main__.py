"""`python -m harness` is `window-harness`."""

import sys

from harness.cli.main import main

sys.exit(main())
