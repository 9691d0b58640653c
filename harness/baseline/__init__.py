"""The ledger of known differences: reviewed explanations of verdicts that do not pass.
"""
