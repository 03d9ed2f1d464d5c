"""Predict, then reveal: questions with exact answers on every model the app draws. Qt-free.

* ``model``: the ``Question`` record (prompt, parameters, exact answer with unit and tolerance or
  a choice, the rule that gives it, and the CLI command and JSON key that print it) and ``grade``.
* ``page_predict``: Predict mode on a page: the picture shown asked about, hidden until committed.
* ``topics``: one generator per topic (occupancy, waves, coalescing, banks, divergence, dispatch,
  latency, tiling), each drawing from a seed; ``variant_of`` is the isomorphic follow-up.

Above the models it asks about (``launch``, ``memory``) and below ``lessons``, which may carry a
question in a step; never imports ``bench``, ``ui`` or Qt.
"""
