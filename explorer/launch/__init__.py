"""Qt-free: the CUDA execution model (limits, validation, occupancy, dispatch in waves)."""
