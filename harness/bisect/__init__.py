"""`window-harness bisect`: the first release of an engine whose verdict on a case
differs from the verdict at the range's start (`search`: the releases and the
binary search; `run`: probing releases; `text`: what is printed)."""
