#!/usr/bin/env python3
"""A local stand-in for the App Store Server API, for iapctl's end-to-end tests only.

Python's standard library and the openssl command, nothing else. It listens on 127.0.0.1 (a port the
kernel picks; written to DIR/port), serves HTTPS with the certificate DIR/tls.crt + DIR/tls.key the test
made, and behaves as Apple documents:

- every request must carry `Authorization: Bearer <JWT>`: header alg ES256, typ JWT, kid = the key id;
  claims iss = the issuer id, aud = appstoreconnect-v1, bid = the bundle id, iat not in the future,
  exp after now and at most 60 minutes after iat; the ES256 signature must verify with DIR/key.pub.pem
  (checked with `openssl dgst`). Anything else: 401 with no body, as Apple answers.
- the first path segment names the environment (/production/... or /sandbox/...: the test points
  iapctl's test-only base URLs there); the rest is Apple's path.
- answers come from DIR/routes.json, a list of {"env", "method", "path", "query"?, "body"?, "responses"}:
  the first route whose env ("*" for both), method, path, query subset and body subset match serves its
  responses in order (the last one repeats). A response is {"status", "json"? | "file"?, "retryAfterMs"?,
  "delayMs"?}: retryAfterMs sets Retry-After to now + that many ms (Apple's unit: ms since the epoch);
  delayMs answers that much later (for timeouts).
  Hostile answers (Apple never sends them; iapctl must stay bounded): "sequence": NAME sets member NAME
  of the JSON to "s<n>", n counting the route's answers from 0 (a pagination that never ends);
  "padBytes": N adds a member "padding" of N bytes; "chunked": true sends the body in chunks without a
  Content-Length (so the client cannot know its size in advance).
  No route: 404 with Apple's "Transaction id not found." body (errorCode 4040010).
- Send Consumption Information (PUT /inApps/v2/transactions/consumption/{transactionId}) is checked
  first, as Apple documents the v2 ConsumptionRequest (App Store Server API 1.19+): the transaction
  must be listed in DIR/products.json ({transactionId: the signed transaction's "type"}), else 404
  4040010; customerConsented must be true (4000035 InvalidCustomerConsentedError); deliveryStatus one
  of Apple's values (4000036 InvalidDeliveryStatusError); sampleContentProvided a Boolean (4000041
  InvalidSampleContentProvidedError); for an auto-renewable subscription no consumptionPercentage
  (4000209 ConsumptionPercentageAutoRenewableSubscriptionError); otherwise an integer 0-100000
  (ConsumptionPercentageOutOfRangeError), 0 when deliveryStatus is not DELIVERED
  (UndeliveredConsumptionPercentageNonZeroError), above 0 and below 100000 with GRANT_PRORATED;
  refundPreference one of DECLINE, GRANT_FULL, GRANT_PRORATED (InvalidRefundPreferenceError). The
  errors whose number Apple's pages do not give here answer 4000000 (GeneralBadRequestError) with
  the documented error's name in the message. A body that passes goes on to the routes.
- every request is appended to DIR/requests.ndjson (env, method, path, query, body, claims).

It stops by itself: after --lifetime seconds, or as soon as its parent process is gone.
"""
import base64
import json
import os
import ssl
import subprocess
import sys
import tempfile
import threading
import time
import urllib.parse
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

DIR = sys.argv[1]
LIFETIME = float(sys.argv[2]) if len(sys.argv) > 2 else 300.0
CONFIG = json.load(open(os.path.join(DIR, "config.json")))
LOCK = threading.Lock()
STATE = {"mtime": None, "routes": [], "served": {}}
VERIFIED = set()


def b64url(text):
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def der_integer(value):
    value = value.lstrip(b"\x00") or b"\x00"
    if value[0] & 0x80:
        value = b"\x00" + value
    return b"\x02" + bytes([len(value)]) + value


def signature_verifies(signing_input, raw):
    if len(raw) != 64:
        return False
    body = der_integer(raw[:32]) + der_integer(raw[32:])
    der = b"\x30" + bytes([len(body)]) + body
    with tempfile.TemporaryDirectory(dir=DIR) as scratch:
        data, sig = os.path.join(scratch, "data"), os.path.join(scratch, "sig")
        open(data, "wb").write(signing_input)
        open(sig, "wb").write(der)
        result = subprocess.run(
            ["openssl", "dgst", "-sha256", "-verify", os.path.join(DIR, "key.pub.pem"), "-signature", sig, data],
            capture_output=True)
        return result.returncode == 0


