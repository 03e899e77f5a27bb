#!/usr/bin/python3
# tests/kernel/dns/query.py - a DNS client that ignores /etc/resolv.conf:
# it sends one question to the server it is told, over UDP or TCP, and
# prints the answer's rcode and addresses on one line ("NOERROR 10.99.0.1",
# "NXDOMAIN", "TIMEOUT", "ERR EPERM").
#   query.py NAME [TYPE] [SERVER] [PORT] [tcp]
import errno, socket, sys
from dnslib import DNSRecord, RCODE, QTYPE

name = sys.argv[1]
qtype = sys.argv[2] if len(sys.argv) > 2 else "A"
server = sys.argv[3] if len(sys.argv) > 3 else "198.51.100.53"
port = int(sys.argv[4]) if len(sys.argv) > 4 else 53
tcp = len(sys.argv) > 5 and sys.argv[5] == "tcp"
q = DNSRecord.question(name, qtype)
try:
    wire = q.send(server, port, tcp=tcp, timeout=3, ipv6=":" in server)
except socket.timeout:
    print("TIMEOUT")
    sys.exit(0)
except OSError as e:
    print("ERR " + errno.errorcode.get(e.errno, str(e.errno)))
    sys.exit(0)
a = DNSRecord.parse(wire)
if a.header.id != q.header.id:
    print("BADID")
    sys.exit(0)
addrs = [str(rr.rdata) for rr in a.rr if rr.rtype in (QTYPE.A, QTYPE.AAAA)]
print(" ".join([RCODE[a.header.rcode]] + addrs))
