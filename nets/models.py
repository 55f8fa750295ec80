"""Config-driven model registry.

A model is described by a plain, JSON-able config dict; ``MODELS`` names the
known configs and :func:`build_model` turns a name (plus overrides) into a
module.  The ``arch`` key of a config picks the class from ``ARCHITECTURES``,
so further networks (Clark & Storkey's tied-symmetry 8-layer net, an
ownership net, a residual net) are added as one class plus one ``MODELS``
entry each, without touching the training or checkpoint code.

The policy net (``arch = "policy"``, Maddison et al. 2015)::

    input   (batch, in_planes, n, n)       Table 1 planes, n in min_size..max_size
    conv    first_kernel x first_kernel, width filters, + position bias, ReLU
    conv    kernel x kernel, width filters, + position bias, ReLU   (layers - 1 times)
    conv    head_kernel x head_kernel, 2 filters, + position bias   (output)
    output  (batch, 2, n, n): channel 0 = moves of black to move, 1 = white

All convolutions have stride 1 and "same" zero padding, so every layer works
on the n x n board.  ``forward(x, color)`` picks the output channel of the
player to move (``color``: 0 black, 1 white, or engine colours 1/2 - see
:func:`color_index`) and returns logits of shape (batch, n * n), point
``i * n + j`` = row ``i`` from the top, column ``j`` (the planes' layout).

Position-dependent biases: every conv layer has, instead of a per-filter
bias, a learned bias per (filter, point), stored for the largest board
(``max_size`` x ``max_size``, 19 by default).  For a board of size n <
max_size the **top-left n x n window** of each bias map is used (rows 0..n-1
from the top, columns 0..n-1 from the left).  The choice is deliberate and
simple: the window is fixed, needs no resampling, and a net trained on 19x19
still runs on any size min_size..max_size (9..19); the convolution weights,
which carry almost all of the knowledge, are size-independent, and the board
edge is seen by the convolutions through the zero padding and the ON_BOARD
plane.  What does not carry over is the bias pattern of the bottom and right
edges of a 19x19 board: on a 9x9 board those edges get the biases of 19x19
points (8, *) and (*, 8), i.e. of points near the centre.  A net meant for
small boards should be trained (or fine-tuned) on them.
"""

from __future__ import annotations

import copy
import math

import torch
from torch import nn
import torch.nn.functional as F

from engine.features import LEGAL, N_PLANES

# --------------------------------------------------------------------------
# registry

#: Defaults shared by every policy config.
POLICY_DEFAULTS = {
    "arch": "policy",
    "in_planes": N_PLANES,
    "layers": 12,          # trunk convolutions (first_kernel, then kernel)
    "width": 128,          # filters of every trunk convolution
    "first_kernel": 5,
    "kernel": 3,
    "head_kernel": 1,      # output convolution, 2 filters (black / white to move)
    "position_bias": True, # bias per (filter, point) instead of per filter
    "max_size": 19,        # size the position biases are stored for
    "min_size": 9,
}

#: Defaults of the residual policy net (``arch = "res"``).
RES_DEFAULTS = {
    "arch": "res",
    "in_planes": N_PLANES,
    "blocks": 6,           # residual blocks of two kernel x kernel convolutions
    "width": 64,
    "first_kernel": 5,
    "kernel": 3,
    "max_size": 19,
    "min_size": 9,
    "pass_output": False,  # a pass logit per colour from the mean of the trunk's features
    "next_moves": 0,       # k: a training-only head predicting the k moves after the
                           # next (darkforest's extra targets); inference drops it
}

#: Defaults of the ownership net (``arch = "ownership"``, GoCNN).
OWNERSHIP_DEFAULTS = {
    "arch": "ownership",
    "task": "ownership",   # trained on final owners, not moves (nets/ownership.py)
    "in_planes": N_PLANES,
    "inputs": "gocnn",     # "gocnn": the seed's planes, made from Table 1's; "table1": all
    "layers": 5,
    "width": 64,
    "kernel": 5,
    "max_size": 19,
    "min_size": 5,
}

#: Defaults of the ownership net on a residual trunk (``arch = "res_ownership"``).
RES_OWNERSHIP_DEFAULTS = dict(RES_DEFAULTS, arch="res_ownership", task="ownership", min_size=5)

#: Defaults of the three-headed net (``arch = "res_value"``): res6's trunk
#: and policy head, plus a value head and an ownership head.
RES_VALUE_DEFAULTS = dict(RES_DEFAULTS, arch="res_value", value_width=32, value_hidden=64,
                          value_head="mlp", min_size=5)

#: Defaults of Clark & Storkey's network (``arch = "tied"``, seed 001).
TIED_DEFAULTS = {
    "arch": "tied",
    "in_planes": N_PLANES,
    "inputs": "clark",     # their 7 planes (from Table 1's) plus the on-board plane
    "filters": [64, 64, 64, 48, 48, 32, 32],
    "kernels": [7, 5, 5, 5, 5, 5, 5],
    "head_kernel": 5,
    "tied": True,          # every filter invariant under the board's 8 symmetries
    "masked": True,        # trained with illegal points left out of the softmax
    "max_size": 19,
    "min_size": 5,
}

#: Defaults of the deep alternative neural network (``arch = "dann"``, seed 004).
DANN_DEFAULTS = {
    "arch": "dann",
    "in_planes": N_PLANES,
    "layers": 6,           # alternative layers: a convolution, then a recurrent layer
    "width": 64,
    "first_kernel": 5,
    "kernel": 3,
    "steps": 3,            # iterations of each recurrent layer
    "max_size": 19,
    "min_size": 5,
}

