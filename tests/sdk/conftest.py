"""Fixtures for the official-SDK suite: mock OpenAI, Anthropic, Gemini and Tencent Hunyuan
upstreams, a fresh Tollgate with a channel for each, and keys.

The suite talks only to 127.0.0.1. TOLLGATE_BIN names the server binary (scripts/test.sh passes
target/debug/tollgate).
"""

import contextlib
import datetime
import hashlib
import hmac
import json
import os
import shutil
import socket
import subprocess
import tempfile
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import httpx
import pytest

ROOT = {"username": "root", "password": "password123"}


class MockProvider(BaseHTTPRequestHandler):
    """What every mock upstream shares: HTTP/1.1, quiet logs, JSON answers and chunked SSE."""

    protocol_version = "HTTP/1.1"

    def log_message(self, *args):  # keep pytest output clean
        pass

    def _body(self):
        """The request's body, sized (Content-Length) or chunked: the relay streams uploads it
        forwards as they arrive (a transcription's multipart form), without a length. A chunked
        body left unread stays on the kept-alive connection, and the next request read from it
        is garbage."""
        if "chunked" not in (self.headers.get("Transfer-Encoding") or "").lower():
            return self.rfile.read(int(self.headers.get("Content-Length") or 0))
        data = b""
        while True:
            size = int(self.rfile.readline().split(b";")[0].strip() or b"0", 16)
            if size == 0:
                while self.rfile.readline() not in (b"\r\n", b"\n", b""):
                    pass  # trailers
                return data
            data += self.rfile.read(size)
            self.rfile.readline()  # the chunk's CRLF

    def _json(self, answer, status=200):
        data = json.dumps(answer).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def _chunk(self, text):
        data = text.encode()
        self.wfile.write(f"{len(data):x}\r\n".encode() + data + b"\r\n")
        self.wfile.flush()


class MockOpenAI(MockProvider):
    """Answers chat completions (plain and SSE) with usage, like OpenAI."""

    def do_POST(self):
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        if self.path == "/v1/embeddings":
            return self._json({"object": "list", "model": body["model"],
                               "data": [{"object": "embedding", "index": 0, "embedding": [0.1, 0.2]}],
                               "usage": {"prompt_tokens": 4, "total_tokens": 4}})
        if body.get("stream"):
            self.send_response(200)
            self.send_header("Content-Type", "text/event-stream")
            self.send_header("Transfer-Encoding", "chunked")
            self.end_headers()
            events = [
                {"id": "c1", "object": "chat.completion.chunk", "created": 1, "model": body["model"],
                 "choices": [{"index": 0, "delta": {"content": piece}, "finish_reason": None}]}
                for piece in ["Hel", "lo"]
            ]
            if body.get("stream_options", {}).get("include_usage"):
                events.append({"id": "c1", "object": "chat.completion.chunk", "created": 1,
                               "model": body["model"], "choices": [],
                               "usage": {"prompt_tokens": 5, "completion_tokens": 2, "total_tokens": 7}})
            for event in events:
                self._chunk(f"data: {json.dumps(event)}\n\n")
            self._chunk("data: [DONE]\n\n")
            self._chunk("")
            return
        answer = {
            "id": "chatcmpl-1", "object": "chat.completion", "created": 1, "model": body["model"],
            "choices": [{"index": 0, "message": {"role": "assistant", "content": "Hello"},
                         "finish_reason": "stop"}],
            "usage": {"prompt_tokens": 5, "completion_tokens": 2, "total_tokens": 7},
        }
        self._json(answer)


class MockAnthropic(MockProvider):
    """Answers /v1/messages (whole and streamed) with usage, and /v1/messages/count_tokens
    (always 13), like Anthropic."""

    def do_POST(self):
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        if self.headers.get("x-api-key") != "claude-upstream-key":
            return self._json({"type": "error", "error": {"type": "authentication_error",
                                                          "message": "invalid x-api-key"}}, 401)
        usage = {"input_tokens": 5, "output_tokens": 2, "cache_read_input_tokens": 0,
                 "cache_creation_input_tokens": 0}
        if self.path == "/v1/messages/count_tokens":
            return self._json({"input_tokens": 13})
        if body.get("stream"):
            self.send_response(200)
            self.send_header("Content-Type", "text/event-stream")
            self.send_header("Transfer-Encoding", "chunked")
            self.end_headers()
            start = {"id": "msg_1", "type": "message", "role": "assistant", "model": body["model"],
                     "content": [], "stop_reason": None, "stop_sequence": None,
                     "usage": {**usage, "output_tokens": 1}}
            events = [("message_start", {"type": "message_start", "message": start}),
                      ("content_block_start", {"type": "content_block_start", "index": 0,
                                               "content_block": {"type": "text", "text": ""}}),
                      ("ping", {"type": "ping"})]
            events += [("content_block_delta", {"type": "content_block_delta", "index": 0,
                                                "delta": {"type": "text_delta", "text": piece}})
                       for piece in ["Hel", "lo"]]
            events += [("content_block_stop", {"type": "content_block_stop", "index": 0}),
                       ("message_delta", {"type": "message_delta",
                                          "delta": {"stop_reason": "end_turn", "stop_sequence": None},
                                          "usage": {"output_tokens": 2}}),
                       ("message_stop", {"type": "message_stop"})]
            for name, data in events:
                self._chunk(f"event: {name}\ndata: {json.dumps(data)}\n\n")
            self._chunk("")
            return
        self._json({"id": "msg_1", "type": "message", "role": "assistant", "model": body["model"],
                    "content": [{"type": "text", "text": "Hello"}], "stop_reason": "end_turn",
                    "stop_sequence": None, "usage": usage})


