"""Data files of Device Explorer (catalog GPUs, per-CC limits, icons, themes).

Installed as the package ``explorer_resources``; find files through ``explorer.resources``.
"""
