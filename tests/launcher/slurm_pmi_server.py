#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""A stand-in for the PMI server of Slurm's slurmstepd (srun --mpi=pmi2, Slurm 22.05), so that
the client's handling of its answers is tested where Slurm is not installed. It reproduces what
Slurm does differently from hydra and our mpiexec, as measured with tools/check-slurm.sh:

- PMI_FD, PMI_RANK, PMI_SIZE and PMI_JOBID ("<job>.<step>") in the environment; a PMI-2
  fullinit without pmijobid is answered rc=3;
- PMI-2 frames with a left-aligned length; appnum=-1 in fullinit and get_appnum;
- kvs-put/put values become visible at the next fence, which is a real barrier; kvs-get of a
  missing key answers found=FALSE (PMI-2) or rc=1 (PMI-1) at once;
- PMI-1 requests are read with one read of at most 1024 bytes: a longer line is a failure here;
- the name service: publishing a published name replaces it and unpublishing an unknown name
  succeeds (rc=0); PMI-2 lookups answer rc=1 or rc=0 with value=; PMI-1 answers carry
  info=ok/info=fail and no rc;
- a PMI-2 spawn is answered only once srun has started the children, which may be never (no free
  CPUs, a program it cannot run): here it is answered late, just before the answer to that
  process's next fence, as a failure (rc=1), and no child is started.

Usage: slurm_pmi_server.py NP PROGRAM ARGS... Starts NP copies of PROGRAM, serves them and exits
0 when every process exited 0 and broke no rule above, else 1.
"""
import os
import select
import socket
import subprocess
import sys

PMI1_READ_MAX = 1024


class Server:
    def __init__(self, np):
        self.np = np
        self.kvs = {}
        self.pending = {}
        self.node_attrs = {}
        self.names = {}
        self.fence_waiting = []
        self.errors = []
        self.jobid = "42.0"

    def fail(self, rank, what):
        self.errors.append(f"rank {rank}: {what}")
        print(f"slurm_pmi_server: rank {rank}: {what}", file=sys.stderr, flush=True)

    # PMI-1: "cmd=x a=b c=d\n"
    def reply1(self, conn, text):
        conn.sock.sendall((text + "\n").encode())

    # PMI-2: left-aligned six-character length, then "cmd=x;a=b;"
    def reply2(self, conn, pairs):
        body = "".join(f"{k}={v};" for k, v in pairs)
        conn.sock.sendall((f"{len(body):<6d}" + body).encode())

    def owe_spawn(self, conn):
        conn.late_spawn = True

    def fence(self, conn):
        self.fence_waiting.append(conn)
        if len(self.fence_waiting) < self.np:
            return
        self.kvs.update(self.pending)
        self.pending = {}
        for c in self.fence_waiting:
            if c.version == 2:
                if c.late_spawn:
                    self.reply2(c, [("cmd", "spawn-response"), ("rc", 1),
                                    ("errmsg", "answered late")])
                    c.late_spawn = False
                self.reply2(c, [("cmd", "kvs-fence-response"), ("rc", 0)])
            else:
                self.reply1(c, "cmd=barrier_out rc=0")
        self.fence_waiting = []

    def handle1(self, conn, line):
        fields = dict(f.split("=", 1) for f in line.split(" ") if "=" in f)
        cmd = fields.get("cmd")
        if cmd == "init":
            conn.version = 2 if fields.get("pmi_version") == "2" else 1
            self.reply1(conn, f"cmd=response_to_init pmi_version={conn.version} "
                        "pmi_subversion=0 rc=0")
        elif cmd == "get_maxes":
            self.reply1(conn, "cmd=maxes rc=0 kvsname_max=256 keylen_max=64 vallen_max=1024")
        elif cmd == "get_appnum":
            self.reply1(conn, "cmd=appnum rc=0 appnum=-1")
        elif cmd == "get_universe_size":
            self.reply1(conn, f"cmd=universe_size rc=0 size={self.np}")
        elif cmd == "get_my_kvsname":
            self.reply1(conn, f"cmd=my_kvsname rc=0 kvsname={self.jobid}")
        elif cmd == "put":
            self.pending[fields["key"]] = fields["value"]
            self.reply1(conn, "cmd=put_result rc=0")
        elif cmd == "get":
            key = fields["key"]
            if key == "PMI_process_mapping":
                self.reply1(conn, f"cmd=get_result rc=0 value=(vector,(0,1,{self.np}))")
            elif key in self.kvs:
                self.reply1(conn, f"cmd=get_result rc=0 value={self.kvs[key]}")
            else:
                self.reply1(conn, "cmd=get_result rc=1")
        elif cmd == "barrier_in":
            self.fence(conn)
        elif cmd == "publish_name":
            self.names[fields["service"]] = fields["port"]
            self.reply1(conn, "cmd=publish_result info=ok")
        elif cmd == "unpublish_name":
            self.names.pop(fields["service"], None)
            self.reply1(conn, "cmd=unpublish_result info=ok")
        elif cmd == "lookup_name":
            port = self.names.get(fields["service"])
            self.reply1(conn, "cmd=lookup_result info=fail" if port is None else
                        f"cmd=lookup_result info=ok port={port}")
        elif cmd == "finalize":
            self.reply1(conn, "cmd=finalize_ack rc=0")
            conn.done = True
        else:
            self.fail(conn.rank, f"PMI-1 command not served here: {line}")

    def handle2(self, conn, body):
        pairs = [p.split("=", 1) for p in body.split(";") if p]
        fields = dict(pairs)
        cmd = fields.get("cmd")
        if cmd == "fullinit":
            rc = 0 if "pmijobid" in fields and "pmirank" in fields and "threaded" in fields else 3
            if rc != 0:
                self.fail(conn.rank, f"fullinit lacks pmijobid, pmirank or threaded: {body}")
            self.reply2(conn, [("cmd", "fullinit-response"), ("rc", rc), ("pmi-version", 2),
                               ("pmi-subversion", 0), ("rank", conn.rank), ("size", self.np),
                               ("appnum", -1), ("debugged", "FALSE"), ("pmiverbose", "FALSE")])
        elif cmd == "job-getid":
            self.reply2(conn, [("cmd", "job-getid-response"), ("rc", 0), ("jobid", self.jobid)])
        elif cmd == "info-getjobattr":
            if fields["key"] == "PMI_process_mapping":
                self.reply2(conn, [("cmd", "info-getjobattr-response"), ("rc", 0),
                                   ("found", "TRUE"), ("value", f"(vector,(0,1,{self.np}))")])
            else:
                self.reply2(conn, [("cmd", "info-getjobattr-response"), ("rc", 0),
                                   ("found", "FALSE")])
        elif cmd == "kvs-put":
            self.pending[fields["key"]] = fields["value"]
            self.reply2(conn, [("cmd", "kvs-put-response"), ("rc", 0)])
        elif cmd == "kvs-get":
            value = self.kvs.get(fields["key"])
            found = [("found", "FALSE")] if value is None else [("found", "TRUE"),
                                                                ("value", value)]
            self.reply2(conn, [("cmd", "kvs-get-response"), ("rc", 0)] + found)
        elif cmd == "kvs-fence":
            self.fence(conn)
        elif cmd == "info-putnodeattr":
            self.node_attrs[fields["key"]] = fields["value"]
            self.reply2(conn, [("cmd", "info-putnodeattr-response"), ("rc", 0)])
        elif cmd == "info-getnodeattr":
            value = self.node_attrs.get(fields["key"])
            if value is None and fields.get("wait") == "TRUE":
                self.fail(conn.rank, "info-getnodeattr with wait=TRUE would block here")
            found = [("found", "FALSE")] if value is None else [("found", "TRUE"),
                                                                ("value", value)]
            self.reply2(conn, [("cmd", "info-getnodeattr-response"), ("rc", 0)] + found)
        elif cmd == "name-publish":
            self.names[fields["name"]] = fields["port"]
            self.reply2(conn, [("cmd", "name-publish-response"), ("rc", 0)])
        elif cmd == "name-unpublish":
            self.names.pop(fields["name"], None)
            self.reply2(conn, [("cmd", "name-unpublish-response"), ("rc", 0)])
        elif cmd == "name-lookup":
            port = self.names.get(fields["name"])
            answer = [("rc", 1)] if port is None else [("rc", 0), ("value", port)]
            self.reply2(conn, [("cmd", "name-lookup-response")] + answer)
        elif cmd == "spawn":
            self.owe_spawn(conn)
        elif cmd == "finalize":
            self.reply2(conn, [("cmd", "finalize-response"), ("rc", 0)])
            conn.done = True
        else:
            self.fail(conn.rank, f"PMI-2 command not served here: {body}")

    def serve(self, conn):
        """Handles every complete request in conn's buffer."""
        while True:
            if conn.version == 2 and conn.inited:
                if len(conn.buf) < 6:
                    return
                length = int(conn.buf[:6].decode())
                if len(conn.buf) < 6 + length:
                    return
                body, conn.buf = conn.buf[6:6 + length].decode(), conn.buf[6 + length:]
                self.handle2(conn, body)
                continue
            end = conn.buf.find(b"\n")
            if end < 0:
                if len(conn.buf) >= PMI1_READ_MAX:
                    self.fail(conn.rank, f"a PMI-1 request longer than {PMI1_READ_MAX} bytes")
                    conn.buf = b""
                return
            if end + 1 > PMI1_READ_MAX:
                self.fail(conn.rank, f"a {end + 1}-byte PMI-1 request (Slurm reads "
                          f"{PMI1_READ_MAX})")
            line, conn.buf = conn.buf[:end].decode(), conn.buf[end + 1:]
            self.handle1(conn, line)
            if line.startswith("cmd=init"):
                conn.inited = True


