"""calld-ctl messaging link|unlink|list: which sender handles may text calld, and for whom."""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Awaitable, Callable
from typing import Any

from calld.cli.client import ControlClient

WithClient = Callable[[argparse.Namespace, Callable[[ControlClient], Awaitable[int]]], Awaitable[int]]


def add_messaging_commands(sub: Any, with_client: WithClient, table: Callable[[list[dict[str, Any]], list[str]], str]) -> None:
    msg = sub.add_parser("messaging", help="who may ask by text message (iMessage, RCS, SMS through Linq)")
    verbs = msg.add_subparsers(dest="messaging_command", required=True)

    link = verbs.add_parser("link", help="let a handle text calld, for a user (re-linking moves it)")
    link.add_argument("--user", required=True, help="the calld user whose number calls are placed from")
    link.add_argument("--handle", required=True, help="the sender: a phone number in E.164 (+14155550100) or an Apple ID email")
    link.add_argument("--name", help="the first name calls are placed on behalf of (default: the user id, capitalized)")
    link.add_argument("--json", action="store_true", help="the link as JSON")

    async def do_link(args: argparse.Namespace) -> int:
        async def go(c: ControlClient) -> int:
            row = await c.messaging_link(args.handle, args.user, args.name)
            print(json.dumps(row) if args.json else f"linked {row['handle']} to user {row['user']} (calls on behalf of {row['name']})")
            if "note" in row and not args.json:
                print(f"calld-ctl: note: {row['note']}", file=sys.stderr)
            return 0

        return await with_client(args, go)

    link.set_defaults(afunc=do_link)

    unlink = verbs.add_parser("unlink", help="stop a handle from asking (its texts get one polite line)")
    unlink.add_argument("--handle", required=True, help="the sender to unlink, as it was linked")

    async def do_unlink(args: argparse.Namespace) -> int:
        async def go(c: ControlClient) -> int:
            row = await c.messaging_unlink(args.handle)
            print(f"unlinked {row['unlinked']}")
            return 0

        return await with_client(args, go)

    unlink.set_defaults(afunc=do_unlink)

    lst = verbs.add_parser("list", help="every linked handle")
    lst.add_argument("--json", action="store_true", help="the links as JSON instead of a table")

    async def do_list(args: argparse.Namespace) -> int:
        async def go(c: ControlClient) -> int:
            rows = await c.messaging_links()
            print(json.dumps(rows) if args.json else table(rows, ["handle", "user", "name", "since"]))
            return 0

        return await with_client(args, go)

    lst.set_defaults(afunc=do_list)
