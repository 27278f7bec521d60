"""The reverse proxy in front of several daemons: an nginx config for K daemons on one host.

Daemon N (CALLD_INSTANCE=N) hands Telnyx per-call URLs under /d/N/ on the public origin. Each rule
here strips /d/N and hands the rest to daemon N's port, so a daemon serves the paths it always has
(/telnyx/webhook, /health, /telnyx/media/<token>) and one daemon's routes are the same with or
without a proxy. The routes no call names (Telnyx's application-level webhook and Linq's texting
webhook, /linq/webhook) go to whichever daemon is up: the first, else the next (a refused connection
is tried on the next daemon; nothing was sent, so nothing is taken twice). Only the paths Telnyx,
Linq and the ingress check use are routed; the control API is on a Unix socket and never behind the
proxy.

`calld-ctl proxy-config --daemons K` prints the config for the default ports (settings.instance_port);
deploy/nginx/calld.conf is its output for two daemons.
"""

from __future__ import annotations

from collections.abc import Mapping

from calld.settings import instance_port

HEADER = """\
# calld behind nginx: {k} daemon(s) on this host, made by `calld-ctl proxy-config --daemons {k}`.
# Put it in /etc/nginx/conf.d/calld.conf (it is read inside nginx's http block) and reload nginx.
#
# Daemon N runs with CALLD_INSTANCE=N and hands Telnyx each call's webhook and media URLs under
# /d/N/ on PUBLIC_BASE_URL's origin. Each rule below strips /d/N and passes the rest to daemon N's
# port (CALLD_BIND, and CALLD_MEDIA_BIND for the media WebSocket). Before its first dial, and every
# minute while it dials, daemon N asks /d/N/health and /d/N/telnyx/media/health here and refuses to
# dial unless both answer with its own serve token: a rule that reaches the wrong daemon is caught.

map $http_upgrade $calld_connection_upgrade {{
    default upgrade;
    ''      close;
}}

# Any daemon takes the webhooks that name no daemon (Telnyx's fallback, Linq's texts): the first that
# is up. A connection refused is tried on the next; a request once sent is never sent twice.
upstream calld_any {{
{servers}}}
"""

TLS = """
    # TLS is the operator's: Telnyx reaches calld over https:// and wss:// only. With a certificate
    # for the public name (certbot's paths shown), replace the listen line above with:
    #
    # listen 443 ssl;
    # listen [::]:443 ssl;
    # server_name calld.example.net;
    # ssl_certificate     /etc/letsencrypt/live/calld.example.net/fullchain.pem;
    # ssl_certificate_key /etc/letsencrypt/live/calld.example.net/privkey.pem;
    #
    # and set PUBLIC_BASE_URL=https://calld.example.net and PUBLIC_WEBHOOK_URL=https://calld.example.net/telnyx/webhook
    # for every daemon (each adds its own /d/N/).
"""

DAEMON = """
    # daemon {n}: webhooks and /health to {http}, the media WebSocket to {media}
    location = /d/{n}/telnyx/webhook {{
        proxy_pass http://{http}/telnyx/webhook;
        proxy_set_header Host $host;
        proxy_set_header X-Forwarded-For $proxy_add_x_forwarded_for;
    }}
    location = /d/{n}/health {{
        proxy_pass http://{http}/health;
    }}
    location /d/{n}/telnyx/media/ {{
        proxy_pass http://{media}/telnyx/media/;
        proxy_http_version 1.1;
        proxy_set_header Upgrade $http_upgrade;
        proxy_set_header Connection $calld_connection_upgrade;
        proxy_set_header Host $host;
        # A call's socket carries audio both ways for minutes; frames go on at once.
        proxy_buffering off;
        proxy_read_timeout 1h;
        proxy_send_timeout 1h;
    }}
"""


def nginx_config(backends: Mapping[int, tuple[str, str]], listen: str = "127.0.0.1:8080") -> str:
    """The config for `backends`: daemon N -> (its CALLD_BIND, its CALLD_MEDIA_BIND), each HOST:PORT."""
    if not backends:
        raise ValueError("give at least one daemon")
    first = min(backends)
    servers = "".join(f"    server {backends[n][0]}{'' if n == first else ' backup'};\n" for n in sorted(backends))
    parts = [HEADER.format(k=len(backends), servers=servers), "\nserver {\n", f"    listen {listen};\n",
             "    client_max_body_size 256k;  # a webhook is at most 256 KiB (calld.daemon.public)\n", TLS,
             "\n    # Telnyx's application-level webhook URL (the Call Control app's, PUBLIC_WEBHOOK_URL itself): a call's\n"
             "    # webhooks come here only when its own /d/N/ URL was not used. Any daemon takes it; one that does\n"
             "    # not own the call sends it on to the daemon its client_state names.\n"
             "    location = /telnyx/webhook {\n        proxy_pass http://calld_any;\n"
             "        proxy_set_header Host $host;\n    }\n"
             "\n    # Texting: Linq's message.received webhook ({PUBLIC_BASE_URL}/linq/webhook?version=...), query kept.\n"
             "    # Any daemon takes a text: the ledger dedupes a redelivery, whichever daemon it reaches.\n"
             "    location = /linq/webhook {\n        proxy_pass http://calld_any;\n"
             "        proxy_set_header Host $host;\n        proxy_set_header X-Forwarded-For $proxy_add_x_forwarded_for;\n    }\n"]
    for n in sorted(backends):
        http, media = backends[n]
        parts.append(DAEMON.format(n=n, http=http, media=media))
    parts.append("}\n")
    return "".join(parts)


def default_backends(daemons: int, host: str = "127.0.0.1") -> dict[int, tuple[str, str]]:
    """Daemons 1..K at their default ports (CALLD_BIND unset): 8787/8788, 8797/8798, ..."""
    return {n: (f"{host}:{instance_port(n)}", f"{host}:{instance_port(n) + 1}") for n in range(1, daemons + 1)}