class Conn:
    def __init__(self, rank, sock):
        self.rank, self.sock = rank, sock
        self.buf = b""
        self.version = 1
        self.inited = False
        self.done = False
        self.late_spawn = False


def main():
    np, argv = int(sys.argv[1]), sys.argv[2:]
    server = Server(np)
    conns, procs = {}, []
    for rank in range(np):
        ours, theirs = socket.socketpair()
        env = dict(os.environ, PMI_FD=str(theirs.fileno()), PMI_RANK=str(rank), PMI_SIZE=str(np),
                   PMI_JOBID=server.jobid)
        for name in ("PMI_PORT", "PMI_ID", "PMI_SPAWNED"):
            env.pop(name, None)
        procs.append(subprocess.Popen(argv, env=env, pass_fds=[theirs.fileno()]))
        theirs.close()
        conns[ours.fileno()] = Conn(rank, ours)
    open_fds = set(conns)
    while open_fds:
        ready, _, _ = select.select(list(open_fds), [], [], 30)
        if not ready:
            server.fail(-1, "no request for 30 s")
            break
        for fd in ready:
            conn = conns[fd]
            data = conn.sock.recv(65536)
            if not data:
                open_fds.discard(fd)
                continue
            conn.buf += data
            server.serve(conn)
    status = 0
    for rank, proc in enumerate(procs):
        try:
            rc = proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            proc.kill()
            rc = "killed after 30 s"
        if rc != 0:
            server.fail(rank, f"exited with {rc}")
    if server.errors:
        status = 1
    print("slurm_pmi_server: " + ("failed" if status else "all processes passed"), flush=True)
    return status


if __name__ == "__main__":
    sys.exit(main())
