"""A student's answers file as the app writes it (``explorer.quiz.answers.COLUMNS``), from rows of
cells: what the gather tests plant in a class's folder."""

from __future__ import annotations

import csv
import io

from explorer.quiz.answers import COLUMNS


def answers_file(rows: list[list[str]]) -> str:
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(COLUMNS)
    w.writerows(rows)
    return buf.getvalue()
