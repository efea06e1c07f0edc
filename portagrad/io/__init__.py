"""Checkpoints: safetensors-compatible files, written atomically, loaded strictly.

No pickle is used anywhere: a file is a JSON header and raw little-endian buffers, so
loading a hostile file can fail (with :class:`portagrad.CheckpointError`) but never runs
its code.
"""

from ._checkpoint import atomic_write as atomic_write
from ._checkpoint import load as load
from ._checkpoint import read_state as read_state
from ._checkpoint import remove_stale_temps as remove_stale_temps
from ._checkpoint import save as save
from ._format import MAX_HEADER as MAX_HEADER