MODELS: dict[str, dict] = {
    # the 12-layer, 128-filter network of Maddison et al. (2015)
    "maddison12": dict(POLICY_DEFAULTS, layers=12, width=128),
    # a small net for CPU experiments and tests
    "small6": dict(POLICY_DEFAULTS, layers=6, width=64),
    # residual trunk with batch norm: 13 convolutions of 64 filters
    "res6": dict(RES_DEFAULTS, blocks=6, width=64),
    # the TUM 9x9 net (seed 003): one convolution, 5 residual blocks, a
    # policy head with a pass output; learns from games made here
    # (bench.generate), so it is meant for 9x9 only
    "res9": dict(RES_DEFAULTS, blocks=5, width=64, max_size=9, min_size=9, pass_output=True),
    # GoCNN's ownership net: 5 convolutions of 64 5x5 filters, the seed's inputs
    "gocnn": dict(OWNERSHIP_DEFAULTS),
    # the same trunk on all of Table 1's planes (liberties after the move, ladders, ...)
    "gocnn38": dict(OWNERSHIP_DEFAULTS, inputs="table1"),
    # final ownership on res6's trunk, which can start from the policy net's
    # (nets.train --init-trunk nets/weights/res6.pt)
    "res6own": dict(RES_OWNERSHIP_DEFAULTS, blocks=6, width=64),
    # one trunk, three heads: res6's policy, the probability that the player
    # to move wins (komi an input), the final owner of each point
    "res6v": dict(RES_VALUE_DEFAULTS, blocks=6, width=64),
    # res6v grown by four residual blocks: a new run takes res6v's tensors
    # (nets.train --init-from nets/weights/res6v.pt) and the new blocks start
    # as the identity, so it starts as res6v's function; 0.64-0.76x its
    # inference speed on a CPU (docs/networks.md)
    "res10v": dict(RES_VALUE_DEFAULTS, blocks=10, width=64),
    # res6v whose value head reads komi exactly: it estimates the lead and its
    # spread on the board, the komi is added to the lead (ResValueNet)
    "res6vs": dict(RES_VALUE_DEFAULTS, blocks=6, width=64, value_head="score"),
    # Clark & Storkey (2015): 7 convolutions and an output layer, tied filters
    "clark8": dict(TIED_DEFAULTS),
    # the same without tying, for their ablation
    "clark8_untied": dict(TIED_DEFAULTS, tied=False),
    # the deep alternative neural network: 6 convolutions, each followed by
    # a recurrent layer (compare with small6, the plain stack of that depth)
    "dann6": dict(DANN_DEFAULTS),
}


def model_config(name: str, **overrides) -> dict:
    """The config of model ``name`` with ``overrides`` applied.  ValueError
    names an unknown model or an unknown config key."""
    if name not in MODELS:
        raise ValueError(f"unknown model name {name!r} (known: {', '.join(sorted(MODELS))})")
    cfg = copy.deepcopy(MODELS[name])
    unknown = sorted(set(overrides) - set(cfg))
    if unknown:
        raise ValueError(f"unknown config key(s) {unknown} for model {name!r}")
    cfg.update(overrides)
    cfg["name"] = name
    return cfg


def build_model(name: str, **overrides) -> nn.Module:
    """A freshly initialised model of registry entry ``name``."""
    return model_from_config(model_config(name, **overrides))


def model_from_config(config: dict) -> nn.Module:
    """The model described by a full config (as stored in a checkpoint)."""
    arch = config.get("arch")
    cls = ARCHITECTURES.get(arch)
    if cls is None:
        raise ValueError(f"unknown architecture {arch!r} (known: {', '.join(sorted(ARCHITECTURES))})")
    return cls(config)


# --------------------------------------------------------------------------
# layers


class PositionBias(nn.Module):
    """A learned bias per (channel, point), stored for max_size x max_size;
    a board of size n uses the top-left n x n window."""

    def __init__(self, channels: int, max_size: int):
        super().__init__()
        self.max_size = max_size
        self.bias = nn.Parameter(torch.zeros(channels, max_size, max_size))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h, w = x.shape[-2:]
        return x + self.bias[:, :h, :w].to(x.dtype)


