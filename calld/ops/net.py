"""Which hosts are this machine's own (stub mode serves only there; ws:// is allowed only there)."""

from __future__ import annotations

import ipaddress


def loopback_host(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False
