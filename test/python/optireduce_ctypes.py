# SPDX-License-Identifier: BSD-3-Clause
"""optireduce's public C API (include/optireduce/optireduce.h) from Python through ctypes.

The library is preloaded (LD_PRELOAD), never imported: ctypes.CDLL(None) sees the process's
global symbols, the preloaded library's among them. Without the library present() is False and
read() returns None, so the same program runs natively.
"""
import ctypes

_CTYPES = {"uint64_t": ctypes.c_uint64, "double": ctypes.c_double}


def _stats_struct(proc):
    """optireduce_stats_t as the preloaded library has it, built from the field names and types
    the library reports (include/optireduce/stats_fields.h is the one list; no copy here)."""
    count, name, ctype = (proc.optireduce_stats_field_count, proc.optireduce_stats_field_name,
                          proc.optireduce_stats_field_type)
    count.restype = ctypes.c_int
    for f in (name, ctype):
        f.argtypes = [ctypes.c_int]
        f.restype = ctypes.c_char_p
    fields = [(name(i).decode(), _CTYPES[ctype(i).decode()]) for i in range(count())]
    return type("Stats", (ctypes.Structure,), {"_fields_": fields})


class OpReport(ctypes.Structure):
    """optireduce_op_report_t."""
    _fields_ = [("ops", ctypes.c_uint64), ("count", ctypes.c_uint64),
                ("entries_expected", ctypes.c_uint64), ("entries_lost", ctypes.c_uint64),
                ("loss", ctypes.c_double), ("error_estimate", ctypes.c_double),
                ("drift_estimate", ctypes.c_double), ("hadamard", ctypes.c_int),
                ("excess", ctypes.c_int), ("path", ctypes.c_int)]


class Library:
    """The preloaded library's counters, or nothing when it is not there."""

    def __init__(self):
        self._stats = self._last_op = None
        proc = ctypes.CDLL(None)
        if not hasattr(proc, "optireduce_get_stats"):
            return  # the library is not preloaded
        try:
            self._stats = proc.optireduce_get_stats_sized
            self.Stats = _stats_struct(proc)
        except AttributeError:
            raise RuntimeError("the preloaded optireduce has no optireduce_get_stats_sized and "
                               "optireduce_stats_field_name: it is older than this module") from None
        try:
            self._last_op = proc.optireduce_last_op_sized
        except AttributeError:
            raise RuntimeError("the preloaded optireduce has no optireduce_last_op_sized: it is "
                               "older than this module") from None
        self._stats.argtypes = [ctypes.c_void_p, ctypes.c_size_t]
        self._stats.restype = ctypes.c_int
        self._last_op.argtypes = [ctypes.c_int, ctypes.c_void_p, ctypes.c_size_t]
        self._last_op.restype = ctypes.c_int
        # The integer fields, for deltas (the doubles are error estimates).
        self.counters = tuple(n for n, t in self.Stats._fields_ if t is ctypes.c_uint64)
        self._s = self.Stats()
        self._report = OpReport()
        have = self._last_op(0, None, 0)
        if have < ctypes.sizeof(OpReport):
            raise RuntimeError("the preloaded optireduce's op report is %d bytes, shorter than this "
                               "module's %d: it is older than this module" % (have, ctypes.sizeof(OpReport)))

    def present(self):
        return self._stats is not None

    def read(self):
        """This process's counters as a dict (integer fields only), or None."""
        s = self.read_all()
        return None if s is None else {n: s[n] for n in self.counters}

    def read_all(self):
        """Every field of optireduce_stats_t as a dict, the error estimates (doubles) too, or
        None."""
        if not self.present():
            return None
        have = self._stats(ctypes.byref(self._s), ctypes.sizeof(self._s))
        if have != ctypes.sizeof(self._s):
            raise RuntimeError("optireduce_get_stats_sized returned %d, but the field names the "
                               "library gave make a %d-byte struct" % (have, ctypes.sizeof(self._s)))
        return {n: getattr(self._s, n) for n, _ in self.Stats._fields_}

    def last_op(self, comm):
        """optireduce_last_op for an mpi4py communicator: an OpReport, or None when the engine
        has run nothing on it (or the library is absent)."""
        if not self.present():
            return None
        # Writes sizeof(OpReport) bytes at most: a newer library's appended fields are left out.
        if self._last_op(comm.py2f(), ctypes.byref(self._report), ctypes.sizeof(self._report)) < 0:
            return None
        return OpReport.from_buffer_copy(self._report)


def delta(after, before):
    return {n: after[n] - before[n] for n in after}


def lost(d):
    """Entries lost in a delta (both phases)."""
    return d["entries_lost_rs"] + d["entries_lost_ag"]
