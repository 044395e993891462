"""Schemathesis fuzzes every operation of /api/openapi.json (issue #22 item 12) against a
throw-away server (temporary database, ephemeral port, 127.0.0.1) signed in as root with a
system access token: no answer may be a 5xx. Pinned version, fixed seed, deterministic
generation, capped examples, at most 5 minutes.

The OpenAI routes Tollgate deliberately does not implement (files, fine-tuning, batches,
assistants, threads) answer 501 by design and are left out. The first pass reaches the relay
operations with the access token, which is not an API key: up to their authentication. The
second pass fuzzes the relay operations with an API key against mock OpenAI-compatible,
Anthropic and Gemini upstreams, with bodies naming the models those channels serve
(fuzz_hooks.py), so requests go through conversion, the upstream call and billing.
"""
import http.client
import json
import os
import re
import subprocess
import sys
import threading
from http.server import ThreadingHTTPServer

from conftest import MockAnthropic, MockGemini, MockProvider, signed_in_root
from fuzz_hooks import CLAUDE_MODELS, GEMINI_MODELS, OPENAI_MODELS

NOT_IMPLEMENTED = r"^/v1/(files|fine_tuning|batches|assistants|threads)"


def test_no_operation_answers_a_server_error():
    with signed_in_root("tollgate-fuzz-") as (base, api, uid):
        token = api.get("/api/user/token", headers={"New-Api-User": uid}).json()["data"]
        st = os.path.join(os.path.dirname(sys.executable), "schemathesis")
        run = subprocess.run(
            [st, "run", f"{base}/api/openapi.json",
             "--checks", "not_a_server_error",
             "--seed", "1", "--generation-deterministic", "--max-examples", "10",
             "--phases", "examples,coverage,fuzzing",
             "--exclude-path-regex", NOT_IMPLEMENTED,
             "--request-timeout", "10",
             "-H", f"Authorization: {token}", "-H", f"New-Api-User: {uid}"],
            stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=300,
        )
        assert run.returncode == 0, run.stdout[-6000:] + run.stderr[-2000:]
        # Every operation but the 501 ones was fuzzed (the exclusion took, nothing else did).
        selected = re.search(r"Selected: (\d+)/(\d+)", run.stdout)
        assert selected, run.stdout[-2000:]
        tested, total = int(selected[1]), int(selected[2])
        assert 100 <= tested < total, selected[0]


class MockOpenAICompatible(MockProvider):
    """Answers every OpenAI route the relay forwards, whatever the request holds: chat and
    text completions (whole and streamed), embeddings, images, speech, transcriptions,
    moderations, rerank and the Responses API (whole and streamed)."""

    def do_POST(self):
        raw = self._body()
        try:
            body = json.loads(raw)
        except ValueError:
            body = {}
        if not isinstance(body, dict):
            body = {}
        model = body.get("model") if isinstance(body.get("model"), str) else "gpt-4o-mini"
        stream = body.get("stream") is True
        path = self.path.split("?")[0]
        usage = {"prompt_tokens": 5, "completion_tokens": 2, "total_tokens": 7}
        if path.endswith("/embeddings"):
            return self._json({"object": "list", "model": model, "data": [
                {"object": "embedding", "index": 0, "embedding": [0.1, 0.2]}],
                "usage": {"prompt_tokens": 4, "total_tokens": 4}})
        if path.endswith("/images/generations"):
            return self._json({"created": 1, "data": [{"url": "https://example.com/a.png"}]})
        if path.endswith("/audio/speech"):
            self.send_response(200)
            self.send_header("Content-Type", "audio/mpeg")
            self.send_header("Content-Length", "4")
            self.end_headers()
            self.wfile.write(b"ID3\x00")
            return
        if path.endswith(("/audio/transcriptions", "/audio/translations")):
            return self._json({"text": "hello"})
        if path.endswith("/moderations"):
            return self._json({"id": "modr-1", "model": model, "results": [
                {"flagged": False, "categories": {}, "category_scores": {}}]})
        if path.endswith("/rerank"):
            return self._json({"id": "rr-1", "results": [{"index": 0, "relevance_score": 0.5}],
                               "usage": {"prompt_tokens": 3, "total_tokens": 3}})
        if path.endswith("/responses"):
            return self._responses(model, stream)
        if path.endswith("/completions") and not path.endswith("/chat/completions"):
            chunk = lambda text, finish: {"id": "cmpl-1", "object": "text_completion",
                                          "created": 1, "model": model,
                                          "choices": [{"text": text, "index": 0,
                                                       "finish_reason": finish}]}
            if stream:
                return self._sse([chunk("Hel", None), {**chunk("lo", "stop"), "usage": usage}])
            return self._json({**chunk("Hello", "stop"), "usage": usage})
        if stream:
            events = [{"id": "c1", "object": "chat.completion.chunk", "created": 1, "model": model,
                       "choices": [{"index": 0, "delta": {"content": piece},
                                    "finish_reason": None}]} for piece in ["Hel", "lo"]]
            events.append({"id": "c1", "object": "chat.completion.chunk", "created": 1,
                           "model": model, "choices": [], "usage": usage})
            return self._sse(events)
        return self._json({
            "id": "chatcmpl-1", "object": "chat.completion", "created": 1, "model": model,
            "choices": [{"index": 0, "message": {"role": "assistant", "content": "Hello"},
                         "finish_reason": "stop"}],
            "usage": usage})

    def _sse(self, events, named=False):
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()
        for event in events:
            prefix = f"event: {event['type']}\n" if named else ""
            self._chunk(f"{prefix}data: {json.dumps(event)}\n\n")
        if not named:
            self._chunk("data: [DONE]\n\n")
        self._chunk("")

    def _responses(self, model, stream):
        message = {"type": "message", "id": "msg_1", "status": "completed", "role": "assistant",
                   "content": [{"type": "output_text", "text": "Hello", "annotations": []}]}
        done = {"id": "resp_1", "object": "response", "created_at": 1, "status": "completed",
                "model": model, "output": [message],
                "usage": {"input_tokens": 5, "output_tokens": 2, "total_tokens": 7}}
        if not stream:
            return self._json(done)
        started = {**done, "status": "in_progress", "output": [], "usage": None}
        self._sse([
            {"type": "response.created", "sequence_number": 0, "response": started},
            {"type": "response.output_text.delta", "sequence_number": 1, "item_id": "msg_1",
             "output_index": 0, "content_index": 0, "delta": "Hello"},
            {"type": "response.completed", "sequence_number": 2, "response": done},
        ], named=True)


