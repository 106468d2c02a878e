"""The planner: recommend(workload) -> Plan (ARCHITECTURE.md "Plan", "Stage", "Meters", "Decisions").

plan_json(inputs) is the JSON entry point; THRESHOLDS the meter thresholds
(teaching assumptions) as data; STAGES the stage ids in order; vocabulary()
every id the planner emits (for the page's catalogs).
"""
from .json_plan import plan_json
from .meters import THRESHOLDS
from .plan import Plan
from .recommend import recommend
from .stage import STAGES
from .vocabulary import vocabulary

__all__ = ["recommend", "Plan", "plan_json", "THRESHOLDS", "STAGES", "vocabulary"]