def check_token(header_value):
    """Returns (claims, None) for a good token, (claims or None, reason) otherwise."""
    if not header_value or not header_value.startswith("Bearer "):
        return None, "no bearer token"
    token = header_value[len("Bearer "):]
    parts = token.split(".")
    if len(parts) != 3:
        return None, "not a compact JWT"
    try:
        header = json.loads(b64url(parts[0]))
        claims = json.loads(b64url(parts[1]))
        raw = b64url(parts[2])
    except Exception:
        return None, "undecodable JWT"
    now = time.time()
    if header.get("alg") != "ES256" or header.get("typ") != "JWT":
        return claims, "header alg/typ"
    if header.get("kid") != CONFIG["keyId"]:
        return claims, "kid"
    if claims.get("iss") != CONFIG["issuerId"]:
        return claims, "iss"
    if claims.get("aud") != "appstoreconnect-v1":
        return claims, "aud"
    if claims.get("bid") != CONFIG["bundleId"]:
        return claims, "bid"
    iat, exp = claims.get("iat"), claims.get("exp")
    if not isinstance(iat, int) or not isinstance(exp, int):
        return claims, "iat/exp not integers"
    if iat > now + 60 or exp <= now or exp - iat > 3600:
        return claims, "expired or too long"
    with LOCK:
        known = token in VERIFIED
    if not known:
        if not signature_verifies((parts[0] + "." + parts[1]).encode(), raw):
            return claims, "signature"
        with LOCK:
            VERIFIED.add(token)
    return claims, None


def routes():
    path = os.path.join(DIR, "routes.json")
    mtime = os.stat(path).st_mtime_ns
    if mtime != STATE["mtime"]:
        STATE["routes"] = json.load(open(path))
        STATE["served"] = {}
        STATE["mtime"] = mtime
    return STATE["routes"]


def subset(expected, actual):
    if isinstance(expected, dict):
        return isinstance(actual, dict) and all(k in actual and subset(v, actual[k]) for k, v in expected.items())
    return expected == actual


CONSUMPTION_PATH = "/inApps/v2/transactions/consumption/"
DELIVERY_STATUSES = ("DELIVERED", "UNDELIVERED_QUALITY_ISSUE", "UNDELIVERED_WRONG_ITEM", "UNDELIVERED_SERVER_OUTAGE",
                     "UNDELIVERED_OTHER")
REFUND_PREFERENCES = ("DECLINE", "GRANT_FULL", "GRANT_PRORATED")


def products():
    path = os.path.join(DIR, "products.json")
    return json.load(open(path)) if os.path.exists(path) else {}


