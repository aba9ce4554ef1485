#!/usr/bin/env python3
"""Builds Fuzz/corpus from the test fixtures (run from the package root; re-run when fixtures change).

Each seed starts with the mode byte read by Fuzz/FuzzTarget.swift:
0 framing (raw JWS, webhook bodies, API responses), 1 JSON, 2 JWS payload, 3 JWS header, 4 encodings,
5 StoreKit 1 receipt (PKCS#7 DER, and the bare receipt payload it signs; needs the openssl command),
6 the ledger's packed raw form (raw texts to pack, which also reach the unpacker), 7 a DER X.509
certificate, 8 `--from` correction rows (NDJSON or CSV), 9 an App Store Server API answer (one byte
picks the HTTP status and the call, the rest is the body).
"""
import base64, glob, hashlib, json, os, subprocess

ROOT = "Tests/AppStoreJWSTests/Fixtures"
OUT = "Fuzz/corpus"

def b64url_decode(s):
    return base64.urlsafe_b64decode(s + "=" * (-len(s) % 4))

def emit(mode, data, seen):
    blob = bytes([mode]) + data
    name = hashlib.sha1(blob).hexdigest()
    if name in seen or len(blob) > 64 * 1024:
        return
    seen.add(name)
    with open(os.path.join(OUT, name), "wb") as f:
        f.write(blob)

def main():
    os.makedirs(OUT, exist_ok=True)
    seen = set()
    jws_files = sorted(glob.glob(ROOT + "/real/*.jws") + glob.glob(ROOT + "/conformance/*.jws")
                       + glob.glob(ROOT + "/xcode/*") + glob.glob(ROOT + "/mock_signed_data/*"))
    tokens = []
    for path in jws_files:
        token = open(path, "rb").read().strip()
        tokens.append(token)
        emit(0, token, seen)
        parts = token.split(b".")
        if len(parts) == 3:
            try:
                emit(3, b64url_decode(parts[0].decode()), seen)
                emit(2, b64url_decode(parts[1].decode()), seen)
            except Exception:
                pass
    # Webhook bodies and API responses around a few tokens.
    for token in tokens[:12]:
        t = token.decode()
        emit(0, json.dumps({"signedPayload": t}).encode(), seen)
        emit(0, json.dumps({"signedTransactions": [t, t]}).encode(), seen)
        emit(0, json.dumps({"notificationHistory": [{"signedPayload": t}]}, indent=2).encode(), seen)
        emit(0, (t + "\n\n" + json.dumps(t) + "\r\n").encode(), seen)
    for path in sorted(glob.glob(ROOT + "/real/*.json") + glob.glob(ROOT + "/models/*.json")):
        data = open(path, "rb").read()
        emit(1, data, seen)
        emit(2, data, seen)
    for text in [b"", b"{}", b"[]", b'{"a":1,"a":2}', b'[1e400]', b'"\\ud800"', b'-0', b'1.5e-7',
                 b'9223372036854775808', b'{"k":[[[[[[[[[[]]]]]]]]]]}', b'"\xed\xa0\x80"', b'\xef\xbb\xbf{}']:
        emit(1, text, seen)
    for text in [b"AAAA", b"AA==", b"-_8", b"2025-01-01", b"2025-01-01T00:00:00.123Z", b"1970-01-01t00:00+01:00",
                 open(ROOT + "/certs/testCA.pem", "rb").read(), open(ROOT + "/AppleRootCA-G3.cer", "rb").read()]:
        emit(4, text, seen)
    receipts = "Tests/AppStoreReceiptTests/Fixtures"
    ders = [base64.b64decode(open(p, "rb").read()) for p in [receipts + "/revenuecat-sandbox-receipt.b64",
            receipts + "/receipt-sandbox-g5", receipts + "/receipt-xcode-with-purchases"]]
    ders += [open(p, "rb").read() for p in sorted(glob.glob(receipts + "/generated/receipt*.der")) if not p.endswith("root.der")]
    for der in ders:
        emit(5, der, seen)
        payload = subprocess.run(["openssl", "cms", "-verify", "-noverify", "-inform", "DER", "-binary"],
                                 input=der, capture_output=True).stdout
        if payload:
            emit(5, payload, seen)
    for token in tokens[:6]:
        emit(6, token, seen)
        emit(6, json.dumps({"signedPayload": token.decode()}).encode(), seen)
    for data in [b"", b"a", b"a" * 300, b'{"notificationType":"DID_RENEW","subtype":""}']:
        emit(6, data, seen)
    for path in [ROOT + "/AppleRootCA-G3.cer", ROOT + "/AppleWWDRCAG6.cer", ROOT + "/certs/testCA.der"]:
        emit(7, open(path, "rb").read(), seen)
    for path in sorted(glob.glob(ROOT + "/certs/*.pem")):
        pem = open(path, "rb").read().decode()
        body = "".join(l for l in pem.splitlines() if not l.startswith("-----"))
        emit(7, base64.b64decode(body), seen)
    for rows in [b'{"no":"A1","status":"paid","reason":"fix"}\n{"trade_no":"T1","ticket":null,"amount":"1.00"}\n',
                 b'no,status,expires_at\nA1,active,2025-01-01T00:00:00Z\n"A,2",,\n',
                 b'{"no":"A1"}\n', b'{"no":1,"x":2}\n', b'\xef\xbb\xbfno,reason\r\nA1,"a ""b"""\r\n']:
        emit(8, rows, seen)
    for token in tokens[:4]:
        t = token.decode()
        for selector, body in [(0, {"status": 0, "signedTransactions": [t]}), (16, {"data": [{"subscriptionGroupIdentifier": "g",
                               "lastTransactions": [{"status": 1, "originalTransactionId": "1", "signedTransactionInfo": t,
                               "signedRenewalInfo": t}]}]}), (32, {"signedTransactions": [t], "hasMore": True, "revision": "r1"}),
                               (48, {"notificationHistory": [{"signedPayload": t}], "hasMore": False, "signedTransactionInfo": t})]:
            emit(9, bytes([selector]) + json.dumps(body).encode(), seen)
    for selector, body in [(4, {"errorCode": 4000006, "errorMessage": "Invalid transaction id."}), (7, {"errorCode": 4290000}),
                           (8, {"errorCode": 5000000}), (3, {})]:
        emit(9, bytes([selector]) + json.dumps(body).encode(), seen)
    print(f"{len(seen)} seeds in {OUT}")

main()
