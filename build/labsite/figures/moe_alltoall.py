"""Figure kind ``moe_alltoall``: who sends tokens to whom in one expert-parallel all-to-all.

An ``ep``-way expert-parallel group holds ``experts / ep`` experts per GPU; with
balanced routing each GPU sends ``1/ep`` of its tokens' ``top_k`` copies to every
GPU of the group (GShard arXiv:2006.16668 §3.2). The matrix shows sender by
receiver: the diagonal stays on the GPU, cells within a node of
``gpus_per_node`` travel over NVLink, the rest over the fabric — the split
lab_core.step_time.expert_alltoall_times charges (Megatron-Core's consecutive
expert-parallel ranks, arXiv:2504.14960 §3.2).
"""
from . import Drawing, figure_kind
from .svg import legend, rect, text

WIDTH = 680.0


def link_shares(ep, gpus_per_node):
    """(kept, NVLink, fabric) shares of a GPU's routed token copies under balanced routing."""
    local = min(ep, gpus_per_node)
    return 1.0 / ep, (local - 1.0) / ep, (ep - local) / ep


@figure_kind("moe_alltoall", params={"ep": 16, "gpus_per_node": 8, "experts": 256, "top_k": 8})
def draw_moe_alltoall(params, t):
    ep, gpn, experts, k = params["ep"], params["gpus_per_node"], params["experts"], params["top_k"]
    if not 2 <= ep <= 64 or experts % ep or k > experts:
        raise ValueError(f"moe_alltoall figure: ep from 2 to 64 dividing the experts, top_k <= experts (got {params})")
    kept, nvlink, fabric = link_shares(ep, gpn)
    size = 260.0
    left, top = 60.0, 40.0
    cell = size / ep
    parts = [text(left, top - 22.0, t("matrix", ep=t.q(ep, "count"), per_gpu=t.q(experts // ep, "count")),
                  "fig-text fig-head")]
    for i in range(ep):
        for j in range(ep):
            same = i // gpn == j // gpn
            cls = "fig-empty" if i == j else ("tc-s0" if same else "tc-s1")
            parts.append(rect(left + j * cell + 0.5, top + i * cell + 0.5, cell - 1.0, cell - 1.0, cls, 0.0))
    parts.append(text(left + size / 2, top + size + 16.0, t("receiver"), "fig-text fig-small", "middle"))
    parts.append(f'<text class="fig-text fig-small" transform="translate({left - 12.0:.1f} {top + size / 2:.1f}) '
                 f'rotate(-90)" text-anchor="middle">{t("sender")}</text>')
    # The path of one token, and the shares of its copies by link.
    x = left + size + 50.0
    y = top
    for index, key in enumerate(("step_route", "step_dispatch", "step_experts", "step_combine")):
        parts.append(rect(x, y + index * 44.0, WIDTH - x - 8.0, 34.0, "fig-box", 4.0))
        parts.append(text(x + 10.0, y + index * 44.0 + 21.0,
                          t(key, k=t.q(k, "count"), experts=t.q(experts, "count")), "fig-text fig-small"))
    y += 4 * 44.0 + 8.0
    parts.append(text(x, y + 10.0, t("shares"), "fig-text fig-small fig-head"))
    for index, (key, share) in enumerate((("share_kept", kept), ("share_nvlink", nvlink), ("share_fabric", fabric))):
        parts.append(text(x, y + 28.0 + 16.0 * index, t(key, share=t.q(share, "percent")), "fig-text fig-small"))
    keys, bottom = legend(left, top + size + 30.0, [("fig-empty", t("key_kept")),
                                                    ("tc-s0", t("key_nvlink", n=t.q(gpn, "count"))),
                                                    ("tc-s1", t("key_fabric"))])
    return Drawing(WIDTH, bottom + 4.0, parts + keys)