class ConvLayer(nn.Module):
    """Convolution ("same" padding, stride 1) plus a per-point or per-filter
    bias."""

    def __init__(self, cin: int, cout: int, kernel: int, position_bias: bool, max_size: int):
        super().__init__()
        if kernel % 2 != 1:
            raise ValueError(f"kernel size must be odd, got {kernel}")
        self.conv = nn.Conv2d(cin, cout, kernel, padding=kernel // 2, bias=not position_bias)
        self.pbias = PositionBias(cout, max_size) if position_bias else None

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = self.conv(x)
        if self.pbias is not None:
            x = self.pbias(x)
        return x


def color_index(color: torch.Tensor | int, batch: int, device) -> torch.Tensor:
    """The player to move as an output-channel index tensor of shape
    (batch,): 0 black, 1 white.  (The engine's BLACK = 1 / WHITE = 2 are
    not accepted here: pass ``engine_colour - 1``.)"""
    if not torch.is_tensor(color):
        color = torch.full((batch,), int(color), dtype=torch.long, device=device)
    color = color.to(device=device, dtype=torch.long).reshape(-1)
    if color.numel() == 1 and batch != 1:
        color = color.expand(batch)
    return color


# --------------------------------------------------------------------------
# the policy net


class TwoSoftmaxNet(nn.Module):
    """What every policy net shares: ``config`` (with ``min_size`` and
    ``max_size``), ``both(x)`` -> logits (batch, 2, n, n) for black and white
    to move, written by the subclass, and ``forward(x, color)`` picking the
    player to move."""

    def __init__(self, defaults: dict, config: dict):
        super().__init__()
        self.config = dict(defaults)
        self.config.update(config)

    def check_size(self, n: int) -> None:
        lo, hi = int(self.config["min_size"]), int(self.config["max_size"])
        if not lo <= n <= hi:
            raise ValueError(f"board size {n} outside {lo}..{hi} for this model")

    def check_input(self, x: torch.Tensor) -> None:
        if x.dim() != 4 or x.shape[-1] != x.shape[-2]:
            raise ValueError(f"expected input (batch, planes, n, n), got {tuple(x.shape)}")
        self.check_size(x.shape[-1])

    def both(self, x: torch.Tensor) -> torch.Tensor:
        raise NotImplementedError

    @staticmethod
    def fp32_head(head: nn.Module, x: torch.Tensor) -> torch.Tensor:
        """The output layer run in float32 even under bf16 autocast: its
        logits go into a softmax whose top move must not hinge on bf16's
        8-bit mantissa (two logits near 10 differ by steps of 0.06 there),
        and a 2-filter layer costs next to nothing in either."""
        with torch.autocast(device_type=x.device.type, enabled=False):
            return head(x.float())

    def for_inference(self) -> "TwoSoftmaxNet":
        """The same function, in eval mode, in the form that evaluates
        fastest (see ResPolicyNet); never trained further."""
        return self.eval()

    #: whether ``flat`` and ``forward`` end with a pass logit (index n * n)
    has_pass = False

    def flat(self, x: torch.Tensor) -> torch.Tensor:
        """Logits for both colours, flattened: (batch, 2, n * n), or
        (batch, 2, n * n + 1) with the pass last for a net with a pass
        output."""
        out = self.both(x)
        return out.reshape(out.shape[0], 2, -1)

    @staticmethod
    def to_move(out: torch.Tensor, color) -> torch.Tensor:
        """The player to move's rows of per-colour outputs ``out`` (batch, 2,
        ...); color as in :meth:`forward`."""
        b = out.shape[0]
        return out[torch.arange(b, device=out.device), color_index(color, b, out.device)]

    def forward(self, x: torch.Tensor, color) -> torch.Tensor:
        """Logits (batch, n * n) of the player to move (n * n + 1 with a
        pass output); color: 0 black, 1 white (an int for the whole batch
        or a (batch,) tensor)."""
        return self.to_move(self.flat(x), color)


class PolicyNet(TwoSoftmaxNet):
    """Maddison et al.'s move-prediction CNN (see the module docstring)."""

    def __init__(self, config: dict):
        super().__init__(POLICY_DEFAULTS, config)
        cfg = self.config
        layers, width = int(cfg["layers"]), int(cfg["width"])
        if layers < 1 or width < 1:
            raise ValueError(f"layers and width must be positive, got {layers}, {width}")
        pb, ms = bool(cfg["position_bias"]), int(cfg["max_size"])
        trunk = [ConvLayer(int(cfg["in_planes"]), width, int(cfg["first_kernel"]), pb, ms)]
        trunk += [ConvLayer(width, width, int(cfg["kernel"]), pb, ms) for _ in range(layers - 1)]
        self.trunk = nn.ModuleList(trunk)
        self.head = ConvLayer(width, 2, int(cfg["head_kernel"]), pb, ms)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        for layer in self.trunk:
            nn.init.kaiming_normal_(layer.conv.weight, nonlinearity="relu")
        # a small output layer: the initial policy is close to uniform
        nn.init.normal_(self.head.conv.weight, std=1.0 / math.sqrt(self.head.conv.weight[0].numel()) / 10)
        for m in self.modules():
            if isinstance(m, nn.Conv2d) and m.bias is not None:
                nn.init.zeros_(m.bias)
            if isinstance(m, PositionBias):
                nn.init.zeros_(m.bias)

    def both(self, x: torch.Tensor) -> torch.Tensor:
        """Logits for both colours: (batch, 2, n, n)."""
        self.check_input(x)
        for layer in self.trunk:
            x = F.relu(layer(x))
        return self.fp32_head(self.head, x)


@torch.no_grad()
def _fold(conv: nn.Conv2d, bn: nn.BatchNorm2d) -> nn.Module:
    """Fold the eval-mode ``bn`` into ``conv`` (in place); the identity that
    takes the batch norm's place."""
    scale = bn.weight / torch.sqrt(bn.running_var + bn.eps)
    conv.weight.mul_(scale[:, None, None, None])
    shift = bn.bias - bn.running_mean * scale
    if conv.bias is not None:
        shift = shift + conv.bias * scale
    conv.bias = nn.Parameter(shift)
    return nn.Identity()


class ResBlock(nn.Module):
    """conv-BN-ReLU-conv-BN plus the input, then ReLU (He et al. 2016)."""

    def __init__(self, width: int, kernel: int):
        super().__init__()
        self.conv1 = nn.Conv2d(width, width, kernel, padding=kernel // 2, bias=False)
        self.bn1 = nn.BatchNorm2d(width)
        self.conv2 = nn.Conv2d(width, width, kernel, padding=kernel // 2, bias=False)
        self.bn2 = nn.BatchNorm2d(width)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = F.relu(self.bn1(self.conv1(x)))
        return F.relu(x + self.bn2(self.conv2(y)))


class ResPolicyNet(TwoSoftmaxNet):
    """The policy net with a residual trunk: a first_kernel convolution with
    batch norm, ``blocks`` residual blocks, and the same two-filter output
    convolution with position biases as :class:`PolicyNet` (the position
    bias lives only in the head: batch norm's shift takes its place in the
    trunk).  With ``pass_output`` (the TUM 9x9 net) a linear layer on the
    trunk's features averaged over the board gives a pass logit per colour:
    the board's mean state (how settled it is) is what a pass depends on,
    and the layer works on every board size."""

    def __init__(self, config: dict):
        super().__init__(RES_DEFAULTS, config)
        cfg = self.config
        blocks, width = int(cfg["blocks"]), int(cfg["width"])
        if blocks < 0 or width < 1:
            raise ValueError(f"blocks must be >= 0 and width positive, got {blocks}, {width}")
        k1, k = int(cfg["first_kernel"]), int(cfg["kernel"])
        if k1 % 2 != 1 or k % 2 != 1:
            raise ValueError(f"kernel sizes must be odd, got {k1}, {k}")
        self.stem = nn.Conv2d(int(cfg["in_planes"]), width, k1, padding=k1 // 2, bias=False)
        self.stem_bn = nn.BatchNorm2d(width)
        self.blocks = nn.ModuleList(ResBlock(width, k) for _ in range(blocks))
        self.head = ConvLayer(width, 2, 1, True, int(cfg["max_size"]))
        for m in self.modules():
            if isinstance(m, nn.Conv2d):
                nn.init.kaiming_normal_(m.weight, nonlinearity="relu")
        for b in self.blocks:               # each block starts as the identity
            nn.init.zeros_(b.bn2.weight)
        nn.init.normal_(self.head.conv.weight, std=1.0 / math.sqrt(width) / 10)
        nn.init.zeros_(self.head.pbias.bias)
        self.has_pass = bool(self.config.get("pass_output", False))
        if self.has_pass:
            self.pass_head = nn.Linear(width, 2)
            nn.init.normal_(self.pass_head.weight, std=1.0 / math.sqrt(width) / 10)
            nn.init.zeros_(self.pass_head.bias)
        self.next_moves = int(self.config.get("next_moves", 0))
        if self.next_moves < 0:
            raise ValueError(f"next_moves must be >= 0, got {self.next_moves}")
        if self.next_moves:
            # k maps per colour to move: the moves 1..k after the next one
            self.next_head = ConvLayer(width, 2 * self.next_moves, 1, True, int(cfg["max_size"]))
            nn.init.normal_(self.next_head.conv.weight, std=1.0 / math.sqrt(width) / 10)
            nn.init.zeros_(self.next_head.pbias.bias)

    def for_inference(self) -> "ResPolicyNet":
        """A copy with every batch norm folded into the convolution before
        it (weights scaled, a bias added): one layer less to run per
        convolution, 20-40% more positions a second on a CPU.  The
        training-only head of the later moves is left out."""
        net = copy.deepcopy(self).eval()
        net.stem_bn = _fold(net.stem, net.stem_bn)
        for block in net.blocks:
            block.bn1 = _fold(block.conv1, block.bn1)
            block.bn2 = _fold(block.conv2, block.bn2)
        if net.next_moves:
            del net.next_head
            net.next_moves = 0
        return net

    def next_logits(self, f: torch.Tensor, color) -> torch.Tensor:
        """Logits (b, k, n * n) of the k moves after the next one, from trunk
        features f, for the player to move (color as in :meth:`forward`)."""
        out = self.fp32_head(self.next_head, f).reshape(f.shape[0], 2, self.next_moves, -1)
        return self.to_move(out, color)

    def trunk(self, x: torch.Tensor) -> torch.Tensor:
        self.check_input(x)
        x = F.relu(self.stem_bn(self.stem(x)))
        for block in self.blocks:
            x = block(x)
        return x

    def both(self, x: torch.Tensor) -> torch.Tensor:
        return self.fp32_head(self.head, self.trunk(x))

    def flat(self, x: torch.Tensor) -> torch.Tensor:
        if not self.has_pass:
            return super().flat(x)
        return self._flat(self.trunk(x))

    def _flat(self, f: torch.Tensor) -> torch.Tensor:
        """:meth:`flat` from the trunk's features f."""
        board = self.fp32_head(self.head, f).reshape(f.shape[0], 2, -1)
        if not self.has_pass:
            return board
        passes = self.fp32_head(self.pass_head, f.mean(dim=(2, 3)))
        return torch.cat([board, passes[:, :, None]], dim=2)

    def forward(self, x: torch.Tensor, color, next_moves: bool = False):
        """As every policy net's; with ``next_moves`` (training a net with
        a ``next_moves`` head) the pair (logits, :meth:`next_logits`) from
        one pass of the trunk."""
        if not next_moves:
            return super().forward(x, color)
        f = self.trunk(x)
        return self.to_move(self._flat(f), color), self.next_logits(f, color)


# the planes of GoCNN (Table 1 numbers of engine.features)
_OWN, _OPP, _EMPTY, _LIBS_1, _LIBS_2, _LIBS_3, _LIBS_4P, _LEGAL = 0, 1, 2, 3, 4, 5, 6, 13


def gocnn_planes(x: torch.Tensor) -> torch.Tensor:
    """GoCNN's 7 board planes from Table 1's (batch, 38, n, n): own and
    opponent stones in chains of 1, 2 and >=3 liberties, and the empty
    points where the player to move may not play (the simple-ko point, and
    suicide points, which the seed's ko plane leaves out).  The seed's
    eighth plane, the colour to move, is the output channel here."""
    own, opp = x[:, _OWN:_OWN + 1], x[:, _OPP:_OPP + 1]
    l1, l2 = x[:, _LIBS_1:_LIBS_1 + 1], x[:, _LIBS_2:_LIBS_2 + 1]
    l3 = x[:, _LIBS_3:_LIBS_3 + 1] + x[:, _LIBS_4P:_LIBS_4P + 1]
    banned = x[:, _EMPTY:_EMPTY + 1] * (1 - x[:, _LEGAL:_LEGAL + 1])
    return torch.cat([own * l1, own * l2, own * l3, opp * l1, opp * l2, opp * l3, banned], 1)


class OwnershipNet(TwoSoftmaxNet):
    """GoCNN (seed 002): ``layers`` convolutions of ``width`` filters
    ``kernel`` x ``kernel`` with ReLU, then one more convolution to the
    output: per point the logit that the player to move owns it at the end
    of the game (a sigmoid gives the probability).  Two output channels, one
    per colour to move, as in the policy net: the seed's colour-to-move
    input plane, which carries komi's asymmetry, becomes the choice of
    channel.  ``inputs`` = "gocnn" reads the seed's planes
    (:func:`gocnn_planes`), "table1" all of Table 1's."""

    def __init__(self, config: dict):
        super().__init__(OWNERSHIP_DEFAULTS, config)
        cfg = self.config
        layers, width, k = int(cfg["layers"]), int(cfg["width"]), int(cfg["kernel"])
        if layers < 1 or width < 1 or k % 2 != 1:
            raise ValueError(f"need layers >= 1, width >= 1 and an odd kernel, got "
                             f"{layers}, {width}, {k}")
        if cfg["inputs"] not in ("gocnn", "table1"):
            raise ValueError(f"unknown ownership inputs {cfg['inputs']!r} (gocnn, table1)")
        cin = 7 if cfg["inputs"] == "gocnn" else int(cfg["in_planes"])
        convs = [nn.Conv2d(cin, width, k, padding=k // 2)]
        convs += [nn.Conv2d(width, width, k, padding=k // 2) for _ in range(layers - 1)]
        self.trunk = nn.ModuleList(convs)
        self.head = nn.Conv2d(width, 2, k, padding=k // 2)
        for conv in self.trunk:
            nn.init.kaiming_normal_(conv.weight, nonlinearity="relu")
            nn.init.zeros_(conv.bias)
        nn.init.normal_(self.head.weight, std=1.0 / math.sqrt(self.head.weight[0].numel()) / 10)
        nn.init.zeros_(self.head.bias)

    def both(self, x: torch.Tensor) -> torch.Tensor:
        self.check_input(x)
        if self.config["inputs"] == "gocnn":
            x = gocnn_planes(x)
        for conv in self.trunk:
            x = F.relu(conv(x))
        return self.fp32_head(self.head, x)


class ResOwnershipNet(ResPolicyNet):
    """Final ownership on a residual trunk: :class:`ResPolicyNet`'s stem and
    blocks, named alike so that a trained policy net's trunk loads into
    them (``nets.train --init-trunk``), then a 3x3 convolution with ReLU and
    GoCNN's 5x5 output convolution to the two colour-to-move channels of
    :class:`OwnershipNet`.  A policy trunk has learnt from every move of
    hundreds of thousands of games what is alive and what can be captured;
    the ownership labels (final positions scored by GNU Go) are a few
    thousand games."""

    def __init__(self, config: dict):
        super().__init__(dict(RES_OWNERSHIP_DEFAULTS, **config))
        width = int(self.config["width"])
        self.own_hidden = nn.Conv2d(width, width, 3, padding=1)
        self.head = nn.Conv2d(width, 2, 5, padding=2)
        nn.init.kaiming_normal_(self.own_hidden.weight, nonlinearity="relu")
        nn.init.zeros_(self.own_hidden.bias)
        nn.init.normal_(self.head.weight, std=1.0 / math.sqrt(self.head.weight[0].numel()) / 10)
        nn.init.zeros_(self.head.bias)

    def both(self, x: torch.Tensor) -> torch.Tensor:
        return self.fp32_head(self.head, F.relu(self.own_hidden(self.trunk(x))))


#: komi in points is divided by this before it enters the value head (a
#: score head's outputs are multiplied by it)
KOMI_SCALE = 10.0
#: the least spread, in points, of a score head's lead (a sharp count)
SCORE_MIN_SCALE = 0.5


class _TakeRows(torch.autograd.Function):
    """``f[rows]`` for distinct ``rows``, whose gradient keeps ``f``'s memory
    layout.  Indexing's own backward scatters into a contiguous tensor, and
    that gradient, added to the channels-last ones of the other heads, made
    the whole trunk's backward pass contiguous (res6v's labelled step ran
    1.01-1.17x slower, docs/benchmarks.md)."""

    @staticmethod
    def forward(ctx, f: torch.Tensor, rows: torch.Tensor) -> torch.Tensor:
        ctx.save_for_backward(rows)
        ctx.shape = f.shape
        ctx.layout = (torch.channels_last
                      if f.dim() == 4 and not f.is_contiguous()
                      and f.is_contiguous(memory_format=torch.channels_last)
                      else torch.contiguous_format)
        return f[rows]

    @staticmethod
    def backward(ctx, grad: torch.Tensor):
        (rows,) = ctx.saved_tensors
        out = torch.empty(ctx.shape, dtype=grad.dtype, device=grad.device,
                          memory_format=ctx.layout).zero_()
        return out.index_copy_(0, rows, grad), None


def komi_to_move(komi, color) -> torch.Tensor:
    """The komi as the player to move sees it: the points added to its own
    score (komi for white, minus komi for black); color 0 black, 1 white."""
    komi = torch.as_tensor(komi, dtype=torch.float32)
    color = torch.as_tensor(color, device=komi.device)
    return torch.where(color == 1, komi, -komi)


class ResValueNet(ResPolicyNet):
    """One residual trunk, three heads (AlphaGo's policy and value, GoCNN's
    ownership), one forward pass:

    - policy: :class:`ResPolicyNet`'s head, unchanged (a res6 checkpoint's
      trunk and head load into it);
    - value: a 1x1 convolution to ``value_width`` filters with batch norm
      and ReLU, their mean and maximum over the board, the komi of the
      player to move (:func:`komi_to_move`, / KOMI_SCALE), a hidden layer
      of ``value_hidden`` units and one logit: the probability that the
      player to move wins.  The pooling makes it work on every board size;
      the komi input lets one net serve 6.5, 7.5, 0.5 and handicap komi;
    - ownership: :class:`ResOwnershipNet`'s 3x3 and 5x5 convolutions, the
      logit that the player to move owns each point at the end.

    With ``value_head = "score"`` the value's hidden layer does not see the
    komi: it gives the lead of the player to move on the board (points,
    komi not counted) and the spread of that lead (a logistic's scale in
    points, at least SCORE_MIN_SCALE), and the value logit is (lead + komi
    of the player to move) / spread.  The komi then moves the value as a
    count would, for any komi, including those the training games never had.

    ``forward(x, color)`` gives the policy logits as every policy net does
    (the engine's evaluator, bench.accuracy); ``forward(x, color, komi)``,
    komi the game's (points given to white; a number or a (b,) tensor),
    gives ``(policy logits (b, n*n), value logit (b,), ownership logits
    (b, n*n))``, all from the player to move's side (and with
    ``next_moves``, a fourth: :meth:`ResPolicyNet.next_logits`)."""

    has_value = True

    def __init__(self, config: dict):
        super().__init__(dict(RES_VALUE_DEFAULTS, **config))
        width = int(self.config["width"])
        vw, vh = int(self.config["value_width"]), int(self.config["value_hidden"])
        self.value_conv = nn.Conv2d(width, vw, 1, bias=False)
        self.value_bn = nn.BatchNorm2d(vw)
        self.score = self.config["value_head"] == "score"
        if self.config["value_head"] not in ("mlp", "score"):
            raise ValueError(f"value_head must be 'mlp' or 'score', got "
                             f"{self.config['value_head']!r}")
        self.value_fc = nn.Linear(2 * vw + (0 if self.score else 1), vh)
        self.value_out = nn.Linear(vh, 2 if self.score else 1)
        self.own_hidden = nn.Conv2d(width, width, 3, padding=1)
        self.own_head = nn.Conv2d(width, 2, 5, padding=2)
        for conv in (self.value_conv, self.own_hidden):
            nn.init.kaiming_normal_(conv.weight, nonlinearity="relu")
        nn.init.zeros_(self.own_hidden.bias)
        nn.init.normal_(self.own_head.weight, std=1.0 / math.sqrt(self.own_head.weight[0].numel()) / 10)
        nn.init.zeros_(self.own_head.bias)
        nn.init.normal_(self.value_out.weight, std=0.01)
        nn.init.zeros_(self.value_out.bias)
        if self.score:      # a lead of 0 with a spread of about 10 points
            nn.init.constant_(self.value_out.bias[1], math.log(math.e - 1))

    def for_inference(self) -> "ResValueNet":
        net = super().for_inference()
        net.value_bn = _fold(net.value_conv, net.value_bn)
        return net

    def value_logit(self, f: torch.Tensor, komi: torch.Tensor) -> torch.Tensor:
        """The value logit (b,) from trunk features f and the komi of the
        player to move (b,), in points."""
        k = komi.to(f.device).float()
        if self.score:
            lead, spread = self.lead_spread(f)
            return (lead + k.reshape(-1)) / spread
        pooled = self._value_pool(f)
        with torch.autocast(device_type=f.device.type, enabled=False):
            h = F.relu(self.value_fc(torch.cat([pooled.float(), k.reshape(-1, 1) / KOMI_SCALE],
                                               dim=1)))
            return self.value_out(h).reshape(-1)

    def lead_spread(self, f: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """A score head's lead of the player to move on the board and its
        spread, both (b,) float32 in points, from trunk features f."""
        pooled = self._value_pool(f)
        with torch.autocast(device_type=f.device.type, enabled=False):
            o = self.value_out(F.relu(self.value_fc(pooled.float())))
            return KOMI_SCALE * o[:, 0], KOMI_SCALE * F.softplus(o[:, 1]) + SCORE_MIN_SCALE

    def _value_pool(self, f: torch.Tensor) -> torch.Tensor:
        """The value head's 1x1 convolution, its mean and maximum over the
        board (float32).  A sum and a max pool rather than ``mean`` and
        ``amax``, whose backward passes on channels-last bf16 activations
        took 6 and 11 ms of a 128-position training step, 4% of it
        (docs/benchmarks.md); the same values."""
        v = F.relu(self.value_bn(self.value_conv(f)))
        mean = v.sum(dim=(2, 3)).float() / (v.shape[2] * v.shape[3])
        return torch.cat([mean, F.adaptive_max_pool2d(v, 1).flatten(1).float()], dim=1)

    def ownership_logits(self, x: torch.Tensor, color) -> torch.Tensor:
        """The ownership head alone: (b, n*n) logits that the player to move
        owns each point at the end (the trunk, no policy or value)."""
        f = self.trunk(x)
        own = self.fp32_head(self.own_head, F.relu(self.own_hidden(f)))
        return self.to_move(own.reshape(f.shape[0], 2, -1), color)

    def _policy_value(self, f: torch.Tensor, idx: torch.Tensor, komi):
        """(policy logits, value logit) from trunk features f, colour
        indices idx and the game's komi."""
        b = f.shape[0]
        policy = self.to_move(self.fp32_head(self.head, f).reshape(b, 2, -1), idx)
        komi = torch.as_tensor(komi, dtype=torch.float32, device=f.device).reshape(-1).expand(b)
        return policy, self.value_logit(f, komi_to_move(komi, idx))

    def policy_value(self, x: torch.Tensor, color, komi) -> tuple[torch.Tensor, torch.Tensor]:
        """``forward(x, color, komi)``'s first two outputs, without the
        ownership head that the search does not use: its 3x3 convolution is
        a fourteenth layer of the trunk's width, about a tenth of an eager
        pass (a frozen trace drops it by itself)."""
        f = self.trunk(x)
        return self._policy_value(f, color_index(color, f.shape[0], f.device), komi)

    def forward(self, x: torch.Tensor, color, komi=None, next_moves: bool = False,
                own_rows: torch.Tensor | None = None):
        """``own_rows`` (training): the batch rows whose ownership is wanted,
        as indices; the ownership logits are then (len(own_rows), n*n), the
        head runs on those rows alone, and on none it does not run (the
        third output is None).  A trainer needs the rows of its labelled
        games only, about one in twenty of train19's positions."""
        if komi is None:
            return super().forward(x, color, next_moves)
        f = self.trunk(x)
        b = f.shape[0]
        idx = color_index(color, b, f.device)
        out = self._policy_value(f, idx, komi)
        if own_rows is None:
            own_f, own_idx = f, idx
        else:
            own_f, own_idx = _TakeRows.apply(f, own_rows), idx[own_rows]
        if own_f.shape[0] == 0:
            out = out + (None,)
        else:
            own = self.fp32_head(self.own_head, F.relu(self.own_hidden(own_f)))
            out = out + (self.to_move(own.reshape(own_f.shape[0], 2, -1), own_idx),)
        return out + (self.next_logits(f, idx),) if next_moves else out


class OwnershipView(nn.Module):
    """A value net (:class:`ResValueNet`) seen as an ownership network:
    ``forward(x, color)`` gives its ownership head's logits, so that the
    engine's ownership evaluator and bench.ownership take it as they take
    res6own."""

    def __init__(self, net: "ResValueNet"):
        super().__init__()
        self.net = net
        self.config = dict(net.config, task="ownership")

    def for_inference(self) -> "OwnershipView":
        return OwnershipView(self.net.for_inference())

    def forward(self, x: torch.Tensor, color) -> torch.Tensor:
        return self.net.ownership_logits(x, color)


#: the parameters a policy net's trunk shares with :class:`ResOwnershipNet`
TRUNK_PREFIXES = ("stem.", "stem_bn.", "blocks.")


_ON_BOARD = 37


def dihedral(w: torch.Tensor) -> list[torch.Tensor]:
    """The 8 images of ``w`` under the symmetries of the square acting on
    its last two axes (4 rotations, each also mirrored)."""
    out = []
    for k in range(4):
        r = torch.rot90(w, k, (-2, -1))
        out += [r, r.flip(-1)]
    return out


class TiedConv2d(nn.Conv2d):
    """A convolution ("same" padding) whose filters are averaged over the
    board's 8 symmetries before use, so each is invariant under them (Clark
    & Storkey's weight tying: a rotated or mirrored board gives the rotated
    or mirrored output, exactly).  The parameters stay free; only the
    symmetric part of each filter acts."""

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        w = torch.stack(dihedral(self.weight)).mean(0)
        return F.conv2d(x, w, self.bias, padding=self.padding)


class TiedNet(TwoSoftmaxNet):
    """Clark & Storkey (2015, seed 001): convolutions of ``filters`` with
    ``kernels`` (64 7x7, two 64 5x5, two 48 5x5, two 32 5x5) and ReLU, then
    the output convolution, 8 layers in all, every filter tied to the 8
    symmetries when ``tied``.  Their encoding (``inputs`` = "clark"): own
    and opponent stones in chains of 1, 2 and 3+ liberties and the points
    the player to move may not play (the simple-ko point among them;
    :func:`gocnn_planes`), plus the on-board plane for their edge encoding:
    the zero padding of every convolution then reads as "off the board".
    Where they put a fully connected layer on top, this net has a
    convolution, which keeps it exactly equivariant and free of the board
    size.  Per-filter biases, no position biases (those would break the
    symmetry)."""

    def __init__(self, config: dict):
        super().__init__(TIED_DEFAULTS, config)
        cfg = self.config
        filters, kernels = list(cfg["filters"]), list(cfg["kernels"])
        if not filters or len(filters) != len(kernels) or min(filters) < 1 \
                or any(k % 2 != 1 for k in kernels + [cfg["head_kernel"]]):
            raise ValueError(f"filters and kernels must be equally long, positive and odd, "
                             f"got {filters}, {kernels}")
        if cfg["inputs"] not in ("clark", "table1"):
            raise ValueError(f"unknown inputs {cfg['inputs']!r} (clark, table1)")
        conv = TiedConv2d if cfg["tied"] else nn.Conv2d
        cin = 8 if cfg["inputs"] == "clark" else int(cfg["in_planes"])
        layers = []
        for width, k in zip(filters, kernels):
            layers.append(conv(cin, width, k, padding=k // 2))
            cin = width
        self.trunk = nn.ModuleList(layers)
        hk = int(cfg["head_kernel"])
        self.head = conv(cin, 2, hk, padding=hk // 2)
        for layer in self.trunk:
            nn.init.kaiming_normal_(layer.weight, nonlinearity="relu")
            nn.init.zeros_(layer.bias)
        nn.init.normal_(self.head.weight, std=1.0 / math.sqrt(self.head.weight[0].numel()) / 10)
        nn.init.zeros_(self.head.bias)

    def both(self, x: torch.Tensor) -> torch.Tensor:
        self.check_input(x)
        if self.config["inputs"] == "clark":
            x = torch.cat([gocnn_planes(x), x[:, _ON_BOARD:_ON_BOARD + 1]], 1)
        for layer in self.trunk:
            x = F.relu(layer(x))
        return self.fp32_head(self.head, x)


class RecurrentLayer(nn.Module):
    """A recurrent convolutional layer: with z its input, h_0 = ReLU(z) and
    h_t = ReLU(z + W * h_{t-1}) for t = 1..steps, one ``kernel`` x
    ``kernel`` convolution W shared by the steps; it answers h_steps.  Each
    step widens what a point sees by the kernel's reach without new
    weights: the context reaches across the board early in the stack."""

    def __init__(self, width: int, kernel: int, steps: int):
        super().__init__()
        self.steps = steps
        self.conv = nn.Conv2d(width, width, kernel, padding=kernel // 2)
        nn.init.kaiming_normal_(self.conv.weight, nonlinearity="relu")
        self.conv.weight.data.mul_(0.5)       # the iterated map starts contracting
        nn.init.zeros_(self.conv.bias)

    def forward(self, z: torch.Tensor) -> torch.Tensor:
        h = F.relu(z)
        for _ in range(self.steps):
            h = F.relu(z + self.conv(h))
        return h


class DannNet(TwoSoftmaxNet):
    """The deep alternative neural network (seed 004): ``layers``
    alternative layers, each a convolution (``first_kernel`` for the first,
    ``kernel`` after) followed by a :class:`RecurrentLayer` of ``steps``
    iterations, then the policy net's output convolution with position
    biases.  Of the same depth and width as the plain stack ``small6``."""

    def __init__(self, config: dict):
        super().__init__(DANN_DEFAULTS, config)
        cfg = self.config
        layers, width, steps = int(cfg["layers"]), int(cfg["width"]), int(cfg["steps"])
        k1, k = int(cfg["first_kernel"]), int(cfg["kernel"])
        if layers < 1 or width < 1 or steps < 0 or k1 % 2 != 1 or k % 2 != 1:
            raise ValueError(f"need layers >= 1, width >= 1, steps >= 0 and odd kernels, got "
                             f"{layers}, {width}, {steps}, {k1}, {k}")
        convs, recs = [], []
        cin = int(cfg["in_planes"])
        for i in range(layers):
            kk = k1 if i == 0 else k
            convs.append(nn.Conv2d(cin, width, kk, padding=kk // 2))
            recs.append(RecurrentLayer(width, k, steps))
            cin = width
        self.convs, self.recurrent = nn.ModuleList(convs), nn.ModuleList(recs)
        self.head = ConvLayer(width, 2, 1, True, int(cfg["max_size"]))
        for conv in convs:
            nn.init.kaiming_normal_(conv.weight, nonlinearity="relu")
            nn.init.zeros_(conv.bias)
        nn.init.normal_(self.head.conv.weight, std=1.0 / math.sqrt(width) / 10)
        nn.init.zeros_(self.head.pbias.bias)

    def both(self, x: torch.Tensor) -> torch.Tensor:
        self.check_input(x)
        for conv, rec in zip(self.convs, self.recurrent):
            x = rec(conv(x))
        return self.fp32_head(self.head, x)


ARCHITECTURES: dict[str, type[nn.Module]] = {
    "policy": PolicyNet,
    "res": ResPolicyNet,
    "ownership": OwnershipNet,
    "res_ownership": ResOwnershipNet,
    "res_value": ResValueNet,
    "tied": TiedNet,
    "dann": DannNet,
}


# --------------------------------------------------------------------------
# inference helpers


def masked_log_softmax(logits: torch.Tensor, legal_mask: torch.Tensor) -> torch.Tensor:
    """Log-probabilities over the legal points only: illegal points get
    -inf.  legal_mask: bool (or 0/1) of the logits' shape (or broadcastable,
    e.g. the LEGAL plane reshaped to (batch, n * n)).  A row without any
    legal point gives -inf everywhere (the caller then passes)."""
    mask = legal_mask.to(torch.bool)
    x = logits.float().masked_fill(~mask, float("-inf"))
    out = torch.log_softmax(x, dim=-1)
    # rows with no legal point: log_softmax gives nan; make them -inf
    return torch.where(mask, out, torch.full_like(out, float("-inf")))


def legal_mask(x: torch.Tensor, width: int) -> torch.Tensor:
    """Bool (batch, width) of the moves the player to move may make: the
    LEGAL plane of Table 1's planes ``x`` (batch, planes, n, n), and the
    pass, always legal, where the logits have its column (width n * n + 1)."""
    b, n = x.shape[0], x.shape[-1]
    legal = x[:, LEGAL].reshape(b, n * n) > 0
    if width == n * n + 1:
        legal = torch.cat([legal, legal.new_ones(b, 1)], dim=1)
    elif width != n * n:
        raise ValueError(f"{width} logits for a {n}x{n} board")
    return legal


def count_parameters(model: nn.Module) -> int:
    return sum(p.numel() for p in model.parameters())


__all__ = ["MODELS", "OWNERSHIP_DEFAULTS", "OwnershipNet", "gocnn_planes", "TIED_DEFAULTS",
           "TiedNet", "TiedConv2d", "dihedral", "DANN_DEFAULTS", "DannNet", "RecurrentLayer", "POLICY_DEFAULTS", "RES_DEFAULTS", "ResPolicyNet", "RES_OWNERSHIP_DEFAULTS",
           "ResOwnershipNet", "RES_VALUE_DEFAULTS", "ResValueNet", "KOMI_SCALE",
           "komi_to_move", "TRUNK_PREFIXES", "TwoSoftmaxNet", "ARCHITECTURES", "model_config", "build_model",
           "model_from_config", "PolicyNet", "PositionBias", "ConvLayer",
           "masked_log_softmax", "legal_mask", "count_parameters", "color_index"]