def consumption_refusal(transaction_id, body):
    """Apple's refusal of a Send Consumption Information request, as (status, payload), or None."""
    def refused(code, message):
        return 400, json.dumps({"errorCode": code, "errorMessage": message}).encode()
    product_type = products().get(transaction_id)
    if product_type is None:
        return 404, b'{"errorCode": 4040010, "errorMessage": "Transaction id not found."}'
    if not isinstance(body, dict):
        return 400, None
    if body.get("customerConsented") is not True:
        return refused(4000035, "Invalid request. The customer consented field is invalid or doesn't indicate that the "
                                "customer consented.")
    if body.get("deliveryStatus") not in DELIVERY_STATUSES:
        return refused(4000036, "Invalid request. The delivery status field is invalid.")
    if not isinstance(body.get("sampleContentProvided"), bool):
        return refused(4000041, "Invalid request. The sample content provided field is invalid.")
    preference = body.get("refundPreference")
    if "refundPreference" in body and preference not in REFUND_PREFERENCES:
        return refused(4000000, "InvalidRefundPreferenceError: the refund preference is invalid.")
    has_percentage = "consumptionPercentage" in body
    percentage = body.get("consumptionPercentage")
    if product_type == "Auto-Renewable Subscription":
        if has_percentage:
            return refused(4000209, "Invalid request. The consumption percentage field is not supported for "
                                    "auto-renewable subscription transactions.")
        return None
    if has_percentage and (isinstance(percentage, bool) or not isinstance(percentage, int)
                           or not 0 <= percentage <= 100000):
        return refused(4000000, "ConsumptionPercentageOutOfRangeError: the consumption percentage is out of range.")
    if body["deliveryStatus"] != "DELIVERED" and has_percentage and percentage != 0:
        return refused(4000000, "UndeliveredConsumptionPercentageNonZeroError: the consumption percentage must be "
                                "zero for the provided delivery status.")
    if preference == "GRANT_PRORATED" and not (has_percentage and 0 < percentage < 100000):
        return refused(4000000, "GeneralBadRequestError: GRANT_PRORATED needs a consumptionPercentage greater than 0 "
                                "and less than 100000.")
    return None


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def answer(self, status, payload=None, headers=()):
        body = b"" if payload is None else payload
        self.send_response(status)
        if payload is not None:
            self.send_header("Content-Type", "application/json")
        for name, value in headers:
            self.send_header(name, value)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def handle_any(self):
        url = urllib.parse.urlsplit(self.path)
        segments = url.path.split("/", 2)
        env, path = (segments[1], "/" + segments[2]) if len(segments) == 3 else ("", url.path)
        query = urllib.parse.parse_qs(url.query, keep_blank_values=True)
        length = int(self.headers.get("Content-Length") or 0)
        raw_body = self.rfile.read(length) if length else b""
        try:
            body = json.loads(raw_body) if raw_body else None
        except ValueError:
            body = "<not JSON>"
        claims, problem = check_token(self.headers.get("Authorization"))
        record = {"env": env, "method": self.command, "path": path, "query": query, "body": body,
                  "contentType": self.headers.get("Content-Type"), "claims": claims, "tokenProblem": problem,
                  "token": (self.headers.get("Authorization") or "")[7:]}
        with LOCK:
            with open(os.path.join(DIR, "requests.ndjson"), "a") as log:
                log.write(json.dumps(record) + "\n")
        if problem:
            return self.answer(401)
        if self.command == "PUT" and path.startswith(CONSUMPTION_PATH):
            refusal = consumption_refusal(path[len(CONSUMPTION_PATH):], body)
            if refusal:
                return self.answer(*refusal)
        with LOCK:
            chosen = None
            for index, route in enumerate(routes()):
                if route.get("env", "*") not in ("*", env) or route["method"] != self.command or route["path"] != path:
                    continue
                if not subset(route.get("query", {}), {k: v[-1] if len(v) == 1 else v for k, v in query.items()}):
                    continue
                if "query" in route and route.get("exactQuery") and set(route["query"]) != set(query):
                    continue
                if "body" in route and not subset(route["body"], body):
                    continue
                served = STATE["served"].get(index, 0)
                STATE["served"][index] = served + 1
                responses = route["responses"]
                chosen = dict(responses[min(served, len(responses) - 1)])
                chosen["served"] = served
                break
        if chosen is None:
            return self.answer(404, b'{"errorCode": 4040010, "errorMessage": "Transaction id not found."}')
        if "delayMs" in chosen:
            time.sleep(chosen["delayMs"] / 1000)
        headers = []
        if "retryAfterMs" in chosen:
            headers.append(("Retry-After", str(int(time.time() * 1000) + chosen["retryAfterMs"])))
        if "file" in chosen:
            payload = open(os.path.join(DIR, chosen["file"]), "rb").read()
        elif "json" in chosen:
            document = chosen["json"]
            if "sequence" in chosen or "padBytes" in chosen:
                document = dict(document)
                if "sequence" in chosen:
                    document[chosen["sequence"]] = "s%d" % chosen["served"]
                if "padBytes" in chosen:
                    document["padding"] = "x" * chosen["padBytes"]
            payload = json.dumps(document).encode()
        else:
            payload = None
        if chosen.get("chunked") and payload is not None:
            return self.answer_chunked(chosen["status"], payload)
        self.answer(chosen["status"], payload, headers)

    def answer_chunked(self, status, payload):
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()
        for start in range(0, len(payload), 65536):
            chunk = payload[start:start + 65536]
            self.wfile.write(b"%x\r\n" % len(chunk) + chunk + b"\r\n")
        self.wfile.write(b"0\r\n\r\n")

    do_GET = do_POST = do_PUT = do_DELETE = handle_any


class Server(ThreadingHTTPServer):
    def handle_error(self, request, client_address):
        # A client that hangs up mid-answer (iapctl refusing an oversized or slow answer, a test
        # that stops early) is part of what is tested, not a server failure: no traceback for it.
        if isinstance(sys.exc_info()[1], (ssl.SSLError, ConnectionError)):
            return
        super().handle_error(request, client_address)


def main():
    server = Server(("127.0.0.1", 0), Handler)
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(os.path.join(DIR, "tls.crt"), os.path.join(DIR, "tls.key"))
    server.socket = context.wrap_socket(server.socket, server_side=True)
    parent = os.getppid()

    def watchdog():
        deadline = time.time() + LIFETIME
        while time.time() < deadline and os.getppid() == parent:
            time.sleep(0.2)
        os._exit(0)

    threading.Thread(target=watchdog, daemon=True).start()
    with open(os.path.join(DIR, "port.tmp"), "w") as out:
        out.write(str(server.server_address[1]))
    os.rename(os.path.join(DIR, "port.tmp"), os.path.join(DIR, "port"))
    server.serve_forever()


if __name__ == "__main__":
    main()
