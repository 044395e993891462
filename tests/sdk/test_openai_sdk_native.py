"""The official `openai` SDK through Tollgate to the channel types with wire formats of their own
(one case per type, whole and streamed): the upstream is a mock speaking the provider's documented
format and checking its credential as the provider would; each case checks what the SDK got,
what the upstream was sent, and what the caller was billed (the key's used quota)."""

import json
import threading
from http.server import ThreadingHTTPServer
from urllib.parse import parse_qs, urlparse

import openai
import pytest

from conftest import MockProvider, signed_in_root

BAIDU_AK, BAIDU_SK, BAIDU_TOKEN = "sdk-baidu-ak", "sdk-baidu-sk", "24.sdk-baidu-token"
DIFY_KEY = "app-sdk-dify"
COZE_TOKEN, COZE_BOT = "pat_sdk_coze", "7348293334"


class MockBaidu(MockProvider):
    """Baidu Qianfan v1: the OAuth client-credentials token endpoint and ERNIE chat
    (`wenxinworkshop/chat/{endpoint}?access_token=`), whole and SSE, errors in 200 bodies."""

    sent = []

    def do_POST(self):
        url = urlparse(self.path)
        query = {k: v[0] for k, v in parse_qs(url.query).items()}
        length = int(self.headers.get("Content-Length") or 0)
        body = json.loads(self.rfile.read(length) or b"null")
        if url.path == "/oauth/2.0/token":
            if (query.get("grant_type"), query.get("client_id"), query.get("client_secret")) != (
                    "client_credentials", BAIDU_AK, BAIDU_SK):
                return self._json({"error": "invalid_client", "error_description": "unknown client id"}, 401)
            return self._json({"access_token": BAIDU_TOKEN, "expires_in": 2592000})
        if url.path != "/rpc/2.0/ai_custom/v1/wenxinworkshop/chat/completions" \
                or query.get("access_token") != BAIDU_TOKEN:
            return self._json({"error_code": 110, "error_msg": "Access token invalid or no longer valid"})
        MockBaidu.sent.append(body)
        usage = lambda c: {"prompt_tokens": 5, "completion_tokens": c, "total_tokens": 5 + c}
        if not body.get("stream"):
            return self._json({"id": "as-1", "object": "chat.completion", "created": 1, "result": "Hello",
                               "is_truncated": False, "need_clear_history": False,
                               "finish_reason": "normal", "usage": usage(2)})
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()
        for i, (text, end) in enumerate([("Hel", False), ("lo", True)]):
            chunk = {"id": "as-2", "object": "chat.completion", "created": 1, "sentence_id": i,
                     "is_end": end, "is_truncated": False, "result": text,
                     "need_clear_history": False, "usage": usage(i + 1)}
            self._chunk(f"data: {json.dumps(chunk)}\n\n")
        self._chunk("")


class MockDify(MockProvider):
    """A Dify chat app: `POST /v1/chat-messages` with the app key as bearer, blocking or SSE
    (`message` events, `message_end` with the usage)."""

    sent = []

    def do_POST(self):
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        if self.path != "/v1/chat-messages" or self.headers.get("Authorization") != f"Bearer {DIFY_KEY}":
            return self._json({"code": "unauthorized", "message": "Access token is invalid", "status": 401}, 401)
        MockDify.sent.append(body)
        usage = {"prompt_tokens": 5, "completion_tokens": 2, "total_tokens": 7, "currency": "USD"}
        if body["response_mode"] == "blocking":
            return self._json({"event": "message", "message_id": "m1", "conversation_id": "c1",
                               "mode": "chat", "answer": "Hello", "metadata": {"usage": usage},
                               "created_at": 1})
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()
        for text in ["Hel", "lo"]:
            event = {"event": "message", "message_id": "m2", "conversation_id": "c1", "answer": text}
            self._chunk(f"data: {json.dumps(event)}\n\n")
        end = {"event": "message_end", "message_id": "m2", "conversation_id": "c1", "metadata": {"usage": usage}}
        self._chunk(f"data: {json.dumps(end)}\n\n")
        self._chunk("")


