"""The gradient conformance suite: an op database and checks run over every record.

Every public differentiable op of :mod:`portagrad.ops` has an :class:`OpRecord` (its
reference, input strategy, tolerances, error inputs); the checks in :mod:`._checks` run
over every record on the selected namespaces, from pytest (``pytest conformance``) or
from the command line (``portagrad conformance``). :func:`check_record` runs them on a
record of your own.
"""

from ._checks import CHECKS as CHECKS
from ._checks import CheckFailure as CheckFailure
from ._db import (
    NON_DIFFERENTIABLE as NON_DIFFERENTIABLE,
)
from ._db import (
    OpRecord as OpRecord,
)
from ._db import (
    all_records as all_records,
)
from ._db import (
    get_record as get_record,
)
from ._db import (
    register as register,
)
from ._runner import Outcome as Outcome
from ._runner import Report as Report
from ._runner import check_record as check_record
from ._runner import reproduce as reproduce
from ._runner import run_check as run_check
from ._strategies import Strategies as Strategies
