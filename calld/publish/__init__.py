"""Publishing a finished call's artifacts to S3-compatible storage, and local retention.

- `keys`: which files are durable and the object keys they get (pure; no phone numbers).
- `store`: the bucket through boto3 (blocking; called from worker threads), and the bucket check.
- `publisher`: the background task that publishes after hangup, retries, and applies retention.
- `fetch`: calld-ctl's side of bringing a published call back.

Publishing reads finished artifacts; it never changes a result.
"""