class MockGemini(MockProvider):
    """Answers :generateContent, :streamGenerateContent (SSE), :countTokens (always 9),
    :embedContent and :batchEmbedContents like the Gemini API
    (https://ai.google.dev/api/generate-content, /api/tokens, /api/embeddings)."""

    def do_POST(self):
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        if self.headers.get("x-goog-api-key") != "gemini-upstream-key":
            return self._json({"error": {"code": 400, "message": "API key not valid.",
                                         "status": "INVALID_ARGUMENT"}}, 400)
        path = self.path.split("?")[0]
        model, _, method = path.rsplit("/", 1)[-1].partition(":")
        usage = {"promptTokenCount": 5, "candidatesTokenCount": 2, "totalTokenCount": 7}
        if method == "countTokens":
            return self._json({"totalTokens": 9})
        if method == "embedContent":
            return self._json({"embedding": {"values": [0.1, 0.2, 0.3]}})
        if method == "batchEmbedContents":
            return self._json({"embeddings": [{"values": [0.1, 0.2, 0.3]}
                                              for _ in body["requests"]]})
        def candidate(text, finish):
            answer = {"content": {"role": "model", "parts": [{"text": text}]}, "index": 0}
            if finish:
                answer["finishReason"] = "STOP"
            return answer
        if method == "streamGenerateContent":
            self.send_response(200)
            self.send_header("Content-Type", "text/event-stream")
            self.send_header("Transfer-Encoding", "chunked")
            self.end_headers()
            pieces = [("Hel", False), ("lo", True)]
            for text, finish in pieces:
                event = {"candidates": [candidate(text, finish)], "modelVersion": model,
                         "usageMetadata": usage if finish else {"promptTokenCount": 5}}
                self._chunk(f"data: {json.dumps(event)}\r\n\r\n")
            self._chunk("")
            return
        self._json({"candidates": [candidate("Hello", True)], "usageMetadata": usage,
                    "modelVersion": model})


