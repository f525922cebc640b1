"""Validation agrees with ptxas on mutants of the fixtures: at least 97 %, no crash, and nothing that
ptxas accepts is refused (a false rejection is a front-end bug). ``-s`` shows the confusion matrix;
``benchmarks/ptxas_agreement.py`` runs more mutants."""

from __future__ import annotations

from support.agreement import run
from support.paths import needs_ptxas

MUTANTS = 2000
SEED = 13


@needs_ptxas
def test_validation_agrees_with_ptxas():
    result = run(MUTANTS, SEED, workers=2)
    print("\n" + result.table())
    assert len(result.outcomes) == MUTANTS
    assert not result.crashes, [(o.case.fixture, o.case.mutant.detail, o.ours) for o in result.crashes[:5]]
    wrong = [(o.case.fixture, o.case.mutant.line, o.case.mutant.detail) for o in result.false_rejections]
    assert not wrong, f"ptxas accepts what ptxstatic refuses: {wrong[:5]}"
    assert result.agreement >= 0.97
