"""The explain layer: why a prediction is what it is, and what would recover the time.

Modules, in the order data flows through them (each imports only those before it):
- config.py: a network on a platform with estimate options (`Config`) and what the attribution hands the
  advisors (`Findings`);
- texts.py: the one table of cause texts (docs/DESIGN.md "Cause vocabulary") and number formatting;
- expectation.py: peaks and the naive expectation (every MAC at the device's peak);
- classify.py: the one cause classifier (the cause of a whole step, the dominant cause of a step's time);
- gap.py: one step's time split into the ideal and causes, each from its own mechanism; the gap of a
  compare split per matched group;
- match.py: the one union-find and the step matcher of compare;
- join.py: measured profile rows joined to predicted steps (explain --measured, calibrate);
- rewrites.py, advice.py, advice_qdq.py: recovery advice, each change re-estimated;
- summary.py: ranked cause entries and their examples;
- compare.py (`dlasim compare`), waterfall.py (`dlasim explain`), measured.py (`dlasim explain --measured`).
"""
