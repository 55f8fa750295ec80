"""nets.models: registry, shapes, colour selection, position biases, masking."""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")

from engine.features import N_PLANES  # noqa: E402
from nets.models import (MODELS, PolicyNet, ResPolicyNet, build_model,  # noqa: E402
                         count_parameters, masked_log_softmax, model_config)


def test_registry_configs() -> None:
    assert {"maddison12", "small6"} <= set(MODELS)
    m = model_config("maddison12")
    assert (m["layers"], m["width"], m["first_kernel"], m["kernel"]) == (12, 128, 5, 3)
    s = model_config("small6")
    assert (s["layers"], s["width"]) == (6, 64)
    assert s["name"] == "small6" and s["in_planes"] == N_PLANES
    assert model_config("small6", width=32)["width"] == 32
    # the registry entry itself is not modified by overrides
    assert MODELS["small6"]["width"] == 64


def test_unknown_model_and_key() -> None:
    with pytest.raises(ValueError, match="nosuch"):
        build_model("nosuch")
    with pytest.raises(ValueError, match="depth"):
        build_model("small6", depth=3)


def test_layer_structure() -> None:
    net = build_model("small6")
    assert isinstance(net, PolicyNet)
    convs = [m for m in net.modules() if isinstance(m, torch.nn.Conv2d)]
    assert len(convs) == 6 + 1
    assert convs[0].kernel_size == (5, 5) and convs[0].in_channels == N_PLANES
    assert all(c.kernel_size == (3, 3) and c.out_channels == 64 for c in convs[1:-1])
    assert convs[-1].out_channels == 2
    # position biases: one per (filter, point) of 19x19, no per-filter conv bias
    assert all(c.bias is None for c in convs)
    assert net.trunk[0].pbias.bias.shape == (64, 19, 19)
    assert net.head.pbias.bias.shape == (2, 19, 19)
    n12 = build_model("maddison12")
    assert len([m for m in n12.modules() if isinstance(m, torch.nn.Conv2d)]) == 13
    assert count_parameters(n12) > count_parameters(net)


def test_forward_shapes_and_colour_selection() -> None:
    torch.manual_seed(0)
    net = build_model("small6", width=8, layers=2)
    x = torch.rand(3, N_PLANES, 19, 19)
    both = net.both(x)
    assert both.shape == (3, 2, 19, 19)
    col = torch.tensor([0, 1, 0])
    out = net(x, col)
    assert out.shape == (3, 361)
    for k in range(3):
        assert torch.allclose(out[k], both[k, col[k]].reshape(-1))
    assert torch.allclose(net(x, 1), both[:, 1].reshape(3, -1))


@pytest.mark.parametrize("n", [9, 13, 19])
def test_any_size_uses_top_left_bias_window(n: int) -> None:
    """With zero weights the output is the head's position bias: a board of
    size n sees the top-left n x n window of the 19x19 bias map."""
    net = build_model("small6", width=4, layers=2)
    with torch.no_grad():
        for p in net.parameters():
            p.zero_()
        pattern = torch.arange(2 * 19 * 19, dtype=torch.float32).reshape(2, 19, 19)
        net.head.pbias.bias.copy_(pattern)
    x = torch.rand(2, N_PLANES, n, n)
    out = net(x, torch.tensor([0, 1]))
    assert out.shape == (2, n * n)
    assert torch.equal(out[0], pattern[0, :n, :n].reshape(-1))
    assert torch.equal(out[1], pattern[1, :n, :n].reshape(-1))


def test_size_out_of_range() -> None:
    net = build_model("small6", width=4, layers=1)
    with pytest.raises(ValueError, match="size 7"):
        net(torch.zeros(1, N_PLANES, 7, 7), 0)
    with pytest.raises(ValueError, match="size 21"):
        net(torch.zeros(1, N_PLANES, 21, 21), 0)


def test_masked_log_softmax() -> None:
    logits = torch.tensor([[1.0, 2.0, 3.0, 4.0], [0.0, 0.0, 0.0, 0.0]])
    legal = torch.tensor([[1, 0, 1, 0], [0, 0, 0, 0]], dtype=torch.bool)
    lp = masked_log_softmax(logits, legal)
    assert torch.isinf(lp[0, 1]) and torch.isinf(lp[0, 3])
    assert torch.allclose(lp[0, [0, 2]].exp().sum(), torch.tensor(1.0))
    assert torch.allclose(lp[0, 2] - lp[0, 0], torch.tensor(2.0))
    assert torch.isinf(lp[1]).all() and not torch.isnan(lp).any()


