"""rnr-sim: balance simulator and analytics for the card game Revolt N Reign."""

__version__ = "0.1.0"
