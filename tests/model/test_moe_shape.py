"""The shape rule for a mixture of experts given by its parameter count (shape.derive_shape):
params is the total, every routed expert counted, as published MoE sizes are (Mixtral 8x22B
"141B", arXiv:2401.04088; DeepSeek-V3 671B, arXiv:2412.19437). Until 2026-12 the layers and
hidden size were derived as if the model were dense and the experts then added, so a reader's
47B with 8 experts became a 256B model, and a small model with leading dense layers could
count fewer layers than those and reach a negative total."""
import dataclasses
import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from lab_core import LabInputError, Workload


def test_mixtral_8x22b_from_its_total_gets_mixtrals_own_depth_and_width():
    # Mixtral 8x22B: 56 layers of hidden size 6,144 (arXiv:2401.04088 Table 1 for the 8x7B's
    # scheme; the released 8x22B config: num_hidden_layers 56, hidden_size 6144).
    shape = Workload(params=141e9, experts=8, experts_per_token=2).shape
    assert (shape.layers, shape.hidden) == (56, 6144)
    assert shape.params == pytest.approx(141e9, rel=0.03)
    assert shape.active_params < shape.params / 3


def test_a_dense_model_keeps_its_rule():
    shape = Workload(params=175e9).shape
    assert (shape.layers, shape.hidden) == (96, 12288)  # GPT-3 175B's shape (arXiv:2005.14165 Table 2.1)


@settings(max_examples=150, deadline=None)
@given(log_params=st.floats(min_value=math.log(1e10), max_value=math.log(1.99e12)),
       experts=st.sampled_from([8, 16, 64, 128, 256]), per_token=st.sampled_from([1, 2, 4, 8]),
       shared=st.integers(0, 2), dense_layers=st.integers(0, 3), expert_ffn=st.sampled_from([0, 512, 2048, 8192]),
       seq_len=st.sampled_from([2048, 8192, 32768]), give_layers=st.booleans())
def test_the_derived_total_is_near_the_given_parameters(log_params, experts, per_token, shared, dense_layers,
                                                        expert_ffn, seq_len, give_layers):
    params = math.exp(log_params)
    moe = dict(experts=experts, experts_per_token=min(per_token, experts), shared_experts=shared,
               dense_layers=dense_layers, expert_ffn_hidden=expert_ffn)
    layers = {"layers": Workload(params=params, seq_len=seq_len, **moe).shape.layers} if give_layers else {}
    shape = Workload(params=params, seq_len=seq_len, **moe, **layers).shape
    # Hidden sizes come in steps of 1,024 and layer counts in steps of 4 or 8 (the module's rule).
    assert 0.75 < shape.params / params < 1.3
    assert shape.experts.moe_layers >= 1


def test_leading_dense_layers_that_leave_no_expert_layer_are_an_input_error():
    with pytest.raises(LabInputError) as err:
        Workload(params=1.3e8, seq_len=131072, experts=256, experts_per_token=8, expert_ffn_hidden=2048,
                 dense_layers=3)
    assert err.value.field == "dense_layers"
    assert err.value.numbers["most"] == err.value.numbers["layers"] - 1
    with pytest.raises(LabInputError) as given_layers:
        Workload(params=2e9, layers=4, experts=8, experts_per_token=2, dense_layers=4)
    assert given_layers.value.field == "dense_layers" and given_layers.value.numbers == {"layers": 4, "most": 3}


def test_every_sequence_length_of_a_small_moe_is_a_shape_or_a_field_error():
    # The lab's memory-against-sequence curve re-derives the shape at each length; this
    # workload once gave a negative total there (math domain error in the failure model).
    w = Workload(params=1.37e8, gpus=1, global_batch_tokens=14860142,
                 seq_len=5593, experts=64, experts_per_token=8, expert_ffn_hidden=3072, shared_experts=1,
                 dense_layers=2)
    s = 512
    while s <= 131072:
        try:
            shape = dataclasses.replace(w, seq_len=s).shape
        except LabInputError as err:
            assert err.field == "dense_layers"
        else:
            assert shape.params > 0 and shape.experts.moe_layers >= 1
        s *= 2
