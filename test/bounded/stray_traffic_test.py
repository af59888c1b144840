#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Hostile and stray datagrams aimed at running bounded-mode jobs: they are dropped and counted,
and never change a result.

usage: stray_traffic_test.py --jobs N [--timeout S] -- MPIEXEC ARGS... PROGRAM SECONDS

Runs N copies of the job (stray_traffic_check, N = 1 or 2) side by side on this machine, and
meanwhile watches the loopback device with a packet socket (root only) to learn each job's
nonce and latest operation from its own datagrams (its sockets' ports come from /proc, so only
the launched jobs are learned from and aimed at). Every 20 ms, for each
job, it then sends:
  foreign  a datagram of the job's current operation, from a rank's own address and port, with
           another job's nonce (a job that ended, or a neighbour on the same ports);
  stranger the job's nonce, communicator, next operation and a valid rank, but from an address
           and port no rank of the job has (another program on the machine);
  replay   a datagram the job already carried for an operation at least 3 behind, again, from
           the rank that sent it (a delayed or replayed packet);
  neighbour (two jobs only) the other job's genuine datagrams forwarded to this job's ports,
           from this job's rank addresses: two jobs' traffic crossing.
Forged payloads are 1e30 floats, so one that got in would show in a result. Passes when every
job prints PASS stray (each of its results exact), and its ranks' datagrams_invalid (foreign,
stranger, neighbour) and datagrams_late (replay) grew by at least 3/4 of what was sent: the
rest may have arrived after the job had read its counters.

