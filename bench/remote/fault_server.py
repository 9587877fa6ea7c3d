#!/usr/bin/env python3
"""A sick remote cache server, on a loopback port, for the remote-fault bench.

  fault_server.py MODE PORT [SECONDS]

MODE is what every request gets:
  hole     accepted and read, never answered
  http500  "500 Internal Server Error" at once
  trickle  a 200 with a 100 kB body, one byte every 50 ms
  slow     a 200 with a 100 kB body, 1 kB every half second
It serves loopback only and exits by itself after SECONDS (default 900).
"""
import socket
import sys
import threading
import time

MODE, PORT = sys.argv[1], int(sys.argv[2])
LIFETIME = float(sys.argv[3]) if len(sys.argv) > 3 else 900.0
BODY = b"x" * 100_000
HEAD = b"HTTP/1.1 200 OK\r\nContent-Length: %d\r\n\r\n" % len(BODY)


def serve(conn):
    try:
        conn.settimeout(LIFETIME)
        while True:
            request = b""
            while b"\r\n\r\n" not in request:
                chunk = conn.recv(65536)
                if not chunk:
                    return
                request += chunk
            if MODE == "hole":
                time.sleep(LIFETIME)
                return
            if MODE == "http500":
                conn.sendall(b"HTTP/1.1 500 Internal Server Error\r\nContent-Length: 0\r\n\r\n")
                continue
            reply = HEAD + BODY
            step, pause = (1, 0.05) if MODE == "trickle" else (1024, 0.5)
            for at in range(0, len(reply), step):
                conn.sendall(reply[at:at + step])
                time.sleep(pause)
    except OSError:
        pass  # the client gave up
    finally:
        conn.close()


def main():
    if MODE not in ("hole", "http500", "trickle", "slow"):
        sys.exit("unknown mode " + MODE)
    listener = socket.socket()
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    listener.bind(("127.0.0.1", PORT))
    listener.listen(512)
    listener.settimeout(1.0)
    end = time.monotonic() + LIFETIME
    while time.monotonic() < end:
        try:
            conn, _ = listener.accept()
        except socket.timeout:
            continue
        threading.Thread(target=serve, args=(conn,), daemon=True).start()


main()
