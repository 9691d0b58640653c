"""What a failing verdict becomes: a signed finding, the majority view, a reduced
case, a replay, an exported regression test.
"""
