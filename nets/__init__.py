"""Policy networks (Maddison, Huang, Sutskever & Silver 2015) for delayed-go.

Modules:

* :mod:`nets.models`      config-driven model registry (``MODELS``, ``build_model``)
* :mod:`nets.checkpoint`  weights + metadata files (``save_checkpoint``, ``load_checkpoint``)
* :mod:`nets.data`        SGF -> compact game cache, position sampler with symmetries
* :mod:`nets.train`       supervised training (SGD as in the paper, or Adam; DDP)

The engine never imports this package (nor torch); ``nets`` may import the
engine (board, features, sgf) but never the GTP layer.
"""