class MockCoze(MockProvider):
    """A Coze bot: `POST /v3/chat` (chat API v3) with a personal access token as bearer, always
    asked for its event stream (`conversation.message.delta` answers, `conversation.chat.completed`
    with the usage, `done`)."""

    sent = []

    def do_POST(self):
        url = urlparse(self.path)
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        if url.path != "/v3/chat" or self.headers.get("Authorization") != f"Bearer {COZE_TOKEN}":
            return self._json({"code": 4100, "msg": "authentication is invalid"}, 401)
        MockCoze.sent.append((body, {k: v[0] for k, v in parse_qs(url.query).items()}))
        if body.get("stream") is not True:
            return self._json({"code": 4000, "msg": "the mock serves streams only"})
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()
        chat = {"id": "chat-1", "conversation_id": "c1", "bot_id": COZE_BOT, "status": "in_progress"}
        self._chunk(f"event:conversation.chat.created\ndata:{json.dumps(chat)}\n\n")
        message = {"id": "m1", "conversation_id": "c1", "bot_id": COZE_BOT, "role": "assistant",
                   "type": "answer", "content_type": "text", "chat_id": "chat-1"}
        for text in ["Hel", "lo"]:
            self._chunk(f"event:conversation.message.delta\ndata:{json.dumps({**message, 'content': text})}\n\n")
        self._chunk(f"event:conversation.message.completed\ndata:{json.dumps({**message, 'content': 'Hello'})}\n\n")
        done = {**chat, "status": "completed", "usage": {"token_count": 7, "output_count": 2, "input_count": 5}}
        self._chunk(f"event:conversation.chat.completed\ndata:{json.dumps(done)}\n\n")
        self._chunk('event:done\ndata:"[DONE]"\n\n')
        self._chunk("")


@pytest.fixture(scope="module")
def native():
    """Yields (base_url, console client, key, key id) of a Tollgate with one channel per type."""
    upstream = ThreadingHTTPServer(("127.0.0.1", 0), MockBaidu)
    threading.Thread(target=upstream.serve_forever, daemon=True).start()
    dify = ThreadingHTTPServer(("127.0.0.1", 0), MockDify)
    threading.Thread(target=dify.serve_forever, daemon=True).start()
    coze = ThreadingHTTPServer(("127.0.0.1", 0), MockCoze)
    threading.Thread(target=coze.serve_forever, daemon=True).start()
    with signed_in_root("tollgate-sdk-native-") as (base, api, uid):
        api.headers["New-Api-User"] = uid
        for key, value in [("ModelRatio", {"ERNIE-3.5-8K": 1, "dify-app": 1, "coze-bot": 1}),
                           ("CompletionRatio", {"ERNIE-3.5-8K": 2, "dify-app": 2, "coze-bot": 2})]:
            assert api.put("/api/option/", json={"key": key, "value": json.dumps(value)}).json()["success"]
        channel = {"name": "baidu", "type": 15, "key": f"{BAIDU_AK}|{BAIDU_SK}", "models": "ERNIE-3.5-8K",
                   "group": "default", "base_url": f"http://127.0.0.1:{upstream.server_port}"}
        assert api.post("/api/channel/", json=channel).json()["success"]
        channel = {"name": "dify", "type": 37, "key": DIFY_KEY, "models": "dify-app", "group": "default",
                   "base_url": f"http://127.0.0.1:{dify.server_port}"}
        assert api.post("/api/channel/", json=channel).json()["success"]
        channel = {"name": "coze", "type": 49, "key": COZE_TOKEN, "other": COZE_BOT, "models": "coze-bot",
                   "group": "default", "base_url": f"http://127.0.0.1:{coze.server_port}"}
        assert api.post("/api/channel/", json=channel).json()["success"]
        token = api.post("/api/token/", json={"name": "native", "remain_quota": 1_000_000}).json()["data"]
        key = api.post(f"/api/token/{token['id']}/key").json()["data"]["key"]
        try:
            yield base, api, key, token["id"]
        finally:
            upstream.shutdown()
            dify.shutdown()
            coze.shutdown()


def billed(api, token_id, before, cost):
    """Waits until the key's used quota has grown by `cost` (settlement is asynchronous)."""
    used = lambda: api.get(f"/api/token/{token_id}").json()["data"]["used_quota"]
    for _ in range(100):
        if used() - before == cost:
            break
        threading.Event().wait(0.05)
    assert used() - before == cost


def test_baidu_qianfan_v1_whole_and_streamed(native):
    """Baidu Qianfan v1 (type 15): the key exchanged for an access token, ERNIE's format both ways."""
    base, api, key, token_id = native
    client = openai.OpenAI(base_url=f"{base}/v1", api_key=key, max_retries=0)
    before = api.get(f"/api/token/{token_id}").json()["data"]["used_quota"]
    answer = client.chat.completions.create(
        model="ERNIE-3.5-8K", messages=[{"role": "system", "content": "be brief"},
                                        {"role": "user", "content": "Hi"}])
    assert answer.choices[0].message.content == "Hello"
    assert answer.usage.prompt_tokens == 5 and answer.usage.completion_tokens == 2
    assert MockBaidu.sent[-1]["system"] == "be brief"
    assert MockBaidu.sent[-1]["messages"] == [{"role": "user", "content": "Hi"}]
    billed(api, token_id, before, 5 + 2 * 2)

    before = api.get(f"/api/token/{token_id}").json()["data"]["used_quota"]
    stream = client.chat.completions.create(
        model="ERNIE-3.5-8K", messages=[{"role": "user", "content": "Hi"}], stream=True,
        stream_options={"include_usage": True})
    chunks = list(stream)
    assert "".join(c.choices[0].delta.content or "" for c in chunks if c.choices) == "Hello"
    assert chunks[-1].usage.completion_tokens == 2
    billed(api, token_id, before, 5 + 2 * 2)


