"""Operations: what keeps calld's state safe around the calls (state directory, lock, ledger health,
private files, crash recovery). Nothing here knows about a call's conversation."""
