"""Qt-free: benchmark workloads, honest timing, and a worker process that streams results."""
