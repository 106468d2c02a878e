"""The planner bench's own arithmetic (bench/planner_timing.py): what it prints must mean what it says."""
from planner_timing import slowest_cases


def test_the_bench_names_the_slowest_cases_by_their_median():
    """planner_timing.slowest_cases reads time_recommend's order (each repeat runs every case)."""
    cases = [{}, {}, {}, {}]
    times = [1.0, 9.0, 3.0, 5.0,  # repeat 1
             1.2, 8.0, 30.0, 4.0,  # repeat 2: case 2's one slow call
             1.1, 7.0, 3.1, 6.0]  # repeat 3
    assert slowest_cases(times, cases) == [(1, 8.0), (3, 5.0), (2, 3.1)]