def test_gradients_flow_to_position_biases() -> None:
    net = build_model("small6", width=4, layers=2)
    x = torch.rand(2, N_PLANES, 9, 9)
    loss = torch.nn.functional.cross_entropy(net(x, 0), torch.tensor([3, 5]))
    loss.backward()
    g = net.trunk[0].pbias.bias.grad
    assert g is not None and g[:, :9, :9].abs().sum() > 0
    assert g[:, 9:, :].abs().sum() == 0 and g[:, :, 9:].abs().sum() == 0


def test_residual_net_structure_and_start() -> None:
    """res6: a 5x5 stem, 6 blocks of two 3x3 convolutions with batch norm,
    the two-filter head with position biases; every block starts as the
    identity (its second batch norm's scale is zero)."""
    net = build_model("res6")
    assert isinstance(net, ResPolicyNet)
    convs = [m for m in net.modules() if isinstance(m, torch.nn.Conv2d)]
    assert len(convs) == 1 + 2 * 6 + 1
    assert convs[0].kernel_size == (5, 5) and convs[0].in_channels == N_PLANES
    assert all(c.kernel_size == (3, 3) and c.out_channels == 64 for c in convs[1:-1])
    assert convs[-1].out_channels == 2 and net.head.pbias.bias.shape == (2, 19, 19)
    assert all(not b.bn2.weight.detach().any() for b in net.blocks)
    x = torch.rand(3, N_PLANES, 13, 13)
    net.eval()
    both = net.both(x)
    assert both.shape == (3, 2, 13, 13)
    assert torch.allclose(net(x, torch.tensor([1, 0, 1]))[1], both[1, 0].reshape(-1))
    with pytest.raises(ValueError, match="size 7"):
        net(torch.zeros(1, N_PLANES, 7, 7), 0)
    with pytest.raises(ValueError, match="unknown config key"):
        build_model("res6", layers=3)


def test_residual_net_checkpoint_round_trip(tmp_path) -> None:
    from nets.checkpoint import load_model, save_checkpoint

    torch.manual_seed(1)
    net = build_model("res6", blocks=2, width=8)
    net.train()
    net(torch.rand(4, N_PLANES, 9, 9), 0)          # moves the batch-norm statistics
    net.eval()
    path = save_checkpoint(tmp_path / "r.pt", net)
    again, meta = load_model(path)
    x = torch.rand(2, N_PLANES, 9, 9)
    assert meta["config"]["arch"] == "res" and meta["config"]["blocks"] == 2
    assert torch.equal(again(x, 0), net(x, 0))


def test_folding_batch_norm_keeps_the_function() -> None:
    """for_inference folds each batch norm into its convolution: the same
    logits (to float rounding) with no BatchNorm2d left; the net it came
    from is untouched.  A plain net is returned as it is, in eval mode."""
    torch.manual_seed(2)
    net = build_model("res6", blocks=2, width=8)
    with torch.no_grad():
        for m in net.modules():
            if isinstance(m, torch.nn.BatchNorm2d):
                m.running_mean.normal_(0, 0.2)
                m.running_var.uniform_(0.5, 2.0)
                m.weight.uniform_(0.5, 1.5)
                m.bias.normal_(0, 0.2)
    net.eval()
    fast = net.for_inference()
    x = torch.rand(3, N_PLANES, 13, 13)
    assert torch.allclose(fast(x, torch.tensor([0, 1, 0])), net(x, torch.tensor([0, 1, 0])),
                          atol=1e-4)
    assert not any(isinstance(m, torch.nn.BatchNorm2d) for m in fast.modules())
    assert any(isinstance(m, torch.nn.BatchNorm2d) for m in net.modules())
    plain = build_model("small6", width=4, layers=2).train()
    assert plain.for_inference() is plain and not plain.training


@pytest.mark.parametrize("size", [9, 19])
def test_tied_net_is_equivariant_under_the_eight_symmetries(size) -> None:
    """Clark & Storkey's tied filters: the net's output on a rotated or
    mirrored board is the rotated or mirrored output, up to float error;
    the untied net of their ablation is not."""
    from nets.models import dihedral
    torch.manual_seed(0)
    x = torch.randint(0, 2, (2, 38, size, size)).float()
    tied = build_model("clark8").eval()
    untied = build_model("clark8_untied").eval()
    with torch.no_grad():
        for net, equivariant in ((tied, True), (untied, False)):
            out = net.both(x)
            scale = out.abs().max()
            for t, (xt, out_t) in enumerate(zip(dihedral(x), dihedral(out))):
                err = (net.both(xt) - out_t).abs().max() / scale
                if equivariant:
                    assert err < 1e-4, (t, err)
                elif t == 1:
                    assert err > 1e-3


