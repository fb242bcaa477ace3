"""One BLAS thread for a single query's matrix-vector products.

An exact search is one query against tens of thousands of stored vectors: a
matrix-vector product bound by memory, not arithmetic. OpenBLAS splits it across every
core anyway, and its helper threads spin while they wait; on a busy 2-core machine they
wait for a core too. Measured here on 40k × 384 float32 at load ~7: 2.2 ms with one
thread against 10–12 ms wall (7–8 ms CPU) with two, the same result to the bit.

The limit is scoped to the product (the caller's own BLAS settings are restored after
it), costs ~10 µs, and is skipped when ``threadpoolctl`` is not installed.
"""

from __future__ import annotations

import threading
from contextlib import AbstractContextManager, nullcontext
from typing import Any

_lock = threading.Lock()
_controller: Any = None
_unavailable = False


def one_blas_thread() -> AbstractContextManager[Any]:
    """A context in which numpy's BLAS uses one thread."""
    controller = _get_controller()
    if controller is None:
        return nullcontext()
    limited: AbstractContextManager[Any] = controller.limit(limits=1, user_api="blas")
    return limited


def _get_controller() -> Any:
    global _controller, _unavailable
    if _controller is None and not _unavailable:
        with _lock:
            if _controller is None and not _unavailable:
                try:
                    from threadpoolctl import ThreadpoolController  # type: ignore[import-untyped]
                except ImportError:
                    _unavailable = True
                    return None
                _controller = ThreadpoolController()
    return _controller
