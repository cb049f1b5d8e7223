"""Stage: measuring detection. Tasks are split into a mining set and an evaluation set
(task-disjoint, seeded); the arms — status-only, declared, a GenSON schema inferred per
tool, mined without and with cross-fitting, merged — are built from the mining set, plus
an ``oracle-peeking`` arm that looks at the evaluation runs (the yardstick of selection
efficiency); every fault class is injected into the evaluation runs; each arm's monitor
replays nominal and faulted runs, and the cross-fitted arms' predicted false alarms are
set against the realized ones, per tool and per contract family.

split.py   runs from the simulator or trace files, and the task-disjoint split
arms.py    ingest the mining set, mine, extract declared contracts, merge
schema.py  the inferred-schema baseline (GenSON, jsonschema; the dev extra)
score.py   alarms of a replayed run, detection, localization (definitions in its doc)
oracle.py  the oracle-peeking arm and selection efficiency
calibrate.py  predicted against realized false alarms, per tool and per bin
families.py   the same per contract family on the fresh evaluation tasks
model.py   the report types, rates with Wilson intervals
report.py  Markdown, HTML (inline SVG charts) and JSON
reliability.py  the calibration tables and the reliability plot
api.py     :func:`evaluate`, the stage as one call

>>> report = evaluate(suite="all", tasks=60, out="eval")  # doctest: +SKIP
>>> report.arm("merged").false_alarms.text()  # doctest: +SKIP
"""

from tracemine.evaluate.api import evaluate
from tracemine.evaluate.model import ArmResult, ClassResult, EvaluationReport, Rate, wilson

__all__ = ["ArmResult", "ClassResult", "EvaluationReport", "Rate", "evaluate", "wilson"]
