"""The best score among ranked plans strictly simpler than a given plan (search.py).

The planner chooses, among the plans within TIE_TOLERANCE of the best, the
simplest (search.ranking_key starts with simplicity_key). So a plan that is
not needed as the best of its shape can be skipped when a strictly simpler
ranked plan scores at least its optimistic bound (see Staircase).
"""
from bisect import bisect_left


class Staircase:
    """The best score of the ranked plans strictly simpler than a simplicity key.

    Why a plan P whose optimistic score is at most that of a strictly simpler
    ranked plan Q can be skipped (when it cannot be the best of its shape):
    if P were in the final tie band, best x (1 - TIE_TOLERANCE) <= score(P)
    <= bound(P) <= score(Q), so Q is in the band too and, simpler, is chosen
    before P (ranking_key starts with simplicity_key).
    Kept as keys in increasing order whose scores increase strictly, so the
    entry just below a key holds the best score of all keys below it."""

    __slots__ = ("keys", "scores")

    def __init__(self):
        self.keys, self.scores = [], []

    def best_below(self, key):
        i = bisect_left(self.keys, key)
        return self.scores[i - 1] if i else -1.0

    def add(self, key, score):
        i = bisect_left(self.keys, key)
        if (i and self.scores[i - 1] >= score) or (i < len(self.keys) and self.keys[i] == key
                                                     and self.scores[i] >= score):
            return  # a plan as simple already scores as much
        j = i
        while j < len(self.keys) and self.scores[j] <= score:
            j += 1
        self.keys[i:j] = [key]
        self.scores[i:j] = [score]
