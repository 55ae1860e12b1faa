"""Stage 6, reports: documents from typed results (matplotlib, Markdown, HTML).

Takes results and an output directory and returns the files written: figures and HTML helpers
(:mod:`.figures`), a comparison's report (:mod:`.comparison`) and the default report's index
(:mod:`.index`). Nothing is computed here, and only here are files written.
"""
