#!/usr/bin/env python3
"""Builds Fuzz/corpus from the test fixtures (run from the package root; re-run when fixtures change).

Each seed starts with the mode byte read by Fuzz/FuzzTarget.swift:
0 framing (raw JWS, webhook bodies, API responses), 1 JSON, 2 JWS payload, 3 JWS header, 4 encodings,
5 StoreKit 1 receipt (PKCS#7 DER, and the bare receipt payload it signs; needs the openssl command),
6 LZ stream (2 bytes of output length, little-endian, then the stream; see Sources/StoreSQL/LegacyLedgerFormat.swift).
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

# Must match `fuzzLZDictionary` in Fuzz/FuzzTarget.swift.
LZ_DICTIONARY = b'{"notificationType":"DID_RENEW","subtype":"","data":{"signedTransactionInfo":"{"transactionId":"","price":'

def lz_varint(n):
    out = bytearray()
    while n >= 0x80:
        out.append(n & 0x7F | 0x80)
        n >>= 7
    return bytes(out + bytes([n]))

def lz_compress(data, dictionary):
    """A slow, simple greedy encoder of the format (for seeds only; the real one is in Swift)."""
    window, out, i, anchor = dictionary + data, bytearray(), len(dictionary), len(dictionary)
    def sequence(literals, distance, length):
        m = 0 if length == 0 else length - 4
        out.append(min(len(literals), 15) << 4 | min(m, 15))
        if len(literals) >= 15:
            out.extend(lz_varint(len(literals) - 15))
        out.extend(literals)
        if length:
            out.extend(lz_varint(distance))
            if m >= 15:
                out.extend(lz_varint(m - 15))
    while i + 4 <= len(window):
        best, distance = 0, 0
        for c in range(max(0, i - 4096), i):
            n = 0
            while i + n < len(window) and window[c + n] == window[i + n]:
                n += 1
            if n > best:
                best, distance = n, i - c
        if best < 4:
            i += 1
            continue
        sequence(window[anchor:i], distance, best)
        i += best
        anchor = i
    if anchor < len(window):
        sequence(window[anchor:], 0, 0)
    return bytes(out)

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
    for path in sorted(glob.glob(ROOT + "/real/*.json"))[:6]:
        data = open(path, "rb").read()[:4000]
        emit(6, len(data).to_bytes(2, "little") + lz_compress(data, LZ_DICTIONARY), seen)
    for data in [b"", b"a", b"a" * 300, b'{"notificationType":"DID_RENEW","subtype":""}']:
        emit(6, len(data).to_bytes(2, "little") + lz_compress(data, LZ_DICTIONARY), seen)
    print(f"{len(seen)} seeds in {OUT}")

main()
