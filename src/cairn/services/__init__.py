"""Services: the operations of the engine over the storage ports, one small service each.

Each depends only on the ports, the clock and the adapters it needs, and is wired by a
composition root (:mod:`cairn.compose`). The provider contract sits over them.
"""
