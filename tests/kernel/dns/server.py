#!/usr/bin/python3
# tests/kernel/dns/server.py - the kernel suite's upstream DNS server
# (python3-dnslib): authoritative for .test on 127.0.0.1:PORT, UDP and TCP.
# Every question it receives is logged (name and type, one a line), so a
# test can tell what reached an upstream.
#   server.py PORT LOGFILE
import sys, threading, time
from dnslib import RR, QTYPE, RCODE, A, CNAME, TXT
from dnslib.server import DNSServer, BaseResolver

port, logfile = int(sys.argv[1]), sys.argv[2]
lock = threading.Lock()
flips = {"n": 0}

# name -> (ttl, [records]); A values are addresses on lo (10.99.0.0/24)
ZONE = {
    "ok.test.": (300, [("A", "10.99.0.1")]),
    "x.wild.test.": (300, [("A", "10.99.0.5")]),
    "wild.test.": (300, [("A", "10.99.0.9")]),
    "denied.test.": (300, [("A", "10.99.0.6")]),
    "ask.test.": (300, [("A", "10.99.0.7")]),
    "short.test.": (1, [("A", "10.99.0.8")]),
    "cname.test.": (300, [("CNAME", "mid.test.")]),
    "mid.test.": (300, [("CNAME", "end.test.")]),
    "end.test.": (300, [("A", "10.99.0.4")]),
    "other.test.": (300, [("A", "10.99.0.10")]),
    "v6.test.": (300, [("AAAA", "fd99::1")]),
    "slow.test.": (300, [("A", "10.99.0.11")]),
}


class Resolver(BaseResolver):
    def resolve(self, request, handler):
        q = request.q
        name, qt = str(q.qname).lower(), QTYPE[q.qtype]
        with lock:
            with open(logfile, "a") as f:
                f.write(f"{name} {qt}\n")
        reply = request.reply()
        if name == "slow.test.":
            time.sleep(4)
        if name == "flip.test.":
            # the answer changes between two lookups
            with lock:
                flips["n"] += 1
                n = flips["n"]
            if qt == "A":
                # a TTL that outlives the test on a slow guest: both
                # answers must be in force at once (short.test expires)
                reply.add_answer(RR(q.qname, QTYPE.A, ttl=120, rdata=A("10.99.0.%d" % (2 + n % 2))))
            return reply
        if qt == "TXT":
            reply.add_answer(RR(q.qname, QTYPE.TXT, ttl=60, rdata=TXT("data")))
            return reply
        cur = name
        for _ in range(8):
            if cur not in ZONE:
                if cur == name:
                    reply.header.rcode = RCODE.NXDOMAIN
                break
            ttl, recs = ZONE[cur]
            nxt = None
            for kind, val in recs:
                if kind == "CNAME":
                    reply.add_answer(RR(cur, QTYPE.CNAME, ttl=ttl, rdata=CNAME(val)))
                    nxt = val
                elif kind == qt:
                    rd = A(val) if kind == "A" else __import__("dnslib").AAAA(val)
                    reply.add_answer(RR(cur, getattr(QTYPE, kind), ttl=ttl, rdata=rd))
            if not nxt:
                break
            cur = nxt
        return reply


r = Resolver()
servers = [DNSServer(r, port=port, address="127.0.0.1", tcp=t) for t in (False, True)]
for s in servers:
    s.start_thread()
print("SERVING", flush=True)
while True:
    time.sleep(3600)
