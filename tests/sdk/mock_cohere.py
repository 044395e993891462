"""A mock Cohere API for the SDK suite: chat v2 (`POST /v2/chat`, the key as bearer), whole and as
its SSE events (message-start, content-start, content-delta, content-end, message-end with the
usage), as Cohere's chat reference (https://docs.cohere.com/reference/chat and
/reference/chat-stream) documents; billed units are what Cohere bills."""

import json

from conftest import MockProvider

KEY = "cohere-sdk-key"


class MockCohere(MockProvider):
    """Answers `POST /v2/chat`; any other path or key is refused as Cohere refuses it."""

    seen = []

    def do_POST(self):
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        if self.headers.get("Authorization") != f"Bearer {KEY}":
            return self._json({"id": "e1", "message": "invalid api token"}, 401)
        if self.path != "/v2/chat":
            return self._json({"id": "e2", "message": f"unknown path {self.path}"}, 404)
        MockCohere.seen.append(body)
        # Billed units differ from the token counts: the bill must follow the billed units.
        usage = {"billed_units": {"input_tokens": 5, "output_tokens": 2},
                 "tokens": {"input_tokens": 71, "output_tokens": 2}}
        if not body.get("stream"):
            return self._json({"id": "c14c80c3", "finish_reason": "COMPLETE",
                               "message": {"role": "assistant",
                                           "content": [{"type": "text", "text": "Hello"}]},
                               "usage": usage})
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()
        events = [{"type": "message-start", "id": "29f14a5a",
                   "delta": {"message": {"role": "assistant"}}},
                  {"type": "content-start", "index": 0,
                   "delta": {"message": {"content": {"type": "text", "text": ""}}}}]
        events += [{"type": "content-delta", "index": 0,
                    "delta": {"message": {"content": {"text": text}}}} for text in ["Hel", "lo"]]
        events += [{"type": "content-end", "index": 0},
                   {"type": "message-end", "delta": {"finish_reason": "COMPLETE", "usage": usage}}]
        for event in events:
            self._chunk(f"event: {event['type']}\ndata: {json.dumps(event)}\n\n")
        self._chunk("")
