"""After the call: reading finished artifacts for people and machines (timeline, show, history,
metrics, doctor, prune). Nothing here changes a result; everything reads what a call left."""
