"""Device Explorer: see and measure how compute devices work.

The package splits into a Qt-free core (``devices``, ``launch``, ``bench``) that a
headless GPU machine can import, and thin Qt views in ``ui``.
"""

__version__ = "0.1.0"