def serve(handler):
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server


def test_the_mock_reads_a_chunked_upload_whole():
    """The relay streams a transcription's upload without a length (chunked). The mock used to
    read only a Content-Length's worth (none), left the chunks on the kept-alive connection and
    answered them as the next request with a 400 and a close; when the relay reused that
    connection first, its request failed (a flaky 502 in the fuzzing pass below)."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), MockOpenAICompatible)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        conn = http.client.HTTPConnection("127.0.0.1", server.server_port, timeout=5)
        for _ in range(2):
            conn.request("POST", "/v1/audio/transcriptions", body=iter([b"--b\r\n", b"--b--\r\n"]),
                         headers={"Content-Type": "multipart/form-data; boundary=b"},
                         encode_chunked=True)
            answer = conn.getresponse()
            assert answer.status == 200, answer.status
            assert json.loads(answer.read()) == {"text": "hello"}
        conn.close()
    finally:
        server.shutdown()


def test_relay_operations_answer_no_server_error_past_authentication():
    upstreams = [serve(MockOpenAICompatible), serve(MockAnthropic), serve(MockGemini)]
    try:
        with signed_in_root("tollgate-fuzz-relay-") as (base, api, uid):
            api.headers["New-Api-User"] = uid
            for (name, kind, key, models), upstream in zip([
                ("openai", 1, "upstream-key", OPENAI_MODELS),
                ("claude", 14, "claude-upstream-key", CLAUDE_MODELS),
                ("gemini", 24, "gemini-upstream-key", GEMINI_MODELS),
            ], upstreams):
                channel = {"name": name, "type": kind, "key": key, "models": ",".join(models),
                           "group": "default",
                           "base_url": f"http://127.0.0.1:{upstream.server_port}"}
                answer = api.post("/api/channel/", json=channel).json()
                assert answer["success"], answer
            answer = api.put("/api/user/", json={"id": int(uid), "quota": 10**12}).json()
            assert answer["success"], answer
            token = api.post("/api/token/", json={"name": "fuzz", "unlimited_quota": True,
                                                  "expired_time": -1}).json()["data"]
            key = api.post(f"/api/token/{token['id']}/key").json()["data"]["key"]
            st = os.path.join(os.path.dirname(sys.executable), "schemathesis")
            env = {**os.environ, "SCHEMATHESIS_HOOKS": "fuzz_hooks",
                   "PYTHONPATH": os.path.dirname(__file__)}
            run = subprocess.run(
                [st, "run", f"{base}/api/openapi.json",
                 "--checks", "not_a_server_error", "--mode", "positive",
                 "--seed", "1", "--generation-deterministic", "--max-examples", "25",
                 "--phases", "examples,coverage,fuzzing",
                 "--include-path-regex", r"^/(v1|v1beta)/",
                 "--exclude-path-regex", NOT_IMPLEMENTED,
                 "--request-timeout", "10",
                 "-H", f"Authorization: Bearer {key}"],
                stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=300, env=env,
            )
            assert run.returncode == 0, run.stdout[-6000:] + run.stderr[-2000:]
            selected = re.search(r"Selected: (\d+)/(\d+)", run.stdout)
            assert selected, run.stdout[-2000:]
            assert int(selected[1]) >= 14, selected[0]
            # The fuzz went past authentication: the relay billed answered requests.
            used = api.get(f"/api/user/{uid}").json()["data"]["used_quota"]
            assert used > 0, used
    finally:
        for upstream in upstreams:
            upstream.shutdown()
