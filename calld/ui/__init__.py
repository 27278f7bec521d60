"""The web view of calls (issue 53): read-only pages on a listener of their own, token-guarded."""
