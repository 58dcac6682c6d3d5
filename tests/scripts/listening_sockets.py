"""Prints the TCP sockets that the given processes listen on beyond this machine (any address but
loopback), one per line, and exits 1 if there is one. Reads /proc, so it needs no ss or lsof.

Usage: listening_sockets.py PID...
"""
import os
import sys


def socket_inodes(pid):
    inodes = set()
    for fd in os.listdir(f"/proc/{pid}/fd"):
        try:
            target = os.readlink(f"/proc/{pid}/fd/{fd}")
        except OSError:
            continue
        if target.startswith("socket:["):
            inodes.add(target[len("socket:["):-1])
    return inodes


def is_loopback(hex_address):
    if len(hex_address) == 8:  # IPv4, little-endian: 127.x.x.x has 7F as its last byte
        return hex_address.endswith("7F")
    return hex_address in ("00000000000000000000000001000000",  # ::1
                           "0000000000000000FFFF00000100007F")  # ::ffff:127.0.0.1


def main(pids):
    ours = {inode: pid for pid in pids for inode in socket_inodes(pid)}
    exposed = []
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        with open(table) as f:
            next(f)
            for line in f:
                fields = line.split()
                address, port = fields[1].split(":")
                if fields[3] == "0A" and fields[9] in ours and not is_loopback(address):
                    exposed.append(f"pid {ours[fields[9]]} listens on {address}:{int(port, 16)}")
    print("\n".join(exposed))
    return 1 if exposed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
