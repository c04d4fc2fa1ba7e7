# Copyright (c) 2026 The libmscclpp authors
# SPDX-License-Identifier: MIT
"""The part of the `netifaces` package that MSCCL++'s test_mscclpp.py uses (interfaces(), ifaddresses(name)
[AF_INET][0]["addr"]), from the standard library, for machines without that package. reference_tests.sh
puts this folder on PYTHONPATH only when `import netifaces` fails."""

import fcntl
import socket
import struct

AF_INET = socket.AF_INET
_SIOCGIFADDR = 0x8915


def interfaces():
    return [name for _, name in socket.if_nameindex()]


def ifaddresses(name):
    """{AF_INET: [{"addr": "a.b.c.d"}]} for an interface with an IPv4 address, {} otherwise."""
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as probe:
        try:
            answer = fcntl.ioctl(probe.fileno(), _SIOCGIFADDR, struct.pack("256s", name.encode()[:15]))
        except OSError:
            return {}
    return {AF_INET: [{"addr": socket.inet_ntoa(answer[20:24])}]}