Exit 77 (ctest: skipped) when not root: packet and raw sockets need CAP_NET_RAW.
Python standard library only."""
import argparse
import os
import random
import re
import socket
import struct
import subprocess
import sys
import threading
import time

MAGIC = b"ORDG"
HEADER = 40
POISON = struct.pack("<f", 1e30)
ETH_P_ALL = 0x0003
PACKET_OUTGOING = 4


class Job:
    """What the sniffer learned about one job (one nonce)."""

    def __init__(self):
        self.max_seq = -1
        self.recent = {}     # seq -> [(src, dst, datagram bytes)], a few per operation
        self.sent = {"foreign": 0, "stranger": 0, "replay": 0, "neighbour": 0}


def udp_ports_of(roots):
    """The local UDP ports of the processes under the given pids: only the launched jobs'
    datagrams are learned from and aimed at (other jobs may run on this machine)."""
    children = {}
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            with open(f"/proc/{pid}/stat") as f:
                ppid = int(f.read().rsplit(")", 1)[1].split()[1])
        except (OSError, IndexError, ValueError):
            continue
        children.setdefault(ppid, []).append(int(pid))
    inodes, todo = set(), list(roots)
    while todo:
        pid = todo.pop()
        todo += children.get(pid, [])
        try:
            for fd in os.listdir(f"/proc/{pid}/fd"):
                link = os.readlink(f"/proc/{pid}/fd/{fd}")
                if link.startswith("socket:["):
                    inodes.add(link[8:-1])
        except OSError:
            continue
    ports = set()
    with open("/proc/net/udp") as f:
        for line in f.readlines()[1:]:
            cols = line.split()
            if cols[9] in inodes:
                ports.add(int(cols[1].split(":")[1], 16))
    return ports


class Sniffer(threading.Thread):
    def __init__(self):
        super().__init__(daemon=True)
        self.sock = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.htons(ETH_P_ALL))
        self.sock.bind(("lo", 0))
        self.sock.settimeout(0.2)
        self.jobs = {}
        self.lock = threading.Lock()
        # Hashes of the datagrams this script sent, so they are not learned from (hashes: the
        # datagrams are up to 64 KiB on lo, thousands of them a run).
        self.ours = set()
        self.ports = set()  # the launched jobs' UDP ports (udp_ports_of)
        self.stop = False

    def run(self):
        while not self.stop:
            try:
                frame, addr = self.sock.recvfrom(70000)
            except socket.timeout:
                continue
            if addr[2] == PACKET_OUTGOING:  # loopback shows each packet twice
                continue
            self.learn(frame[14:])  # after the (zeroed) Ethernet header of lo

    def learn(self, ip):
        if len(ip) < 20 or ip[0] >> 4 != 4 or ip[9] != socket.IPPROTO_UDP:
            return
        ihl = (ip[0] & 15) * 4
        udp = ip[ihl:]
        d = udp[8:]
        if len(d) < HEADER or d[:4] != MAGIC:
            return
        phase = d[5]
        nonce, _, seq = struct.unpack_from("<QII", d, 8)
        payload_len = struct.unpack_from("<H", d, 32)[0]
        d = bytes(d[:HEADER + payload_len])  # the first datagram of a GSO run
        if hash(d) in self.ours or phase not in (1, 2):
            return
        src = (socket.inet_ntoa(ip[12:16]), struct.unpack_from("!H", udp, 0)[0])
        dst = (socket.inet_ntoa(ip[16:20]), struct.unpack_from("!H", udp, 2)[0])
        if src[1] not in self.ports or dst[1] not in self.ports:
            return
        with self.lock:
            job = self.jobs.setdefault(nonce, Job())
            job.max_seq = max(job.max_seq, seq)
            kept = job.recent.setdefault(seq, [])
            if len(kept) < 8:
                kept.append((src, dst, d))
            for old in [s for s in job.recent if s < job.max_seq - 20]:
                del job.recent[old]


def checksum(b):
    if len(b) % 2:
        b += b"\0"
    s = sum(struct.unpack("!%dH" % (len(b) // 2), b))
    while s >> 16:
        s = (s & 0xFFFF) + (s >> 16)
    return ~s & 0xFFFF


def ip_udp(src, dst, payload):
    """An IPv4 + UDP packet from src to dst (ip, port) pairs; the UDP checksum is left out (0)."""
    udp = struct.pack("!HHHH", src[1], dst[1], 8 + len(payload), 0) + payload
    hdr = struct.pack("!BBHHHBBH4s4s", 0x45, 0, 20 + len(udp), random.randrange(65536), 0, 64,
                      socket.IPPROTO_UDP, 0, socket.inet_aton(src[0]), socket.inet_aton(dst[0]))
    hdr = hdr[:10] + struct.pack("!H", checksum(hdr)) + hdr[12:]
    return hdr + udp


class Injector(threading.Thread):
    def __init__(self, sniffer):
        super().__init__(daemon=True)
        self.sniffer = sniffer
        self.raw = socket.socket(socket.AF_INET, socket.SOCK_RAW, socket.IPPROTO_RAW)
        self.stranger = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        self.stranger.bind(("127.0.0.1", 0))
        self.stop = False

    def spoof(self, src, dst, d):
        self.sniffer.ours.add(hash(d))
        self.raw.sendto(ip_udp(src, dst, d), (dst[0], 0))

    def run(self):
        while not self.stop:
            time.sleep(0.02)
            with self.sniffer.lock:
                jobs = [(n, j) for n, j in self.sniffer.jobs.items() if j.max_seq >= 5]
                plans = []
                for nonce, job in jobs:
                    current = job.recent.get(job.max_seq)
                    old = [s for s in job.recent if s <= job.max_seq - 3]
                    if not current or not old:
                        continue
                    others = [(n, o) for n, o in jobs if n != nonce and o.recent.get(o.max_seq)]
                    plans.append((job, current[0], random.choice(job.recent[random.choice(old)]), others))
            for job, (src, dst, d), (rsrc, rdst, rd), others in plans:
                poison = POISON * ((len(d) - HEADER) // 4)
                # foreign: the current operation, a rank's own address, another nonce
                f = bytearray(d[:HEADER] + poison)
                struct.pack_into("<Q", f, 8, struct.unpack_from("<Q", f, 8)[0] ^ 0x5A5A5A5A00000001)
                self.spoof(src, dst, bytes(f))
                job.sent["foreign"] += 1
                # stranger: everything right but the sending address; the next operation
                s = bytearray(d[:HEADER] + poison)
                struct.pack_into("<I", s, 20, job.max_seq + 1)
                self.sniffer.ours.add(hash(bytes(s)))
                self.stranger.sendto(bytes(s), dst)
                job.sent["stranger"] += 1
                # replay: an old operation's datagram again, its payload forged
                self.spoof(rsrc, rdst, rd[:HEADER] + POISON * ((len(rd) - HEADER) // 4))
                job.sent["replay"] += 1
                # neighbour: the other job's genuine datagram, between this job's ranks
                for _, other in others:
                    with self.sniffer.lock:
                        _, _, od = other.recent[other.max_seq][0]
                    self.spoof(src, dst, od)
                    job.sent["neighbour"] += 1


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--jobs", type=int, default=1, choices=(1, 2))
    p.add_argument("--timeout", type=float, default=150)
    p.add_argument("command", nargs=argparse.REMAINDER)
    args = p.parse_args()
    cmd = args.command[1:] if args.command[:1] == ["--"] else args.command
    if os.geteuid() != 0:
        print("SKIP: needs root (packet and raw sockets on lo)")
        return 77

    sniffer = Sniffer()
    sniffer.start()
    injector = Injector(sniffer)
    injector.start()
    procs = [subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
             for _ in range(args.jobs)]
    def watch_ports():
        while not sniffer.stop:
            ports = udp_ports_of([proc.pid for proc in procs])
            with sniffer.lock:
                sniffer.ports = ports
            time.sleep(0.5)
    threading.Thread(target=watch_ports, daemon=True).start()
    outputs = []
    failed = False
    deadline = time.monotonic() + args.timeout
    for i, proc in enumerate(procs):
        try:
            out, _ = proc.communicate(timeout=max(1, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            proc.kill()
            out, _ = proc.communicate()
            print(f"FAIL job {i} still running after {args.timeout:.0f} s")
            failed = True
        outputs.append(out)
        if proc.returncode != 0:
            print(f"FAIL job {i} exited {proc.returncode}")
            failed = True
    injector.stop = sniffer.stop = True
    injector.join()
    sniffer.join()

    with sniffer.lock:
        learned = list(sniffer.jobs.items())
    if len(learned) != args.jobs:
        print(f"FAIL learned {len(learned)} job nonces from the traffic, expected {args.jobs}")
        failed = True
    for i, out in enumerate(outputs):
        sys.stdout.write("".join(f"[job {i}] {line}\n" for line in out.splitlines()))
        if "PASS stray" not in out:
            print(f"FAIL job {i} did not pass (a wrong result, or it did not finish)")
            failed = True
    # The ranks' counter lines do not name their nonce: compare the sums over all jobs.
    totals = {"invalid": 0, "late": 0}
    for out in outputs:
        for m in re.finditer(r"^counters rank \d+ ops \d+ invalid (\d+) late (\d+)", out, re.M):
            totals["invalid"] += int(m.group(1))
            totals["late"] += int(m.group(2))
    sent = {k: sum(j.sent[k] for _, j in learned) for k in ("foreign", "stranger", "replay", "neighbour")}
    want_invalid = sent["foreign"] + sent["stranger"] + sent["neighbour"]
    print(f"sent {sent}; counted invalid {totals['invalid']} (from {want_invalid} forged), "
          f"late {totals['late']} (from {sent['replay']} replays)")
    for kind in ("foreign", "stranger", "replay") + (("neighbour",) if args.jobs == 2 else ()):
        if sent[kind] < 20:
            print(f"FAIL only {sent[kind]} {kind} datagrams sent: the jobs ended before the test could aim")
            failed = True
    if totals["invalid"] < want_invalid * 0.75:
        print(f"FAIL datagrams_invalid grew by {totals['invalid']}, under 3/4 of the {want_invalid} forged")
        failed = True
    if totals["late"] < sent["replay"] * 0.75:
        print(f"FAIL datagrams_late grew by {totals['late']}, under 3/4 of the {sent['replay']} replays")
        failed = True
    print("FAIL stray traffic" if failed else "PASS stray traffic")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
