"""A mock AWS Bedrock runtime for the SDK suite: Converse and ConverseStream
(https://docs.aws.amazon.com/bedrock/latest/APIReference/API_runtime_Converse.html,
/API_runtime_ConverseStream.html) at `/model/{modelId}/converse` and `/converse-stream`, each
request's SigV4 signature checked as AWS checks it
(https://docs.aws.amazon.com/IAM/latest/UserGuide/create-signed-request.html: the canonical
request rebuilt from what arrived, the derived key, the signature compared), and streams framed
as `application/vnd.amazon.eventstream` messages.

The framing is written here: no maintained PyPI package encodes event-stream messages for this
Python (botocore's `eventstream` only decodes; `smithy-aws-event-stream` needs Python 3.12). The
message format is AWS's (https://docs.aws.amazon.com/AmazonS3/latest/API/RESTSelectObjectAppendix.html:
prelude = total length, headers length, prelude CRC32; string headers; payload; message CRC32),
and Tollgate's reader checks both CRCs with the `aws-smithy-eventstream` crate."""

import datetime
import hashlib
import hmac
import json
import struct
import zlib
from urllib.parse import parse_qsl, quote, urlparse

from conftest import MockProvider

ACCESS_KEY, SECRET_KEY, REGION = "AKIDSDKBEDROCK01", "sdk/Bedrock+Secret/EXAMPLE", "us-east-1"
MODEL = "amazon.nova-lite-v1:0"


def frame(event_type, payload):
    """One event-stream message: `:message-type: event`, its `:event-type`, JSON payload."""
    headers = b""
    for name, value in [(":message-type", "event"), (":event-type", event_type),
                        (":content-type", "application/json")]:
        raw = value.encode()
        headers += bytes([len(name)]) + name.encode() + b"\x07" + struct.pack(">H", len(raw)) + raw
    data = json.dumps(payload).encode()
    prelude = struct.pack(">II", 16 + len(headers) + len(data), len(headers))
    message = prelude + struct.pack(">I", zlib.crc32(prelude)) + headers + data
    return message + struct.pack(">I", zlib.crc32(message))


def sigv4_ok(method, raw_path, headers, body):
    """Whether the request is signed by ACCESS_KEY/SECRET_KEY for `bedrock` in REGION, its date
    within 15 minutes of now."""
    auth = headers.get("Authorization", "")
    if not auth.startswith("AWS4-HMAC-SHA256 "):
        return False
    parts = dict(p.strip().split("=", 1) for p in auth.removeprefix("AWS4-HMAC-SHA256 ").split(","))
    scope = parts.get("Credential", "").split("/")
    amz_date = headers.get("x-amz-date", "")
    if scope[:1] != [ACCESS_KEY] or scope[2:] != [REGION, "bedrock", "aws4_request"] \
            or not amz_date.startswith(scope[1]):
        return False
    when = datetime.datetime.strptime(amz_date, "%Y%m%dT%H%M%SZ").replace(tzinfo=datetime.timezone.utc)
    if abs((datetime.datetime.now(datetime.timezone.utc) - when).total_seconds()) > 900:
        return False
    names = parts.get("SignedHeaders", "").split(";")
    if "host" not in names or any(headers.get(n) is None for n in names):
        return False
    url = urlparse(raw_path)
    encode = lambda s: quote(s, safe="-._~")
    canonical = "\n".join([
        method,
        "/".join(encode(segment) for segment in url.path.split("/")),
        "&".join(f"{encode(k)}={encode(v)}" for k, v in sorted(parse_qsl(url.query))),
        "".join(f"{n}:{' '.join(headers.get(n).split())}\n" for n in names),
        ";".join(names),
        hashlib.sha256(body).hexdigest(),
    ])
    to_sign = "\n".join(["AWS4-HMAC-SHA256", amz_date, "/".join(scope[1:]),
                         hashlib.sha256(canonical.encode()).hexdigest()])
    key = ("AWS4" + SECRET_KEY).encode()
    for part in scope[1:]:
        key = hmac.new(key, part.encode(), hashlib.sha256).digest()
    return hmac.compare_digest(hmac.new(key, to_sign.encode(), hashlib.sha256).hexdigest(),
                               parts.get("Signature", ""))


class MockBedrock(MockProvider):
    """Answers Converse and ConverseStream for MODEL; a bad signature is AWS's 403."""

    seen = []

    def do_POST(self):
        raw = self.rfile.read(int(self.headers["Content-Length"]))
        if not sigv4_ok("POST", self.path, self.headers, raw):
            return self._json({"message": "The request signature we calculated does not match "
                                          "the signature you provided."}, 403)
        model = quote(MODEL, safe="-._~")
        if self.path not in (f"/model/{model}/converse", f"/model/{model}/converse-stream"):
            return self._json({"message": f"UnknownOperationException: {self.path}"}, 404)
        body = json.loads(raw)
        MockBedrock.seen.append((self.path, body))
        usage = {"inputTokens": 5, "outputTokens": 2, "totalTokens": 7}
        if self.path.endswith("/converse"):
            return self._json({"output": {"message": {"role": "assistant", "content": [{"text": "Hello"}]}},
                               "stopReason": "end_turn", "usage": usage, "metrics": {"latencyMs": 100}})
        self.send_response(200)
        self.send_header("Content-Type", "application/vnd.amazon.eventstream")
        self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()
        events = [("messageStart", {"role": "assistant"})]
        events += [("contentBlockDelta", {"contentBlockIndex": 0, "delta": {"text": t}}) for t in ["Hel", "lo"]]
        events += [("contentBlockStop", {"contentBlockIndex": 0}),
                   ("messageStop", {"stopReason": "end_turn"}),
                   ("metadata", {"usage": usage, "metrics": {"latencyMs": 100}})]
        stream = b"".join(frame(name, payload) for name, payload in events)
        # Split mid-message: the reader must join reads.
        for piece in (stream[:len(stream) // 3], stream[len(stream) // 3:]):
            self.wfile.write(f"{len(piece):x}\r\n".encode() + piece + b"\r\n")
            self.wfile.flush()
        self._chunk("")
