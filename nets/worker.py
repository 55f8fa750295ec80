"""The network worker of the delayed priors (Maddison et al. 2015, section 6):
one thread that takes the oldest tree leaves from the engine's queue
(engine/priors.PriorQueue) in batches, runs the policy network on them, and
hands the probabilities back, with the values of a network that has a value
head (delayed values); the queue writes them into the tree.  The
search threads never wait for it.

The same worker runs on the GPU and on the CPU; only the batching policy
differs (see :func:`default_max_wait`).
"""

from __future__ import annotations

import logging
import threading

import numpy as np

from engine.features import N_PLANES

log = logging.getLogger("engine")


def default_max_wait(device) -> float:
    """Seconds the worker waits for a batch to fill before it goes with
    fewer.  On a GPU a batch of 128 costs about what one position costs, so
    it waits up to 2 ms (one search thread publishes every few ms).  On a
    CPU the cost grows with the batch, so waiting buys nothing: it takes
    whatever is waiting, at once."""
    return 0.002 if device.type == "cuda" else 0.0


class PriorWorker(threading.Thread):
    """``PriorWorker(queue, evaluator, batch=128).start()``; ``stop()`` ends
    it (also at interpreter exit: it is a daemon thread)."""

    def __init__(self, queue, evaluator, batch: int = 128, max_wait: float | None = None):
        super().__init__(name="prior-worker", daemon=True)
        if batch < 1:
            raise ValueError("--batch must be at least 1")
        self.queue = queue
        self.evaluator = evaluator
        self.batch = batch
        if max_wait is None:                        # the batching policy
            max_wait = default_max_wait(evaluator.device)
        self.max_wait = max_wait
        self._stop_event = threading.Event()
        self._size = -1
        self.error: BaseException | None = None

    def _buffers(self, size: int) -> None:
        self._size = size
        self._planes = np.zeros((self.batch, N_PLANES, size, size), np.uint8)
        self._colors = np.zeros(self.batch, np.int32)

    def run(self) -> None:
        q = self.queue
        try:
            while not self._stop_event.is_set() and not q.closed:
                size = q.size
                if size < 1 or not self.evaluator.supports(size):
                    self._stop_event.wait(0.05)
                    continue
                self.serve(size)
        except BaseException as e:      # the engine goes on with heuristic priors
            self.error = e
            log.exception("prior worker stopped: %s", e)

    def serve(self, size: int, idle_wait: float = 0.05) -> int:
        """One batch: take up to ``batch`` of the queue's oldest requests
        for ``size`` (waiting up to ``idle_wait`` for a first one), evaluate
        them, and deliver their priors, and their values where the network
        has a value head.  Returns how many it evaluated (0: none came).
        The thread's loop; a caller that drives a search itself can call it
        instead of starting the thread, to serve the queue in step with the
        search."""
        if size != self._size:
            self._buffers(size)
            warm = getattr(self.evaluator, "warm", None)   # traces, CUDA graphs
            if warm is not None:
                warm(size, self.batch)
        q = self.queue
        tickets = q.take(self._planes, self._colors, self.max_wait, idle_wait)
        k = len(tickets)
        if not k:
            return 0
        if getattr(self.evaluator, "has_value", False):
            probs, values = self.evaluator.evaluate_value(self._planes[:k], self._colors[:k],
                                                          q.komi)
            q.deliver(tickets, probs, values)
        else:
            q.deliver(tickets, self.evaluator.evaluate(self._planes[:k], self._colors[:k]))
        return k

    def stop(self, timeout: float = 2.0) -> None:
        self._stop_event.set()
        self.queue.close()
        if self.is_alive():
            self.join(timeout)


__all__ = ["PriorWorker", "default_max_wait"]