class MockHunyuan(MockProvider):
    """Answers Tencent Hunyuan's ChatCompletions (API 3.0, 2023-09-01; the official SDK's
    hunyuan/v20230901 models): the TC3-HMAC-SHA256 signature checked as Tencent's "Signature v3"
    document says (a wrong one answered HTTP 200 with AuthFailure.SignatureFailure, as Tencent
    does), then a whole answer or an SSE stream of response parameters."""

    SECRET_ID = "AKIDsdkhunyuan0001"
    SECRET_KEY = "sdk-hunyuan-secret"

    def signed(self, raw):
        stamp = self.headers.get("X-TC-Timestamp", "")
        if not stamp.isdigit():
            return False
        date = datetime.datetime.fromtimestamp(int(stamp), datetime.timezone.utc).strftime("%Y-%m-%d")
        canonical = (f"POST\n/\n\ncontent-type:{self.headers.get('Content-Type')}\n"
                     f"host:{self.headers.get('Host')}\n\ncontent-type;host\n"
                     + hashlib.sha256(raw).hexdigest())
        scope = f"{date}/hunyuan/tc3_request"
        to_sign = (f"TC3-HMAC-SHA256\n{stamp}\n{scope}\n"
                   + hashlib.sha256(canonical.encode()).hexdigest())
        key = ("TC3" + self.SECRET_KEY).encode()
        for part in (date, "hunyuan", "tc3_request"):
            key = hmac.new(key, part.encode(), hashlib.sha256).digest()
        signature = hmac.new(key, to_sign.encode(), hashlib.sha256).hexdigest()
        expected = (f"TC3-HMAC-SHA256 Credential={self.SECRET_ID}/{scope}, "
                    f"SignedHeaders=content-type;host, Signature={signature}")
        return (self.headers.get("Authorization") == expected
                and self.headers.get("X-TC-Action") == "ChatCompletions")

    def do_POST(self):
        raw = self.rfile.read(int(self.headers["Content-Length"]))
        if not self.signed(raw):
            return self._json({"Response": {"Error": {"Code": "AuthFailure.SignatureFailure",
                                                      "Message": "signature mismatch"},
                                            "RequestId": "sdk"}})
        body = json.loads(raw)
        if body.get("Stream"):
            self.send_response(200)
            self.send_header("Content-Type", "text/event-stream")
            self.send_header("Transfer-Encoding", "chunked")
            self.end_headers()
            for i, (piece, finish) in enumerate([("Hel", ""), ("lo", "stop")]):
                chunk = {"Note": "以上内容为AI生成", "Id": "hy1", "Created": 1,
                         "Choices": [{"Delta": {"Role": "assistant", "Content": piece},
                                      "FinishReason": finish}],
                         "Usage": {"PromptTokens": 5, "CompletionTokens": i + 1,
                                   "TotalTokens": 6 + i}}
                self._chunk(f"data: {json.dumps(chunk)}\n\n")
            self._chunk("")
            return
        self._json({"Response": {"Id": "hy1", "Created": 1, "RequestId": "hy1",
                                 "Choices": [{"FinishReason": "stop",
                                              "Message": {"Role": "assistant", "Content": "Hello"}}],
                                 "Usage": {"PromptTokens": 5, "CompletionTokens": 2,
                                           "TotalTokens": 7}}})


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@contextlib.contextmanager
def signed_in_root(prefix):
    """A throw-away Tollgate (temporary database, free port, 127.0.0.1) set up and signed in as
    root: yields (base_url, client, root's user id); the server stops on exit."""
    binary = os.environ.get("TOLLGATE_BIN", "target/debug/tollgate")
    data = tempfile.mkdtemp(prefix=prefix)
    port = free_port()
    server = subprocess.Popen([binary, "--listen", f"127.0.0.1:{port}", "--data-dir", data],
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 30
        while True:
            try:
                httpx.get(f"{base}/api/status", timeout=1).raise_for_status()
                break
            except httpx.HTTPError:
                if time.monotonic() > deadline or server.poll() is not None:
                    raise RuntimeError("tollgate did not start")
                time.sleep(0.05)
        api = httpx.Client(base_url=base)
        api.post("/api/setup", json={**ROOT, "confirmPassword": ROOT["password"]}).raise_for_status()
        uid = str(api.post("/api/user/login", json=ROOT).json()["data"]["id"])
        yield base, api, uid
    finally:
        server.terminate()
        server.wait(timeout=10)
        shutil.rmtree(data, ignore_errors=True)


@pytest.fixture(scope="session")
def gateway():
    """Yields (base_url, api_key, poor_key) of a configured Tollgate."""
    upstream = ThreadingHTTPServer(("127.0.0.1", 0), MockOpenAI)
    threading.Thread(target=upstream.serve_forever, daemon=True).start()
    claude = ThreadingHTTPServer(("127.0.0.1", 0), MockAnthropic)
    threading.Thread(target=claude.serve_forever, daemon=True).start()
    gemini = ThreadingHTTPServer(("127.0.0.1", 0), MockGemini)
    threading.Thread(target=gemini.serve_forever, daemon=True).start()
    hunyuan = ThreadingHTTPServer(("127.0.0.1", 0), MockHunyuan)
    threading.Thread(target=hunyuan.serve_forever, daemon=True).start()
    with signed_in_root("tollgate-sdk-") as (base, api, uid):
        api.headers["New-Api-User"] = uid
        channel = {"name": "mock", "type": 1, "key": "upstream-key", "models": "gpt-4o-mini,text-embedding-3-small",
                   "group": "default", "base_url": f"http://127.0.0.1:{upstream.server_port}"}
        assert api.post("/api/channel/", json=channel).json()["success"]
        channel = {"name": "claude", "type": 14, "key": "claude-upstream-key",
                   "models": "claude-sonnet-4-20250514", "group": "default",
                   "base_url": f"http://127.0.0.1:{claude.server_port}"}
        assert api.post("/api/channel/", json=channel).json()["success"]
        channel = {"name": "gemini", "type": 24, "key": "gemini-upstream-key",
                   "models": "gemini-2.5-flash,gemini-embedding-001", "group": "default",
                   "base_url": f"http://127.0.0.1:{gemini.server_port}"}
        assert api.post("/api/channel/", json=channel).json()["success"]
        channel = {"name": "hunyuan", "type": 23,
                   "key": f"1300000000|{MockHunyuan.SECRET_ID}|{MockHunyuan.SECRET_KEY}",
                   "models": "hunyuan-lite", "group": "default",
                   "base_url": f"http://127.0.0.1:{hunyuan.server_port}"}
        assert api.post("/api/channel/", json=channel).json()["success"]
        # Hunyuan's models have no default price: the test prices one (merged with the defaults).
        assert api.put("/api/option/", json={"key": "ModelRatio",
                                             "value": json.dumps({"hunyuan-lite": 1})}).json()["success"]

        def key(quota):
            token = api.post("/api/token/", json={"name": "sdk", "remain_quota": quota}).json()["data"]
            return api.post(f"/api/token/{token['id']}/key").json()["data"]["key"]

        try:
            yield base, key(5_000_000), key(1)
        finally:
            upstream.shutdown()
            claude.shutdown()
            gemini.shutdown()
            hunyuan.shutdown()
