"""The explain layer: why a prediction is what it is, and what would recover the time. It reads the Plan and
Estimate records only (tests/test_explain_records.py): no cost-model internals, no parsing of step names or
reason text, no spec reloads.

Modules, in the order data flows through them (each imports only those before it):
- config.py: a network on a platform with estimate options (`Config`, where the layer loads its inputs), what
  the attribution hands the advisors (`Findings`) and what they propose (`Change`);
- texts.py: the one table of cause texts (docs/DESIGN.md "Cause vocabulary") and number formatting;
- expectation.py: the naive expectation (every MAC at the device's peak, from Estimate.peaks);
- match.py: the one union-find and the step matcher of compare;
- join.py: measured profile rows joined to predicted steps (explain --measured, calibrate);
- classify.py: the cause classifier (the cause of a whole step, the dominant cause of a deviation);
- gap.py: one step's time split into the ideal and causes, each from its own mechanism; the gap of a
  compare split per matched group;
- summary.py: ranked cause entries and their examples;
- rewrites.py, advice_qdq.py, advice.py: recovery advice, each change re-estimated;
- compare.py (`dlasim compare`), waterfall.py (`dlasim explain`), measured.py (`dlasim explain --measured`).
"""