def test_tied_net_shapes_and_registry() -> None:
    net = build_model("clark8")
    assert len(net.trunk) + 1 == 8
    assert [c.out_channels for c in net.trunk] == [64, 64, 64, 48, 48, 32, 32]
    assert [c.kernel_size[0] for c in net.trunk] == [7, 5, 5, 5, 5, 5, 5]
    x = torch.rand(3, 38, 19, 19).round()
    assert net(x, torch.tensor([0, 1, 0])).shape == (3, 361)


@pytest.mark.parametrize("size", [9, 19])
def test_dann_shapes_and_reach(size) -> None:
    """dann6: six convolutions each followed by a recurrent layer of three
    steps; a stone in one corner moves the logits at the far corner of a
    9x9 board (the recurrent steps carry context further than the plain
    stack of the same depth, whose reach is 2 + 5 = 7 points)."""
    net = build_model("dann6")
    assert len(net.convs) == len(net.recurrent) == 6
    x = torch.zeros(1, 38, size, size)
    x[0, 36] = 1
    base = net(x, 0)
    assert base.shape == (1, size * size)
    x2 = x.clone()
    x2[0, 0, 0, 0] = 1                     # an own stone in the top-left corner
    changed = (net(x2, 0) - base).abs().reshape(size, size)
    if size == 9:
        assert changed[8, 8] > 0
        plain = build_model("small6")
        assert (plain(x2, 0) - plain(x, 0)).abs().reshape(9, 9)[8, 8] == 0


def test_res9_has_a_pass_output() -> None:
    """res9 (the TUM 9x9 net): a convolution, 5 residual blocks, and a pass
    logit per colour after the n * n points; the inference form (batch norm
    folded) is the same function, pass included."""
    from nets.models import legal_mask
    torch.manual_seed(0)
    net = build_model("res9")
    assert isinstance(net, ResPolicyNet) and net.has_pass and len(net.blocks) == 5
    x = (torch.rand(3, N_PLANES, 9, 9) < 0.3).float()
    flat = net.flat(x)
    assert flat.shape == (3, 2, 82)
    assert torch.allclose(flat[:, :, :81], net.both(x).reshape(3, 2, 81))
    out = net(x, torch.tensor([1, 0, 1]))
    assert out.shape == (3, 82)
    assert torch.allclose(out[1], flat[1, 0]) and torch.allclose(out[0], flat[0, 1])
    net.eval()
    assert torch.allclose(net.for_inference()(x, 0), net(x, 0), atol=1e-5)
    with pytest.raises(ValueError, match="outside 9..9"):
        net(torch.zeros(1, N_PLANES, 19, 19), 0)
    # the pass is always legal; the points as the LEGAL plane says
    x = torch.zeros(1, N_PLANES, 9, 9)
    x[0, 13, 4, 4] = 1
    mask = legal_mask(x, 82)
    assert mask.shape == (1, 82) and mask[0, 81] and mask[0, 40] and int(mask.sum()) == 2
    assert int(legal_mask(x, 81).sum()) == 1
    with pytest.raises(ValueError, match="80 logits"):
        legal_mask(x, 80)
    # nets without a pass output say so
    assert not build_model("res6").has_pass and not build_model("small6").has_pass


def test_next_moves_head_is_for_training_only() -> None:
    """A residual net with next_moves k: forward(x, c) is the policy as
    before; forward(x, c, next_moves=True) adds (b, k, n*n) logits of the
    later moves from the same pass of the trunk, for the player to move;
    for_inference drops that head and keeps the policy; a value net gives
    them as a fourth output."""
    torch.manual_seed(3)
    net = build_model("res6", blocks=1, width=8, next_moves=2).eval()
    x, c = torch.rand(3, N_PLANES, 9, 9), torch.tensor([0, 1, 0])
    policy, later = net(x, c, next_moves=True)
    assert later.shape == (3, 2, 81)
    assert torch.equal(policy, net(x, c))
    both = net.next_head(net.trunk(x)).reshape(3, 2, 2, 81)
    assert torch.equal(later[1], both[1, 1]) and torch.equal(later[0], both[0, 0])
    fast = net.for_inference()
    assert not hasattr(fast, "next_head") and fast.next_moves == 0
    assert torch.allclose(fast(x, c), policy, atol=1e-4)
    assert hasattr(net, "next_head")
    value = build_model("res6v", blocks=1, width=8, next_moves=1).eval()
    out = value(x, c, 7.5, next_moves=True)
    assert len(out) == 4 and out[3].shape == (3, 1, 81)
    assert all(torch.equal(a, b) for a, b in zip(out[:3], value(x, c, 7.5)))
    with pytest.raises(ValueError, match="unknown config key"):
        build_model("maddison12", next_moves=2)
