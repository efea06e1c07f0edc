"""Interleaved timing (kept here for the scripts of this folder; the code lives in
``portagrad._bench._timing`` so that ``portagrad bench`` works from an installed package)."""

from portagrad._bench._timing import interleave as interleave
from portagrad._bench._timing import paired_ratios as paired_ratios
from portagrad._bench._timing import summary as summary

__all__ = ["interleave", "paired_ratios", "summary"]
