"""The gradient conformance suite: an op database and checks run over every record."""

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
