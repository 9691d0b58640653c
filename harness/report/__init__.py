"""The HTML conformance report.

    load.py      results directories (run, fuzz, gate) -> ReportData (model.py)
    axes.py      what a case exercises: the matrix's rows, and what a dialect declares
    matrix.py    rows x engines, from the verdicts and the dialects' feature tables
    answers.py   an engine's recorded answer paired with the reference's, row by row
    findings.py  one finding's section; html.py the page; plots.py inline SVG
    markup.py    HTML built so that every value from data is escaped
    command.py   `window-harness report` and the --report option
"""
