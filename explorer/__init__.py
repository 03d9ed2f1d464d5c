"""Device Explorer: see and measure how compute devices work.

The package splits into a Qt-free core that a headless GPU machine can import (``roofs``,
``devices``, ``agent``, ``remote``, ``launch``, ``memory``, ``bench``, ``lessons``,
``acceptance`` and the small base modules), thin Qt views in ``ui`` and the command line in
``commands``. docs/design.md has the layers, the page-model recipe and a map of the concepts.
"""

__version__ = "0.1.0"
