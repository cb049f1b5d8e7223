"""Stage 2: mine outcome contracts from the ingest store, cross-fitted by task.

profile.py     SQL aggregates per tool·path·task, stored and mergeable by addition
context.py     a fold's profiles (the sum of its tasks') as the templates' context
templates/     one family a module: unary, strings, relational, conditional
relations.py   the path pairs relations are tried on, counted per task in SQL
conditional.py targets and features of conditional contracts (decision trees)
measure.py     checked and violating calls of a candidate in a context
crossfit.py    propose on K-1 folds, count on the held-out fold
select.py      keep, bound, and link implied contracts
trajectory.py  run-level contracts (prior calls, provenance, caps, expected tools,
               completeness), cross-fitted per run; run_facts.py reads the runs and
               matches argument values to earlier calls, run_templates.py proposes
"""

from tracemine.mine.api import mine

__all__ = ["mine"]
