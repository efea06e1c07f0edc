"""``python -m portagrad``: the ``portagrad`` command."""

import sys

from .cli import main

sys.exit(main())
