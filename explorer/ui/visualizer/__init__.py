"""The launch visualizer: blocks landing on SMs, warps and lanes, drawn from ``explorer.launch``."""
