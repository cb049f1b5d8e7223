"""Conditional template: for each property that fails overall, a shallow decision tree over
argument and status features (fitted on this context's tasks) finds a predicate under
which it never failed; the candidate is the property ``when`` that predicate holds.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from tracemine.mine.propose.conditional import Feature, Target, holds
from tracemine.mine.propose.context import MineContext
from tracemine.mine.propose.templates._base import candidate
from tracemine.model.contract import Contract, Predicate

MAX_DEPTH = 2
Column = tuple[int, tuple[str, Any]]
"""A design-matrix column: (feature index, (test, category))."""
MIN_LEAF = 5
MIN_CALLS = 10
# the tree reads its input as float32 and refuses what is infinite there (1e308 is), and
# it sums each column in float32, which two values near the top of that range overflow.
# So values are clipped to FLOAT32_MAX / (rows + 1): no column sum can overflow, and the
# order of the values, all a split needs, is kept for every value below about 1e31
FLOAT32_MAX = float(np.finfo(np.float32).max)


def conditions(ctx: MineContext) -> list[Contract]:
    """One conditional candidate per target where a tree finds a violation-free node."""
    shared = ctx.shared
    if shared is None or shared.conditional is None:
        return []
    out: list[Contract] = []
    for key in sorted(shared.conditional.targets, key=str):
        target = shared.conditional.targets[key]
        rows = shared.conditional.mask(target, ctx)
        found = _best(target, rows, ctx.min_support, shared.conditional.designs, key)
        if found is not None:
            predicate, calls, tasks = found
            out.append(candidate(target.tool, target.side, target.kind, [target.path],
                                 calls=calls, tasks=tasks, when=predicate))  # fmt: skip
    return out


def _columns(features: list[Feature]) -> tuple[np.ndarray, list[Column]]:
    """The design matrix: one-hot columns per category, numeric values (NaN if missing),
    and a presence column per feature; each column named (feature index, category)."""
    columns, names = [], []
    for index, feature in enumerate(features):
        if feature.categories:
            for category in feature.categories:
                columns.append(feature.present & (feature.values == category))
                names.append((index, ("==", category)))
        else:
            columns.append(feature.values)
            names.append((index, ("num", None)))
        columns.append(feature.present)
        names.append((index, ("present", None)))
    matrix = np.column_stack(columns).astype(float)
    bound = FLOAT32_MAX / (len(matrix) + 1)
    return np.clip(matrix, -bound, bound), names


def _best(
    target: Target, rows: np.ndarray, min_tasks: int, designs: dict[Any, Any], key: Any
) -> tuple[Predicate, int, int] | None:
    y = target.violated[rows]
    if not target.features or not y.any() or y.all():
        return None
    if key not in designs:
        designs[key] = _columns(target.features)
    matrix, names = designs[key]
    x = matrix[rows]
    from sklearn.tree import DecisionTreeClassifier  # not on every start of the command line

    tree = DecisionTreeClassifier(max_depth=MAX_DEPTH, min_samples_leaf=MIN_LEAF, random_state=0)
    tree.fit(x, y)
    structure = tree.tree_
    best: tuple[int, str, Predicate, int] | None = None
    stack: list[tuple[int, list[tuple[int, bool, float]]]] = [(0, [])]
    while stack:
        node, path = stack.pop()
        if path:
            predicate = _predicate(path, names, target.features)
            if predicate is not None:
                feature = next(f for f in target.features if f.path == predicate.path)
                selected = holds(predicate, feature)[rows]
                calls = int(selected.sum())
                tasks = target.scaled(len(set(target.tasks[rows][selected])))
                if calls >= MIN_CALLS and tasks >= min_tasks and not y[selected].any():
                    rank = (calls, predicate.render(), predicate, tasks)
                    if best is None or (rank[0], best[1]) > (best[0], rank[1]):
                        best = rank
        left, right = structure.children_left[node], structure.children_right[node]
        if left != -1:
            column, threshold = int(structure.feature[node]), float(structure.threshold[node])
            stack.append((left, [*path, (column, True, threshold)]))
            stack.append((right, [*path, (column, False, threshold)]))
    if best is None:
        return None
    return best[2], target.scaled(best[0]), best[3]


def _predicate(
    path: list[tuple[int, bool, float]], names: list[Column], features: list[Feature]
) -> Predicate | None:
    """The conditions on the way to a node as one predicate, when they all test one
    feature: a set of categories, one side of a threshold, or presence."""
    indexes = {names[column][0] for column, _, _ in path}
    if len(indexes) != 1:
        return None
    feature = features[indexes.pop()]
    tests = [(names[column][1], left, threshold) for column, left, threshold in path]
    if any(kind == "present" for (kind, _), _, _ in tests):
        if len(tests) != 1:
            return None
        (_, _), left, _ = tests[0]
        return Predicate(path=feature.path, op="absent" if left else "present")
    if feature.categories:
        allowed = [
            c for c in feature.categories
            if all((c == value) != left for (_, value), left, _ in tests)
        ]  # fmt: skip
        if not allowed or len(allowed) == len(feature.categories):
            return None
        if len(allowed) == 1:
            return Predicate(path=feature.path, op="==", value=allowed[0])
        return Predicate(path=feature.path, op="in", value=allowed)
    if len(tests) != 1:
        return None
    _, left, threshold = tests[0]
    if not math.isfinite(threshold):
        # the tree splits in float32: a value past its range (1e308) is infinite there,
        # and a bound at infinity says nothing a contract could check
        return None
    present = feature.values[feature.present]
    integral = bool(len(present)) and bool(np.all(np.mod(present, 1) == 0))
    if integral:
        if left:
            return Predicate(path=feature.path, op="<=", value=math.floor(threshold))
        return Predicate(path=feature.path, op=">=", value=math.floor(threshold) + 1)
    return Predicate(path=feature.path, op="<=" if left else ">", value=round(threshold, 6))
