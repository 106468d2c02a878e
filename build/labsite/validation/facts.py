"""The published figures of content/validation/published.yaml (one fact per
id: source, inputs, published values), and the units and links rows use."""
import yaml

from ..paths import CONTENT

PUBLISHED = CONTENT / "validation" / "published.yaml"
GB = 1e9
MIB = 1048576.0
GIB = 1073741824.0


def load_facts(path=PUBLISHED):
    """``{fact id: fact}``."""
    with open(path, encoding="utf-8") as handle:
        return {fact["id"]: fact for fact in yaml.safe_load(handle)["facts"]}


def arxiv(paper_id):
    return f"https://arxiv.org/abs/{paper_id}"
