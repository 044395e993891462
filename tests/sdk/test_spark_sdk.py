"""The official `openai` SDK through Tollgate to an iFlytek Spark channel (type 18), whose upstream
is a WebSocket conversation: the mock (the `websockets` library) checks the signed URL as Spark's
"WebSocket协议通用鉴权URL生成说明" says (a wrong one refused at the handshake with 401), reads the
request frame and answers in Spark's frames; the case checks what the SDK got, whole and
streamed, where the conversation went, and what the caller was billed (the key's used quota)."""

import base64
import hashlib
import hmac
import json
import threading
from urllib.parse import parse_qs, urlsplit

import openai
import pytest
from websockets.sync.server import serve

from conftest import signed_in_root

APP_ID, API_SECRET, API_KEY = "sdkapp", "sdk-spark-secret", "sdk-spark-key"


class MockSpark:
    """Spark's WebSocket chat on 127.0.0.1: each conversation's path and request frame kept."""

    def __init__(self):
        self.seen = []
        self.server = serve(self.handle, "127.0.0.1", 0, process_request=self.check)
        self.port = self.server.socket.getsockname()[1]
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def signed(self, target):
        url = urlsplit(target)
        query = {k: v[0] for k, v in parse_qs(url.query).items()}
        host, date = query.get("host", ""), query.get("date", "")
        if host != f"127.0.0.1:{self.port}" or not date:
            return False
        signed = f"host: {host}\ndate: {date}\nGET {url.path} HTTP/1.1"
        sig = base64.b64encode(hmac.new(API_SECRET.encode(), signed.encode(), hashlib.sha256).digest())
        expected = (f'api_key="{API_KEY}", algorithm="hmac-sha256", '
                    f'headers="host date request-line", signature="{sig.decode()}"')
        try:
            return base64.b64decode(query.get("authorization", "")).decode() == expected
        except ValueError:
            return False

    def check(self, connection, request):
        if not self.signed(request.path):
            return connection.respond(401, '{"message":"HMAC signature cannot be verified"}')
        return None

    def handle(self, ws):
        frame = json.loads(ws.recv())
        self.seen.append((urlsplit(ws.request.path).path, frame))
        for i, (piece, status) in enumerate([("Hel", 0), ("lo", 2)]):
            answer = {"header": {"code": 0, "message": "Success", "sid": "cht-sdk", "status": status},
                      "payload": {"choices": {"status": status, "seq": i,
                                              "text": [{"content": piece, "role": "assistant", "index": 0}]}}}
            if status == 2:
                answer["payload"]["usage"] = {"text": {"question_tokens": 2, "prompt_tokens": 5,
                                                       "completion_tokens": 2, "total_tokens": 7}}
            ws.send(json.dumps(answer))
        ws.close()


@pytest.fixture(scope="module")
def spark():
    """Yields (base_url, console client, key, key id, mock) of a Tollgate with a Spark channel."""
    mock = MockSpark()
    with signed_in_root("tollgate-sdk-spark-") as (base, api, uid):
        api.headers["New-Api-User"] = uid
        for key, value in [("ModelRatio", {"spark-sdk": 1}), ("CompletionRatio", {"spark-sdk": 2})]:
            assert api.put("/api/option/", json={"key": key, "value": json.dumps(value)}).json()["success"]
        channel = {"name": "spark", "type": 18, "key": f"{APP_ID}|{API_SECRET}|{API_KEY}",
                   "models": "spark-sdk", "group": "default",
                   "model_mapping": json.dumps({"spark-sdk": "SparkDesk-v3.5"}),
                   "base_url": f"http://127.0.0.1:{mock.port}"}
        assert api.post("/api/channel/", json=channel).json()["success"]
        token = api.post("/api/token/", json={"name": "spark", "remain_quota": 1_000_000}).json()["data"]
        key = api.post(f"/api/token/{token['id']}/key").json()["data"]["key"]
        try:
            yield base, api, key, token["id"], mock
        finally:
            mock.server.shutdown()


def used_quota(api, token_id):
    return api.get(f"/api/token/{token_id}").json()["data"]["used_quota"]


def billed(api, token_id, before, cost):
    for _ in range(100):
        if used_quota(api, token_id) - before == cost:
            break
        threading.Event().wait(0.05)
    return used_quota(api, token_id) - before


def test_spark_channel_whole_and_streamed_and_billed(spark):
    base, api, key, token_id, mock = spark
    client = openai.OpenAI(base_url=f"{base}/v1", api_key=key, max_retries=0)
    before = used_quota(api, token_id)
    answer = client.chat.completions.create(
        model="spark-sdk", messages=[{"role": "user", "content": "Hi"}])
    assert answer.choices[0].message.content == "Hello"
    assert answer.usage.prompt_tokens == 5 and answer.usage.completion_tokens == 2
    path, frame = mock.seen[-1]
    assert path == "/v3.5/chat"
    assert frame["header"]["app_id"] == APP_ID
    assert frame["parameter"]["chat"]["domain"] == "generalv3.5"
    assert frame["payload"]["message"]["text"] == [{"role": "user", "content": "Hi"}]
    # ratio 1, completion ratio 2: 5 + 2 × 2
    assert billed(api, token_id, before, 9) == 9

    before = used_quota(api, token_id)
    stream = client.chat.completions.create(
        model="spark-sdk", messages=[{"role": "user", "content": "Hi"}], stream=True,
        stream_options={"include_usage": True})
    chunks = list(stream)
    assert "".join(c.choices[0].delta.content or "" for c in chunks if c.choices) == "Hello"
    usage = [c.usage for c in chunks if c.usage is not None]
    assert usage and usage[0].prompt_tokens == 5 and usage[0].completion_tokens == 2
    assert billed(api, token_id, before, 9) == 9
