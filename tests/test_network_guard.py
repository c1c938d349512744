from __future__ import annotations

import socket

import pytest


def test_guard_blocks_non_loopback() -> None:
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    with pytest.raises(RuntimeError, match="network"):
        s.connect(("192.0.2.1", 80))  # TEST-NET-1, never routed
    s.close()


def test_guard_allows_loopback() -> None:
    srv = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    srv.bind(("127.0.0.1", 0))
    srv.listen(1)
    cli = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    cli.connect(srv.getsockname())
    cli.close()
    srv.close()
