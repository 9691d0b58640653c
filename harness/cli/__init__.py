"""`window-harness` commands: the only place that knows argparse.
"""
