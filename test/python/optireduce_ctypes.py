"""optireduce's public C API (include/optireduce/optireduce.h) from Python through ctypes.

The library is preloaded (LD_PRELOAD), never imported: ctypes.CDLL(None) sees the process's
global symbols, the preloaded library's among them. Without the library present() is False and
read() returns None, so the same program runs natively.
"""
import ctypes

_U64_HEAD = (
    "engine_calls", "engine_bytes", "passthrough_calls", "fallback_calls", "comms_enabled",
    "comms_fallback", "bounded_calls", "entries_expected_rs", "entries_lost_rs",
    "entries_expected_ag", "entries_lost_ag", "phases_complete", "phases_early_close",
    "phases_deadline", "datagrams_sent", "datagrams_late", "datagrams_duplicate",
    "datagrams_invalid", "datagrams_held", "datagrams_held_dropped", "datagrams_fault_dropped",
    "hadamard_calls", "excess_loss_calls", "reliable_calls")
_DOUBLES = ("error_estimate_sum", "error_estimate_max", "drift_estimate_max")
_U64_TAIL = ("stragglers_written_off", "repair_chunks_requested", "repair_chunks_sent",
             "repair_chunks_unavailable",
             # Newer libraries only: an older one leaves it 0 (the buffer below has room).
             "nonblocking_calls", "staging_failures",
             "datagrams_send_failed", "send_queue_full", "completion_errors")


class Stats(ctypes.Structure):
    """optireduce_stats_t, field for field."""
    _fields_ = ([(n, ctypes.c_uint64) for n in _U64_HEAD] + [(n, ctypes.c_double) for n in _DOUBLES]
                + [(n, ctypes.c_uint64) for n in _U64_TAIL])


class OpReport(ctypes.Structure):
    """optireduce_op_report_t."""
    _fields_ = [("ops", ctypes.c_uint64), ("count", ctypes.c_uint64),
                ("entries_expected", ctypes.c_uint64), ("entries_lost", ctypes.c_uint64),
                ("loss", ctypes.c_double), ("error_estimate", ctypes.c_double),
                ("drift_estimate", ctypes.c_double), ("hadamard", ctypes.c_int),
                ("excess", ctypes.c_int), ("path", ctypes.c_int)]


COUNTERS = _U64_HEAD + _U64_TAIL  # the integer fields, for deltas


class Library:
    """The preloaded library's counters, or nothing when it is not there."""

    def __init__(self):
        self._stats = self._last_op = None
        try:
            proc = ctypes.CDLL(None)
            self._stats = proc.optireduce_get_stats
            self._last_op = proc.optireduce_last_op
        except AttributeError:
            return
        self._stats.argtypes = [ctypes.c_void_p]
        self._stats.restype = ctypes.c_int
        self._last_op.argtypes = [ctypes.c_int, ctypes.c_void_p]
        self._last_op.restype = ctypes.c_int
        # Room to spare after the structs: a library whose structs grew at the end must not
        # write past our buffers.
        self._sbuf = ctypes.create_string_buffer(ctypes.sizeof(Stats) + 1024)
        self._obuf = ctypes.create_string_buffer(ctypes.sizeof(OpReport) + 1024)

    def present(self):
        return self._stats is not None

    def read(self):
        """This process's counters as a dict (integer fields only), or None."""
        if not self.present() or self._stats(self._sbuf) != 0:
            return None
        s = Stats.from_buffer_copy(self._sbuf)
        return {n: getattr(s, n) for n in COUNTERS}

    def last_op(self, comm):
        """optireduce_last_op for an mpi4py communicator: an OpReport, or None when the engine
        has run nothing on it (or the library is absent)."""
        if not self.present():
            return None
        if self._last_op(comm.py2f(), self._obuf) != 0:
            return None
        return OpReport.from_buffer_copy(self._obuf)


def delta(after, before):
    return {n: after[n] - before[n] for n in after}


def lost(d):
    """Entries lost in a delta (both phases)."""
    return d["entries_lost_rs"] + d["entries_lost_ag"]
