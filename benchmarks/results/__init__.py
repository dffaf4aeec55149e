"""What the judge's verdicts become: result rows, analysis and reports.

`rows` the result row (one per task, method, seed and attempt) and its store; `records` the run
files and pair records that the agent writes and the results read, defined once; `analysis` the
scores (S_agg, fast_p, geomeans, pass rates); `report` the HTML and Markdown report;
`pairs_export` error->fix pairs as a data set; `importers` kernels made by other systems, judged.
"""