def test_dify_whole_and_streamed(native):
    """Dify (type 37): a chat app's chat-messages, blocking and streamed, billed from its usage."""
    base, api, key, token_id = native
    client = openai.OpenAI(base_url=f"{base}/v1", api_key=key, max_retries=0)
    before = api.get(f"/api/token/{token_id}").json()["data"]["used_quota"]
    answer = client.chat.completions.create(model="dify-app", messages=[{"role": "user", "content": "Hi"}])
    assert answer.choices[0].message.content == "Hello"
    assert MockDify.sent[-1]["query"] == "USER: \nHi\n" and MockDify.sent[-1]["response_mode"] == "blocking"
    billed(api, token_id, before, 5 + 2 * 2)

    before = api.get(f"/api/token/{token_id}").json()["data"]["used_quota"]
    stream = client.chat.completions.create(
        model="dify-app", messages=[{"role": "user", "content": "Hi"}], stream=True,
        stream_options={"include_usage": True}, extra_body={"conversation_id": "c1"})
    chunks = list(stream)
    assert "".join(c.choices[0].delta.content or "" for c in chunks if c.choices) == "Hello"
    assert MockDify.sent[-1]["conversation_id"] == "c1" and MockDify.sent[-1]["query"] == "Hi"
    billed(api, token_id, before, 5 + 2 * 2)


def test_coze_whole_and_streamed(native):
    """Coze (type 49): a bot's chat API v3, always its event stream (gathered for a whole answer),
    billed from its usage; a conversation continued through extra_body's conversation_id."""
    base, api, key, token_id = native
    client = openai.OpenAI(base_url=f"{base}/v1", api_key=key, max_retries=0)
    before = api.get(f"/api/token/{token_id}").json()["data"]["used_quota"]
    answer = client.chat.completions.create(model="coze-bot", messages=[{"role": "user", "content": "Hi"}])
    assert answer.choices[0].message.content == "Hello"
    assert answer.usage.prompt_tokens == 5 and answer.usage.completion_tokens == 2
    sent, query = MockCoze.sent[-1]
    assert sent["bot_id"] == COZE_BOT and sent["stream"] is True and query == {}
    assert sent["additional_messages"] == [{"role": "user", "type": "question", "content": "Hi",
                                            "content_type": "text"}]
    billed(api, token_id, before, 5 + 2 * 2)

    before = api.get(f"/api/token/{token_id}").json()["data"]["used_quota"]
    stream = client.chat.completions.create(
        model="coze-bot", messages=[{"role": "user", "content": "Hi"}], stream=True,
        stream_options={"include_usage": True}, extra_body={"conversation_id": "c1"})
    chunks = list(stream)
    assert "".join(c.choices[0].delta.content or "" for c in chunks if c.choices) == "Hello"
    assert chunks[-1].usage.completion_tokens == 2
    assert MockCoze.sent[-1][1] == {"conversation_id": "c1"}
    billed(api, token_id, before, 5 + 2 * 2)


def test_coze_image_by_url(native):
    """Coze (type 49): an image by URL goes as a multimodal object_string message, billed."""
    base, api, key, token_id = native
    client = openai.OpenAI(base_url=f"{base}/v1", api_key=key, max_retries=0)
    before = api.get(f"/api/token/{token_id}").json()["data"]["used_quota"]
    answer = client.chat.completions.create(model="coze-bot", messages=[{"role": "user", "content": [
        {"type": "text", "text": "what is this?"},
        {"type": "image_url", "image_url": {"url": "https://example.com/cat.png"}}]}])
    assert answer.choices[0].message.content == "Hello"
    sent = MockCoze.sent[-1][0]["additional_messages"]
    assert [m["content_type"] for m in sent] == ["object_string"]
    assert json.loads(sent[0]["content"]) == [{"type": "text", "text": "what is this?"},
                                              {"type": "image", "file_url": "https://example.com/cat.png"}]
    billed(api, token_id, before, 5 + 2 * 2)
