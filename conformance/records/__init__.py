"""One module of op records per family."""
