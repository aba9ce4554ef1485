#!/usr/bin/env python3
"""Apple's own Python App Store Server Library on the same notifications as `scripts/bench`.

For each line (a compact JWS notification) it verifies and decodes the notification (outer JWS)
and then its nested signedTransactionInfo, the way a Python webhook would, with online checks off,
trusting only the benchmark's throwaway root. Prints one JSON object with the count and the rate.

usage: bench-apple-python.py ROOT_DER NOTIFICATIONS BUNDLE_ID [LIMIT]
"""
import json
import sys
import time

from appstoreserverlibrary.models.Environment import Environment
from appstoreserverlibrary.signed_data_verifier import SignedDataVerifier


def main() -> int:
    root_path, notifications_path, bundle_id = sys.argv[1:4]
    limit = int(sys.argv[4]) if len(sys.argv) > 4 else None
    with open(root_path, "rb") as f:
        root = f.read()
    verifier = SignedDataVerifier(
        root_certificates=[root], enable_online_checks=False, environment=Environment.SANDBOX,
        bundle_id=bundle_id, app_apple_id=None)
    lines = []
    with open(notifications_path) as f:
        for line in f:
            line = line.strip()
            if line:
                lines.append(line)
            if limit is not None and len(lines) >= limit:
                break
    started = time.perf_counter()
    cpu_started = time.process_time()
    verified = 0
    for jws in lines:
        notification = verifier.verify_and_decode_notification(jws)
        verifier.verify_and_decode_signed_transaction(notification.data.signedTransactionInfo)
        verified += 1
    elapsed = time.perf_counter() - started
    cpu = time.process_time() - cpu_started
    print(json.dumps({
        "notifications": verified,
        "seconds": round(elapsed, 3),
        "cpu_seconds": round(cpu, 3),
        "per_second": round(verified / elapsed, 1) if elapsed > 0 else None,
        "per_cpu_second": round(verified / cpu, 1) if cpu > 0 else None,
    }))
    return 0


if __name__ == "__main__":
    sys.exit(main())
